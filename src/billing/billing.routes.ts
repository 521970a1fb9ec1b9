import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { deps } from "../http/deps";
import { listInvoices } from "./invoices";
import { BILLING_INTERVALS, PLANS } from "../domain/plans";
import { actorIn, authorize } from "../http/auth";
import type { AppEnv } from "../http/context";
import { forbidden } from "../http/errors";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { isTwinOrganizationId } from "../lib/ids";
import { iso, isoOrNull } from "../lib/time";
import { cancelSubscription, changePlan, describeSubscription, startCheckout } from "./billing";
import { currentUsage } from "./usage";

const app = router();
const tags = ["Billing"];

const OrganizationParam = idParam("organizationId", "org");
const PlanSchema = z.enum(PLANS);
const IntervalSchema = z.enum(BILLING_INTERVALS);
const HttpsUrl = z.url({ protocol: /^https$/, hostname: z.regexes.domain }).max(2048);

const CheckoutRecord = z
  .object({
    id: z.string(),
    provider: z.enum(["stripe", "fedapay", "sandbox"]),
    plan: PlanSchema,
    billingInterval: IntervalSchema,
    currency: z.enum(["EUR", "USD", "XOF"]),
    amount: z.number().int().openapi({ description: "Integer minor units (cents; XOF has none)" }),
    checkoutUrl: z.string(),
    expiresAt: z.string(),
  })
  .openapi("Checkout");

const SubscriptionRecord = z
  .object({
    organizationId: z.string(),
    plan: PlanSchema.openapi({ description: "The plan being paid for while status is incomplete, else the plan in force" }),
    billingInterval: IntervalSchema,
    status: z.enum(["active", "incomplete", "past_due", "cancelled"]),
    currency: z.enum(["EUR", "USD", "XOF"]),
    currentPeriodStart: z.string(),
    currentPeriodEnd: z.string(),
    cancelAtPeriodEnd: z.boolean(),
    checkoutUrl: z.string().optional().openapi({ description: "Only while status is incomplete: where to pay" }),
    effectivePlan: PlanSchema.openapi({ description: "The plan whose limits apply now" }),
    scheduledPlan: PlanSchema.nullable().openapi({ description: "The plan that takes over at currentPeriodEnd (cancel, downgrade)" }),
    graceUntil: z.string().nullable().openapi({ description: "past_due only: when the organization falls back to starter" }),
    provider: z.enum(["stripe", "fedapay", "sandbox"]).nullable(),
    cancelReason: z.string().nullable(),
    amount: z.number().int().openapi({ description: "Price of one period in minor units of currency" }),
    checkout: CheckoutRecord.optional(),
  })
  .openapi("Subscription");

const Usage = z.object({ used: z.number().int(), limit: z.number().int().nullable(), resetsAt: z.string() }).openapi("UsageMetric");
const UsageRecord = z
  .object({
    organizationId: z.string(),
    plan: PlanSchema,
    periodStart: z.string(),
    periodEnd: z.string(),
    tickets: Usage,
    apiCalls: Usage,
    sms: Usage,
    webhookDeliveries: Usage,
  })
  .openapi("Usage");

const InvoiceRecord = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    plan: PlanSchema,
    billingInterval: IntervalSchema,
    amount: z.number().int(),
    currency: z.enum(["EUR", "USD", "XOF"]),
    status: z.enum(["paid", "open", "failed", "void"]),
    periodStart: z.string(),
    periodEnd: z.string(),
    provider: z.enum(["stripe", "fedapay", "sandbox"]),
    createdAt: z.string(),
    paidAt: z.string().nullable(),
  })
  .openapi("Invoice");

/** Reads: owners and admins (ORG_MANAGE), or an API key with read:analytics. */
async function authorizeBillingRead(c: Context<AppEnv>, organizationId: string): Promise<void> {
  const actor = await actorIn(c, organizationId);
  const allowed = actor.role !== null ? actor.can("ORG_MANAGE") : actor.can("ANALYTICS_VIEW");
  if (!allowed) throw forbidden("Billing is for owners and admins, or API keys with read:analytics");
}

function baseUrlOf(c: Context<AppEnv>): string {
  return (c.env.PUBLIC_BASE_URL ?? new URL(c.req.url).origin).replace(/\/+$/, "");
}

const getSubscription = createRoute({
  method: "get",
  path: "/billing/subscription/{organizationId}",
  tags,
  summary: "The organization's subscription (owners, admins, read:analytics keys)",
  security: SECURITY.any,
  request: { params: OrganizationParam },
  responses: { 200: jsonResponse(okEnvelope(SubscriptionRecord), "The subscription"), ...errors() },
});

app.openapi(getSubscription, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorizeBillingRead(c, organizationId);
  return c.json(ok(await describeSubscription(deps(c), organizationId, now())), 200);
});

/** A test-mode twin has its live organization's plan and never pays (docs/test-mode.md). */
function refuseInTestMode(organizationId: string): void {
  if (isTwinOrganizationId(organizationId)) {
    throw forbidden("Billing is not part of test mode: the twin has the live organization's plan; change it with a live credential");
  }
}

