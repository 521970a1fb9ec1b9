// Subscription use cases: read, change plan (checkout or scheduled downgrade), cancel, and the
// state moves shared by the webhook receiver and the cron sweep.
import { and, desc, eq, gt, ne, type SQL } from "drizzle-orm";
import { billingCheckouts, organizations, subscriptions, verifiedDomains } from "../db/schema";
import { CHECKOUT_TTL_MS, planChange, priceOf, providerForCurrency, subscriptionRecord } from "../domain/billing";
import type { BillingInterval, Currency, PaidPlan, Plan } from "../domain/plans";
import { ApiError, invalidState, notFound } from "../http/errors";
import { newId } from "../lib/ids";
import { utcMonth } from "../lib/time";
import type { CheckoutRequest, CheckoutSession } from "../providers/billing";
import { createFedaPayCheckout } from "../providers/fedapay";
import { createSandboxCheckout, sandboxEnabled } from "../providers/sandbox";
import { createStripeCheckout, setStripeCancelAtPeriodEnd, setStripeRenewalPrice } from "../providers/stripe";
import type { Deps } from "../http/deps";

export type SubscriptionRow = typeof subscriptions.$inferSelect;
export type CheckoutRow = typeof billingCheckouts.$inferSelect;

export async function loadSubscription({ db }: Deps, organizationId: string): Promise<SubscriptionRow> {
  const row = await db.select().from(subscriptions).where(eq(subscriptions.organizationId, organizationId)).get();
  if (!row) throw notFound("Organization");
  return row;
}

export async function openCheckoutOf({ db }: Deps, organizationId: string, at: number): Promise<CheckoutRow | null> {
  const row = await db
    .select()
    .from(billingCheckouts)
    .where(
      and(eq(billingCheckouts.organizationId, organizationId), eq(billingCheckouts.status, "open"), gt(billingCheckouts.expiresAt, at)),
    )
    .orderBy(desc(billingCheckouts.createdAt))
    .get();
  return row ?? null;
}

export type SubscriptionRecord = ReturnType<typeof subscriptionRecord>;

export async function describeSubscription(deps: Deps, organizationId: string, at: number): Promise<SubscriptionRecord> {
  const [sub, checkout] = await Promise.all([loadSubscription(deps, organizationId), openCheckoutOf(deps, organizationId, at)]);
  return subscriptionRecord(sub, checkout);
}

function stripeOf({ env }: Deps, sub: SubscriptionRow): string | null {
  return sub.provider === "stripe" && sub.providerSubscriptionId && env.STRIPE_SECRET_KEY ? sub.providerSubscriptionId : null;
}

async function atProvider<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    console.error(JSON.stringify({ billing: what, error: String(err) }));
    throw new ApiError("PAYMENT_PROVIDER_ERROR", `The payment provider did not accept the request (${what}); try again`);
  }
}

function renewalPrice(sub: SubscriptionRow, plan: PaidPlan) {
  return { plan, billingInterval: sub.billingInterval, currency: sub.currency, amount: priceOf(plan, sub.billingInterval, sub.currency) };
}

export interface PlanChangeInput {
  plan: Plan;
  billingInterval?: BillingInterval | undefined;
  currency?: Currency | undefined;
  returnUrl?: string | undefined;
}

/**
 * PATCH subscription: an upgrade (or another interval) opens a checkout and changes nothing
 * until a verified provider event says it was paid; a downgrade (starter included) is
 * scheduled for the end of the paid period; asking for the plan in force drops a scheduled change.
 */
