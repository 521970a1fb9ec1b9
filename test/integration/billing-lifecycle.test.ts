import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { call, fetchWorker, expectError, expectOk } from "../helpers/api";
import { addMember, createApiKey, createCatalog, registerUser } from "../helpers/fixtures";
import { adminKeyOf, ownerWithOrganization, paySandboxCheckout, runCron, subscription, upgradeThroughSandbox } from "../helpers/billing";

// The subscription lifecycle through the sandbox provider: upgrade → paid → active, cancel at
// period end, renewals paid and declined, downgrades, and what a plan change does at once.

const DAY = 86_400_000;

async function secondQueue(auth: string | { apiKey: string }, serviceId: string) {
  const credential = typeof auth === "string" ? { token: auth } : auth;
  return call("POST", "/v1/business/queues", { ...credential, body: { serviceId, name: "Second" } });
}

describe("upgrade through the sandbox", () => {
  it("starts on starter; an upgrade is incomplete until paid, then active with a period and a paid invoice; a second queue is allowed", async () => {
    testClock.set("2026-03-10T12:00:00.000Z");
    const { owner, org } = await ownerWithOrganization();
    const { serviceId } = await createCatalog(owner, org.id);
    const start = await subscription(owner, org.id);
    expect(start).toMatchObject({ plan: "starter", status: "active", cancelAtPeriodEnd: false, effectivePlan: "starter", amount: 0 });
    expect(start.checkoutUrl).toBeUndefined();
    expectError(await secondQueue(owner.token, serviceId), 402, "PLAN_REQUIRED");

    const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body: { plan: "pro" } }));
    expect(pending).toMatchObject({
      plan: "pro",
      status: "incomplete",
      effectivePlan: "starter",
      currency: "EUR",
      amount: 2900,
      billingInterval: "monthly",
    });
    expect(pending.checkoutUrl).toMatch(/^https:\/\/api\.test\/v1\/billing\/checkouts\/chk_/);
    expect(pending.checkout).toMatchObject({ provider: "sandbox", amount: 2900, currency: "EUR" });
    // Nothing changes before the payment.
    expectError(await secondQueue(owner.token, serviceId), 402, "PLAN_REQUIRED");
    expect((await subscription(owner, org.id)).status).toBe("incomplete");

    // The sandbox page a person would open.
    const page = await fetchPage(pending.checkoutUrl);
    expect(page).toContain("Pay");
    expect(page).toContain("€29.00");

    await paySandboxCheckout(pending.checkoutUrl);
    const active = await subscription(owner, org.id);
    expect(active).toMatchObject({ plan: "pro", status: "active", effectivePlan: "pro", provider: "sandbox", cancelAtPeriodEnd: false });
    expect(active.currentPeriodStart).toBe("2026-03-10T12:00:00.000Z");
    expect(active.currentPeriodEnd).toBe("2026-04-10T12:00:00.000Z");
    expectOk(await secondQueue(owner.token, serviceId), 201);

    const invoices = expectOk(await call("GET", `/v1/billing/usage/${org.id}/history`, { token: owner.token }));
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({
      plan: "pro",
      amount: 2900,
      currency: "EUR",
      status: "paid",
      periodStart: "2026-03-10T12:00:00.000Z",
      periodEnd: "2026-04-10T12:00:00.000Z",
    });

    // A checkout is paid once.
    const again = await call("POST", new URL(pending.checkoutUrl).pathname);
    expectError(again, 409, "INVALID_STATE");
  });

  it("yearly in USD: the yearly price and a one-year period", async () => {
    testClock.set("2026-01-31T08:00:00.000Z");
    const { owner, org } = await ownerWithOrganization();
    const sub = await upgradeThroughSandbox(owner, org.id, { plan: "enterprise", billingInterval: "yearly", currency: "USD" });
    expect(sub).toMatchObject({ plan: "enterprise", billingInterval: "yearly", currency: "USD", amount: 109000, status: "active" });
    expect(sub.currentPeriodEnd).toBe("2027-01-31T08:00:00.000Z");
  });

  it("a plan change moves the rate tier of the organization's keys at once", async () => {
    const { owner, org } = await ownerWithOrganization();
    const { key } = await createApiKey(owner, org.id, ["read"]);
    const before = await call("GET", `/v1/organizations/${org.id}`, { apiKey: key });
    expect(before.headers.get("X-RateLimit-Limit")).toBe("60");
    await upgradeThroughSandbox(owner, org.id);
    const after = await call("GET", `/v1/organizations/${org.id}`, { apiKey: key });
    expect(after.headers.get("X-RateLimit-Limit")).toBe("1000");
  });

  it("an expired checkout is no longer shown nor payable", async () => {
    testClock.set("2026-05-01T00:00:00.000Z");
    const { owner, org } = await ownerWithOrganization();
    const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body: { plan: "pro" } }));
    testClock.advance(DAY + 1);
    expect((await subscription(owner, org.id)).status).toBe("active");
    expectError(await call("POST", new URL(pending.checkoutUrl).pathname), 409, "INVALID_STATE");
    expect((await subscription(owner, org.id)).plan).toBe("starter");
  });
});

