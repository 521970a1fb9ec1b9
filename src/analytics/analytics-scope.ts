// The one scope of every analytics read (summary, operators, heatmap, estimates, CSV export):
// who may read, on which plan, which queues, over which range, in which time zone(s).
//
// Order of the checks, so a caller learns no more than they may: credential (401) → the
// organization is theirs (404) → ANALYTICS_VIEW (403: owner/admin/manager sessions, keys with
// `read:analytics`) → plan (402 on starter) → the filters' ids are the organization's (404,
// `details.field`) → the range (400, `details.field = "to"`).

import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { MAX_ANALYTICS_RANGE_DAYS, rangeProblem, resolveRange, type RangeBound, type ResolvedRange } from "../domain/analytics-range";
import type { Plan } from "../domain/plans";
import { isValidTimeZone } from "../domain/recurrence";
import { authorize, organizationOfRequest } from "../http/auth";
import type { AppEnv } from "../http/context";
import { ApiError, planRequired, validationError } from "../http/errors";
import { now } from "../lib/clock";
import { parseInstantInput, type InstantInput } from "../lib/instant";
import { reaches, type LocationScope } from "../domain/location-scope";
import { locationsOfService } from "../catalog/location-scope";
import { and, eq, exists, sql, type SQL } from "drizzle-orm";
import { alias, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import { locations, queues, serviceLocations, services, subscriptions } from "../db/schema";
import { deps, type Deps } from "../http/deps";

/** Plans that include analytics beyond the dashboard's counts. */
export const ANALYTICS_PLANS: readonly Plan[] = ["pro", "enterprise"];

const Instant = (name: "from" | "to", description: string) =>
  z
    .string()
    .max(40)
    .transform((value, ctx) => {
      const parsed = parseInstantInput(value);
      if (!parsed) {
        ctx.addIssue({ code: "custom", message: "expected an ISO 8601 timestamp with Z or an offset, or a date YYYY-MM-DD" });
        return z.NEVER;
      }
      return parsed;
    })
    .optional()
    .openapi({ param: { name, in: "query" }, description, example: name === "from" ? "2026-03-01" : "2026-03-31" });

const FilterId = (name: string, prefix: string, description: string) =>
  z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ param: { name, in: "query" }, description, example: `${prefix}_0123456789abcdefghjk` });

/** The query every analytics route takes; routes `.extend()` it with their own parameters. */
export const AnalyticsScopeQuery = z.object({
  from: Instant(
    "from",
    "Start of the range: an ISO 8601 instant, or a date YYYY-MM-DD meaning 00:00 in the time zone of the queue's location; default today there",
  ),
  to: Instant(
    "to",
    `End of the range, after from and at most ${MAX_ANALYTICS_RANGE_DAYS} days later: an instant (exclusive), or a date (that whole day included); default today in the queue's time zone (so no range at all is today)`,
  ),
  locationId: FilterId("locationId", "loc", "Only queues of services offered at this location; dates and buckets use its time zone"),
  serviceId: FilterId("serviceId", "svc", "Only this service's queues"),
  queueId: FilterId("queueId", "que", "Only this queue"),
});
export type AnalyticsScopeInput = z.infer<typeof AnalyticsScopeQuery>;

/** Queues that share a time zone, with the range as read in that zone. */
export interface ZoneScope extends ResolvedRange {
  timeZone: string;
  queueIds: string[];
}

export interface AnalyticsScope {
  organizationId: string;
  plan: Plan;
  /** Every queue in scope (archived ones included: their history counts). */
  queueIds: string[];
  /** The queues grouped by the time zone of their location; each group has its own [from, to). */
  zones: ZoneScope[];
  /** The earliest `from` and latest `to` over the zones (equal to theirs when there is one zone). */
  from: number;
  to: number;
}

interface QueueZoneRow {
  id: string;
  timezone: string | null;
}

/** `column IN (ids)`, the list bound as one JSON parameter (D1 binds at most 100 values a statement). */
export function inIds(column: SQLiteColumn, ids: readonly string[]): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
}

/** The tables a filter's id may name, chosen at run time. */
const OWNED = { locations, services, queues } as const;

async function assertOwned({ db }: Deps, table: keyof typeof OWNED, field: string, id: string | undefined, organizationId: string) {
  if (id === undefined) return;
  const t = OWNED[table];
  const row = await db
    .select({ found: sql<number>`1` })
    .from(t)
    .where(and(eq(t.id, id), eq(t.organizationId, organizationId)))
    .get();
  const what = table === "locations" ? "Location" : table === "services" ? "Service" : "Queue";
  if (!row) throw new ApiError("NOT_FOUND", `${what} not found`, { field });
}

/**
 * The queues in scope and each one's time zone: the filter location's when `locationId` is
 * given, else the first location (oldest) its service is offered at; UTC when it has none or
 * the stored zone is not a valid IANA name.
 */