export async function changePlan(
  deps: Deps,
  organizationId: string,
  input: PlanChangeInput,
  baseUrl: string,
  at: number,
): Promise<SubscriptionRecord & { checkout?: CheckoutView }> {
  const { db, env } = deps;
  const sub = await loadSubscription(deps, organizationId);
  const interval = input.billingInterval ?? (sub.plan === "starter" ? "monthly" : sub.billingInterval);
  const change = planChange(sub, input.plan, interval);
  if (change === "checkout") {
    const currency = input.currency ?? sub.currency;
    const checkout = await startCheckout(
      deps,
      organizationId,
      input.plan as PaidPlan,
      interval,
      currency,
      input.returnUrl ?? null,
      baseUrl,
      at,
    );
    return { ...(await describeSubscription(deps, organizationId, at)), checkout };
  }
  if (change === "schedule") {
    const stripeId = stripeOf(deps, sub);
    if (input.plan === "starter" && stripeId)
      await atProvider("cancel at period end", () => setStripeCancelAtPeriodEnd(env, stripeId, true));
    if (input.plan !== "starter" && stripeId)
      await atProvider("downgrade at renewal", () => setStripeRenewalPrice(env, stripeId, renewalPrice(sub, input.plan as PaidPlan)));
    await db
      .update(subscriptions)
      .set({ scheduledPlan: input.plan, cancelAtPeriodEnd: input.plan === "starter", updatedAt: at })
      .where(eq(subscriptions.organizationId, organizationId));
  } else if (change === "resume") {
    const stripeId = stripeOf(deps, sub);
    if (sub.cancelAtPeriodEnd && stripeId) await atProvider("resume", () => setStripeCancelAtPeriodEnd(env, stripeId, false));
    if (sub.scheduledPlan && sub.scheduledPlan !== "starter" && stripeId && sub.plan !== "starter") {
      const current = sub.plan;
      await atProvider("undo downgrade", () => setStripeRenewalPrice(env, stripeId, renewalPrice(sub, current)));
    }
    await db
      .update(subscriptions)
      .set({ scheduledPlan: null, cancelAtPeriodEnd: false, cancelReason: null, updatedAt: at })
      .where(eq(subscriptions.organizationId, organizationId));
  }
  return describeSubscription(deps, organizationId, at);
}

/** Cancel: the paid plan stays until currentPeriodEnd, then the sweep moves the organization to starter. */
export async function cancelSubscription(
  deps: Deps,
  organizationId: string,
  reason: string | null,
  at: number,
): Promise<SubscriptionRecord> {
  const { db, env } = deps;
  const sub = await loadSubscription(deps, organizationId);
  const checkout = await openCheckoutOf(deps, organizationId, at);
  if (sub.plan === "starter" && !checkout) {
    throw invalidState("starter", ["pro", "enterprise"], "The free starter plan has nothing to cancel");
  }
  if (checkout) {
    await db
      .update(billingCheckouts)
      .set({ status: "expired" })
      .where(and(eq(billingCheckouts.id, checkout.id), eq(billingCheckouts.status, "open")));
  }
  if (sub.plan !== "starter") {
    const stripeId = stripeOf(deps, sub);
    if (stripeId && !sub.cancelAtPeriodEnd) await atProvider("cancel at period end", () => setStripeCancelAtPeriodEnd(env, stripeId, true));
    await db
      .update(subscriptions)
      .set({ cancelAtPeriodEnd: true, scheduledPlan: "starter", cancelReason: reason, updatedAt: at })
      .where(eq(subscriptions.organizationId, organizationId));
  }
  return describeSubscription(deps, organizationId, at);
}

export interface CheckoutView {
  id: string;
  provider: "stripe" | "fedapay" | "sandbox";
  plan: Plan;
  billingInterval: BillingInterval;
  currency: Currency;
  amount: number;
  checkoutUrl: string;
  expiresAt: string;
}

/**
 * Opens a payment for `plan` with the provider of `currency`. The checkout row is written first
 * (so a fast provider event finds it), then completed with the provider's url and reference.
 */
