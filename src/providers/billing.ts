// What the billing use cases need from a payment provider, and the provider-neutral events
// that the webhook receivers turn each provider's own events into.
import type { BillingInterval, Currency, Plan } from "../domain/plans";

export type ProviderName = "stripe" | "fedapay" | "sandbox";

export interface CheckoutRequest {
  checkoutId: string;
  organizationId: string;
  organizationName: string;
  plan: Plan;
  billingInterval: BillingInterval;
  currency: Currency;
  /** Integer minor units. */
  amount: number;
  /** Where the payer lands after paying (or giving up). */
  returnUrl: string;
  customerEmail: string | null;
}

export interface CheckoutSession {
  url: string;
  /** Stripe's Checkout Session id, FedaPay's transaction id, the sandbox's checkout id. */
  providerRef: string;
}

/** A payment for a checkout went through: the plan it was for starts now. */
export interface CheckoutPaid {
  kind: "checkout_paid";
  checkoutId: string | null;
  providerRef: string | null;
  providerSubscriptionId: string | null;
  /** The provider's invoice or transaction id (one invoice row per id). */
  invoiceRef: string;
  periodStart: number | null;
  periodEnd: number | null;
  /** What the provider says was paid (minor units), when it says it: a different amount grants nothing. */
  paidAmount: number | null;
  /** Sandbox only: the payer chose a "card" that declines renewals. */
  renewalsFail?: boolean;
}

/** A recurring payment of an existing paid subscription, paid or declined. */
export interface RenewalOutcome {
  kind: "renewal_paid" | "renewal_failed";
  providerSubscriptionId: string;
  invoiceRef: string;
  amount: number;
  currency: Currency;
  periodStart: number;
  periodEnd: number;
}

export type BillingChange =
  | CheckoutPaid
  | RenewalOutcome
  | { kind: "checkout_failed"; checkoutId: string | null; providerRef: string | null }
  | { kind: "subscription_ended"; providerSubscriptionId: string }
  | { kind: "ignored" };

export interface ProviderEvent {
  provider: ProviderName;
  /** The provider's event id: an event is applied once. */
  id: string;
  type: string;
  /** When the provider created the event (ms): an older event never undoes a newer one. */
  createdAt: number;
  change: BillingChange;
}

export function currencyOf(value: unknown): Currency | null {
  const upper = typeof value === "string" ? value.toUpperCase() : "";
  return upper === "EUR" || upper === "USD" || upper === "XOF" ? upper : null;
}