async function fetchPage(url: string): Promise<string> {
  const res = await fetchWorker(url, { headers: { Accept: "text/html" } });
  expect(res.headers.get("Content-Type")).toContain("text/html");
  return res.text();
}

describe("cancel, renewal, failed renewal, downgrade", () => {
  it("cancel keeps pro until the period ends, then the sweep moves the organization to starter (data kept)", async () => {
    testClock.set("2026-03-10T12:00:00.000Z");
    const { owner, org } = await ownerWithOrganization();
    const { serviceId } = await createCatalog(owner, org.id);
    await upgradeThroughSandbox(owner, org.id);
    const second = expectOk(await secondQueue(adminKeyOf(org.id), serviceId), 201);

    const cancelled = expectOk(
      await call("POST", `/v1/billing/subscription/${org.id}/cancel`, { ...adminKeyOf(org.id), body: { reason: "Too expensive" } }),
    );
    expect(cancelled).toMatchObject({
      plan: "pro",
      status: "active",
      cancelAtPeriodEnd: true,
      scheduledPlan: "starter",
      cancelReason: "Too expensive",
    });

    // A minute before the end: still pro.
    await runCron(Date.parse("2026-04-10T11:59:00.000Z"));
    expect((await subscription(owner, org.id)).plan).toBe("pro");
    expectOk(await call("POST", "/v1/business/queues", { ...adminKeyOf(org.id), body: { serviceId, name: "Third" } }), 201);

    testClock.set("2026-04-10T12:00:30.000Z");
    await runCron(Date.parse("2026-04-10T12:00:30.000Z"));
    const after = await subscription(owner, org.id);
    expect(after).toMatchObject({ plan: "starter", status: "active", cancelAtPeriodEnd: false, provider: null, scheduledPlan: null });
    // Over-limit data is kept and readable; nothing new beyond the starter limits.
    expectOk(await call("GET", `/v1/queues/${second.id}`, { ...adminKeyOf(org.id) }));
    expectError(
      await call("POST", "/v1/business/queues", { ...adminKeyOf(org.id), body: { serviceId, name: "Fourth" } }),
      402,
      "PLAN_REQUIRED",
    );
    // Running the sweep again changes nothing and charges nothing.
    await runCron(Date.parse("2026-04-10T12:01:30.000Z"));
    expect(expectOk(await call("GET", `/v1/billing/usage/${org.id}/history`, { ...adminKeyOf(org.id) }))).toHaveLength(1);
  });

  it("a renewal charges the next period and adds a paid invoice", async () => {
    testClock.set("2026-03-10T12:00:00.000Z");
    const { owner, org } = await ownerWithOrganization();
    await upgradeThroughSandbox(owner, org.id);
    testClock.set("2026-04-10T12:00:30.000Z");
    await runCron(Date.parse("2026-04-10T12:00:30.000Z"));
    const renewed = await subscription(owner, org.id);
    expect(renewed).toMatchObject({ plan: "pro", status: "active" });
    expect([renewed.currentPeriodStart, renewed.currentPeriodEnd]).toEqual(["2026-04-10T12:00:00.000Z", "2026-05-10T12:00:00.000Z"]);
    const invoices = expectOk(await call("GET", `/v1/billing/usage/${org.id}/history`, { ...adminKeyOf(org.id) }));
    expect(invoices.map((i: any) => [i.status, i.periodStart])).toEqual([
      ["paid", "2026-04-10T12:00:00.000Z"],
      ["paid", "2026-03-10T12:00:00.000Z"],
    ]);
  });

  it("a declined renewal: past_due with the 7-day grace (still pro), then starter", async () => {
    testClock.set("2026-03-10T12:00:00.000Z");
    const { owner, org } = await ownerWithOrganization();
    const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { ...adminKeyOf(org.id), body: { plan: "pro" } }));
    await paySandboxCheckout(pending.checkoutUrl, "fail");
    const sub = await subscription(owner, org.id);
    expect(sub).toMatchObject({ plan: "pro", status: "active" });

    testClock.set("2026-04-10T12:00:30.000Z");
    await runCron(Date.parse("2026-04-10T12:00:30.000Z"));
    const pastDue = await subscription(owner, org.id);
    expect(pastDue).toMatchObject({ plan: "pro", status: "past_due", effectivePlan: "pro", graceUntil: "2026-04-17T12:00:30.000Z" });
    const invoices = expectOk(await call("GET", `/v1/billing/usage/${org.id}/history`, { ...adminKeyOf(org.id) }));
    expect(invoices.map((i: any) => i.status)).toEqual(["failed", "paid"]);

    await runCron(Date.parse("2026-04-17T12:00:00.000Z"));
    expect((await subscription(owner, org.id)).plan).toBe("pro");
    testClock.set("2026-04-17T12:01:00.000Z");
    await runCron(Date.parse("2026-04-17T12:01:00.000Z"));
    expect(await subscription(owner, org.id)).toMatchObject({ plan: "starter", status: "active", graceUntil: null });
  });

  it("past_due can pay again: a new checkout for the same plan makes it active", async () => {
    testClock.set("2026-03-10T12:00:00.000Z");
    const { owner, org } = await ownerWithOrganization();
    const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { ...adminKeyOf(org.id), body: { plan: "pro" } }));
    await paySandboxCheckout(pending.checkoutUrl, "fail");
    testClock.set("2026-04-10T12:00:30.000Z");
    await runCron(Date.parse("2026-04-10T12:00:30.000Z"));
    expect((await subscription(owner, org.id)).status).toBe("past_due");
    testClock.set("2026-04-11T09:00:00.000Z");
    const again = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { ...adminKeyOf(org.id), body: { plan: "pro" } }));
    expect(again.status).toBe("incomplete");
    await paySandboxCheckout(again.checkoutUrl);
    expect(await subscription(owner, org.id)).toMatchObject({
      plan: "pro",
      status: "active",
      currentPeriodEnd: "2026-05-11T09:00:00.000Z",
      graceUntil: null,
    });
  });

  it("a downgrade to a lower paid plan waits for the period end; asking for the plan in force again drops it", async () => {
    testClock.set("2026-03-10T12:00:00.000Z");
    const { owner, org } = await ownerWithOrganization();
    await upgradeThroughSandbox(owner, org.id, { plan: "enterprise" });
    const scheduled = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { ...adminKeyOf(org.id), body: { plan: "pro" } }));
    expect(scheduled).toMatchObject({
      plan: "enterprise",
      effectivePlan: "enterprise",
      scheduledPlan: "pro",
      cancelAtPeriodEnd: false,
      status: "active",
    });
    const resumed = expectOk(
      await call("PATCH", `/v1/billing/subscription/${org.id}`, { ...adminKeyOf(org.id), body: { plan: "enterprise" } }),
    );
    expect(resumed.scheduledPlan).toBeNull();
    expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { ...adminKeyOf(org.id), body: { plan: "pro" } }));

    testClock.set("2026-04-10T12:00:30.000Z");
    await runCron(Date.parse("2026-04-10T12:00:30.000Z"));
    const after = await subscription(owner, org.id);
    expect(after).toMatchObject({ plan: "pro", scheduledPlan: null, status: "active", amount: 2900 });
    const invoices = expectOk(await call("GET", `/v1/billing/usage/${org.id}/history`, { ...adminKeyOf(org.id) }));
    expect(invoices.map((i: any) => [i.plan, i.amount])).toEqual([
      ["pro", 2900],
      ["enterprise", 9900],
    ]);
  });

  it("PATCH starter on a paid plan is a cancel at period end; PATCH pro resumes", async () => {
    const { owner, org } = await ownerWithOrganization();
    await upgradeThroughSandbox(owner, org.id);
    const down = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { ...adminKeyOf(org.id), body: { plan: "starter" } }));
    expect(down).toMatchObject({ plan: "pro", cancelAtPeriodEnd: true, scheduledPlan: "starter" });
    const resumed = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { ...adminKeyOf(org.id), body: { plan: "pro" } }));
    expect(resumed).toMatchObject({ plan: "pro", cancelAtPeriodEnd: false, scheduledPlan: null, status: "active" });
  });
});

