import { and, count, eq, inArray, isNull } from "drizzle-orm";
import { locations, queues, services, tickets } from "../db/schema";
import type { LocationScope } from "../domain/location-scope";
import { scopeIds, servicesAt } from "../catalog/location-scope";
import { iso } from "../lib/time";
import { ticketFigures } from "./ticket-stats";
import type { Deps } from "../http/deps";

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
export async function dashboard(deps: Deps, organizationId: string, at: number, scope: LocationScope = null) {
  const { db } = deps;
  // A scoped member (issue 31) counts their locations' catalogue and tickets only.
  const within = scopeIds(scope);
  const [locationRows, serviceRows, queueRows] = await db.batch([
    db
      .select({ n: count() })
      .from(locations)
      .where(and(eq(locations.organizationId, organizationId), within ? inArray(locations.id, within) : undefined)),
    db
      .select({ key: services.status, n: count() })
      .from(services)
      .where(and(eq(services.organizationId, organizationId), within ? inArray(services.id, servicesAt(deps, within)) : undefined))
      .groupBy(services.status),
    db
      .select({ key: queues.status, n: count() })
      .from(queues)
      .where(
        and(
          eq(queues.organizationId, organizationId),
          isNull(queues.archivedAt),
          within ? inArray(queues.serviceId, servicesAt(deps, within)) : undefined,
        ),
      )
      .groupBy(queues.status),
  ]);
  return {
    organizationId,
    generatedAt: iso(at),
    locations: { total: locationRows[0]?.n ?? 0 },
    services: tally(SERVICE_STATUSES, serviceRows),
    queues: tally(QUEUE_STATUSES, queueRows),
    tickets: await ticketFigures(deps, organizationId, at, within ? inArray(tickets.serviceId, servicesAt(deps, within)) : undefined),
  };
}
