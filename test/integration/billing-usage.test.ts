import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, createCatalog } from "../helpers/fixtures";
import { adminKeyOf, ownerWithOrganization, upgradeThroughSandbox } from "../helpers/billing";

// Usage of the current month and the monthly API-call quota: exact under concurrency, widget
// keys' traffic and dashboard sessions not counted.

async function usage(orgId: string) {
  return expectOk(await call("GET", `/v1/billing/usage/${orgId}`, adminKeyOf(orgId)));
}

async function setCounter(orgId: string, period: string, metric: string, used: number) {
  await env.DB.prepare(
    "INSERT INTO usage_counters (organization_id, period, metric, used) VALUES (?, ?, ?, ?) ON CONFLICT (organization_id, period, metric) DO UPDATE SET used = excluded.used",
  )
    .bind(orgId, period, metric, used)
    .run();
}

describe("usage", () => {
  it("shows tickets, API calls, SMS and webhook deliveries as {used, limit, resetsAt}", async () => {
    testClock.set("2026-03-15T10:00:00.000Z");
    const { owner, org } = await ownerWithOrganization();
    const { queueId } = await createCatalog(owner, org.id);
    for (let i = 0; i < 3; i++) expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { token: owner.token, body: {} }), 201);
    // What the SMS and webhook-delivery senders count (other areas increment these metrics).
    await setCounter(org.id, "2026-03", "sms", 7);
    await setCounter(org.id, "2026-03", "webhook_deliveries", 12);
    await setCounter(org.id, "2026-02", "sms", 99);

    const before = await usage(org.id);
    const resetsAt = "2026-04-01T00:00:00.000Z";
    expect(before).toMatchObject({
      plan: "starter",
      periodStart: "2026-03-01T00:00:00.000Z",
      periodEnd: resetsAt,
      tickets: { used: 3, limit: 50, resetsAt },
      sms: { used: 7, limit: 0, resetsAt },
      webhookDeliveries: { used: 12, limit: null, resetsAt },
    });
    // The usage read itself was made with the admin key: API calls are counted.
    expect(before.apiCalls).toEqual({ used: 1, limit: 10000, resetsAt });

    await upgradeThroughSandbox(owner, org.id);
    const after = await usage(org.id);
    expect(after.plan).toBe("pro");
    expect(after.tickets.limit).toBe(50_000);
    expect(after.apiCalls.limit).toBe(1_000_000);
    expect(after.sms).toMatchObject({ used: 7 });
    expect(after.sms.limit).not.toBe(0);
  });
});

describe("monthly API-call quota", () => {
  it("is exact under 20 concurrent requests: the 10,000th call is allowed, the 10,001st refused", async () => {
    testClock.set("2026-03-20T10:00:00.000Z");
    const { owner, org } = await ownerWithOrganization();
    const { key } = await createApiKey(owner, org.id, ["read"]);
    await setCounter(org.id, "2026-03", "api_calls", 9_990);

    const results = await Promise.all(Array.from({ length: 20 }, () => call("GET", `/v1/organizations/${org.id}`, { apiKey: key })));
    const allowed = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    expect(allowed).toHaveLength(10);
    expect(refused).toHaveLength(10);
    for (const r of refused) {
      expectError(r, 403, "QUOTA_EXCEEDED");
      expect(r.body.error.details).toEqual({ limit: 10_000, used: 10_000, resetsAt: "2026-04-01T00:00:00.000Z" });
    }
    const row = await env.DB.prepare(
      "SELECT used FROM usage_counters WHERE organization_id = ? AND period = '2026-03' AND metric = 'api_calls'",
    )
      .bind(org.id)
      .first<{ used: number }>();
    expect(row?.used).toBe(10_000);

    // The dashboard (a session) is not an API call: the owner still reads the usage.
    const shown = expectOk(await call("GET", `/v1/billing/usage/${org.id}`, { token: owner.token }));
    expect(shown.apiCalls).toEqual({ used: 10_000, limit: 10_000, resetsAt: "2026-04-01T00:00:00.000Z" });

    // A widget key's public traffic is not counted and not refused.
    const { key: widgetKey } = await createApiKey(owner, org.id, ["widget"]);
    expectOk(await call("GET", `/v1/widget/organization/${org.id}/info`, { apiKey: widgetKey }));

    // A new month, a new quota.
    testClock.set("2026-04-01T00:00:00.000Z");
    expectOk(await call("GET", `/v1/organizations/${org.id}`, { apiKey: key }));
  });

  it("an upgrade lifts the quota at once", async () => {
    testClock.set("2026-03-20T10:00:00.000Z");
    const { owner, org } = await ownerWithOrganization();
    const { key } = await createApiKey(owner, org.id, ["read"]);
    await setCounter(org.id, "2026-03", "api_calls", 10_000);
    expectError(await call("GET", `/v1/organizations/${org.id}`, { apiKey: key }), 403, "QUOTA_EXCEEDED");
    const pending = expectOk(await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body: { plan: "pro" } }));
    const { paySandboxCheckout } = await import("../helpers/billing");
    await paySandboxCheckout(pending.checkoutUrl);
    expectOk(await call("GET", `/v1/organizations/${org.id}`, { apiKey: key }));
  });
});