async function queuesInScope(
  { db }: Deps,
  organizationId: string,
  input: AnalyticsScopeInput,
  scope: LocationScope = null,
): Promise<QueueZoneRow[]> {
  const q = alias(queues, "q");
  const sl = alias(serviceLocations, "sl");
  const l = alias(locations, "l");
  const zone = db
    .select({ timezone: l.timezone })
    .from(sl)
    .innerJoin(l, eq(l.id, sl.locationId))
    .where(and(eq(sl.serviceId, q.serviceId), input.locationId === undefined ? undefined : eq(l.id, input.locationId)))
    .orderBy(l.createdAt, l.id)
    .limit(1);
  const y = alias(serviceLocations, "y");
  const x = alias(serviceLocations, "x");
  return db
    .select({ id: q.id, timezone: sql<string | null>`${zone}` })
    .from(q)
    .where(
      and(
        eq(q.organizationId, organizationId),
        input.queueId === undefined ? undefined : eq(q.id, input.queueId),
        input.serviceId === undefined ? undefined : eq(q.serviceId, input.serviceId),
        // A scoped member's analytics cover their locations' services only (issue 31).
        scope === null
          ? undefined
          : exists(
              db
                .select({ found: sql`1` })
                .from(y)
                .where(and(eq(y.serviceId, q.serviceId), inIds(y.locationId, scope))),
            ),
        input.locationId === undefined
          ? undefined
          : exists(
              db
                .select({ found: sql`1` })
                .from(x)
                .where(and(eq(x.serviceId, q.serviceId), eq(x.locationId, input.locationId))),
            ),
      ),
    )
    .orderBy(q.id)
    .all();
}

/** A filter naming another location's resource answers as for another organization's (404, `details.field`). */
async function assertWithinLocations({ db }: Deps, scope: readonly string[], input: AnalyticsScopeInput): Promise<void> {
  if (input.locationId !== undefined && !scope.includes(input.locationId)) {
    throw new ApiError("NOT_FOUND", "Location not found", { field: "locationId" });
  }
  if (input.serviceId !== undefined && !reaches(scope, await locationsOfService({ db }, input.serviceId))) {
    throw new ApiError("NOT_FOUND", "Service not found", { field: "serviceId" });
  }
  if (input.queueId !== undefined) {
    const queue = await db.select({ serviceId: queues.serviceId }).from(queues).where(eq(queues.id, input.queueId)).get();
    if (!queue || !reaches(scope, await locationsOfService({ db }, queue.serviceId))) {
      throw new ApiError("NOT_FOUND", "Queue not found", { field: "queueId" });
    }
  }
}

async function planOf({ db }: Deps, organizationId: string): Promise<Plan> {
  const row = await db
    .select({ plan: subscriptions.plan })
    .from(subscriptions)
    .where(eq(subscriptions.organizationId, organizationId))
    .get();
  return row?.plan ?? "starter";
}

/** Refuses a plan without analytics with the shared 402 shape. */
export function assertAnalyticsPlan(plan: Plan, feature = "analytics"): void {
  if (!ANALYTICS_PLANS.includes(plan)) {
    throw planRequired(`Analytics need the pro plan (the ${plan} plan has the dashboard's counts only)`, {
      currentPlan: plan,
      limit: null,
      feature,
    });
  }
}

function checkedRange(from: RangeBound, to: RangeBound, timeZone: string, at: number): ResolvedRange {
  const range = resolveRange(from, to, timeZone, at);
  const problem = rangeProblem(range);
  if (problem) throw validationError(problem.field, problem.reason, { maxDays: MAX_ANALYTICS_RANGE_DAYS });
  return range;
}

/**
 * Resolves an analytics request into its scope, or throws the error the caller gets (see the
 * header for the order). `feature` names the feature in a 402 (e.g. "analytics_export").
 */
export async function resolveAnalyticsScope(
  c: Context<AppEnv>,
  input: AnalyticsScopeInput,
  feature = "analytics",
): Promise<AnalyticsScope> {
  const organizationId = await organizationOfRequest(c);
  const actor = await authorize(c, organizationId, "ANALYTICS_VIEW");
  const requestDeps = deps(c);
  const plan = await planOf(requestDeps, organizationId);
  assertAnalyticsPlan(plan, feature);
  await assertOwned(requestDeps, "locations", "locationId", input.locationId, organizationId);
  await assertOwned(requestDeps, "services", "serviceId", input.serviceId, organizationId);
  await assertOwned(requestDeps, "queues", "queueId", input.queueId, organizationId);
  if (actor.locationIds !== null) await assertWithinLocations(requestDeps, actor.locationIds, input);

  const rows = await queuesInScope(requestDeps, organizationId, input, actor.locationIds);
  const byZone = new Map<string, string[]>();
  for (const row of rows) {
    const zone = row.timezone !== null && isValidTimeZone(row.timezone) ? row.timezone : "UTC";
    byZone.set(zone, [...(byZone.get(zone) ?? []), row.id]);
  }
  // The range is checked even when no queue matches, so a bad range is refused the same way.
  const at = now();
  const from: RangeBound = input.from ?? { kind: "today" };
  const to: RangeBound = input.to ?? { kind: "today" };
  const zones: ZoneScope[] = [...byZone.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([timeZone, queueIds]) => ({ timeZone, queueIds, ...checkedRange(from, to, timeZone, at) }));
  const covering = zones.length > 0 ? null : checkedRange(from, to, "UTC", at);
  return {
    organizationId,
    plan,
    queueIds: rows.map((r) => r.id),
    zones,
    from: covering?.from ?? Math.min(...zones.map((z) => z.from)),
    to: covering?.to ?? Math.max(...zones.map((z) => z.to)),
  };
}
