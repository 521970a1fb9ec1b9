// The provider webhook receiver: verify the signature on the raw body, apply each provider
// event once (by its id), and never let an older event undo a newer state.
import { and, eq, isNull, lt, lte, ne, or, sql } from "drizzle-orm";
import { recordAudit } from "../audit/audit";
import { billingCheckouts, billingEvents, invoices, subscriptions } from "../db/schema";

type Invoice = typeof invoices.$inferInsert;
import { GRACE_PERIOD_MS, periodEnd } from "../domain/billing";
import { PLAN_RANK, type Plan } from "../domain/plans";
import { ApiError, notFound } from "../http/errors";
import { newId } from "../lib/ids";
import type { CheckoutPaid, ProviderEvent, ProviderName, RenewalOutcome } from "../providers/billing";
import { FEDAPAY_SIGNATURE_HEADER, parseFedaPayEvent } from "../providers/fedapay";
import { parseSandboxEvent, SANDBOX_SIGNATURE_HEADER, sandboxEnabled } from "../providers/sandbox";
import { cancelStripeSubscription, parseStripeEvent } from "../providers/stripe";
import { fallToStarter, type CheckoutRow } from "./billing";
import { rulesChanged } from "../tickets/room-rules";
import { type Deps } from "../http/deps";

export const SIGNATURE_HEADERS: Record<ProviderName, string> = {
  stripe: "Stripe-Signature",
  fedapay: FEDAPAY_SIGNATURE_HEADER,
  sandbox: SANDBOX_SIGNATURE_HEADER,
};

export interface Receipt {
  eventId: string;
  type: string;
  /** false: this event id was applied before; nothing was done again. */
  applied: boolean;
}

/**
 * Verifies and applies one provider event. A signature that is missing, wrong or outside the
 * 5-minute window is 400 with nothing changed; an event type we do not use is acknowledged.
 */
export async function receiveProviderEvent(
  deps: Deps,
  provider: ProviderName,
  rawBody: string,
  signature: string | undefined,
  at: number,
  /** Runs once the signature has verified, before the event is applied (the provider's rate bucket). */
  verified: () => Promise<void> = async () => {},
): Promise<Receipt> {
  const { db, env } = deps;
  // In production the sandbox does not exist: its events are not even read.
  if (provider === "sandbox" && !sandboxEnabled(env)) throw notFound("Route");
  const event =
    provider === "stripe"
      ? await parseStripeEvent(env, rawBody, signature, at)
      : provider === "fedapay"
        ? await parseFedaPayEvent(env, rawBody, signature, at)
        : await parseSandboxEvent(env, rawBody, signature, at);
  if (!event) {
    throw new ApiError("VALIDATION_ERROR", "The webhook signature is missing, invalid or outside the 5-minute window", {
      field: SIGNATURE_HEADERS[provider],
      reason: "signature verification failed",
    });
  }
  await verified();
  const thisEvent = and(eq(billingEvents.provider, provider), eq(billingEvents.eventId, event.id));
  const claimed = await db
    .insert(billingEvents)
    .values({ provider, eventId: event.id, type: event.type, organizationId: null, receivedAt: at })
    .onConflictDoNothing()
    .returning({ eventId: billingEvents.eventId });
  if (claimed.length === 0) return { eventId: event.id, type: event.type, applied: false };
  try {
    const applied = await applyEvent(deps, event, at);
    const organizationId = applied?.organizationId ?? null;
    if (applied) await auditPlanChange(deps, provider, event.id, applied, at);
    if (organizationId) {
      await db.update(billingEvents).set({ organizationId }).where(thisEvent);
      // The plan may have changed: the rooms learn its limits before the provider is answered.
      await rulesChanged(deps, organizationId, at);
    }
  } catch (err) {
    // Not applied: let the provider's retry try again.
    await db.delete(billingEvents).where(thisEvent);
    throw err;
  }
  return { eventId: event.id, type: event.type, applied: true };
}

/** The organization an event concerned, and its plan before the event was applied (null: unknown). */
interface Applied {
  organizationId: string;
  planBefore: Plan | null;
}

/**
 * A provider's event that moved the organization to another plan is in its audit log
 * (`subscription.plan_changed`, issue 40): the actor is the system (no person or key acted),
 * the changes say the plan before and after and which provider event did it.
 */
async function auditPlanChange(deps: Deps, provider: ProviderName, eventId: string, applied: Applied, at: number): Promise<void> {
  const { db } = deps;
  if (!applied.planBefore) return;
  const now = await db
    .select({ plan: subscriptions.plan })
    .from(subscriptions)
    .where(eq(subscriptions.organizationId, applied.organizationId))
    .get();
  if (!now || now.plan === applied.planBefore) return;
  await recordAudit(
    deps,
    { actor: { type: "system", id: null }, ip: null, requestId: null },
    {
      organizationId: applied.organizationId,
      entityType: "subscription",
      entityId: applied.organizationId,
      action: "subscription.plan_changed",
      changes: {
        plan: { before: applied.planBefore, after: now.plan },
        providerEvent: { before: null, after: `${provider}:${eventId}` },
      },
    },
    at,
  );
}

