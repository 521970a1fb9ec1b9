import type { Env } from "./env";
import { QueueRoom as Room } from "./queue-room/queue-room";
import { SocketHub as Hub } from "./queue-room/socket-hub";
import { eq } from "drizzle-orm";
import { database } from "./db/client";
import { queues } from "./db/schema";
import type { QueueFacts } from "./queue-room/contract";

// The composition root of a queue's room and of the socket hubs: the classes the platform
// instantiates (wrangler.toml's QUEUE_ROOM and SOCKET_HUB), which gives the room its ports (queue-room/ports.ts): the organization's ticket
// ledger and the catalog's queue facts. The room itself imports neither.

/** Reads a queue's catalog row from D1: the room itself only knows its own queue. */
async function queueFacts(env: Env, queueId: string): Promise<QueueFacts | null> {
  const row = await database(env.DB)
    .select({
      queueId: queues.id,
      organizationId: queues.organizationId,
      serviceId: queues.serviceId,
      name: queues.name,
      letter: queues.letter,
      maxCapacity: queues.maxCapacity,
      noShowTimeoutMinutes: queues.noShowTimeoutMinutes,
      defaultServiceMinutes: queues.defaultServiceMinutes,
      status: queues.status,
      archivedAt: queues.archivedAt,
    })
    .from(queues)
    .where(eq(queues.id, queueId))
    .get();
  if (!row) return null;
  const { name, ...config } = row;
  return { name, config };
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

/** The socket hubs (wrangler.toml's SOCKET_HUB): the catalog port only, they hold no line. */
export class SocketHub extends Hub {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, { catalog: { queueFacts: (queueId) => queueFacts(env, queueId) } });
  }
}
