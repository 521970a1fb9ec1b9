import { env } from "cloudflare:test";
import Stripe from "stripe";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk } from "../helpers/api";
import { adminKeyOf, ownerWithOrganization, postWebhook, subscription } from "../helpers/billing";

// Stripe (EUR, USD): the Checkout Session request intercepted at fetch, and webhook events
// signed in the test with the SDK's own helper, exactly as Stripe signs them.

const WEBHOOK_SECRET = "whsec_test_billing_secret";
const T0 = Date.parse("2026-06-01T10:00:00.000Z");

interface Captured {
  url: string;
  method: string;
  headers: Headers;
  body: string;
}

let stripeCalls: Captured[] = [];
let sessionCounter = 0;

beforeEach(() => {
  Object.assign(env, { STRIPE_SECRET_KEY: "sk_test_billing", STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET });
  stripeCalls = [];
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.hostname !== "api.stripe.com") return realFetch(input, init);
    stripeCalls.push({ url: request.url, method: request.method, headers: request.headers, body: await request.text() });
    if (url.pathname === "/v1/checkout/sessions") {
      sessionCounter += 1;
      const id = `cs_test_${sessionCounter}`;
      return Response.json({ id, object: "checkout.session", url: `https://checkout.stripe.com/c/pay/${id}` });
    }
    if (url.pathname.startsWith("/v1/subscriptions/")) {
      const id = url.pathname.split("/")[3];
      const items = {
        object: "list",
        data: [{ id: `si_${id}`, object: "subscription_item", price: { id: "price_1", product: "prod_plan" } }],
      };
      return Response.json({ id, object: "subscription", cancel_at_period_end: request.method === "POST", items });
    }
    return Response.json({ error: { message: "unexpected" } }, { status: 404 });
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  delete env.STRIPE_SECRET_KEY;
  delete env.STRIPE_WEBHOOK_SECRET;
});

let eventCounter = 0;
function stripeEvent(type: string, object: Record<string, unknown>, createdMs: number, id?: string) {
  eventCounter += 1;
  return JSON.stringify({
    id: id ?? `evt_test_${eventCounter}_${Math.random().toString(36).slice(2, 8)}`,
    object: "event",
    api_version: "2025-10-29",
    created: Math.floor(createdMs / 1000),
    type,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
  });
}

async function sendStripe(payload: string, opts: { secret?: string; timestampMs?: number } = {}) {
  const header = await Stripe.webhooks.generateTestHeaderStringAsync({
    payload,
    secret: opts.secret ?? WEBHOOK_SECRET,
    timestamp: Math.floor((opts.timestampMs ?? T0) / 1000),
    cryptoProvider: Stripe.createSubtleCryptoProvider(),
  });
  return postWebhook("stripe", payload, { "Stripe-Signature": header });
}

function sessionCompleted(checkoutId: string, sessionId: string, subscriptionId: string, invoiceId: string, amount: number) {
  return {
    id: sessionId,
    object: "checkout.session",
    client_reference_id: checkoutId,
    mode: "subscription",
    payment_status: "paid",
    status: "complete",
    amount_total: amount,
    currency: "eur",
    subscription: subscriptionId,
    invoice: invoiceId,
    metadata: { checkoutId },
  };
}

function invoice(id: string, subscriptionId: string, reason: string, amount: number, start: number, end: number) {
  return {
    id,
    object: "invoice",
    billing_reason: reason,
    currency: "eur",
    amount_paid: amount,
    amount_due: amount,
    parent: { type: "subscription_details", subscription_details: { subscription: subscriptionId, metadata: {} } },
    lines: { object: "list", data: [{ period: { start: Math.floor(start / 1000), end: Math.floor(end / 1000) } }] },
  };
}

async function history(orgId: string) {
  return expectOk(await call("GET", `/v1/billing/usage/${orgId}/history`, adminKeyOf(orgId)));
}

