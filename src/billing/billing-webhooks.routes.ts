import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError, invalidState, notFound } from "../http/errors";
import { errors, idParam, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { countUnverifiedWebhook, countVerifiedWebhook } from "../http/rate-limit";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import type { ProviderName } from "../providers/billing";
import { newSandboxRef, sandboxEnabled, signSandboxEvent } from "../providers/sandbox";
import { findCheckout, verifiedDomainsOf, type CheckoutRow } from "./billing";
import { receiveProviderEvent, SIGNATURE_HEADERS } from "./billing-events";
import { deps } from "../http/deps";

// The providers' webhook receivers, and the checkout page the sandbox provider serves.

const app = router();
const tags = ["Billing"];

const Receipt = z.object({ eventId: z.string(), type: z.string(), applied: z.boolean() }).openapi("WebhookReceipt");

function webhookRoute(provider: ProviderName, description: string) {
  return createRoute({
    method: "post",
    path: `/billing/webhooks/${provider}`,
    tags,
    summary: `Receives ${provider === "sandbox" ? "the sandbox provider's" : `${provider[0]!.toUpperCase()}${provider.slice(1)}'s`} events (signed)`,
    description:
      `${description} The signature is checked on the raw body with a 5-minute window; a missing, wrong or stale signature is 400 ` +
      "and changes nothing. Each event id is applied once (a replay answers `applied: false`); event types not used are acknowledged.",
    security: SECURITY.none,
    responses: { 200: jsonResponse(okEnvelope(Receipt), "Received"), ...errors() },
  });
}

async function receive(c: Context<AppEnv>, provider: ProviderName) {
  const raw = await c.req.text();
  const signature = c.req.header(SIGNATURE_HEADERS[provider]);
  try {
    const receipt = await receiveProviderEvent(deps(c), provider, raw, signature, now(), () => countVerifiedWebhook(c, provider));
    return c.json(ok(receipt), 200);
  } catch (err) {
    // Not signed by the provider: anyone's anonymous request, in the strict bucket of its address.
    if (err instanceof ApiError && err.code === "VALIDATION_ERROR" && err.details.field === SIGNATURE_HEADERS[provider]) {
      await countUnverifiedWebhook(c);
    }
    throw err;
  }
}

app.openapi(
  webhookRoute(
    "stripe",
    "Header `Stripe-Signature: t=…,v1=…`; secret STRIPE_WEBHOOK_SECRET. Used: checkout.session.completed, invoice.paid, invoice.payment_failed, customer.subscription.deleted, checkout.session.expired.",
  ),
  (c) => receive(c, "stripe"),
);
app.openapi(
  webhookRoute(
    "fedapay",
    "Header `X-FEDAPAY-SIGNATURE: t=…,s=…`; secret FEDAPAY_WEBHOOK_SECRET. A transaction.approved is read back from FedaPay's API before the plan is granted.",
  ),
  (c) => receive(c, "fedapay"),
);
app.openapi(
  webhookRoute(
    "sandbox",
    "Header `Sandbox-Signature: t=…,v1=…`; secret SANDBOX_WEBHOOK_SECRET, else a random secret of the isolate. Sent by the sandbox's own checkout page and renewals. 404 with ENVIRONMENT=production (the sandbox does not exist there).",
  ),
  (c) => receive(c, "sandbox"),
);

const CheckoutParam = idParam("checkoutId", "chk");
const CheckoutStatus = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    provider: z.enum(["stripe", "fedapay", "sandbox"]),
    plan: z.enum(["starter", "pro", "enterprise"]),
    billingInterval: z.enum(["monthly", "yearly"]),
    currency: z.enum(["EUR", "USD", "XOF"]),
    amount: z.number().int(),
    status: z.enum(["open", "completed", "failed", "expired"]),
    expiresAt: z.string(),
  })
  .openapi("CheckoutStatus");

function checkoutStatus(row: CheckoutRow, at: number) {
  return {
    id: row.id,
    organizationId: row.organizationId,
    provider: row.provider,
    plan: row.plan,
    billingInterval: row.billingInterval,
    currency: row.currency,
    amount: row.amount,
    status: row.status === "open" && row.expiresAt <= at ? ("expired" as const) : row.status,
    expiresAt: new Date(row.expiresAt).toISOString(),
  };
}

function wantsHtml(c: Context<AppEnv>): boolean {
  return (c.req.header("Accept") ?? "").includes("text/html");
}

