import { eq } from "drizzle-orm";
import { database } from "../db/client";
import { subscriptions } from "../db/schema";
import { entitlements } from "../domain/plans";
import type { Env } from "../env";
import { ApiError } from "../http/errors";
import { iso, utcMonth } from "../lib/time";

export interface QuotaUnit {
  /** Gives the unit back when the ticket it was taken for was not created after all. */
  refund(): Promise<void>;
}

/** The organization's monthly ticket quota (null = unlimited), from its plan. */
export async function monthlyTicketLimit(env: Env, organizationId: string): Promise<number | null> {
  const sub = await database(env.DB)
    .select({ plan: subscriptions.plan, rateTierOverride: subscriptions.rateTierOverride })
    .from(subscriptions)
    .where(eq(subscriptions.organizationId, organizationId))
    .get();
  return entitlements(sub ?? { plan: "starter" }).quotas.ticketsPerMonth;
}

/**
 * Takes one ticket of the organization's monthly quota (`limit`, from `monthlyTicketLimit`),
 * exactly under concurrency: a single conditional upsert that only counts while
 * `used < limit`, then a check of rows changed.
 */
export async function takeTicketUnit(env: Env, organizationId: string, limit: number | null, at: number): Promise<QuotaUnit> {
  const period = utcMonth(at);
  const result = await env.DB.prepare(
    `INSERT INTO usage_counters (organization_id, period, metric, used) VALUES (?, ?, 'tickets', 1)
     ON CONFLICT (organization_id, period, metric) DO UPDATE SET used = used + 1
     WHERE ? IS NULL OR used < ?`,
  )
    .bind(organizationId, period.key, limit, limit)
    .run();
  if (result.meta.changes === 0) {
    const row = await env.DB.prepare("SELECT used FROM usage_counters WHERE organization_id = ? AND period = ? AND metric = 'tickets'")
      .bind(organizationId, period.key)
      .first<{ used: number }>();
    throw new ApiError("QUOTA_EXCEEDED", `The monthly quota of ${limit} tickets is used up`, {
      limit,
      used: row?.used ?? limit,
      resetsAt: iso(period.end),
    });
  }
  return {
    async refund() {
      await env.DB.prepare(
        "UPDATE usage_counters SET used = used - 1 WHERE organization_id = ? AND period = ? AND metric = 'tickets' AND used > 0",
      )
        .bind(organizationId, period.key)
        .run();
    },
  };
}
