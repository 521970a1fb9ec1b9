// The sandbox provider: stands in for Stripe and FedaPay when their secrets are not set (local
// development, tests, a new user trying the service). Its checkout page is served by the
// service itself; paying there makes the sandbox sign an event exactly as a provider would and
// hand it to the same receiver the provider webhooks go through.
import { randomString } from "../lib/ids";
import { checkSignedHeader, signHeader } from "../lib/signed-header";
import { currencyOf, type BillingChange, type CheckoutRequest, type CheckoutSession, type ProviderEvent } from "./billing";

export interface SandboxConfig {
  SANDBOX_WEBHOOK_SECRET?: string;
  ENVIRONMENT?: string;
}

/**
 * The sandbox exists only where no money is at stake: with ENVIRONMENT=production its routes
 * answer 404 and a currency whose provider has no keys is 503 PROVIDER_UNAVAILABLE, never a free plan.
 */
export function sandboxEnabled(config: SandboxConfig): boolean {
  return config.ENVIRONMENT !== "production";
}

export const SANDBOX_SIGNATURE_HEADER = "Sandbox-Signature";

let isolateSecret: string | null = null;

/**
 * SANDBOX_WEBHOOK_SECRET, else a random secret of this isolate (drawn on first use: workerd
 * refuses randomness at global scope). The sandbox signs and checks its events within one
 * request (the Pay button, the renewal sweep), so nothing outside the isolate ever needs it,
 * and no one can derive it from the source.
 */
export async function sandboxSecret(config: SandboxConfig): Promise<string> {
  if (config.SANDBOX_WEBHOOK_SECRET) return config.SANDBOX_WEBHOOK_SECRET;
  isolateSecret ??= `sbx_${randomString(43)}`;
  return isolateSecret;
}

export function sandboxCheckoutUrl(baseUrl: string, checkoutId: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/v1/billing/checkouts/${checkoutId}`;
}

export function createSandboxCheckout(baseUrl: string, req: CheckoutRequest): CheckoutSession {
  return { url: sandboxCheckoutUrl(baseUrl, req.checkoutId), providerRef: req.checkoutId };
}

export type SandboxEventType = "checkout.paid" | "invoice.paid" | "invoice.payment_failed";

export interface SandboxEventData {
  checkoutId?: string;
  subscriptionId: string;
  invoiceId: string;
  amount: number;
  currency: string;
  periodStart?: number;
  periodEnd?: number;
  /** checkout.paid only: the sandbox "card" paid with. */
  card?: "ok" | "declines_renewals";
}

/** A signed sandbox event: the raw body and its signature header, as a provider would send them. */
export async function signSandboxEvent(
  config: SandboxConfig,
  type: SandboxEventType,
  data: SandboxEventData,
  atMs: number,
): Promise<{ rawBody: string; signature: string }> {
  const rawBody = JSON.stringify({ id: `sbx_evt_${randomString(24)}`, type, created: Math.floor(atMs / 1000), data });
  return { rawBody, signature: await signHeader(await sandboxSecret(config), rawBody, atMs, "v1") };
}

export function newSandboxRef(kind: "sub" | "inv"): string {
  return `sbx_${kind}_${randomString(24)}`;
}

export async function parseSandboxEvent(
  config: SandboxConfig,
  rawBody: string,
  signature: string | undefined,
  atMs: number,
): Promise<ProviderEvent | null> {
  if ((await checkSignedHeader(signature, await sandboxSecret(config), rawBody, atMs, "v1")) !== null) return null;
  let event: Record<string, any>;
  try {
    event = JSON.parse(rawBody) as Record<string, any>;
  } catch {
    return null;
  }
  const data = (event.data ?? {}) as SandboxEventData;
  const currency = currencyOf(data.currency);
  let change: BillingChange = { kind: "ignored" };
  if (event.type === "checkout.paid") {
    change = {
      kind: "checkout_paid",
      checkoutId: data.checkoutId ?? null,
      providerRef: data.checkoutId ?? null,
      providerSubscriptionId: data.subscriptionId,
      invoiceRef: data.invoiceId,
      periodStart: null,
      periodEnd: null,
      paidAmount: data.amount,
      renewalsFail: data.card === "declines_renewals",
    };
  } else if ((event.type === "invoice.paid" || event.type === "invoice.payment_failed") && currency) {
    change = {
      kind: event.type === "invoice.paid" ? "renewal_paid" : "renewal_failed",
      providerSubscriptionId: data.subscriptionId,
      invoiceRef: data.invoiceId,
      amount: data.amount,
      currency,
      periodStart: Number(data.periodStart),
      periodEnd: Number(data.periodEnd),
    };
  }
  return { provider: "sandbox", id: String(event.id), type: String(event.type), createdAt: Number(event.created) * 1000, change };
}
