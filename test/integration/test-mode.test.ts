import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import type { Env } from "../../src/env";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { createApiKey, createCatalog, createOrganization, registerUser, setPlan, walkIn, type TestUser } from "../helpers/fixtures";
import { capture, eventsOf, feedEvents, type Captured } from "../helpers/notifications";
import { fakeTwilio, TWILIO } from "../helpers/twilio";

// Test mode (issue 41, docs/test-mode.md): a key created with mode "test" is a qk_test_… key of
// the organization's twin, which holds a copy of the live catalogue and nothing else of it.
// Live and test never see each other's data, both ways; every answer says livemode.

let captured: Captured | null = null;
afterEach(() => {
  captured?.restore();
  captured = null;
  vi.restoreAllMocks();
});

interface Sides {
  owner: TestUser;
  liveId: string;
  liveQueueId: string;
  liveKey: string;
  testKey: string;
  twinId: string;
}

async function twoSides(): Promise<Sides> {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  await setPlan(org.id, "pro");
  const { queueId } = await createCatalog(owner, org.id);
  const { key: liveKey } = await createApiKey(owner, org.id, ["admin"]);
  const created = expectOk(
    await call("POST", `/v1/organizations/${org.id}/api-keys`, {
      token: owner.token,
      body: { name: "Sandbox", permissions: ["admin"], mode: "test" },
    }),
    201,
  );
  return { owner, liveId: org.id, liveQueueId: queueId, liveKey, testKey: created.key, twinId: created.organizationId };
}

async function twinQueueId(s: Sides): Promise<string> {
  const queues = expectOk(await call("GET", "/v1/business/queues", { apiKey: s.testKey }));
  expect(queues).toHaveLength(1);
  return queues[0].id;
}

