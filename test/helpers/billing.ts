import worker from "../../src/index";
import { createExecutionContext, createScheduledController, env } from "cloudflare:test";
import { waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import { call, expectOk } from "./api";
import { createApiKey, createOrganization, registerUser, type TestUser } from "./fixtures";

// Billing fixtures, through the API: a business owner with an organization, the sandbox's
// checkout paid by POSTing its URL, and the minute cron run at a chosen time.

const adminKeys = new Map<string, string>();

/** An owner, their organization, and an admin key (keys do not expire when a test moves the clock by months). */
export async function ownerWithOrganization(): Promise<{ owner: TestUser; org: { id: string }; key: string }> {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  const { key } = await createApiKey(owner, org.id, ["admin"]);
  adminKeys.set(org.id, key);
  return { owner, org, key };
}

export function adminKeyOf(organizationId: string): { apiKey: string } {
  return { apiKey: adminKeys.get(organizationId)! };
}

/** POST <checkoutUrl>, as a person pressing "Pay" on the sandbox page would (JSON answer). */
export async function paySandboxCheckout(checkoutUrl: string, renewals: "succeed" | "fail" = "succeed"): Promise<any> {
  const url = new URL(checkoutUrl);
  const res = await call("POST", `${url.pathname}?renewals=${renewals}`);
  return expectOk(res);
}

export async function upgradeThroughSandbox(
  owner: TestUser,
  organizationId: string,
  body: Record<string, unknown> = { plan: "pro" },
): Promise<any> {
  const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${organizationId}`, { token: owner.token, body }));
  expect(pending.status).toBe("incomplete");
  await paySandboxCheckout(pending.checkoutUrl);
  return subscription(owner, organizationId);
}

export async function subscription(_owner: TestUser, organizationId: string): Promise<any> {
  return expectOk(await call("GET", `/v1/billing/subscription/${organizationId}`, adminKeyOf(organizationId)));
}

export async function runCron(at: number): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled!(createScheduledController({ scheduledTime: at, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/** Sends a raw webhook body with one signature header, as a provider would. */
export async function postWebhook(
  provider: string,
  rawBody: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: any }> {
  const res = await call("POST", `/v1/billing/webhooks/${provider}`, {
    headers: { "Content-Type": "application/json", ...headers },
    rawBody,
  });
  return { status: res.status, body: res.body };
}

export async function hmacHex(secret: string, text: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text)));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}
