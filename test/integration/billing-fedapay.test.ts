import { env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { testClock } from "../helpers/clock";
import { sandboxSecret } from "../../src/providers/sandbox";
import { call, expectError, expectOk } from "../helpers/api";
import { adminKeyOf, hmacHex, ownerWithOrganization, postWebhook, subscription } from "../helpers/billing";

// FedaPay (XOF): the transaction and token requests intercepted at fetch, signed webhooks, and
// the transaction read back from FedaPay's API before a plan is granted. Then the sandbox's own
// webhook receiver refusing what it did not sign.

const WEBHOOK_SECRET = "wh_sandbox_fedapay_secret";
const BASE = "https://sandbox-api.fedapay.com/v1";
const T0 = Date.parse("2026-09-01T09:00:00.000Z");

interface Captured {
  method: string;
  path: string;
  headers: Headers;
  body: any;
}

let calls: Captured[] = [];
/** What GET /transactions/{id} answers, by id. */
let transactions: Record<string, { status: string; amount: number; checkoutId: string }> = {};
let nextId = 4000;

beforeEach(() => {
  Object.assign(env, { FEDAPAY_SECRET_KEY: "sk_sandbox_test", FEDAPAY_WEBHOOK_SECRET: WEBHOOK_SECRET, FEDAPAY_API_BASE: BASE });
  calls = [];
  transactions = {};
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(BASE)) return realFetch(input, init);
    const path = request.url.slice(BASE.length);
    const text = await request.text();
    calls.push({ method: request.method, path, headers: request.headers, body: text ? JSON.parse(text) : null });
    if (request.method === "POST" && path === "/transactions") {
      nextId += 1;
      const body = JSON.parse(text);
      transactions[String(nextId)] = { status: "pending", amount: body.amount, checkoutId: body.custom_metadata.checkoutId };
      // FedaPay wraps the answer under "v1/transaction".
      return Response.json({ "v1/transaction": { id: nextId, status: "pending", amount: body.amount } });
    }
    const token = /^\/transactions\/(\d+)\/token$/.exec(path);
    if (request.method === "POST" && token)
      return Response.json({ token: `tok_${token[1]}`, url: `https://process.fedapay.com/tok_${token[1]}` });
    const read = /^\/transactions\/(\d+)$/.exec(path);
    if (request.method === "GET" && read && transactions[read[1]!]) {
      const tx = transactions[read[1]!]!;
      return Response.json({
        id: Number(read[1]),
        status: tx.status,
        amount: tx.amount,
        currency: { iso: "XOF" },
        custom_metadata: { checkoutId: tx.checkoutId },
      });
    }
    return Response.json({ message: "not found" }, { status: 404 });
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  delete env.FEDAPAY_SECRET_KEY;
  delete env.FEDAPAY_WEBHOOK_SECRET;
  delete env.FEDAPAY_API_BASE;
});

async function sendFedaPay(event: unknown, opts: { secret?: string; atMs?: number } = {}) {
  const raw = JSON.stringify(event);
  const t = Math.floor((opts.atMs ?? T0) / 1000);
  const signature = `t=${t},s=${await hmacHex(opts.secret ?? WEBHOOK_SECRET, `${t}.${raw}`)}`;
  return postWebhook("fedapay", raw, { "X-FEDAPAY-SIGNATURE": signature });
}

function approved(transactionId: string, eventId = `fp_evt_${transactionId}_${Math.random().toString(36).slice(2, 6)}`) {
  return {
    id: eventId,
    name: "transaction.approved",
    entity: { id: Number(transactionId), status: "approved" },
    created_at: new Date(T0).toISOString(),
  };
}

async function openCheckout(body: Record<string, unknown> = {}) {
  testClock.set(T0);
  const f = await ownerWithOrganization();
  const res = await call("POST", "/v1/billing/fedapay/checkout", {
    token: f.owner.token,
    body: { organizationId: f.org.id, plan: "pro", billingInterval: "monthly", returnUrl: "https://boutique.example.sn/merci", ...body },
  });
  return { ...f, pending: expectOk(res, 201) };
}

