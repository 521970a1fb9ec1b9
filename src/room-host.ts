import type { Env } from "./env";
import { QueueRoom as Room } from "./queue-room/queue-room";
import type { QueueStatus } from "./domain/tickets";
import type { QueueFacts } from "./queue-room/contract";

// The composition root of a queue's room: the class the platform instantiates (wrangler.toml's
// QUEUE_ROOM), which gives the room its ports (queue-room/ports.ts): the organization's ticket
// ledger and the catalog's queue facts. The room itself imports neither.

/** Reads a queue's catalog row from D1: the room itself only knows its own queue. */
async function queueFacts(env: Env, queueId: string): Promise<QueueFacts | null> {
  const row = await env.DB.prepare(
    "SELECT id, organization_id, service_id, name, letter, max_capacity, no_show_timeout_minutes, default_service_minutes, status, archived_at FROM queues WHERE id = ?",
  )
    .bind(queueId)
    .first<{
      id: string;
      organization_id: string;
      service_id: string;
      name: string;
      letter: string;
      max_capacity: number | null;
      no_show_timeout_minutes: number;
      default_service_minutes: number;
      status: QueueStatus;
      archived_at: number | null;
    }>();
  if (!row) return null;
  return {
    name: row.name,
    config: {
      queueId: row.id,
      organizationId: row.organization_id,
      serviceId: row.service_id,
      letter: row.letter,
      maxCapacity: row.max_capacity,
      noShowTimeoutMinutes: row.no_show_timeout_minutes,
      defaultServiceMinutes: row.default_service_minutes,
      status: row.status,
      archivedAt: row.archived_at,
    },
  };
}

export class QueueRoom extends Room {
  constructor(ctx: DurableObjectState, env: Env) {
    const ledgerOf = (organizationId: string) => env.ORG_LEDGER.get(env.ORG_LEDGER.idFromName(organizationId));
    super(ctx, env, {
      ledger: {
        take: async (organizationId, at, limit) => ledgerOf(organizationId).take(organizationId, at, limit),
        refund: async (organizationId, period) => ledgerOf(organizationId).refund(period),
      },
      catalog: { queueFacts: (queueId) => queueFacts(env, queueId) },
    });
  }
}
