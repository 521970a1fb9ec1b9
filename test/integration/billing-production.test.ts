import worker from "../../src/index";
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { signHeader } from "../../src/lib/signed-header";
import { sha256Hex } from "../../src/lib/crypto";
import { call, expectError, expectOk } from "../helpers/api";
import { ownerWithOrganization, postWebhook } from "../helpers/billing";

// Issue 26: production has no free way in. The deployed Worker runs with ENVIRONMENT=production;
// these requests go through the Worker's own fetch handler with that environment.

async function inProduction(
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  over: Partial<Env> = {},
) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers["Content-Type"] ??= "application/json";
  const request = new Request(`https://api.test${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body),
  });
  const ctx = createExecutionContext();
  // Production refuses the public development TOKEN_SECRET: a secret of its own, with the
  // development one as the previous (rotated-out) secret so the test's sessions still verify.
  const secrets = { TOKEN_SECRET: "a-production-token-secret-for-this-test", TOKEN_SECRET_PREVIOUS: env.TOKEN_SECRET };
  const res = await worker.fetch!(request as any, { ...env, ENVIRONMENT: "production", ...secrets, ...over } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

/** The secret the sandbox used to fall back to: anyone could compute it from the source. */
const derivableSecret = async () => `sbx_${await sha256Hex("queue-service sandbox webhooks v1")}`;

async function forgedCheckoutPaid(checkoutId: string) {
  const at = Date.now();
  const rawBody = JSON.stringify({
    id: `sbx_evt_forged${Math.random().toString(36).slice(2)}`,
    type: "checkout.paid",
    created: Math.floor(at / 1000),
    data: {
      checkoutId,
      subscriptionId: "sbx_sub_forged",
      invoiceId: `sbx_inv_${Math.random().toString(36).slice(2)}`,
      amount: 0,
      currency: "EUR",
    },
  });
  return { rawBody, signature: await signHeader(await derivableSecret(), rawBody, at, "v1") };
}

describe("ENVIRONMENT=production: the sandbox provider does not exist (issue 26)", () => {
  it("a plan in a currency whose provider has no keys is 503 PROVIDER_UNAVAILABLE; nothing is opened", async () => {
    const { owner, org } = await ownerWithOrganization();
    // Stripe configured, FedaPay not: XOF has no provider.
    const xof = await inProduction(
      "PATCH",
      `/v1/billing/subscription/${org.id}`,
      { token: owner.token, body: { plan: "pro", currency: "XOF" } },
      { STRIPE_SECRET_KEY: "sk_test_configured" },
    );
    expect(xof.status, JSON.stringify(xof.body)).toBe(503);
    expect(xof.body.error).toMatchObject({
      code: "PROVIDER_UNAVAILABLE",
      details: { field: "currency", currency: "XOF", provider: "fedapay" },
    });
    // No key at all: EUR too.
    const eur = await inProduction("PATCH", `/v1/billing/subscription/${org.id}`, {
      token: owner.token,
      body: { plan: "pro", currency: "EUR" },
    });
    expect(eur.status).toBe(503);
    expect(eur.body.error.details.provider).toBe("stripe");
    const fedapay = await inProduction("POST", "/v1/billing/fedapay/checkout", {
      token: owner.token,
      body: { organizationId: org.id, plan: "pro", billingInterval: "monthly", returnUrl: "https://example.com/back" },
    });
    expect(fedapay.status).toBe(503);
    const sub = expectOk(await call("GET", `/v1/billing/subscription/${org.id}`, { token: owner.token }));
    expect(sub).toMatchObject({ plan: "starter", status: "active" });
  });

  it("no sandbox route answers: the Pay button and the sandbox webhook are 404", async () => {
    const { owner, org } = await ownerWithOrganization();
    // A sandbox checkout opened before (development data, or a deploy that changed ENVIRONMENT).
    const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body: { plan: "pro" } }));
    const checkoutId = new URL(pending.checkoutUrl).pathname.split("/").pop()!;
    const pay = await inProduction("POST", `/v1/billing/checkouts/${checkoutId}`);
    expect(pay.status).toBe(404);
    const forged = await forgedCheckoutPaid(checkoutId);
    const hook = await inProduction("POST", "/v1/billing/webhooks/sandbox", {
      body: forged.rawBody,
      headers: { "Sandbox-Signature": forged.signature },
    });
    expect(hook.status).toBe(404);
    const sub = expectOk(await call("GET", `/v1/billing/subscription/${org.id}`, { token: owner.token }));
    // Opened, never paid: still waiting for a payment.
    expect(sub.status).toBe("incomplete");
  });

  it("the sandbox webhook secret is not derivable from the source, even outside production", async () => {
    const { owner, org } = await ownerWithOrganization();
    const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body: { plan: "pro" } }));
    const checkoutId = new URL(pending.checkoutUrl).pathname.split("/").pop()!;
    const forged = await forgedCheckoutPaid(checkoutId);
    const res = await postWebhook("sandbox", forged.rawBody, { "Sandbox-Signature": forged.signature });
    expectError({ status: res.status, headers: new Headers(), body: res.body }, 400, "VALIDATION_ERROR", "Sandbox-Signature");
    const sub = expectOk(await call("GET", `/v1/billing/subscription/${org.id}`, { token: owner.token }));
    expect(sub.status).toBe("incomplete");
  });
});