describe("FedaPay checkout (XOF)", () => {
  it("creates the transaction for the XOF price and answers FedaPay's payment page", async () => {
    const { org, owner, pending } = await openCheckout({ plan: "enterprise", billingInterval: "yearly" });
    expect(pending).toMatchObject({
      status: "incomplete",
      plan: "enterprise",
      billingInterval: "yearly",
      currency: "XOF",
      amount: 650000,
      effectivePlan: "starter",
    });
    expect(pending.checkout).toMatchObject({ provider: "fedapay", amount: 650000, currency: "XOF" });
    expect(pending.checkoutUrl).toMatch(/^https:\/\/process\.fedapay\.com\/tok_\d+$/);

    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(["POST /transactions", `POST /transactions/${nextId}/token`]);
    const created = calls[0]!;
    expect(created.headers.get("Authorization")).toBe("Bearer sk_sandbox_test");
    expect(created.body).toMatchObject({
      amount: 650000,
      currency: { iso: "XOF" },
      callback_url: "https://boutique.example.sn/merci",
      custom_metadata: { checkoutId: pending.checkout.id, organizationId: org.id, plan: "enterprise", billingInterval: "yearly" },
    });
    expect(Number.isInteger(created.body.amount)).toBe(true);
    expect((await subscription(owner, org.id)).effectivePlan).toBe("starter");
  });

  it("transaction.approved, confirmed by FedaPay's API, makes the plan active in XOF with a paid invoice; a replay is applied once", async () => {
    const { org, owner, pending } = await openCheckout();
    const txId = String(nextId);
    transactions[txId]!.status = "approved";
    const event = approved(txId);
    const res = await sendFedaPay(event);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(calls.at(-1)).toMatchObject({ method: "GET", path: `/transactions/${txId}` });
    expect(await subscription(owner, org.id)).toMatchObject({
      plan: "pro",
      status: "active",
      currency: "XOF",
      provider: "fedapay",
      amount: 19000,
    });
    expect(pending.amount).toBe(19000);
    const replay = await sendFedaPay(event, { atMs: T0 + 30_000 });
    expect(replay.body.data.applied).toBe(false);
    const invoices = expectOk(await call("GET", `/v1/billing/usage/${org.id}/history`, adminKeyOf(org.id)));
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ amount: 19000, currency: "XOF", status: "paid", provider: "fedapay" });
  });

  it("an approval the API does not confirm grants nothing", async () => {
    const { org, owner } = await openCheckout();
    const res = await sendFedaPay(approved(String(nextId)));
    expect(res.status).toBe(200);
    expect(await subscription(owner, org.id)).toMatchObject({ status: "incomplete", effectivePlan: "starter" });
  });

  it("a bad or stale signature is 400 and FedaPay's API is not even asked", async () => {
    const { org, owner } = await openCheckout();
    transactions[String(nextId)]!.status = "approved";
    calls = [];
    expectError(
      { ...(await sendFedaPay(approved(String(nextId)), { secret: "wrong" })), headers: new Headers() },
      400,
      "VALIDATION_ERROR",
      "X-FEDAPAY-SIGNATURE",
    );
    expect((await sendFedaPay(approved(String(nextId)), { atMs: T0 - 301_000 })).status).toBe(400);
    expect(calls).toHaveLength(0);
    expect((await subscription(owner, org.id)).effectivePlan).toBe("starter");
  });

  it("a FedaPay period is not renewed by itself: at its end the organization is past_due for the grace period, then starter", async () => {
    const { org, owner } = await openCheckout();
    transactions[String(nextId)]!.status = "approved";
    await sendFedaPay(approved(String(nextId)));
    const { runCron } = await import("../helpers/billing");
    await runCron(Date.parse("2026-10-01T09:00:30.000Z"));
    expect(await subscription(owner, org.id)).toMatchObject({ status: "past_due", graceUntil: "2026-10-08T09:00:00.000Z" });
    await runCron(Date.parse("2026-10-08T09:01:00.000Z"));
    expect((await subscription(owner, org.id)).plan).toBe("starter");
  });
});

describe("sandbox webhook receiver", () => {
  it("refuses a forged or stale sandbox event and applies a correctly signed one once", async () => {
    testClock.set(T0);
    const { owner, org } = await ownerWithOrganization();
    // The sandbox's checkouts exist for EUR while Stripe has no key.
    const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body: { plan: "pro" } }));
    const raw = JSON.stringify({
      id: "sbx_evt_test_1",
      type: "checkout.paid",
      created: T0 / 1000,
      data: { checkoutId: pending.checkout.id, subscriptionId: "sbx_sub_t1", invoiceId: "sbx_inv_t1", amount: 2900, currency: "EUR" },
    });
    const sign = async (secret: string, atMs: number) => `t=${atMs / 1000},v1=${await hmacHex(secret, `${atMs / 1000}.${raw}`)}`;
    expect((await postWebhook("sandbox", raw, { "Sandbox-Signature": await sign("not-the-secret", T0) })).status).toBe(400);
    expect((await postWebhook("sandbox", raw, { "Sandbox-Signature": await sign(await sandboxSecret(env), T0 - 400_000) })).status).toBe(
      400,
    );
    expect((await subscription(owner, org.id)).effectivePlan).toBe("starter");
    const ok = await postWebhook("sandbox", raw, { "Sandbox-Signature": await sign(await sandboxSecret(env), T0) });
    expect(ok.body.data.applied).toBe(true);
    const again = await postWebhook("sandbox", raw, { "Sandbox-Signature": await sign(await sandboxSecret(env), T0 + 1000) });
    expect(again.body.data.applied).toBe(false);
    expect((await subscription(owner, org.id)).effectivePlan).toBe("pro");
    expect(expectOk(await call("GET", `/v1/billing/usage/${org.id}/history`, adminKeyOf(org.id)))).toHaveLength(1);
  });
});
