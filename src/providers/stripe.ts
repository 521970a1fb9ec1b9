// Stripe (EUR, USD): Checkout Sessions in subscription mode, and its webhook events turned into
// provider-neutral billing changes. The SDK runs in workerd with its fetch client; the fetch
// function is looked up at call time, so a spy installed by a test sees every request.
//
// The SDK (217 modules) is imported on first use, not when the Worker loads: a test file (or an
// isolate) that never bills through Stripe does not evaluate it (~1.5 s a test file, issue 37).
// The deployed bundle still contains it (esbuild inlines the dynamic import).
import type Stripe from "stripe";
import { SIGNATURE_TOLERANCE_SECONDS } from "../lib/signed-header";
import { currencyOf, type BillingChange, type CheckoutRequest, type CheckoutSession, type ProviderEvent } from "./billing";

export interface StripeConfig {
  STRIPE_SECRET_KEY?: string;
  STRIPE_WEBHOOK_SECRET?: string;
  /** e.g. http://127.0.0.1:12111 for a local fake; default https://api.stripe.com */
  STRIPE_API_BASE?: string;
}

let loaded: Promise<typeof Stripe> | null = null;
/** The Stripe SDK's default export, imported once. */
function sdk(): Promise<typeof Stripe> {
  loaded ??= import("stripe").then((m) => m.default);
  return loaded;
}

async function client(config: StripeConfig): Promise<Stripe> {
  const Stripe = await sdk();
  const base = new URL(config.STRIPE_API_BASE ?? "https://api.stripe.com");
  const protocol = base.protocol === "http:" ? "http" : "https";
  return new Stripe(config.STRIPE_SECRET_KEY ?? "", {
    httpClient: Stripe.createFetchHttpClient((input, init) => fetch(input, init)),
    host: base.hostname,
    port: base.port || (protocol === "http" ? 80 : 443),
    protocol,
    maxNetworkRetries: 1,
  });
}

export async function createStripeCheckout(config: StripeConfig, req: CheckoutRequest): Promise<CheckoutSession> {
  const metadata = {
    organizationId: req.organizationId,
    checkoutId: req.checkoutId,
    plan: req.plan,
    billingInterval: req.billingInterval,
  };
  const stripe = await client(config);
  const session = await stripe.checkout.sessions.create(
    {
      mode: "subscription",
      client_reference_id: req.checkoutId,
      line_items: [
        {
          quantity: 1,
          price_data: {
            currency: req.currency.toLowerCase(),
            unit_amount: req.amount,
            recurring: { interval: req.billingInterval === "yearly" ? "year" : "month" },
            product_data: { name: `${req.plan === "pro" ? "Pro" : "Enterprise"} plan (${req.billingInterval})` },
          },
        },
      ],
      success_url: req.returnUrl,
      cancel_url: req.returnUrl,
      ...(req.customerEmail ? { customer_email: req.customerEmail } : {}),
      metadata,
      subscription_data: { metadata },
    },
    // A retried creation of the same checkout gives back the same session.
    { idempotencyKey: req.checkoutId },
  );
  if (!session.url) throw new Error("Stripe answered a Checkout Session without a url");
  return { url: session.url, providerRef: session.id };
}

/** Asks Stripe to stop renewing at the end of the paid period (cancel), or to go on (resume). */
export async function setStripeCancelAtPeriodEnd(config: StripeConfig, subscriptionId: string, cancel: boolean): Promise<void> {
  await (await client(config)).subscriptions.update(subscriptionId, { cancel_at_period_end: cancel });
}

/** Verifies the Stripe-Signature header on the raw body (5-minute window at `atMs`) and parses the event. */
export async function parseStripeEvent(
  config: StripeConfig,
  rawBody: string,
  signature: string | undefined,
  atMs: number,
): Promise<ProviderEvent | null> {
  if (!signature || !config.STRIPE_WEBHOOK_SECRET) return null;
  // The SDK only refuses timestamps too old; one dated ahead of now by more than the tolerance
  // is refused here, so the window applies both ways (docs/billing.md, issue 26).
  const t = /(?:^|,)\s*t=(\d+)/.exec(signature);
  if (t && Number(t[1]) - atMs / 1000 > SIGNATURE_TOLERANCE_SECONDS) return null;
  const Stripe = await sdk();
  let event: Stripe.Event;
  try {
    event = await Stripe.webhooks.constructEventAsync(
      rawBody,
      signature,
      config.STRIPE_WEBHOOK_SECRET,
      SIGNATURE_TOLERANCE_SECONDS,
      Stripe.createSubtleCryptoProvider(),
      atMs,
    );
  } catch {
    return null;
  }
  return { provider: "stripe", id: event.id, type: event.type, createdAt: event.created * 1000, change: stripeChange(event) };
}

