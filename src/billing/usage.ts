// Usage of the current period (a UTC calendar month, whatever the billing period) and the
// monthly API-call quota. Counters are exact under concurrency: one conditional upsert each.
import { and, eq, lt, sql } from "drizzle-orm";
import { isForeignKeyViolation } from "../db/errors";
import { subscriptions, usageCounters } from "../db/schema";
import { entitlements, type Limit } from "../domain/plans";
import { ApiError } from "../http/errors";
import { flushTicketCount } from "../tickets/quota";
import { iso, utcMonth } from "../lib/time";
import type { Deps } from "../http/deps";

export const USAGE_METRICS = ["tickets", "api_calls", "sms", "webhook_deliveries"] as const;
export type UsageMetric = (typeof USAGE_METRICS)[number];

export interface MetricUsage {
  used: number;
  /** null = unlimited */
  limit: Limit;
  resetsAt: string;
}

/** The monthly SMS allowance of a plan: none without SMS; the plan table's figure when it has one. */
function smsLimit(features: object & { sms: boolean }): Limit {
  const allowance = (features as { smsPerMonth?: Limit }).smsPerMonth;
  if (allowance !== undefined) return allowance;
  return features.sms ? null : 0;
}

export async function currentUsage(deps: Deps, organizationId: string, at: number) {
  const { db } = deps;
  const period = utcMonth(at);
  // The tickets count lives in the organization's ledger; D1 holds it once flushed.
  await flushTicketCount(deps, organizationId);
  const [sub, rows] = await Promise.all([
    db.select().from(subscriptions).where(eq(subscriptions.organizationId, organizationId)).get(),
    db
      .select({ metric: usageCounters.metric, used: usageCounters.used })
      .from(usageCounters)
      .where(and(eq(usageCounters.organizationId, organizationId), eq(usageCounters.period, period.key)))
      .all(),
  ]);
  const plan = entitlements(sub ?? { plan: "starter" });
  const used = new Map(rows.map((r) => [r.metric, r.used]));
  const resetsAt = iso(period.end);
  const limits: Record<UsageMetric, Limit> = {
    tickets: plan.quotas.ticketsPerMonth,
    api_calls: plan.quotas.apiCallsPerMonth,
    sms: smsLimit(plan.features),
    webhook_deliveries: null,
  };
  const metric = (m: UsageMetric): MetricUsage => ({ used: used.get(m) ?? 0, limit: limits[m], resetsAt });
  return {
    organizationId,
    plan: plan.plan,
    periodStart: iso(period.start),
    periodEnd: resetsAt,
    tickets: metric("tickets"),
    apiCalls: metric("api_calls"),
    sms: metric("sms"),
    webhookDeliveries: metric("webhook_deliveries"),
  };
}

/**
 * Counts one API call against the organization's monthly quota, or refuses it with
 * 403 QUOTA_EXCEEDED once `limit` calls were counted this month. Exact under concurrency.
 */
export async function takeApiCall({ db }: Deps, organizationId: string, limit: Limit, at: number): Promise<void> {
  const period = utcMonth(at);
  const counter = and(
    eq(usageCounters.organizationId, organizationId),
    eq(usageCounters.period, period.key),
    eq(usageCounters.metric, "api_calls"),
  );
  // One conditional upsert: the count goes up only while it is under the limit, decided by the
  // statement itself. A limit of 0 refuses every call, so the statement is left out.
  const taken =
    limit !== null && limit <= 0
      ? 0
      : (
          await db
            .insert(usageCounters)
            .values({ organizationId, period: period.key, metric: "api_calls", used: 1 })
            .onConflictDoUpdate({
              target: [usageCounters.organizationId, usageCounters.period, usageCounters.metric],
              set: { used: sql`${usageCounters.used} + 1` },
              setWhere: limit === null ? undefined : lt(usageCounters.used, limit),
            })
            .run()
            .catch((err: unknown) => {
              // The organization was deleted while this request was on its way (its keys go with it).
              if (isForeignKeyViolation(err)) throw new ApiError("AUTHENTICATION_ERROR", "This API key's organization no longer exists");
              throw err;
            })
        ).meta.changes;
  if (taken > 0) return;
  const row = await db.select({ used: usageCounters.used }).from(usageCounters).where(counter).get();
  throw new ApiError("QUOTA_EXCEEDED", `The monthly quota of ${limit} API calls is used up`, {
    limit,
    used: row?.used ?? limit,
    resetsAt: iso(period.end),
  });
}
