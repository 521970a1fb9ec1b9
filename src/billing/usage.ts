// Usage of the current period (a UTC calendar month, whatever the billing period) and the
// monthly API-call quota. Counters are exact under concurrency: one conditional upsert each.
import { and, eq } from "drizzle-orm";
import { database } from "../db/client";
import { subscriptions, usageCounters } from "../db/schema";
import { entitlements, type Limit } from "../domain/plans";
import type { Env } from "../env";
import { ApiError } from "../http/errors";
import { flushTicketCount } from "../tickets/quota";
import { iso, utcMonth } from "../lib/time";

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

export async function currentUsage(env: Env, organizationId: string, at: number) {
  const period = utcMonth(at);
  // The tickets count lives in the organization's ledger; D1 holds it once flushed.
  await flushTicketCount(env, organizationId);
  const db = database(env.DB);
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
export async function takeApiCall(env: Env, organizationId: string, limit: Limit, at: number): Promise<void> {
  const period = utcMonth(at);
  const result = await env.DB.prepare(
    `INSERT INTO usage_counters (organization_id, period, metric, used)
     SELECT ?, ?, 'api_calls', 1 WHERE ? IS NULL OR ? > 0
     ON CONFLICT (organization_id, period, metric) DO UPDATE SET used = used + 1
     WHERE ? IS NULL OR used < ?`,
  )
    .bind(organizationId, period.key, limit, limit, limit, limit)
    .run()
    .catch((err: unknown) => {
      // The organization was deleted while this request was on its way (its keys go with it).
      if (String(err).includes("FOREIGN KEY constraint failed"))
        throw new ApiError("AUTHENTICATION_ERROR", "This API key's organization no longer exists");
      throw err;
    });
  if (result.meta.changes > 0) return;
  const row = await env.DB.prepare("SELECT used FROM usage_counters WHERE organization_id = ? AND period = ? AND metric = 'api_calls'")
    .bind(organizationId, period.key)
    .first<{ used: number }>();
  throw new ApiError("QUOTA_EXCEEDED", `The monthly quota of ${limit} API calls is used up`, {
    limit,
    used: row?.used ?? limit,
    resetsAt: iso(period.end),
  });
}