type Loose = Record<string, any>;

function idOf(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (value && typeof value === "object" && typeof (value as Loose).id === "string") return (value as Loose).id;
  return null;
}

/** The subscription of an invoice: `parent.subscription_details` (recent API versions) or `subscription`. */
function invoiceSubscription(invoice: Loose): { id: string | null; metadata: Loose } {
  const details = invoice.parent?.subscription_details ?? invoice.subscription_details ?? {};
  return { id: idOf(details.subscription) ?? idOf(invoice.subscription), metadata: details.metadata ?? {} };
}

function invoicePeriod(invoice: Loose): { start: number; end: number } {
  const line = invoice.lines?.data?.[0]?.period;
  const start = line?.start ?? invoice.period_start;
  const end = line?.end ?? invoice.period_end;
  return { start: Number(start) * 1000, end: Number(end) * 1000 };
}

function stripeChange(event: Stripe.Event): BillingChange {
  const object = event.data.object as Loose;
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded":
      if (object.payment_status !== "paid" && object.payment_status !== "no_payment_required") return { kind: "ignored" };
      return {
        kind: "checkout_paid",
        checkoutId: object.client_reference_id ?? object.metadata?.checkoutId ?? null,
        providerRef: object.id,
        providerSubscriptionId: idOf(object.subscription),
        invoiceRef: idOf(object.invoice) ?? object.id,
        periodStart: null,
        periodEnd: null,
        paidAmount: typeof object.amount_total === "number" ? object.amount_total : null,
      };
    case "checkout.session.expired":
    case "checkout.session.async_payment_failed":
      return { kind: "checkout_failed", checkoutId: object.client_reference_id ?? null, providerRef: object.id };
    case "invoice.paid":
    case "invoice.payment_failed": {
      const subscription = invoiceSubscription(object);
      const currency = currencyOf(object.currency);
      if (!subscription.id || !currency) return { kind: "ignored" };
      const period = invoicePeriod(object);
      // The first invoice of a subscription pays the checkout; it may arrive before the
      // checkout's own event, so it activates the plan just the same.
      if (event.type === "invoice.paid" && object.billing_reason === "subscription_create") {
        return {
          kind: "checkout_paid",
          checkoutId: subscription.metadata.checkoutId ?? null,
          providerRef: null,
          providerSubscriptionId: subscription.id,
          invoiceRef: object.id,
          periodStart: period.start,
          periodEnd: period.end,
          paidAmount: typeof object.amount_paid === "number" ? object.amount_paid : null,
        };
      }
      return {
        kind: event.type === "invoice.paid" ? "renewal_paid" : "renewal_failed",
        providerSubscriptionId: subscription.id,
        invoiceRef: object.id,
        amount: Number(event.type === "invoice.paid" ? object.amount_paid : object.amount_due) || 0,
        currency,
        periodStart: period.start,
        periodEnd: period.end,
      };
    }
    case "customer.subscription.deleted":
      return { kind: "subscription_ended", providerSubscriptionId: object.id };
    default:
      return { kind: "ignored" };
  }
}

/** Ends a Stripe subscription at once (one replaced by an upgrade's new subscription). */
export async function cancelStripeSubscription(config: StripeConfig, subscriptionId: string): Promise<void> {
  await (await client(config)).subscriptions.cancel(subscriptionId);
}

/**
 * A downgrade between paid plans (or undoing one): the subscription's price changes with no
 * proration, so Stripe charges the new price from the next renewal on, the end of the paid period.
 */
export async function setStripeRenewalPrice(
  config: StripeConfig,
  subscriptionId: string,
  price: { plan: string; billingInterval: "monthly" | "yearly"; currency: string; amount: number },
): Promise<void> {
  const stripe = await client(config);
  const subscription = await stripe.subscriptions.retrieve(subscriptionId);
  const item = subscription.items.data[0];
  if (!item) throw new Error(`Stripe subscription ${subscriptionId} has no item`);
  const product = typeof item.price.product === "string" ? item.price.product : item.price.product.id;
  await stripe.subscriptions.update(subscriptionId, {
    items: [
      {
        id: item.id,
        price_data: {
          currency: price.currency.toLowerCase(),
          unit_amount: price.amount,
          recurring: { interval: price.billingInterval === "yearly" ? "year" : "month" },
          product,
        },
      },
    ],
    proration_behavior: "none",
    metadata: { plan: price.plan },
  });
}
