// Billing rules with no I/O: periods, the grace period, which provider collects a currency,
// what a plan change means, and the subscription record shown to integrators.
import { DAY, HOUR, iso, isoOrNull } from "../lib/time";
import { PLAN_RANK, PRICES, type BillingInterval, type Currency, type Plan } from "./plans";

/** A failed renewal keeps the paid plan this long (status past_due), then falls back to starter. */
export const GRACE_PERIOD_DAYS = 7;
export const GRACE_PERIOD_MS = GRACE_PERIOD_DAYS * DAY;
/** An unpaid checkout stops being shown (and counting as the pending change) after this. */
export const CHECKOUT_TTL_MS = 24 * HOUR;

/** The end of a period started at `start`: the same day and time one month or one year later, clamped to the month's end. */
export function periodEnd(start: number, interval: BillingInterval): number {
  const d = new Date(start);
  const months = interval === "yearly" ? 12 : 1;
  const targetMonth = d.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), targetMonth + 1, 0)).getUTCDate();
  return Date.UTC(
    d.getUTCFullYear(),
    targetMonth,
    Math.min(d.getUTCDate(), lastDay),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  );
}

export function priceOf(plan: Exclude<Plan, "starter">, interval: BillingInterval, currency: Currency): number {
  return PRICES[plan][interval][currency];
}

/**
 * What asking for `plan` (and interval) means from the current subscription:
 * - `checkout`: a payment is needed first (an upgrade, a paid plan from starter, another interval,
 *   paying again while past_due);
 * - `schedule`: a downgrade, taking effect at the end of the paid period (starter = cancel);
 * - `resume`: the plan in force was asked again while a change was scheduled: the change is dropped;
 * - `none`: nothing to do.
 */
export type PlanChange = "checkout" | "schedule" | "resume" | "none";

export interface CurrentSubscription {
  plan: Plan;
  billingInterval: BillingInterval;
  status: "active" | "incomplete" | "past_due" | "cancelled";
  scheduledPlan: Plan | null;
  cancelAtPeriodEnd: boolean;
}

export function planChange(current: CurrentSubscription, plan: Plan, interval: BillingInterval): PlanChange {
  if (plan === "starter") {
    if (current.plan === "starter") return "none";
    return current.scheduledPlan === "starter" ? "none" : "schedule";
  }
  if (current.plan === "starter" || PLAN_RANK[plan] > PLAN_RANK[current.plan]) return "checkout";
  if (PLAN_RANK[plan] < PLAN_RANK[current.plan]) return current.scheduledPlan === plan ? "none" : "schedule";
  if (current.status === "past_due" || interval !== current.billingInterval) return "checkout";
  return current.scheduledPlan !== null || current.cancelAtPeriodEnd ? "resume" : "none";
}

export interface SubscriptionState extends CurrentSubscription {
  organizationId: string;
  currency: Currency;
  currentPeriodStart: number;
  currentPeriodEnd: number;
  graceUntil: number | null;
  provider: "stripe" | "fedapay" | "sandbox" | null;
  cancelReason: string | null;
}

export interface OpenCheckout {
  id: string;
  plan: Plan;
  billingInterval: BillingInterval;
  currency: Currency;
  amount: number;
  url: string | null;
  expiresAt: number;
}

/**
 * The record integrators see (CONTRACT §8). While a checkout is open it shows the plan being
 * paid for with `status: incomplete` and its `checkoutUrl`; `effectivePlan` is always the plan
 * whose limits apply now.
 */
export function subscriptionRecord(sub: SubscriptionState, checkout: OpenCheckout | null) {
  const pending = checkout !== null;
  return {
    organizationId: sub.organizationId,
    plan: pending ? checkout.plan : sub.plan,
    billingInterval: pending ? checkout.billingInterval : sub.billingInterval,
    status: pending ? ("incomplete" as const) : sub.status,
    currency: pending ? checkout.currency : sub.currency,
    currentPeriodStart: iso(sub.currentPeriodStart),
    currentPeriodEnd: iso(sub.currentPeriodEnd),
    cancelAtPeriodEnd: sub.cancelAtPeriodEnd,
    ...(pending && checkout.url ? { checkoutUrl: checkout.url } : {}),
    effectivePlan: sub.plan,
    scheduledPlan: sub.scheduledPlan,
    graceUntil: isoOrNull(sub.graceUntil),
    provider: sub.provider,
    cancelReason: sub.cancelReason,
    amount: pending ? checkout.amount : sub.plan === "starter" ? 0 : priceOf(sub.plan, sub.billingInterval, sub.currency),
  };
}

/** The collector of a currency: Stripe for EUR/USD, FedaPay for XOF; the sandbox when that provider has no secret key. */
export function providerForCurrency(
  currency: Currency,
  configured: { stripe: boolean; fedapay: boolean },
): "stripe" | "fedapay" | "sandbox" {
  if (currency === "XOF") return configured.fedapay ? "fedapay" : "sandbox";
  return configured.stripe ? "stripe" : "sandbox";
}
