import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { utcMonth } from "../../src/lib/time";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { addMember, createApiKey, queueFixture, registerUser, setPlan } from "../helpers/fixtures";
import { capture, eventsOf, feedEvents, smsUsed, type Captured } from "../helpers/notifications";

// The notification routes (spec §4.15, CONTRACT §7) through HTTP.

let captured: Captured | null = null;
afterEach(() => {
  captured?.restore();
  captured = null;
});

describe("push registration", () => {
  it("registers a token once per token, moves it to the latest user, and unregisters only one's own", async () => {
    const alice = await registerUser({ accountType: "customer" });
    const bob = await registerUser({ accountType: "customer" });
    const token = unique("fcm");
    const first = expectOk(
      await call("POST", "/v1/push/register", { token: alice.token, body: { platform: "android", fcmToken: token, deviceId: "pixel-8" } }),
      201,
    );
    expect(first).toMatchObject({ platform: "android", fcmToken: token, deviceId: "pixel-8" });
    const again = expectOk(
      await call("POST", "/v1/push/register", { token: alice.token, body: { platform: "android", fcmToken: token } }),
      201,
    );
    expect(again.id).toBe(first.id);
    const rows = await env.DB.prepare("SELECT user_id FROM push_devices WHERE token = ?").bind(token).all<{ user_id: string }>();
    expect(rows.results).toEqual([{ user_id: alice.id }]);

    expectOk(await call("POST", "/v1/push/register", { token: bob.token, body: { platform: "ios", fcmToken: token } }), 201);
    const moved = await env.DB.prepare("SELECT user_id, platform FROM push_devices WHERE token = ?").bind(token).all<any>();
    expect(moved.results).toEqual([{ user_id: bob.id, platform: "ios" }]);

    // Alice no longer owns it: same 404 as an unknown token.
    expectError(await call("DELETE", "/v1/push/unregister", { token: alice.token, body: { fcmToken: token } }), 404, "NOT_FOUND");
    expectOk(await call("DELETE", "/v1/push/unregister", { token: bob.token, body: { fcmToken: token } }));
    expectError(await call("DELETE", "/v1/push/unregister", { token: bob.token, body: { fcmToken: token } }), 404, "NOT_FOUND");
  });

  it("refuses an unknown platform, an empty token, unknown fields and a missing session", async () => {
    const user = await registerUser({ accountType: "customer" });
    expectError(
      await call("POST", "/v1/push/register", { token: user.token, body: { platform: "windows", fcmToken: "x" } }),
      400,
      "VALIDATION_ERROR",
      "platform",
    );
    expectError(
      await call("POST", "/v1/push/register", { token: user.token, body: { platform: "web", fcmToken: "" } }),
      400,
      "VALIDATION_ERROR",
      "fcmToken",
    );
    expectError(
      await call("POST", "/v1/push/register", { token: user.token, body: { platform: "web", fcmToken: "   " } }),
      400,
      "VALIDATION_ERROR",
      "fcmToken",
    );
    expectError(
      await call("POST", "/v1/push/register", { token: user.token, body: { platform: "web", fcmToken: "x", userId: "usr_x" } }),
      400,
      "VALIDATION_ERROR",
    );
    expectError(
      await call("DELETE", "/v1/push/unregister", { token: user.token, body: { fcmToken: "" } }),
      400,
      "VALIDATION_ERROR",
      "fcmToken",
    );
    expectError(await call("POST", "/v1/push/register", { body: { platform: "web", fcmToken: "x" } }), 401, "AUTHENTICATION_ERROR");
  });
});

describe("preferences", () => {
  it("default to true, change one at a time, and refuse non-booleans", async () => {
    const user = await registerUser({ accountType: "customer" });
    expect(expectOk(await call("GET", "/v1/notifications/preferences", { token: user.token }))).toEqual({
      smsNotifications: true,
      ticketReminders: true,
    });
    expect(expectOk(await call("PATCH", "/v1/notifications/preferences", { token: user.token, body: { ticketReminders: false } }))).toEqual(
      {
        smsNotifications: true,
        ticketReminders: false,
      },
    );
    expect(expectOk(await call("GET", "/v1/notifications/preferences", { token: user.token }))).toEqual({
      smsNotifications: true,
      ticketReminders: false,
    });
    expectError(
      await call("PATCH", "/v1/notifications/preferences", { token: user.token, body: { smsNotifications: "no" } }),
      400,
      "VALIDATION_ERROR",
      "smsNotifications",
    );
    expectError(
      await call("PATCH", "/v1/notifications/preferences", { token: user.token, body: { ticketReminders: 0 } }),
      400,
      "VALIDATION_ERROR",
      "ticketReminders",
    );
    expectError(
      await call("PATCH", "/v1/notifications/preferences", { token: user.token, body: { email: true } }),
      400,
      "VALIDATION_ERROR",
    );
    // Another user's preferences are untouched.
    const other = await registerUser({ accountType: "customer" });
    expect(expectOk(await call("GET", "/v1/notifications/preferences", { token: other.token }))).toEqual({
      smsNotifications: true,
      ticketReminders: true,
    });
  });
});