/** An organization on Stripe pro: checkout opened and its completion event applied. */
async function onStripePro() {
  testClock.set(T0);
  const f = await ownerWithOrganization();
  const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${f.org.id}`, { token: f.owner.token, body: { plan: "pro" } }));
  const subscriptionId = `sub_${f.org.id.slice(4)}`;
  const sessionId = new URL(pending.checkoutUrl).pathname.split("/").pop()!;
  const res = await sendStripe(
    stripeEvent(
      "checkout.session.completed",
      sessionCompleted(pending.checkout.id, sessionId, subscriptionId, `in_first_${sessionId}`, 2900),
      T0,
    ),
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { ...f, pending, subscriptionId };
}

describe("Stripe checkout", () => {
  it("PATCH opens a Checkout Session in subscription mode with the plan's price; nothing changes until Stripe's event", async () => {
    testClock.set(T0);
    const { owner, org } = await ownerWithOrganization();
    const res = await call("PATCH", `/v1/billing/subscription/${org.id}`, {
      token: owner.token,
      body: { plan: "enterprise", billingInterval: "yearly", currency: "USD", returnUrl: "https://shop.example.com/billing" },
    });
    const pending = expectOk(res);
    expect(pending).toMatchObject({ status: "incomplete", plan: "enterprise", currency: "USD", amount: 109000, effectivePlan: "starter" });
    expect(pending.checkoutUrl).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_\d+$/);
    expect(pending.checkout.provider).toBe("stripe");

    expect(stripeCalls).toHaveLength(1);
    const sent = stripeCalls[0]!;
    expect(sent.method).toBe("POST");
    expect(sent.url).toBe("https://api.stripe.com/v1/checkout/sessions");
    expect(sent.headers.get("Authorization")).toBe("Bearer sk_test_billing");
    expect(sent.headers.get("Idempotency-Key")).toBe(pending.checkout.id);
    const form = new URLSearchParams(sent.body);
    expect(form.get("mode")).toBe("subscription");
    expect(form.get("client_reference_id")).toBe(pending.checkout.id);
    expect(form.get("line_items[0][price_data][currency]")).toBe("usd");
    expect(form.get("line_items[0][price_data][unit_amount]")).toBe("109000");
    expect(form.get("line_items[0][price_data][recurring][interval]")).toBe("year");
    expect(form.get("success_url")).toBe("https://shop.example.com/billing");
    expect(form.get("subscription_data[metadata][organizationId]")).toBe(org.id);
    expect((await subscription(owner, org.id)).effectivePlan).toBe("starter");
  });

  it("a Stripe failure is 502 and leaves no open checkout", async () => {
    vi.mocked(globalThis.fetch).mockImplementation(async () => Response.json({ error: { message: "down" } }, { status: 500 }));
    const { owner, org } = await ownerWithOrganization();
    expectError(
      await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body: { plan: "pro" } }),
      502,
      "PAYMENT_PROVIDER_ERROR",
    );
    expect(await subscription(owner, org.id)).toMatchObject({ status: "active", plan: "starter" });
  });
});

describe("Stripe webhooks", () => {
  it("checkout.session.completed makes the plan active with a period and one paid invoice; a replay is applied once", async () => {
    testClock.set(T0);
    const { owner, org } = await ownerWithOrganization();
    const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body: { plan: "pro" } }));
    const payload = stripeEvent("checkout.session.completed", sessionCompleted(pending.checkout.id, "cs_x1", "sub_x1", "in_x1", 2900), T0);
    const first = await sendStripe(payload);
    expect(first.status).toBe(200);
    expect(first.body.data.applied).toBe(true);
    const active = await subscription(owner, org.id);
    expect(active).toMatchObject({
      plan: "pro",
      status: "active",
      provider: "stripe",
      currentPeriodStart: "2026-06-01T10:00:00.000Z",
      currentPeriodEnd: "2026-07-01T10:00:00.000Z",
    });

    const replay = await sendStripe(payload, { timestampMs: T0 + 60_000 });
    expect(replay.status).toBe(200);
    expect(replay.body.data.applied).toBe(false);
    // Stripe's first invoice for the same payment: still one invoice.
    await sendStripe(
      stripeEvent(
        "invoice.paid",
        invoice("in_x1", "sub_x1", "subscription_create", 2900, T0, Date.parse("2026-07-01T10:00:00.000Z")),
        T0 + 1000,
      ),
    );
    const invoices = await history(org.id);
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ status: "paid", amount: 2900, currency: "EUR", provider: "stripe" });
  });

  it("the first invoice arriving before the checkout event activates the plan just the same", async () => {
    testClock.set(T0);
    const { owner, org } = await ownerWithOrganization();
    const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body: { plan: "pro" } }));
    const first = invoice("in_y1", "sub_y1", "subscription_create", 2900, T0, Date.parse("2026-07-01T10:00:00.000Z"));
    (first.parent.subscription_details as any).metadata = { checkoutId: pending.checkout.id };
    expect((await sendStripe(stripeEvent("invoice.paid", first, T0))).status).toBe(200);
    expect(await subscription(owner, org.id)).toMatchObject({ plan: "pro", status: "active" });
    await sendStripe(
      stripeEvent("checkout.session.completed", sessionCompleted(pending.checkout.id, "cs_y1", "sub_y1", "in_y1", 2900), T0 - 1000),
    );
    expect(await history(org.id)).toHaveLength(1);
  });

  it("a forged signature, a missing one and one dated more than 5 minutes away (either way) are 400 and change nothing", async () => {
    testClock.set(T0);
    const { owner, org } = await ownerWithOrganization();
    const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body: { plan: "pro" } }));
    const payload = stripeEvent("checkout.session.completed", sessionCompleted(pending.checkout.id, "cs_z1", "sub_z1", "in_z1", 2900), T0);
    const forged = await sendStripe(payload, { secret: "whsec_someone_else" });
    expectError({ ...forged, headers: new Headers() }, 400, "VALIDATION_ERROR", "Stripe-Signature");
    const missing = await postWebhook("stripe", payload, {});
    expect(missing.status).toBe(400);
    const stale = await sendStripe(payload, { timestampMs: T0 - 301_000 });
    expect(stale.status).toBe(400);
    // The window applies both ways (docs/billing.md): 10 minutes in the future is refused too (issue 26).
    const future = await sendStripe(payload, { timestampMs: T0 + 600_000 });
    expect(future.status).toBe(400);
    // The body changed after signing: refused.
    const header = await Stripe.webhooks.generateTestHeaderStringAsync({
      payload,
      secret: WEBHOOK_SECRET,
      timestamp: T0 / 1000,
      cryptoProvider: Stripe.createSubtleCryptoProvider(),
    });
    const tampered = await postWebhook("stripe", payload.replace('"paid"', '"paid" '), { "Stripe-Signature": header });
    expect(tampered.status).toBe(400);
    expect(await subscription(owner, org.id)).toMatchObject({ status: "incomplete", effectivePlan: "starter" });
    expect(await history(org.id)).toHaveLength(0);
    // Within the window (4 minutes old) the same event is accepted.
    expect((await sendStripe(payload, { timestampMs: T0 - 240_000 })).status).toBe(200);
    expect((await subscription(owner, org.id)).effectivePlan).toBe("pro");
  });

  it("an event type not used is acknowledged and changes nothing", async () => {
    const { org, owner } = await onStripePro();
    const res = await sendStripe(stripeEvent("customer.created", { id: "cus_1", object: "customer" }, T0 + 5000));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ type: "customer.created", applied: true });
    expect((await subscription(owner, org.id)).status).toBe("active");
  });

  it("renewal: invoice.paid for the next period moves the period on; a late older one changes nothing", async () => {
    const { org, owner, subscriptionId } = await onStripePro();
    const p1End = Date.parse("2026-07-01T10:00:00.000Z");
    const p2End = Date.parse("2026-08-01T10:00:00.000Z");
    testClock.set(p1End + 3600_000);
    const res = await sendStripe(
      stripeEvent("invoice.paid", invoice("in_r2", subscriptionId, "subscription_cycle", 2900, p1End, p2End), p1End + 3600_000),
      { timestampMs: p1End + 3600_000 },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await subscription(owner, org.id)).toMatchObject({
      status: "active",
      currentPeriodStart: "2026-07-01T10:00:00.000Z",
      currentPeriodEnd: "2026-08-01T10:00:00.000Z",
    });
    // An older period's payment delivered late: recorded, period unchanged.
    await sendStripe(stripeEvent("invoice.paid", invoice("in_r1b", subscriptionId, "subscription_cycle", 2900, T0, p1End), T0 + 10_000), {
      timestampMs: p1End + 3600_000,
    });
    expect((await subscription(owner, org.id)).currentPeriodEnd).toBe("2026-08-01T10:00:00.000Z");
  });

  it("failed renewal: past_due with a 7-day grace; the retry that succeeds makes it active; an older failure arriving late does not undo it", async () => {
    const { org, owner, subscriptionId } = await onStripePro();
    const p1End = Date.parse("2026-07-01T10:00:00.000Z");
    const p2End = Date.parse("2026-08-01T10:00:00.000Z");
    const failedAt = p1End + 3600_000;
    testClock.set(failedAt);
    const failedEvent = stripeEvent(
      "invoice.payment_failed",
      invoice("in_f2", subscriptionId, "subscription_cycle", 2900, p1End, p2End),
      failedAt,
    );
    expect((await sendStripe(failedEvent, { timestampMs: failedAt })).status).toBe(200);
    expect(await subscription(owner, org.id)).toMatchObject({
      plan: "pro",
      status: "past_due",
      effectivePlan: "pro",
      graceUntil: "2026-07-08T11:00:00.000Z",
    });
    expect((await history(org.id)).map((i: any) => i.status)).toEqual(["failed", "paid"]);

    const paidAt = failedAt + 2 * 86_400_000;
    testClock.set(paidAt);
    await sendStripe(stripeEvent("invoice.paid", invoice("in_f2", subscriptionId, "subscription_cycle", 2900, p1End, p2End), paidAt), {
      timestampMs: paidAt,
    });
    expect(await subscription(owner, org.id)).toMatchObject({
      status: "active",
      graceUntil: null,
      currentPeriodEnd: "2026-08-01T10:00:00.000Z",
    });
    // The same invoice is now paid (one row), and a failure event created before the payment changes nothing.
    expect((await history(org.id)).map((i: any) => i.status)).toEqual(["paid", "paid"]);
    const lateFailure = stripeEvent(
      "invoice.payment_failed",
      invoice("in_f2", subscriptionId, "subscription_cycle", 2900, p1End, p2End),
      failedAt + 1000,
    );
    expect((await sendStripe(lateFailure, { timestampMs: paidAt })).status).toBe(200);
    expect((await subscription(owner, org.id)).status).toBe("active");
    expect((await history(org.id)).map((i: any) => i.status)).toEqual(["paid", "paid"]);
  });

  it("cancel tells Stripe to stop at period end; customer.subscription.deleted moves the organization to starter", async () => {
    const { org, owner, subscriptionId } = await onStripePro();
    stripeCalls = [];
    const cancelled = expectOk(
      await call("POST", `/v1/billing/subscription/${org.id}/cancel`, { token: owner.token, body: { reason: "moving" } }),
    );
    expect(cancelled).toMatchObject({ cancelAtPeriodEnd: true, plan: "pro" });
    expect(stripeCalls).toHaveLength(1);
    expect(stripeCalls[0]!.url).toBe(`https://api.stripe.com/v1/subscriptions/${subscriptionId}`);
    expect(new URLSearchParams(stripeCalls[0]!.body).get("cancel_at_period_end")).toBe("true");

    const ended = Date.parse("2026-07-01T10:00:05.000Z");
    testClock.set(ended);
    await sendStripe(
      stripeEvent("customer.subscription.deleted", { id: subscriptionId, object: "subscription", status: "canceled" }, ended),
      { timestampMs: ended },
    );
    expect(await subscription(owner, org.id)).toMatchObject({ plan: "starter", status: "active", provider: null });
  });

  it("a downgrade between paid plans changes Stripe's price from the next renewal, with no proration; undoing it restores the price", async () => {
    testClock.set(T0);
    const f = await ownerWithOrganization();
    const pending = expectOk(
      await call("PATCH", `/v1/billing/subscription/${f.org.id}`, { token: f.owner.token, body: { plan: "enterprise" } }),
    );
    const subscriptionId = `sub_d_${f.org.id.slice(4)}`;
    await sendStripe(
      stripeEvent("checkout.session.completed", sessionCompleted(pending.checkout.id, "cs_d1", subscriptionId, "in_d1", 9900), T0),
    );
    stripeCalls = [];
    const down = expectOk(await call("PATCH", `/v1/billing/subscription/${f.org.id}`, { token: f.owner.token, body: { plan: "pro" } }));
    expect(down).toMatchObject({ plan: "enterprise", scheduledPlan: "pro" });
    expect(stripeCalls.map((c) => `${c.method} ${new URL(c.url).pathname}`)).toEqual([
      `GET /v1/subscriptions/${subscriptionId}`,
      `POST /v1/subscriptions/${subscriptionId}`,
    ]);
    const form = new URLSearchParams(stripeCalls[1]!.body);
    expect(form.get("proration_behavior")).toBe("none");
    expect(form.get("items[0][id]")).toBe(`si_${subscriptionId}`);
    expect(form.get("items[0][price_data][unit_amount]")).toBe("2900");
    expect(form.get("items[0][price_data][product]")).toBe("prod_plan");

    stripeCalls = [];
    expectOk(await call("PATCH", `/v1/billing/subscription/${f.org.id}`, { token: f.owner.token, body: { plan: "enterprise" } }));
    expect(new URLSearchParams(stripeCalls[1]!.body).get("items[0][price_data][unit_amount]")).toBe("9900");

    // Downgrade again; the renewal Stripe sends at the lower price grants the lower plan.
    expectOk(await call("PATCH", `/v1/billing/subscription/${f.org.id}`, { token: f.owner.token, body: { plan: "pro" } }));
    const p1End = Date.parse("2026-07-01T10:00:00.000Z");
    testClock.set(p1End + 60_000);
    await sendStripe(
      stripeEvent(
        "invoice.paid",
        invoice("in_d2", subscriptionId, "subscription_cycle", 2900, p1End, Date.parse("2026-08-01T10:00:00.000Z")),
        p1End + 60_000,
      ),
      { timestampMs: p1End + 60_000 },
    );
    expect(await subscription(f.owner, f.org.id)).toMatchObject({ plan: "pro", scheduledPlan: null, status: "active" });
  });
});
