import type { Env } from "./env";
import { QueueRoom as Room } from "./queue-room/queue-room";
import { SocketHub as Hub } from "./queue-room/socket-hub";
import { and, eq, sql } from "drizzle-orm";
import { database, nonEmpty } from "./db/client";
import { organizations, queues, usageCounters } from "./db/schema";
import { OrganizationLedger as Ledger, type LedgerStore } from "./ledger/ledger";
import type { QueueFacts } from "./queue-room/contract";

// The composition root of a queue's room, of the socket hubs and of the organization ledger: the
// classes the platform instantiates (wrangler.toml's QUEUE_ROOM, SOCKET_HUB and ORG_LEDGER), which
// gives the room its ports (queue-room/ports.ts): the organization's ticket ledger and the
// catalog's queue facts; and the ledger its D1 counts. Neither imports the other or db/.

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
        record: async (organizationId, room, seq, counts) => ledgerOf(organizationId).record(organizationId, room, seq, counts),
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

/** The ledger's counts in D1's usage_counters, through Drizzle. */
function ledgerStore(env: Env): LedgerStore {
  const counter = (organizationId: string, period: string) =>
    and(eq(usageCounters.organizationId, organizationId), eq(usageCounters.period, period), eq(usageCounters.metric, "tickets"));
  return {
    async ticketsUsed(organizationId, period) {
      const row = await database(env.DB)
        .select({ used: usageCounters.used })
        .from(usageCounters)
        .where(counter(organizationId, period))
        .get();
      return row?.used ?? 0;
    },
    async writeTickets(organizationId, counts) {
      const db = database(env.DB);
      // An upsert selected from the organization's row: a count left behind by a deleted
      // organization writes nothing (a plain insert would fail the foreign key and retry for ever).
      const writes = nonEmpty(
        counts.map(({ period, used }) =>
          db
            .insert(usageCounters)
            .select(
              db
                .select({
                  organizationId: organizations.id,
                  period: sql<string>`${period}`.as("period"),
                  metric: sql<"tickets">`'tickets'`.as("metric"),
                  used: sql<number>`${used}`.as("used"),
                })
                .from(organizations)
                .where(eq(organizations.id, organizationId)),
            )
            .onConflictDoUpdate({
              target: [usageCounters.organizationId, usageCounters.period, usageCounters.metric],
              set: { used: sql`excluded.used` },
            }),
        ),
      );
      if (writes) await db.batch(writes);
    },
  };
}

/** The organization's ticket ledger (wrangler.toml's ORG_LEDGER), given its D1 counts. */
export class OrganizationLedger extends Ledger {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, ledgerStore(env));
  }
}