async function planOf({ db }: Deps, organizationId: string): Promise<Plan | null> {
  const row = await db
    .select({ plan: subscriptions.plan })
    .from(subscriptions)
    .where(eq(subscriptions.organizationId, organizationId))
    .get();
  return row?.plan ?? null;
}

/** Applies the event's change; answers the organization it concerned, if any, with its plan before. */
async function applyEvent(deps: Deps, event: ProviderEvent, at: number): Promise<Applied | null> {
  const { db } = deps;
  const change = event.change;
  switch (change.kind) {
    case "checkout_paid": {
      const checkout = await checkoutOf(deps, event.provider, change.checkoutId, change.providerRef);
      const planBefore = checkout ? await planOf(deps, checkout.organizationId) : null;
      const organizationId = await applyCheckoutPaid(deps, event, change, at);
      return organizationId ? { organizationId, planBefore } : null;
    }
    case "renewal_paid":
    case "renewal_failed": {
      const sub = await subscriptionOfProvider(deps, event.provider, change.providerSubscriptionId);
      const organizationId = await applyRenewal(deps, event, change, at);
      return organizationId ? { organizationId, planBefore: sub?.plan ?? null } : null;
    }
    case "subscription_ended": {
      const sub = await subscriptionOfProvider(deps, event.provider, change.providerSubscriptionId);
      if (!sub) return null;
      await fallToStarter(
        deps,
        sub.organizationId,
        at,
        and(
          eq(subscriptions.providerSubscriptionId, change.providerSubscriptionId),
          or(isNull(subscriptions.lastEventAt), lte(subscriptions.lastEventAt, event.createdAt)),
        ),
      );
      return { organizationId: sub.organizationId, planBefore: sub.plan };
    }
    case "checkout_failed": {
      const checkout = await checkoutOf(deps, event.provider, change.checkoutId, change.providerRef);
      if (!checkout) return null;
      await db
        .update(billingCheckouts)
        .set({ status: "failed" })
        .where(and(eq(billingCheckouts.id, checkout.id), eq(billingCheckouts.status, "open")));
      return { organizationId: checkout.organizationId, planBefore: null };
    }
    case "ignored":
      return null;
  }
}

async function checkoutOf(
  { db }: Deps,
  provider: ProviderName,
  checkoutId: string | null,
  providerRef: string | null,
): Promise<CheckoutRow | null> {
  const row = checkoutId
    ? await db.select().from(billingCheckouts).where(eq(billingCheckouts.id, checkoutId)).get()
    : providerRef
      ? await db
          .select()
          .from(billingCheckouts)
          .where(and(eq(billingCheckouts.provider, provider), eq(billingCheckouts.providerRef, providerRef)))
          .get()
      : undefined;
  // An event only ever speaks for checkouts its own provider opened.
  return row && row.provider === provider ? row : null;
}

async function subscriptionOfProvider({ db }: Deps, provider: ProviderName, providerSubscriptionId: string) {
  return db
    .select()
    .from(subscriptions)
    .where(and(eq(subscriptions.provider, provider), eq(subscriptions.providerSubscriptionId, providerSubscriptionId)))
    .get();
}

/** One invoice per provider payment id; a paid invoice never turns back into a failed one. */
function upsertInvoice(
  { db }: Deps,
  invoice: {
    organizationId: string;
    provider: ProviderName;
    providerRef: string;
    checkoutId: string | null;
    plan: Plan;
    billingInterval: Invoice["billingInterval"];
    amount: number;
    currency: Invoice["currency"];
    status: "paid" | "failed";
    periodStart: number;
    periodEnd: number;
  },
  at: number,
) {
  return db
    .insert(invoices)
    .values({ id: newId("inv"), ...invoice, createdAt: at, paidAt: invoice.status === "paid" ? at : null })
    .onConflictDoUpdate({
      target: [invoices.provider, invoices.providerRef],
      set: { status: sql`excluded.status`, paidAt: sql`excluded.paid_at` },
      setWhere: ne(invoices.status, "paid"),
    });
}