export async function startCheckout(
  { db, env }: Deps,
  organizationId: string,
  plan: PaidPlan,
  interval: BillingInterval,
  currency: Currency,
  returnUrl: string | null,
  baseUrl: string,
  at: number,
): Promise<CheckoutView> {
  const org = await db
    .select({ name: organizations.name, billingEmail: organizations.billingEmail })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .get();
  if (!org) throw notFound("Organization");
  const provider = providerForCurrency(currency, { stripe: Boolean(env.STRIPE_SECRET_KEY), fedapay: Boolean(env.FEDAPAY_SECRET_KEY) });
  if (provider === "sandbox" && !sandboxEnabled(env)) {
    // Production without this currency's provider keys: refused, never a free sandbox checkout.
    const missing = currency === "XOF" ? "FEDAPAY_SECRET_KEY" : "STRIPE_SECRET_KEY";
    throw new ApiError("PROVIDER_UNAVAILABLE", `Payments in ${currency} are not available: the payment provider is not configured`, {
      field: "currency",
      currency,
      provider: currency === "XOF" ? "fedapay" : "stripe",
      missing,
    });
  }
  const id = newId("chk");
  const amount = priceOf(plan, interval, currency);
  const expiresAt = at + CHECKOUT_TTL_MS;
  await db.batch([
    // One open checkout per organization: a new plan change supersedes the previous one.
    db
      .update(billingCheckouts)
      .set({ status: "expired" })
      .where(and(eq(billingCheckouts.organizationId, organizationId), eq(billingCheckouts.status, "open"))),
    db.insert(billingCheckouts).values({
      id,
      organizationId,
      provider,
      plan,
      billingInterval: interval,
      currency,
      amount,
      status: "open",
      returnUrl,
      createdAt: at,
      expiresAt,
    }),
  ]);
  const request: CheckoutRequest = {
    checkoutId: id,
    organizationId,
    organizationName: org.name,
    plan,
    billingInterval: interval,
    currency,
    amount,
    returnUrl: returnUrl ?? `${baseUrl}/v1/billing/checkouts/${id}`,
    customerEmail: org.billingEmail,
  };
  let session: CheckoutSession;
  try {
    session =
      provider === "stripe"
        ? await atProvider("checkout", () => createStripeCheckout(env, request))
        : provider === "fedapay"
          ? await atProvider("checkout", () => createFedaPayCheckout(env, request))
          : createSandboxCheckout(baseUrl, request);
  } catch (err) {
    await db.update(billingCheckouts).set({ status: "failed" }).where(eq(billingCheckouts.id, id));
    throw err;
  }
  await db.update(billingCheckouts).set({ url: session.url, providerRef: session.providerRef }).where(eq(billingCheckouts.id, id));
  return {
    id,
    provider,
    plan,
    billingInterval: interval,
    currency,
    amount,
    checkoutUrl: session.url,
    expiresAt: new Date(expiresAt).toISOString(),
  };
}

/** Puts an organization back on the free plan (a calendar-month period) when `when` still holds; answers how many rows moved (0 or 1). */
export async function fallToStarter({ db }: Deps, organizationId: string, at: number, when: SQL | undefined): Promise<number> {
  const month = utcMonth(at);
  const result = await db
    .update(subscriptions)
    .set({
      plan: "starter",
      billingInterval: "monthly",
      status: "active",
      currentPeriodStart: month.start,
      currentPeriodEnd: month.end,
      cancelAtPeriodEnd: false,
      provider: null,
      providerSubscriptionId: null,
      scheduledPlan: null,
      graceUntil: null,
      cancelReason: null,
      sandboxRenewalsFail: false,
      updatedAt: at,
    })
    .where(and(eq(subscriptions.organizationId, organizationId), ne(subscriptions.plan, "starter"), when));
  return result.meta.changes;
}

export async function findCheckout({ db }: Deps, id: string): Promise<CheckoutRow | null> {
  return (await db.select().from(billingCheckouts).where(eq(billingCheckouts.id, id)).get()) ?? null;
}

/** The organization's verified domains (lower case): where a checkout may send the payer back to. */
export async function verifiedDomainsOf({ db }: Deps, organizationId: string): Promise<string[]> {
  const rows = await db
    .select({ domain: verifiedDomains.domain })
    .from(verifiedDomains)
    .where(and(eq(verifiedDomains.organizationId, organizationId), eq(verifiedDomains.status, "verified")));
  return rows.map((r) => r.domain.toLowerCase());
}
