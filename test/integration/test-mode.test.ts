import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import type { Env } from "../../src/env";
import { call, expectError, expectOk, unique } from "../helpers/api";
import {
  createApiKey,
  createCatalog,
  createOrganization,
  registerUser,
  setPlan,
  testModeSides,
  walkIn,
  type TestModeSides,
  type TestUser,
} from "../helpers/fixtures";
import { capture, eventsOf, feedEvents, type Captured } from "../helpers/notifications";
import { settle } from "../helpers/catalog";
import { sweep } from "../helpers/cron";
import { fakeTwilio, TWILIO } from "../helpers/twilio";
import { SocketClient } from "../helpers/widget-socket";

// Test mode (issue 41, docs/test-mode.md): a key created with mode "test" is a qk_test_… key of
// the organization's twin, which holds a copy of the live catalogue and nothing else of it.
// Live and test never see each other's data, both ways; every answer says livemode.

let captured: Captured | null = null;
afterEach(() => {
  captured?.restore();
  captured = null;
  vi.restoreAllMocks();
});

/** Rows naming this organization, by table, in every D1 table with an organization_id column. */
async function rowsNaming(organizationId: string): Promise<Record<string, number>> {
  const tables = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%organization_id%' AND name NOT LIKE '\\_cf%' ESCAPE '\\'",
  ).all<{ name: string }>();
  const counts: Record<string, number> = {};
  for (const { name } of tables.results) {
    const columns = await env.DB.prepare(`SELECT name FROM pragma_table_info('${name}')`).all<{ name: string }>();
    if (!columns.results.some((c) => c.name === "organization_id")) continue;
    const row = await env.DB.prepare(`SELECT count(*) AS n FROM "${name}" WHERE organization_id = ?`)
      .bind(organizationId)
      .first<{ n: number }>();
    if (row!.n > 0) counts[name] = row!.n;
  }
  return counts;
}

async function twinQueueId(s: TestModeSides): Promise<string> {
  const queues = expectOk(await call("GET", "/v1/business/queues", { apiKey: s.testKey }));
  expect(queues).toHaveLength(1);
  return queues[0].id;
}