async function applyCheckoutPaid(deps: Deps, event: ProviderEvent, change: CheckoutPaid, at: number): Promise<string | null> {
  const { db } = deps;
  const checkout = await checkoutOf(deps, event.provider, change.checkoutId, change.providerRef);
  if (!checkout) return null;
  if (change.paidAmount !== null && change.paidAmount !== checkout.amount) {
    console.error(
      JSON.stringify({ billing: "amount mismatch", checkoutId: checkout.id, paid: change.paidAmount, expected: checkout.amount }),
    );
    return checkout.organizationId;
  }
  const before = await db.select().from(subscriptions).where(eq(subscriptions.organizationId, checkout.organizationId)).get();
  const start = change.periodStart ?? event.createdAt;
  const end = change.periodEnd ?? periodEnd(start, checkout.billingInterval);
  const invoice = upsertInvoice(
    deps,
    {
      organizationId: checkout.organizationId,
      provider: event.provider,
      providerRef: change.invoiceRef,
      checkoutId: checkout.id,
      plan: checkout.plan,
      billingInterval: checkout.billingInterval,
      amount: checkout.amount,
      currency: checkout.currency,
      status: "paid",
      periodStart: start,
      periodEnd: end,
    },
    at,
  );
  if (checkout.status === "completed") {
    // The same payment told twice (Stripe's checkout event and its first invoice): one invoice, no second activation.
    await invoice;
    return checkout.organizationId;
  }
  await db.batch([
    db.update(billingCheckouts).set({ status: "completed", completedAt: at }).where(eq(billingCheckouts.id, checkout.id)),
    db
      .update(billingCheckouts)
      .set({ status: "expired" })
      .where(
        and(
          eq(billingCheckouts.organizationId, checkout.organizationId),
          eq(billingCheckouts.status, "open"),
          ne(billingCheckouts.id, checkout.id),
        ),
      ),
    db
      .update(subscriptions)
      .set({
        plan: checkout.plan,
        billingInterval: checkout.billingInterval,
        currency: checkout.currency,
        status: "active",
        currentPeriodStart: start,
        currentPeriodEnd: end,
        cancelAtPeriodEnd: false,
        provider: event.provider,
        providerSubscriptionId: change.providerSubscriptionId,
        scheduledPlan: null,
        graceUntil: null,
        cancelReason: null,
        lastEventAt: event.createdAt,
        sandboxRenewalsFail: Boolean(change.renewalsFail),
        updatedAt: at,
      })
      .where(
        and(
          eq(subscriptions.organizationId, checkout.organizationId),
          or(isNull(subscriptions.lastEventAt), lte(subscriptions.lastEventAt, event.createdAt)),
        ),
      ),
    invoice,
  ]);
  // An upgrade from one Stripe subscription to another: the old one must stop charging.
  if (before?.provider === "stripe" && before.providerSubscriptionId && before.providerSubscriptionId !== change.providerSubscriptionId) {
    await stopOldStripeSubscription(deps, before.providerSubscriptionId);
  }
  return checkout.organizationId;
}

async function stopOldStripeSubscription({ env }: Deps, subscriptionId: string): Promise<void> {
  if (!env.STRIPE_SECRET_KEY) return;
  try {
    await cancelStripeSubscription(env, subscriptionId);
  } catch (err) {
    console.error(JSON.stringify({ billing: "cancel replaced Stripe subscription", subscriptionId, error: String(err) }));
  }
}

async function applyRenewal(deps: Deps, event: ProviderEvent, change: RenewalOutcome, at: number): Promise<string | null> {
  const { db } = deps;
  const sub = await subscriptionOfProvider(deps, event.provider, change.providerSubscriptionId);
  if (!sub) return null;
  // A scheduled downgrade to another paid plan starts with the first renewal after it.
  const renewedPlan: Plan =
    sub.scheduledPlan && sub.scheduledPlan !== "starter" && PLAN_RANK[sub.scheduledPlan] < PLAN_RANK[sub.plan]
      ? sub.scheduledPlan
      : sub.plan;
  const invoice = upsertInvoice(
    deps,
    {
      organizationId: sub.organizationId,
      provider: event.provider,
      providerRef: change.invoiceRef,
      checkoutId: null,
      plan: renewedPlan,
      billingInterval: sub.billingInterval,
      amount: change.amount,
      currency: change.currency,
      status: change.kind === "renewal_paid" ? "paid" : "failed",
      periodStart: change.periodStart,
      periodEnd: change.periodEnd,
    },
    at,
  );
  if (change.kind === "renewal_paid") {
    // Only a payment for a later period moves the period on: a late or replayed older one changes nothing.
    const s = subscriptions;
    await db.batch([
      invoice,
      db
        .update(s)
        .set({
          plan: renewedPlan,
          scheduledPlan: sql`CASE WHEN ${s.scheduledPlan} = ${renewedPlan} THEN NULL ELSE ${s.scheduledPlan} END`,
          status: "active",
          currentPeriodStart: change.periodStart,
          currentPeriodEnd: change.periodEnd,
          graceUntil: null,
          lastEventAt: sql`MAX(COALESCE(${s.lastEventAt}, 0), ${event.createdAt})`,
          updatedAt: at,
        })
        .where(
          and(
            eq(s.organizationId, sub.organizationId),
            eq(s.providerSubscriptionId, change.providerSubscriptionId),
            lt(s.currentPeriodEnd, change.periodEnd),
          ),
        ),
    ]);
  } else {
    const s = subscriptions;
    await db.batch([
      invoice,
      db
        .update(s)
        .set({
          status: "past_due",
          graceUntil: sql`MAX(${s.currentPeriodEnd}, ${at}) + ${GRACE_PERIOD_MS}`,
          lastEventAt: event.createdAt,
          updatedAt: at,
        })
        .where(
          and(
            eq(s.organizationId, sub.organizationId),
            eq(s.providerSubscriptionId, change.providerSubscriptionId),
            eq(s.status, "active"),
            or(isNull(s.lastEventAt), lte(s.lastEventAt, event.createdAt)),
            lte(s.currentPeriodEnd, change.periodStart),
          ),
        ),
    ]);
  }
  return sub.organizationId;
}