const patchSubscription = createRoute({
  method: "patch",
  path: "/billing/subscription/{organizationId}",
  tags,
  summary: "Change plan or billing interval (ORG_MANAGE)",
  description:
    "An upgrade answers `status: incomplete` with a `checkoutUrl` and changes nothing until the provider confirms the payment. " +
    "A downgrade (starter included) is scheduled for `currentPeriodEnd`. Asking for the plan in force drops a scheduled change. " +
    "`currency` picks the provider: EUR and USD through Stripe, XOF through FedaPay (default: the subscription's currency).",
  security: SECURITY.any,
  request: {
    params: OrganizationParam,
    body: jsonBody(
      z
        .strictObject({
          plan: PlanSchema,
          billingInterval: IntervalSchema.optional(),
          currency: z.enum(["EUR", "USD", "XOF"]).optional(),
          returnUrl: HttpsUrl.optional().openapi({ description: "Where the payer lands after the checkout (https)" }),
        })
        .openapi("ChangeSubscriptionRequest"),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(SubscriptionRecord), "The subscription after the change"), ...errors(409, 502) },
});

app.openapi(patchSubscription, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorize(c, organizationId, "ORG_MANAGE");
  refuseInTestMode(organizationId);
  return c.json(ok(await changePlan(deps(c), organizationId, c.req.valid("json"), baseUrlOf(c), now())), 200);
});

const cancel = createRoute({
  method: "post",
  path: "/billing/subscription/{organizationId}/cancel",
  tags,
  summary: "Cancel at the end of the paid period (ORG_MANAGE)",
  description:
    "Access stays until `currentPeriodEnd` (`cancelAtPeriodEnd: true`), then the organization is on starter. An open checkout is dropped.",
  security: SECURITY.any,
  request: {
    params: OrganizationParam,
    body: jsonBody(z.strictObject({ reason: z.string().trim().max(500).optional() }).openapi("CancelSubscriptionRequest")),
  },
  responses: { 200: jsonResponse(okEnvelope(SubscriptionRecord), "The subscription, cancelling at period end"), ...errors(409, 502) },
});

app.openapi(cancel, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorize(c, organizationId, "ORG_MANAGE");
  refuseInTestMode(organizationId);
  const { reason } = c.req.valid("json");
  return c.json(ok(await cancelSubscription(deps(c), organizationId, reason || null, now())), 200);
});

const usage = createRoute({
  method: "get",
  path: "/billing/usage/{organizationId}",
  tags,
  summary: "This month's usage: tickets, API calls, SMS, webhook deliveries, each {used, limit, resetsAt}",
  security: SECURITY.any,
  request: { params: OrganizationParam },
  responses: { 200: jsonResponse(okEnvelope(UsageRecord), "Usage of the current period"), ...errors() },
});

app.openapi(usage, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorizeBillingRead(c, organizationId);
  return c.json(ok(await currentUsage(deps(c), organizationId, now())), 200);
});

const history = createRoute({
  method: "get",
  path: "/billing/usage/{organizationId}/history",
  tags,
  summary: "Invoice history with payment statuses, newest first",
  security: SECURITY.any,
  request: { params: OrganizationParam, query: CursorQuery },
  responses: { 200: jsonResponse(cursorListEnvelope(InvoiceRecord), "Invoices"), ...errors() },
});

app.openapi(history, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorizeBillingRead(c, organizationId);
  const window = listWindow(c.req.valid("query"));
  const { rows, total, hasMore } = await listInvoices(deps(c), organizationId, window);
  const items = rows.map((r) => ({
    id: r.id,
    organizationId: r.organizationId,
    plan: r.plan,
    billingInterval: r.billingInterval,
    amount: r.amount,
    currency: r.currency,
    status: r.status,
    periodStart: iso(r.periodStart),
    periodEnd: iso(r.periodEnd),
    provider: r.provider,
    createdAt: iso(r.createdAt),
    paidAt: isoOrNull(r.paidAt),
  }));
  return c.json(
    okList(
      items,
      listMeta(
        rows.map((r) => r.id),
        total,
        window,
        hasMore,
      ),
    ),
    200,
  );
});

const fedapayCheckout = createRoute({
  method: "post",
  path: "/billing/fedapay/checkout",
  tags,
  summary: "Pay a plan in XOF through FedaPay (WAEMU zone; ORG_MANAGE)",
  description:
    "Opens a FedaPay payment for the plan; the plan starts when FedaPay confirms the transaction. Answers the subscription (status incomplete) with the checkout.",
  security: SECURITY.any,
  request: {
    body: jsonBody(
      z
        .strictObject({
          organizationId: z.string().min(1).max(64),
          plan: z.enum(["pro", "enterprise"]),
          billingInterval: IntervalSchema,
          returnUrl: HttpsUrl,
        })
        .openapi("FedaPayCheckoutRequest"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(SubscriptionRecord), "Checkout opened"), ...errors(502) },
});

app.openapi(fedapayCheckout, async (c) => {
  const body = c.req.valid("json");
  await authorize(c, body.organizationId, "ORG_MANAGE");
  refuseInTestMode(body.organizationId);
  const at = now();
  const checkout = await startCheckout(
    deps(c),
    body.organizationId,
    body.plan,
    body.billingInterval,
    "XOF",
    body.returnUrl,
    baseUrlOf(c),
    at,
  );
  return c.json(ok({ ...(await describeSubscription(deps(c), body.organizationId, at)), checkout }), 201);
});

export default app;