describe("test mode", () => {
  it("a test key is qk_test_…, works on a twin holding a copy of the live catalogue, and every answer says livemode", async () => {
    const s = await twoSides();
    expect(s.testKey).toMatch(/^qk_test_/);
    expect(s.liveKey).toMatch(/^qk_live_/);
    expect(s.twinId).toMatch(/^org_test/);
    expect(s.twinId).not.toBe(s.liveId);

    const mode = await call("GET", "/v1/test", { apiKey: s.testKey });
    expect(mode.body.livemode).toBe(false);
    expect(mode.body.data).toMatchObject({ organizationId: s.twinId, liveOrganizationId: s.liveId });
    expect(mode.body.data.catalogueCopiedAt).not.toBeNull();

    // The catalogue: the same names, new ids.
    const liveQueues = await call("GET", "/v1/business/queues", { apiKey: s.liveKey });
    const testQueues = await call("GET", "/v1/business/queues", { apiKey: s.testKey });
    expect(liveQueues.body.livemode).toBe(true);
    expect(testQueues.body.livemode).toBe(false);
    expect(testQueues.body.data.map((q: any) => q.name)).toEqual(liveQueues.body.data.map((q: any) => q.name));
    expect(testQueues.body.data[0].id).not.toBe(s.liveQueueId);
    const testServices = expectOk(await call("GET", "/v1/business/services", { apiKey: s.testKey }));
    expect(testServices).toHaveLength(1);
    expect(testServices[0].name).toBe("Teller");

    // Errors say it too; a session is always live.
    const missing = await call("GET", `/v1/queues/que_${"0".repeat(20)}`, { apiKey: s.testKey });
    expect(missing.status).toBe(404);
    expect(missing.body.livemode).toBe(false);
    expect((await call("GET", "/v1/auth/me", { token: s.owner.token })).body.livemode).toBe(true);

    // The key's record says where it works; the twin makes test keys only.
    const keys = expectOk(await call("GET", `/v1/organizations/${s.twinId}/api-keys`, { apiKey: s.testKey }));
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ mode: "test", organizationId: s.twinId });
    expect(keys[0].maskedKey).toMatch(/^qk_test_/);
    const another = expectOk(
      await call("POST", `/v1/organizations/${s.twinId}/api-keys`, { apiKey: s.testKey, body: { name: "read" } }),
      201,
    );
    expect(another.key).toMatch(/^qk_test_/);
    expectError(
      await call("POST", `/v1/organizations/${s.twinId}/api-keys`, { apiKey: s.testKey, body: { name: "x", mode: "live" } }),
      400,
      "VALIDATION_ERROR",
      "mode",
    );
    // A second test key of the live organization lands in the same twin.
    const second = expectOk(
      await call("POST", `/v1/organizations/${s.liveId}/api-keys`, { token: s.owner.token, body: { name: "again", mode: "test" } }),
      201,
    );
    expect(second.organizationId).toBe(s.twinId);
    expect(await twinQueueId({ ...s, testKey: second.key })).toBe(testQueues.body.data[0].id);
  });

  it("live and test never see each other's tickets, lists, keys, webhooks or events (404 both ways)", async () => {
    const s = await twoSides();
    const testQueueId = await twinQueueId(s);
    captured = capture();
    const liveTicket = await walkIn({ apiKey: s.liveKey }, s.liveQueueId);
    const testTicket = await walkIn({ apiKey: s.testKey }, testQueueId);
    await feedEvents([...(await eventsOf(captured, s.liveQueueId)), ...(await eventsOf(captured, testQueueId))]);

    // Tickets.
    expectError(await call("GET", `/v1/tickets/${liveTicket.id}`, { apiKey: s.testKey }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/tickets/${testTicket.id}`, { apiKey: s.liveKey }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/tickets/${testTicket.id}`, { token: s.owner.token }), 404, "NOT_FOUND");
    expectError(await call("POST", `/v1/queues/${s.liveQueueId}/call-next`, { apiKey: s.testKey, body: {} }), 404, "NOT_FOUND");
    expectError(await call("POST", `/v1/queues/${testQueueId}/call-next`, { apiKey: s.liveKey, body: {} }), 404, "NOT_FOUND");

    // Lists.
    expectError(await call("GET", `/v1/queues/${s.liveQueueId}/tickets`, { apiKey: s.testKey }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/queues/${testQueueId}/tickets`, { apiKey: s.liveKey }), 404, "NOT_FOUND");
    const testTickets = expectOk(await call("GET", `/v1/queues/${testQueueId}/tickets`, { apiKey: s.testKey }));
    expect(testTickets.map((t: any) => t.id)).toEqual([testTicket.id]);
    const liveQueues = expectOk(await call("GET", "/v1/business/queues", { apiKey: s.liveKey }));
    expect(liveQueues.map((q: any) => q.id)).toEqual([s.liveQueueId]);

    // Keys.
    const liveKeys = expectOk(await call("GET", `/v1/organizations/${s.liveId}/api-keys`, { apiKey: s.liveKey }));
    expect(liveKeys.every((k: any) => k.mode === "live")).toBe(true);
    const testKeys = expectOk(await call("GET", `/v1/organizations/${s.twinId}/api-keys`, { apiKey: s.testKey }));
    expect(testKeys.map((k: any) => k.mode)).toEqual(["test"]);
    expectError(await call("GET", `/v1/organizations/${s.liveId}/api-keys`, { apiKey: s.testKey }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/organizations/${s.twinId}/api-keys`, { apiKey: s.liveKey }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/organizations/${s.twinId}/api-keys`, { token: s.owner.token }), 404, "NOT_FOUND");
    expectError(await call("DELETE", `/v1/organizations/${s.liveId}/api-keys/${liveKeys[0].id}`, { apiKey: s.testKey }), 404, "NOT_FOUND");

    // Webhooks.
    const hook = { url: "https://hooks.example.com/test", events: ["*"] };
    const testHook = expectOk(await call("POST", `/v1/organizations/${s.twinId}/webhooks`, { apiKey: s.testKey, body: hook }), 201);
    const liveHook = expectOk(await call("POST", `/v1/organizations/${s.liveId}/webhooks`, { apiKey: s.liveKey, body: hook }), 201);
    expectError(await call("GET", `/v1/organizations/${s.liveId}/webhooks/${testHook.id}`, { apiKey: s.liveKey }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/organizations/${s.twinId}/webhooks/${liveHook.id}`, { apiKey: s.testKey }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/organizations/${s.liveId}/webhooks`, { apiKey: s.testKey }), 404, "NOT_FOUND");
    expect(expectOk(await call("GET", `/v1/organizations/${s.liveId}/webhooks`, { apiKey: s.liveKey })).map((w: any) => w.id)).toEqual([
      liveHook.id,
    ]);
    expect(expectOk(await call("GET", `/v1/organizations/${s.twinId}/webhooks`, { apiKey: s.testKey })).map((w: any) => w.id)).toEqual([
      testHook.id,
    ]);

    // Events.
    const liveEvents = expectOk(await call("GET", "/v1/events", { apiKey: s.liveKey }));
    const testEvents = expectOk(await call("GET", "/v1/events", { apiKey: s.testKey }));
    expect(liveEvents.length).toBeGreaterThan(0);
    expect(testEvents.length).toBeGreaterThan(0);
    expect(liveEvents.every((e: any) => e.organizationId === s.liveId && e.data.ticketId !== testTicket.id)).toBe(true);
    expect(testEvents.every((e: any) => e.organizationId === s.twinId && e.data.ticketId !== liveTicket.id)).toBe(true);
    expect(testEvents.some((e: any) => e.data.ticketId === testTicket.id)).toBe(true);
  });

  it("POST /v1/test/reset empties the twin, keeps the test keys and copies the catalogue again; live keys and sessions may not call it", async () => {
    const s = await twoSides();
    const oldQueueId = await twinQueueId(s);
    const ticket = await walkIn({ apiKey: s.testKey }, oldQueueId);
    expectOk(
      await call("POST", `/v1/organizations/${s.twinId}/webhooks`, {
        apiKey: s.testKey,
        body: { url: "https://hooks.example.com/a", events: ["*"] },
      }),
      201,
    );
    const liveTicket = await walkIn({ apiKey: s.liveKey }, s.liveQueueId);

    expectError(await call("POST", "/v1/test/reset", { apiKey: s.liveKey }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("POST", "/v1/test/reset", { token: s.owner.token }), 403, "AUTHORIZATION_ERROR");
    const readOnly = expectOk(
      await call("POST", `/v1/organizations/${s.twinId}/api-keys`, { apiKey: s.testKey, body: { name: "r", permissions: ["read"] } }),
      201,
    );
    expectError(await call("POST", "/v1/test/reset", { apiKey: readOnly.key }), 403, "AUTHORIZATION_ERROR");

    const reset = await call("POST", "/v1/test/reset", { apiKey: s.testKey });
    const twin = expectOk(reset);
    expect(reset.body.livemode).toBe(false);
    expect(twin.liveOrganizationId).toBe(s.liveId);
    expect(twin.organizationId).toMatch(/^org_test/);
    expect(twin.organizationId).not.toBe(s.twinId);

    // The same key works on the new twin: a fresh copy of the catalogue, nothing else.
    expect(expectOk(await call("GET", "/v1/test", { apiKey: s.testKey })).organizationId).toBe(twin.organizationId);
    const newQueueId = await twinQueueId(s);
    expect(newQueueId).not.toBe(oldQueueId);
    expect(expectOk(await call("GET", `/v1/queues/${newQueueId}/tickets`, { apiKey: s.testKey }))).toEqual([]);
    expect(expectOk(await call("GET", `/v1/organizations/${twin.organizationId}/webhooks`, { apiKey: s.testKey }))).toEqual([]);
    expect(expectOk(await call("GET", "/v1/events", { apiKey: s.testKey }))).toEqual([]);
    expectError(await call("GET", `/v1/tickets/${ticket.id}`, { apiKey: s.testKey }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/organizations/${s.twinId}/webhooks`, { apiKey: s.testKey }), 404, "NOT_FOUND");
    const keys = expectOk(await call("GET", `/v1/organizations/${twin.organizationId}/api-keys`, { apiKey: s.testKey }));
    expect(keys.map((k: any) => k.name).sort()).toEqual(["Sandbox", "r"]);
    // A ticket in the new twin; nothing live was touched.
    await walkIn({ apiKey: s.testKey }, newQueueId);
    expect(expectOk(await call("GET", `/v1/tickets/${liveTicket.id}`, { apiKey: s.liveKey })).status).toBe("waiting");
    expect(expectOk(await call("GET", "/v1/business/queues", { apiKey: s.liveKey })).map((q: any) => q.id)).toEqual([s.liveQueueId]);
  });

  it("providers are always the local stand-ins: a twin's SMS is recorded by the outbox even with Twilio configured; billing and members are live only", async () => {
    const s = await twoSides();
    const sent = fakeTwilio();
    const sms = async (key: string) => {
      const request = new Request("https://api.test/v1/notifications/sms", {
        method: "POST",
        headers: { "X-API-Key": key, "Content-Type": "application/json" },
        body: JSON.stringify({ phone: "+33612345678", message: "Votre tour approche", purpose: "announcement" }),
      });
      const ctx = createExecutionContext();
      const res = await worker.fetch!(request as any, { ...env, ...TWILIO } as Env, ctx);
      await waitOnExecutionContext(ctx);
      return { status: res.status, body: (await res.json()) as any };
    };
    const test = await sms(s.testKey);
    expect(test.status).toBe(201);
    expect(test.body.livemode).toBe(false);
    expect(sent).toHaveLength(0);
    const row = await env.DB.prepare("SELECT provider, status FROM notification_deliveries WHERE organization_id = ? AND channel = 'sms'")
      .bind(s.twinId)
      .first<{ provider: string; status: string }>();
    expect(row).toEqual({ provider: "outbox", status: "sent" });
    // The live organization's SMS still goes through Twilio.
    expect((await sms(s.liveKey)).status).toBe(201);
    expect(sent).toHaveLength(1);

    expectError(
      await call("PATCH", `/v1/billing/subscription/${s.twinId}`, { apiKey: s.testKey, body: { plan: "enterprise" } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(
      await call("POST", `/v1/organizations/${s.twinId}/members`, {
        apiKey: s.testKey,
        body: { email: `${unique("m")}@example.com`, role: "operator" },
      }),
      403,
      "AUTHORIZATION_ERROR",
    );
  });
});
