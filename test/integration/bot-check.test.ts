import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, queueFixture, type Fixture } from "../helpers/fixtures";

// Issue 44: an organization may ask widget and kiosk joins that give a phone to pass Cloudflare
// Turnstile, verified server-side (siteverify, intercepted here at the fetch boundary): always,
// or once the day's visitor share of SMS is half used.

afterEach(() => vi.restoreAllMocks());

const SITEVERIFY = "https://challenges.cloudflare.com/turnstile/v0/siteverify";
const randomMobile = () => `+3360${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
const randomAddress = () => `203.0.113.${Math.floor(Math.random() * 250) + 1}`;

/** Turnstile's siteverify: "good" passes, anything else fails; every verification asked. */
function turnstile(): URLSearchParams[] {
  const asked: URLSearchParams[] = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url !== SITEVERIFY) return real(input as any, init);
    const form = new URLSearchParams(String(init?.body));
    asked.push(form);
    return Response.json({ success: form.get("response") === "good", "error-codes": [] });
  });
  return asked;
}

async function setup(botCheck: string | null, extra: Record<string, unknown> = {}) {
  const f = await queueFixture("pro");
  const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
  expectOk(await call("PATCH", `/v1/organizations/${f.organizationId}/sms-policy`, { token: f.owner.token, body: { botCheck, ...extra } }));
  return { f, key };
}

function join(f: Fixture, key: string, body: Record<string, unknown>, token?: string) {
  const headers: Record<string, string> = { "CF-Connecting-IP": randomAddress() };
  if (token !== undefined) headers["CF-Turnstile-Response"] = token;
  return call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: key, body, headers });
}

describe("the bot check on public joins that ask for SMS (issue 44)", () => {
  it("where the organization requires it, a join giving a phone without a valid Turnstile token is refused", async () => {
    const asked = turnstile();
    const { f, key } = await setup("always");
    expect(expectOk(await call("GET", `/v1/organizations/${f.organizationId}/sms-policy`, { token: f.owner.token })).botCheck).toBe(
      "always",
    );

    const none = await join(f, key, { phone: randomMobile() });
    expectError(none, 400, "VALIDATION_ERROR", "CF-Turnstile-Response");
    expect(none.body.error.details.reason).toBe("bot_check_required");
    const bad = await join(f, key, { phone: randomMobile() }, "forged");
    expectError(bad, 400, "VALIDATION_ERROR", "CF-Turnstile-Response");
    expect(bad.body.error.details.reason).toBe("bot_check_failed");
    // Nothing was created by the refused joins.
    const listed = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets`, { token: f.owner.token }));
    expect(listed).toHaveLength(0);

    expectOk(await join(f, key, { phone: randomMobile() }, "good"), 201);
    // Checked server-side with the secret (Turnstile's always-pass test secret in development).
    expect(asked.map((a) => a.get("response"))).toEqual(["forged", "good"]);
    expect(asked[1]!.get("secret")).toBe("1x0000000000000000000000000000000AA");
    // A join without a phone asks for no SMS: no check.
    expectOk(await join(f, key, {}), 201);
  });

  it("is not asked where the organization does not require it", async () => {
    const asked = turnstile();
    const { f, key } = await setup(null);
    expectOk(await join(f, key, { phone: randomMobile() }), 201);
    expect(asked).toHaveLength(0);
  });

  it("when_half_used: asked only once the day's visitor share of SMS is half used", async () => {
    turnstile();
    // Ceiling 10, reserve 20 %: the visitors' share is 8, half of it 4.
    const { f, key } = await setup("when_half_used", { dailyCeiling: 10, businessReservePercent: 20 });
    const day = new Date().toISOString().slice(0, 10);
    const used = (n: number) =>
      env.DB.prepare(
        `INSERT INTO sms_counters (organization_id, scope, subject, day, used) VALUES (?, 'day', 'org', ?, ?)
         ON CONFLICT (organization_id, scope, subject, day) DO UPDATE SET used = excluded.used`,
      )
        .bind(f.organizationId, day, n)
        .run();
    await used(3);
    expectOk(await join(f, key, { phone: randomMobile() }), 201);
    await used(4);
    expectError(await join(f, key, { phone: randomMobile() }), 400, "VALIDATION_ERROR", "CF-Turnstile-Response");
    expectOk(await join(f, key, { phone: randomMobile() }, "good"), 201);
  });
});
