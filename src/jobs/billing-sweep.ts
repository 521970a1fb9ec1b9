// The billing part of the minute sweep: what happens when a paid period ends.
import { GRACE_PERIOD_MS, periodEnd, priceOf } from "../domain/billing";
import { PLAN_RANK, type PaidPlan } from "../domain/plans";
import type { Env } from "../env";
import { utcMonth } from "../lib/time";
import { newSandboxRef, signSandboxEvent } from "../providers/sandbox";
import { fallToStarterStatement, type SubscriptionRow, receiveProviderEvent } from "../billing";
import { rulesChanged } from "../tickets";

const SWEEP_LIMIT = 200;

/**
 * For every paid subscription whose period has ended (or whose grace has run out):
 * - cancelled (cancelAtPeriodEnd) → starter;
 * - past_due past its grace → starter;
 * - sandbox → the sandbox charges its "card" and sends the signed renewal event (paid, or declined);
 * - FedaPay (no recurring payments) → past_due with the grace period: paying again renews;
 * - Stripe renews on its own; if no renewal came within the grace period → starter.
 * Starter periods simply roll over to the current calendar month. Running it twice changes nothing more.
 */
export async function sweepSubscriptions(env: Env, at: number): Promise<{ renewed: number; fellBack: number }> {
  // Only rows with something to do now, so Stripe subscriptions waiting for their renewal event
  // (or past_due ones inside their grace) never crowd the others out of the batch.
  const due = await env.DB.prepare(
    `SELECT * FROM subscriptions WHERE plan != 'starter' AND current_period_end <= ?1 AND (
       cancel_at_period_end = 1 OR scheduled_plan = 'starter'
       OR (status = 'past_due' AND grace_until <= ?1)
       OR (status = 'active' AND (provider IN ('sandbox', 'fedapay') OR current_period_end <= ?2)))
     ORDER BY current_period_end LIMIT ?3`,
  )
    .bind(at, at - GRACE_PERIOD_MS, SWEEP_LIMIT)
    .all<Record<string, unknown>>();
  let renewed = 0;
  let fellBack = 0;
  for (const raw of due.results) {
    const sub = rowOf(raw);
    const ended = sub.currentPeriodEnd;
    if (sub.cancelAtPeriodEnd || sub.scheduledPlan === "starter") {
      fellBack += await fellToStarter(
        env,
        sub.organizationId,
        at,
        fallToStarterStatement(env, sub.organizationId, at, "current_period_end = ?", ended),
      );
    } else if (sub.status === "past_due") {
      if (sub.graceUntil !== null && sub.graceUntil <= at) {
        fellBack += await fellToStarter(
          env,
          sub.organizationId,
          at,
          fallToStarterStatement(env, sub.organizationId, at, "status = 'past_due' AND grace_until <= ?", at),
        );
      }
    } else if (sub.provider === "sandbox" && sub.providerSubscriptionId) {
      try {
        await chargeSandboxRenewal(env, sub, at);
        renewed += 1;
      } catch (err) {
        // One organization's failure must not stop the others' renewals; the next sweep tries again.
        console.error(JSON.stringify({ billing: "sandbox renewal", organizationId: sub.organizationId, error: String(err) }));
      }
    } else if (sub.provider === "fedapay") {
      await env.DB.prepare(
        "UPDATE subscriptions SET status = 'past_due', grace_until = ?, updated_at = ? WHERE organization_id = ? AND status = 'active' AND current_period_end = ?",
      )
        .bind(ended + GRACE_PERIOD_MS, at, sub.organizationId, ended)
        .run();
    } else if (ended + GRACE_PERIOD_MS <= at) {
      // Stripe never told us about this period: after the grace period, nothing paid means starter.
      fellBack += await fellToStarter(
        env,
        sub.organizationId,
        at,
        fallToStarterStatement(env, sub.organizationId, at, "current_period_end = ?", ended),
      );
    }
  }
  const month = utcMonth(at);
  await env.DB.prepare(
    "UPDATE subscriptions SET current_period_start = ?, current_period_end = ?, updated_at = ? WHERE plan = 'starter' AND current_period_end <= ?",
  )
    .bind(month.start, month.end, at, at)
    .run();
  return { renewed, fellBack };
}

/** Runs a move back to starter; when it applied, the organization's rooms learn the starter limits. */
async function fellToStarter(env: Env, organizationId: string, at: number, statement: D1PreparedStatement): Promise<number> {
  const changed = (await statement.run()).meta.changes;
  if (changed > 0) await rulesChanged(env, organizationId, at);
  return changed;
}

/** The sandbox's recurring payment: one signed invoice event, through the same receiver as a provider's. */
async function chargeSandboxRenewal(env: Env, sub: SubscriptionRow, at: number): Promise<void> {
  const plan = (
    sub.scheduledPlan && sub.scheduledPlan !== "starter" && PLAN_RANK[sub.scheduledPlan] < PLAN_RANK[sub.plan]
      ? sub.scheduledPlan
      : sub.plan
  ) as PaidPlan;
  const start = sub.currentPeriodEnd;
  const signed = await signSandboxEvent(
    env,
    sub.sandboxRenewalsFail ? "invoice.payment_failed" : "invoice.paid",
    {
      subscriptionId: sub.providerSubscriptionId!,
      invoiceId: newSandboxRef("inv"),
      amount: priceOf(plan, sub.billingInterval, sub.currency),
      currency: sub.currency,
      periodStart: start,
      periodEnd: periodEnd(start, sub.billingInterval),
    },
    at,
  );
  await receiveProviderEvent(env, "sandbox", signed.rawBody, signed.signature, at);
}

function rowOf(r: Record<string, unknown>): SubscriptionRow {
  return {
    organizationId: r.organization_id as string,
    plan: r.plan as SubscriptionRow["plan"],
    billingInterval: r.billing_interval as SubscriptionRow["billingInterval"],
    status: r.status as SubscriptionRow["status"],
    currency: r.currency as SubscriptionRow["currency"],
    currentPeriodStart: r.current_period_start as number,
    currentPeriodEnd: r.current_period_end as number,
    cancelAtPeriodEnd: Boolean(r.cancel_at_period_end),
    rateTierOverride: (r.rate_tier_override as SubscriptionRow["rateTierOverride"]) ?? null,
    customRatePerMinute: (r.custom_rate_per_minute as number | null) ?? null,
    customRatePerDay: (r.custom_rate_per_day as number | null) ?? null,
    createdAt: r.created_at as number,
    updatedAt: r.updated_at as number,
    provider: (r.provider as SubscriptionRow["provider"]) ?? null,
    providerSubscriptionId: (r.provider_subscription_id as string | null) ?? null,
    scheduledPlan: (r.scheduled_plan as SubscriptionRow["scheduledPlan"]) ?? null,
    graceUntil: (r.grace_until as number | null) ?? null,
    lastEventAt: (r.last_event_at as number | null) ?? null,
    cancelReason: (r.cancel_reason as string | null) ?? null,
    sandboxRenewalsFail: Boolean(r.sandbox_renewals_fail),
  };
}