function money(amount: number, currency: string): string {
  const decimals = currency === "XOF" ? 0 : 2;
  return new Intl.NumberFormat("en", { style: "currency", currency, minimumFractionDigits: decimals }).format(amount / 10 ** decimals);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function checkoutPage(status: ReturnType<typeof checkoutStatus>, message?: string): string {
  const payable = status.provider === "sandbox" && status.status === "open";
  const title = `${status.plan[0]!.toUpperCase()}${status.plan.slice(1)} plan, ${status.billingInterval}`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Checkout: ${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#111}
.card{border:1px solid #ddd;border-radius:12px;padding:1.5rem}.amount{font-size:2rem;font-weight:700}
button{font:inherit;padding:.6rem 1.2rem;border-radius:8px;border:0;background:#2563eb;color:#fff;cursor:pointer;margin:.3rem .3rem 0 0}
button.secondary{background:#e5e7eb;color:#111}.note{color:#555;font-size:.9rem}</style></head><body><div class="card">
<p class="note">${status.provider === "sandbox" ? "Sandbox payment: no money moves." : `Payment through ${escapeHtml(status.provider)}.`}</p>
<h1>${escapeHtml(title)}</h1><p class="amount">${escapeHtml(money(status.amount, status.currency))}</p>
<p>Status: <strong>${escapeHtml(status.status)}</strong></p>${message ? `<p>${escapeHtml(message)}</p>` : ""}
${
  payable
    ? `<form method="post"><button type="submit">Pay</button></form>
<form method="post" action="?renewals=fail"><button class="secondary" type="submit">Pay with a card that declines renewals</button></form>`
    : ""
}</div></body></html>`;
}

const showCheckout = createRoute({
  method: "get",
  path: "/billing/checkouts/{checkoutId}",
  tags,
  summary: "A checkout's status; for the sandbox provider, its payment page (HTML when the browser asks for it)",
  description: "The checkout id is the capability: no credential is needed. The page of an open sandbox checkout has the Pay button.",
  security: SECURITY.none,
  request: { params: CheckoutParam },
  responses: {
    200: {
      description: "The checkout",
      content: { "application/json": { schema: okEnvelope(CheckoutStatus) }, "text/html": { schema: z.string() } },
    },
    ...errors(),
  },
});

/**
 * The page is a payment form: it is never framed (clickjacking the Pay button), loads nothing
 * from elsewhere, and its form may only post to this service and go on to the return URL.
 */
function protectPage(c: Context<AppEnv>, returnTo: string | null): void {
  const formTargets = ["'self'", ...(returnTo ? [new URL(returnTo).origin] : [])].join(" ");
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action ${formTargets}; frame-ancestors 'none'; base-uri 'none'`,
  );
  c.header("X-Frame-Options", "DENY");
  c.header("Referrer-Policy", "no-referrer");
}

/** Where the page may send the payer on: the service's own origin or a verified domain of the organization (or below it). */
async function safeReturnUrl(c: Context<AppEnv>, row: CheckoutRow): Promise<string | null> {
  if (!row.returnUrl) return null;
  const url = new URL(row.returnUrl);
  const own = new URL(c.env.PUBLIC_BASE_URL ?? c.req.url).origin;
  if (url.origin === own) return url.toString();
  const host = url.hostname.toLowerCase();
  const domains = await verifiedDomainsOf(deps(c), row.organizationId);
  return url.protocol === "https:" && domains.some((d) => host === d || host.endsWith(`.${d}`)) ? url.toString() : null;
}

app.openapi(showCheckout, async (c) => {
  const row = await findCheckout(deps(c), c.req.valid("param").checkoutId);
  if (!row) throw notFound("Checkout");
  const status = checkoutStatus(row, now());
  if (wantsHtml(c)) {
    protectPage(c, await safeReturnUrl(c, row));
    return c.html(checkoutPage(status), 200) as never;
  }
  return c.json(ok(status), 200);
});

const payCheckout = createRoute({
  method: "post",
  path: "/billing/checkouts/{checkoutId}",
  tags,
  summary: "Pays an open sandbox checkout (sandbox provider only)",
  description:
    "The sandbox signs a `checkout.paid` event and hands it to the same receiver as /v1/billing/webhooks/sandbox: the plan starts " +
    "exactly as with a real provider. `renewals=fail` pays with a card that declines the renewals (to try a failed renewal). " +
    "A browser (Accept: text/html) is sent on to the checkout's return URL when it is on the service's own origin or on a " +
    "verified domain of the organization (or below it); any other return URL gets the paid page instead. The page is sent " +
    "with `Content-Security-Policy` (`frame-ancestors 'none'`) and `X-Frame-Options: DENY`. 404 with ENVIRONMENT=production.",
  security: SECURITY.none,
  request: {
    params: CheckoutParam,
    query: z.object({ renewals: z.enum(["succeed", "fail"]).default("succeed") }),
  },
  responses: { 200: jsonResponse(okEnvelope(z.object({ checkout: CheckoutStatus, eventId: z.string() })), "Paid"), ...errors(409) },
});

app.openapi(payCheckout, async (c) => {
  const at = now();
  // In production the sandbox does not exist (docs/billing.md): nothing is paid here.
  if (!sandboxEnabled(c.env)) throw notFound("Route");
  const row = await findCheckout(deps(c), c.req.valid("param").checkoutId);
  // Only the sandbox's own checkouts are paid here; a real provider's are paid on its page.
  if (!row || row.provider !== "sandbox") throw notFound("Checkout");
  const status = checkoutStatus(row, at);
  if (status.status !== "open") throw invalidState(status.status, ["open"], `This checkout is ${status.status}`);
  const signed = await signSandboxEvent(
    c.env,
    "checkout.paid",
    {
      checkoutId: row.id,
      subscriptionId: newSandboxRef("sub"),
      invoiceId: newSandboxRef("inv"),
      amount: row.amount,
      currency: row.currency,
      card: c.req.valid("query").renewals === "fail" ? "declines_renewals" : "ok",
    },
    at,
  );
  const receipt = await receiveProviderEvent(deps(c), "sandbox", signed.rawBody, signed.signature, at);
  const after = checkoutStatus((await findCheckout(deps(c), row.id))!, at);
  if (wantsHtml(c)) {
    const returnTo = await safeReturnUrl(c, row);
    protectPage(c, returnTo);
    if (returnTo) return c.redirect(returnTo, 303) as never;
    return c.html(checkoutPage(after, "Paid. You can close this page."), 200) as never;
  }
  return c.json(ok({ checkout: after, eventId: receipt.eventId }), 200);
});

export default app;