describe("the in-app inbox", () => {
  async function servedCustomer() {
    captured = capture();
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
    await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token });
    await call("POST", `/v1/tickets/${t.id}/serve`, { token: f.owner.token });
    await call("POST", `/v1/tickets/${t.id}/complete`, { token: f.owner.token });
    const fed = await feedEvents(await eventsOf(captured, f.queueId));
    expect(fed.retryMessages).toEqual([]);
    return { f, customer, ticket: t };
  }

  it("lists newest first with limit, unreadOnly and meta; marks one and all read", async () => {
    const { customer, ticket } = await servedCustomer();
    const all = await call("GET", "/v1/notifications", { token: customer.token });
    const items = expectOk(all);
    expect(items.map((n: any) => n.type).sort()).toEqual(["review.request", "ticket.called", "ticket.created", "ticket.served"]);
    expect(all.body.meta).toMatchObject({ total: 4, page: 1, limit: 10, hasMore: false });
    for (const n of items) {
      expect(n).toMatchObject({ id: expect.stringMatching(/^ntf_/), readAt: null, data: { ticketId: ticket.id } });
      expect(n.createdAt).toMatch(/Z$/);
    }
    const page = await call("GET", "/v1/notifications?limit=2", { token: customer.token });
    expect(expectOk(page)).toHaveLength(2);
    expect(page.body.meta).toMatchObject({ total: 4, page: 1, limit: 2, hasMore: true });

    const read = expectOk(await call("POST", `/v1/notifications/${items[0].id}/read`, { token: customer.token }));
    expect(read.readAt).toMatch(/Z$/);
    const unread = await call("GET", "/v1/notifications?unreadOnly=true", { token: customer.token });
    expect(unread.body.meta.total).toBe(3);
    expect(expectOk(unread).every((n: any) => n.readAt === null)).toBe(true);
    expect(expectOk(await call("POST", "/v1/notifications/read-all", { token: customer.token }))).toEqual({ updated: 3 });
    expect((await call("GET", "/v1/notifications?unreadOnly=true", { token: customer.token })).body.meta.total).toBe(0);
    expect((await call("GET", "/v1/notifications?unreadOnly=false", { token: customer.token })).body.meta.total).toBe(4);
  });

  it("refuses a bad limit or unreadOnly, and nobody reads or marks another user's notifications", async () => {
    const { customer } = await servedCustomer();
    expectError(await call("GET", "/v1/notifications?limit=101", { token: customer.token }), 400, "VALIDATION_ERROR", "limit");
    expectError(await call("GET", "/v1/notifications?unreadOnly=maybe", { token: customer.token }), 400, "VALIDATION_ERROR", "unreadOnly");
    const mine = expectOk(await call("GET", "/v1/notifications", { token: customer.token }));
    const stranger = await registerUser({ accountType: "customer" });
    expect(expectOk(await call("GET", "/v1/notifications", { token: stranger.token }))).toEqual([]);
    expectError(await call("POST", `/v1/notifications/${mine[0].id}/read`, { token: stranger.token }), 404, "NOT_FOUND");
    expect(expectOk(await call("POST", "/v1/notifications/read-all", { token: stranger.token }))).toEqual({ updated: 0 });
    expect((await call("GET", "/v1/notifications?unreadOnly=true", { token: customer.token })).body.meta.total).toBe(4);
    expectError(await call("POST", "/v1/notifications/ntf_00000000000000000000/read", { token: customer.token }), 404, "NOT_FOUND");
  });
});