describe("routes: bad input, roles, other organizations", () => {
  it.each([
    [{ plan: "gold" }, "plan"],
    [{}, "plan"],
    [{ plan: "pro", billingInterval: "weekly" }, "billingInterval"],
    [{ plan: "pro", currency: "GBP" }, "currency"],
    [{ plan: "pro", returnUrl: "http://shop.example.com/back" }, "returnUrl"],
    [{ plan: "pro", status: "active" }, "status"],
  ])("PATCH %j is 400 on %s", async (body, field) => {
    const { owner, org } = await ownerWithOrganization();
    expectError(await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body }), 400, "VALIDATION_ERROR", field);
    expect((await subscription(owner, org.id)).status).toBe("active");
  });

  it.each([
    [{ plan: "gold", billingInterval: "monthly", returnUrl: "https://shop.example.com" }, "plan"],
    [{ plan: "starter", billingInterval: "monthly", returnUrl: "https://shop.example.com" }, "plan"],
    [{ plan: "pro", billingInterval: "daily", returnUrl: "https://shop.example.com" }, "billingInterval"],
    [{ plan: "pro", billingInterval: "monthly", returnUrl: "http://shop.example.com" }, "returnUrl"],
    [{ plan: "pro", billingInterval: "monthly" }, "returnUrl"],
  ])("FedaPay checkout %j is 400 on %s", async (body, field) => {
    const { owner, org } = await ownerWithOrganization();
    const res = await call("POST", "/v1/billing/fedapay/checkout", { token: owner.token, body: { organizationId: org.id, ...body } });
    expectError(res, 400, "VALIDATION_ERROR", field);
  });

  it("cancel on starter is 409; a reason over 500 characters is 400", async () => {
    const { owner, org } = await ownerWithOrganization();
    expectError(await call("POST", `/v1/billing/subscription/${org.id}/cancel`, { token: owner.token, body: {} }), 409, "INVALID_STATE");
    expectError(
      await call("POST", `/v1/billing/subscription/${org.id}/cancel`, { token: owner.token, body: { reason: "x".repeat(501) } }),
      400,
      "VALIDATION_ERROR",
      "reason",
    );
  });

  it("an operator and a manager get 403 on every billing route; another organization's owner gets 404", async () => {
    const { owner, org } = await ownerWithOrganization();
    const operator = await registerUser();
    const manager = await registerUser();
    await addMember(owner, org.id, "operator", operator);
    await addMember(owner, org.id, "manager", manager);
    const stranger = await ownerWithOrganization();
    const routes: [string, string, unknown?][] = [
      ["GET", `/v1/billing/subscription/${org.id}`],
      ["PATCH", `/v1/billing/subscription/${org.id}`, { plan: "pro" }],
      ["POST", `/v1/billing/subscription/${org.id}/cancel`, { reason: "no" }],
      ["GET", `/v1/billing/usage/${org.id}`],
      ["GET", `/v1/billing/usage/${org.id}/history`],
      [
        "POST",
        "/v1/billing/fedapay/checkout",
        { organizationId: org.id, plan: "pro", billingInterval: "monthly", returnUrl: "https://shop.example.com" },
      ],
    ];
    for (const [method, path, body] of routes) {
      for (const user of [operator, manager])
        expectError(await call(method, path, { token: user.token, body }), 403, "AUTHORIZATION_ERROR");
      expectError(await call(method, path, { token: stranger.owner.token, body }), 404, "NOT_FOUND");
    }
    expect((await subscription(owner, org.id)).status).toBe("active");
  });

  it("a read:analytics key reads the subscription, usage and history but cannot change the plan", async () => {
    const { owner, org } = await ownerWithOrganization();
    const { key } = await createApiKey(owner, org.id, ["read:analytics"]);
    expectOk(await call("GET", `/v1/billing/subscription/${org.id}`, { apiKey: key }));
    expectOk(await call("GET", `/v1/billing/usage/${org.id}`, { apiKey: key }));
    expectOk(await call("GET", `/v1/billing/usage/${org.id}/history`, { apiKey: key }));
    expectError(
      await call("PATCH", `/v1/billing/subscription/${org.id}`, { apiKey: key, body: { plan: "pro" } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    const { key: queuesKey } = await createApiKey(owner, org.id, ["read:queues"]);
    expectError(await call("GET", `/v1/billing/subscription/${org.id}`, { apiKey: queuesKey }), 403, "AUTHORIZATION_ERROR");
  });

  it("an unknown checkout is 404; a checkout id is not a credential for anything else", async () => {
    expectError(await call("GET", "/v1/billing/checkouts/chk_00000000000000000000"), 404, "NOT_FOUND");
    expectError(await call("POST", "/v1/billing/checkouts/chk_00000000000000000000"), 404, "NOT_FOUND");
  });

  it("the demo seed is not needed: env has no provider secret, so checkouts are the sandbox's", () => {
    expect(env.STRIPE_SECRET_KEY).toBeUndefined();
    expect(env.FEDAPAY_SECRET_KEY).toBeUndefined();
  });
});
