import { and, count, eq, isNull } from "drizzle-orm";
import type { Database } from "../db/client";
import { locations, queues, services } from "../db/schema";
import { iso } from "../lib/time";
import { ticketFigures } from "./ticket-stats";

export const SERVICE_STATUSES = ["active", "inactive", "pending", "rejected"] as const;
export const QUEUE_STATUSES = ["active", "paused", "closed"] as const;

function tally<K extends string>(
  keys: readonly K[],
  rows: readonly { key: string; n: number }[],
): { total: number; byStatus: Record<K, number> } {
  const byStatus = Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
  let total = 0;
  for (const { key, n } of rows) {
    if ((keys as readonly string[]).includes(key)) byStatus[key as K] += n;
    total += n;
  }
  return { total, byStatus };
}

/** The counts of the business dashboard; archived queues are left out. */
export async function dashboard(db: Database, organizationId: string, at: number) {
  const [locationRows, serviceRows, queueRows] = await db.batch([
    db.select({ n: count() }).from(locations).where(eq(locations.organizationId, organizationId)),
    db
      .select({ key: services.status, n: count() })
      .from(services)
      .where(eq(services.organizationId, organizationId))
      .groupBy(services.status),
    db
      .select({ key: queues.status, n: count() })
      .from(queues)
      .where(and(eq(queues.organizationId, organizationId), isNull(queues.archivedAt)))
      .groupBy(queues.status),
  ]);
  return {
    organizationId,
    generatedAt: iso(at),
    locations: { total: locationRows[0]?.n ?? 0 },
    services: tally(SERVICE_STATUSES, serviceRows),
    queues: tally(QUEUE_STATUSES, queueRows),
    tickets: await ticketFigures(db, organizationId, at),
  };
}
