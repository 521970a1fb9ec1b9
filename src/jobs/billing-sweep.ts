// The billing part of the minute sweep: what happens when a paid period ends.
import { and, eq, inArray, lte, ne, or, type SQL } from "drizzle-orm";
import { subscriptions } from "../db/schema";
import { GRACE_PERIOD_MS, periodEnd, priceOf } from "../domain/billing";
import { PLAN_RANK, type PaidPlan } from "../domain/plans";
import { utcMonth } from "../lib/time";
import { newSandboxRef, signSandboxEvent } from "../providers/sandbox";
import { fallToStarter, type SubscriptionRow, receiveProviderEvent } from "../billing";
import { rulesChanged } from "../tickets";
import { ApiError } from "../http/errors";
import { type Deps } from "../http/deps";

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
export async function sweepSubscriptions(deps: Deps, at: number): Promise<{ renewed: number; fellBack: number }> {
  const { db } = deps;
  // Only rows with something to do now, so Stripe subscriptions waiting for their renewal event
  // (or past_due ones inside their grace) never crowd the others out of the batch.
  const s = subscriptions;
  const due = await db
    .select()
    .from(s)
    .where(
      and(
        ne(s.plan, "starter"),
        lte(s.currentPeriodEnd, at),
        or(
          eq(s.cancelAtPeriodEnd, true),
          eq(s.scheduledPlan, "starter"),
          and(eq(s.status, "past_due"), lte(s.graceUntil, at)),
          and(eq(s.status, "active"), or(inArray(s.provider, ["sandbox", "fedapay"]), lte(s.currentPeriodEnd, at - GRACE_PERIOD_MS))),
        ),
      ),
    )
    .orderBy(s.currentPeriodEnd)
    .limit(SWEEP_LIMIT);
  let renewed = 0;
  let fellBack = 0;
  for (const sub of due) {
    const ended = sub.currentPeriodEnd;
    if (sub.cancelAtPeriodEnd || sub.scheduledPlan === "starter") {
      fellBack += await fellToStarter(deps, sub.organizationId, at, eq(s.currentPeriodEnd, ended));
    } else if (sub.status === "past_due") {
      if (sub.graceUntil !== null && sub.graceUntil <= at) {
        fellBack += await fellToStarter(deps, sub.organizationId, at, and(eq(s.status, "past_due"), lte(s.graceUntil, at)));
      }
    } else if (sub.provider === "sandbox" && sub.providerSubscriptionId) {
      try {
        await chargeSandboxRenewal(deps, sub, sub.providerSubscriptionId, at);
        renewed += 1;
      } catch (err) {
        // One organization's failure must not stop the others' renewals; the next sweep tries again.
        console.error(JSON.stringify({ billing: "sandbox renewal", organizationId: sub.organizationId, error: String(err) }));
      }
    } else if (sub.provider === "fedapay") {
      await db
        .update(s)
        .set({ status: "past_due", graceUntil: ended + GRACE_PERIOD_MS, updatedAt: at })
        .where(and(eq(s.organizationId, sub.organizationId), eq(s.status, "active"), eq(s.currentPeriodEnd, ended)));
    } else if (ended + GRACE_PERIOD_MS <= at) {
      // Stripe never told us about this period: after the grace period, nothing paid means starter.
      fellBack += await fellToStarter(deps, sub.organizationId, at, eq(s.currentPeriodEnd, ended));
    }
  }
  const month = utcMonth(at);
  await db
    .update(s)
    .set({ currentPeriodStart: month.start, currentPeriodEnd: month.end, updatedAt: at })
    .where(and(eq(s.plan, "starter"), lte(s.currentPeriodEnd, at)));
  return { renewed, fellBack };
}

/** Moves the organization back to starter while `when` holds; when it applied, its rooms learn the starter limits. */
async function fellToStarter(deps: Deps, organizationId: string, at: number, when: SQL | undefined): Promise<number> {
  const changed = await fallToStarter(deps, organizationId, at, when);
  if (changed > 0) {
    try {
      await rulesChanged(deps, organizationId, at);
    } catch (err) {
      // A room that did not confirm the starter limits must not stop the other organizations'
      // sweep. The plan is in D1 with a new rules version: every request that reads the queue
      // row afresh, and every kept row within HOT_QUEUE_TTL_MS, takes the room past it.
      if (!(err instanceof ApiError && err.code === "CHANGE_NOT_CONFIRMED")) throw err;
      console.warn(JSON.stringify({ billing: "fell to starter, rooms unconfirmed", organizationId, queueIds: err.details.queueIds }));
    }
  }
  return changed;
}

/** The sandbox's recurring payment: one signed invoice event, through the same receiver as a provider's. */
async function chargeSandboxRenewal(deps: Deps, sub: SubscriptionRow, subscriptionId: string, at: number): Promise<void> {
  const { env } = deps;
  const current = sub.plan;
  if (current === "starter") return; // the sweep takes paid plans only
  // A downgrade scheduled for the period's end is what the renewal charges.
  const plan: PaidPlan =
    sub.scheduledPlan && sub.scheduledPlan !== "starter" && PLAN_RANK[sub.scheduledPlan] < PLAN_RANK[current] ? sub.scheduledPlan : current;
  const start = sub.currentPeriodEnd;
  const signed = await signSandboxEvent(
    env,
    sub.sandboxRenewalsFail ? "invoice.payment_failed" : "invoice.paid",
    {
      subscriptionId,
      invoiceId: newSandboxRef("inv"),
      amount: priceOf(plan, sub.billingInterval, sub.currency),
      currency: sub.currency,
      periodStart: start,
      periodEnd: periodEnd(start, sub.billingInterval),
    },
    at,
  );
  await receiveProviderEvent(deps, "sandbox", signed.rawBody, signed.signature, at);
}