describe("business SMS", () => {
  const body = { phone: "+33612345678", message: "Votre commande est prête", purpose: "ticket_update" };

  it("needs pro: 402 PLAN_REQUIRED on starter with the plans in details", async () => {
    const f = await queueFixture("starter");
    const res = await call("POST", "/v1/notifications/sms", { token: f.owner.token, body });
    expectError(res, 402, "PLAN_REQUIRED");
    expect(res.body.error.details).toEqual({ requiredPlan: "pro", currentPlan: "starter" });
    expect(await smsUsed(f.organizationId)).toBe(0);
  });

  it("sends on pro through the outbox provider, counts it, and an operator or a key may send", async () => {
    const f = await queueFixture("pro");
    const sent = expectOk(await call("POST", "/v1/notifications/sms", { token: f.owner.token, body }), 201);
    expect(sent).toMatchObject({ phone: body.phone, purpose: "ticket_update", status: "sent", usage: { used: 1, limit: 1000 } });
    expect(await smsUsed(f.organizationId)).toBe(1);
    const row = await env.DB.prepare("SELECT channel, provider, status, payload FROM notification_deliveries WHERE event_id = ?")
      .bind(sent.id)
      .first<any>();
    expect(row).toMatchObject({ channel: "sms", provider: "outbox", status: "sent" });
    expect(JSON.parse(row.payload).body).toBe(body.message);

    const operator = await addMember(f.owner, f.organizationId, "operator");
    expectOk(await call("POST", "/v1/notifications/sms", { token: operator.token, body: { ...body, purpose: "announcement" } }), 201);
    const key = await createApiKey(f.owner, f.organizationId, ["write:queues"]);
    expectOk(await call("POST", "/v1/notifications/sms", { apiKey: key.key, body: { ...body, purpose: "reminder" } }), 201);
    expect(await smsUsed(f.organizationId)).toBe(3);
  });

  it("refuses a malformed phone, a message too long or empty, an unknown purpose, and a non-member", async () => {
    const f = await queueFixture("pro");
    const t = f.owner.token;
    expectError(
      await call("POST", "/v1/notifications/sms", { token: t, body: { ...body, phone: "0612345678" } }),
      400,
      "VALIDATION_ERROR",
      "phone",
    );
    expectError(
      await call("POST", "/v1/notifications/sms", { token: t, body: { ...body, phone: "+33 6 12" } }),
      400,
      "VALIDATION_ERROR",
      "phone",
    );
    expectError(
      await call("POST", "/v1/notifications/sms", { token: t, body: { ...body, message: "x".repeat(481) } }),
      400,
      "VALIDATION_ERROR",
      "message",
    );
    expectError(
      await call("POST", "/v1/notifications/sms", { token: t, body: { ...body, message: "" } }),
      400,
      "VALIDATION_ERROR",
      "message",
    );
    expectError(
      await call("POST", "/v1/notifications/sms", { token: t, body: { ...body, purpose: "marketing" } }),
      400,
      "VALIDATION_ERROR",
      "purpose",
    );
    expectOk(await call("POST", "/v1/notifications/sms", { token: t, body: { ...body, message: "x".repeat(480) } }), 201);
    const customer = await registerUser({ accountType: "customer" });
    expectError(
      await call("POST", "/v1/notifications/sms", { token: customer.token, body, headers: { "X-Organization-Id": f.organizationId } }),
      404,
      "NOT_FOUND",
    );
    expect(await smsUsed(f.organizationId)).toBe(1);
  });

  it("403 QUOTA_EXCEEDED past the month's allowance, with limit, used and resetsAt", async () => {
    const f = await queueFixture("pro");
    const period = utcMonth(Date.now());
    await env.DB.prepare("INSERT INTO usage_counters (organization_id, period, metric, used) VALUES (?, ?, 'sms', 999)")
      .bind(f.organizationId, period.key)
      .run();
    expectOk(await call("POST", "/v1/notifications/sms", { token: f.owner.token, body }), 201);
    const res = await call("POST", "/v1/notifications/sms", { token: f.owner.token, body });
    expectError(res, 403, "QUOTA_EXCEEDED");
    expect(res.body.error.details).toMatchObject({ limit: 1000, used: 1000 });
    expect(res.body.error.details.resetsAt).toMatch(/Z$/);
    // Enterprise has a larger allowance.
    await setPlan(f.organizationId, "enterprise");
    expectOk(await call("POST", "/v1/notifications/sms", { token: f.owner.token, body }), 201);
  });
});