describe("test mode", () => {
  it("a test key is qk_test_…, works on a twin holding a copy of the live catalogue, and every answer says livemode", async () => {
    const s = await testModeSides();
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
    const s = await testModeSides();
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
    const s = await testModeSides();
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

    // The ticket's D1 row is the room's projection, written by its outbox drain (up to 150 ms
    // later, longer under load: seen once in CI as no row yet): read once the drain ran.
    await settle(oldQueueId);
    const before = await rowsNaming(s.twinId);
    expect(before.tickets).toBe(1);
    expect(before.audit_events ?? 0).toBeGreaterThan(0);
    expect(before.webhooks).toBe(1);
    const reset = await call("POST", "/v1/test/reset", { apiKey: s.testKey });
    const twin = expectOk(reset);
    // Nothing of the old twin is left in any table, whether or not it had a foreign key.
    expect(await rowsNaming(s.twinId)).toEqual({});
    // A row an old room or consumer writes after the reset is swept by the cron (every 10 minutes);
    // the current twin's and the live organization's rows stay.
    await env.DB.prepare(
      "INSERT INTO organization_events (id, organization_id, type, queue_id, payload, recorded_at) VALUES (?, ?, 'ticket.created', NULL, '{}', ?)",
    )
      .bind(`evt_${unique("late")}`, s.twinId, Date.now())
      .run();
    expect(await rowsNaming(s.twinId)).toEqual({ organization_events: 1 });
    await sweep(Math.floor(Date.now() / 600_000) * 600_000);
    expect(await rowsNaming(s.twinId)).toEqual({});
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
    const s = await testModeSides();
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

  it("a twin's queue is reached only with a key of the twin: public status, the widget socket, a customer's read and join, QR scans and bookings answer 404", async () => {
    const s = await testModeSides();
    const testQueueId = await twinQueueId(s);
    const customer = await registerUser({ accountType: "customer" });
    const { key: liveWidgetKey } = await createApiKey(s.owner, s.liveId, ["widget"]);
    const testWidget = expectOk(
      await call("POST", `/v1/organizations/${s.twinId}/api-keys`, { apiKey: s.testKey, body: { name: "w", permissions: ["widget"] } }),
      201,
    );

    // The widget's public status: a test key (a widget one too) reads it; nobody else.
    expectError(await call("GET", `/v1/widget/queue/${testQueueId}/status`), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/widget/queue/${testQueueId}/status`, { apiKey: liveWidgetKey }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/widget/queue/${testQueueId}/status`, { token: customer.token }), 404, "NOT_FOUND");
    const status = await call("GET", `/v1/widget/queue/${testQueueId}/status`, { apiKey: testWidget.key });
    expect(expectOk(status).queueId).toBe(testQueueId);
    expect(status.body.livemode).toBe(false);
    expect(expectOk(await call("GET", `/v1/widget/queue/${s.liveQueueId}/status`)).queueId).toBe(s.liveQueueId);

    // The widget socket: 404 before the upgrade, or NOT_FOUND to a subscribe, unless opened with the test key.
    const upgrade = (query: string, headers: Record<string, string> = {}) =>
      SELF.fetch(`https://api.test/v1/widget/ws${query}`, { headers: { Upgrade: "websocket", ...headers } });
    const refused = await upgrade(`?queueId=${testQueueId}`);
    expect(refused.status).toBe(404);
    await refused.body?.cancel();
    const anonymous = await SocketClient.open();
    anonymous.send({ action: "subscribe", queueId: testQueueId });
    expect(await anonymous.nextExcept("queue_update")).toMatchObject({ type: "error", data: { code: "NOT_FOUND", queueId: testQueueId } });
    anonymous.close();
    const direct = await upgrade(`?queueId=${testQueueId}`, { "X-API-Key": testWidget.key });
    expect(direct.status).toBe(101);
    const viaRoom = new SocketClient(direct.webSocket!);
    expect(await viaRoom.next()).toMatchObject({ type: "queue_update", data: { queueId: testQueueId } });
    viaRoom.close();
    const hub = await SocketClient.open("", { "X-API-Key": testWidget.key });
    hub.send({ action: "subscribe", queueId: testQueueId });
    expect(await hub.next()).toMatchObject({ type: "queue_update", data: { queueId: testQueueId } });
    hub.close();

    // A customer (a session is always live) neither reads nor joins it; a live widget key cannot join it.
    expectError(await call("GET", `/v1/queues/${testQueueId}`, { token: customer.token }), 404, "NOT_FOUND");
    expectError(await call("POST", `/v1/queues/${testQueueId}/join`, { token: customer.token, body: {} }), 404, "NOT_FOUND");
    expectError(await call("POST", `/v1/widget/queue/${testQueueId}/join`, { apiKey: liveWidgetKey, body: {} }), 404, "NOT_FOUND");
    expectOk(await call("POST", `/v1/widget/queue/${testQueueId}/join`, { apiKey: testWidget.key, body: {} }), 201);

    // A QR code made in the twin is not scannable by a customer (a test key operates the twin's queue itself).
    const qr = expectOk(
      await call("POST", "/v1/qr-tokens", { apiKey: s.testKey, body: { purpose: "queue_join", queueId: testQueueId } }),
      201,
    );
    expectError(
      await call("POST", "/v1/qr/scan", { token: customer.token, body: { token: qr.token, latitude: 48.85, longitude: 2.35 } }),
      404,
      "NOT_FOUND",
    );

    // Booking a twin's service: its slots are the twin's keys' alone.
    const testService = expectOk(await call("GET", "/v1/business/services", { apiKey: s.testKey }))[0];
    const testLocation = expectOk(await call("GET", "/v1/business/locations", { apiKey: s.testKey }))[0];
    const slots = (token?: string, apiKey?: string) =>
      call("GET", `/v1/services/${testService.id}/slots?locationId=${testLocation.id}&from=2030-01-07&to=2030-01-08`, { token, apiKey });
    expectError(await slots(customer.token), 404, "NOT_FOUND");
    // The test key gets past the service (this catalogue's service takes no bookings: not a 404).
    expect((await slots(undefined, s.testKey)).body.error?.code).not.toBe("NOT_FOUND");
  });
});
