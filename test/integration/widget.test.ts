import { SELF, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { room } from "../helpers/catalog";
import { addQueue, createApiKey, createOrganization, type Fixture, queueFixture, registerUser } from "../helpers/fixtures";
import { SocketClient as Client } from "../helpers/widget-socket";
import { LANGUAGES } from "../../src/domain/languages";

// The widget routes over HTTP and the live channel over real WebSockets (SELF.fetch upgrade).

const EVICTION_WAIT_MS = 15_000;

interface Widget extends Fixture {
  widgetKey: string;
  readKey: string;
}

async function widgetFixture(): Promise<Widget> {
  const f = await queueFixture("pro");
  const widgetKey = (await createApiKey(f.owner, f.organizationId, ["widget"])).key;
  const readKey = (await createApiKey(f.owner, f.organizationId, ["read"])).key;
  return { ...f, widgetKey, readKey };
}

function join(f: Widget, body: Record<string, unknown> = {}, queueId = f.queueId) {
  return call("POST", `/v1/widget/queue/${queueId}/join`, { apiKey: f.widgetKey, body });
}

describe("widget HTTP routes", () => {
  it("info answers the organization's public face to a widget key, a read key and a member", async () => {
    const f = await widgetFixture();
    for (const auth of [{ apiKey: f.widgetKey }, { apiKey: f.readKey }, { token: f.owner.token }]) {
      const info = expectOk(await call("GET", `/v1/widget/organization/${f.organizationId}/info`, auth));
      expect(info).toMatchObject({
        organizationId: f.organizationId,
        name: "Test organization",
        logoUrl: null,
        languages: LANGUAGES,
      });
      expect(info.queues).toEqual([{ id: f.queueId, name: "Main line", status: "active" }]);
    }
  });

  it("info, board and join refuse another organization's key (404), a key without the widget or read permission (403) and no credential (401)", async () => {
    const f = await widgetFixture();
    const other = await widgetFixture();
    const analytics = (await createApiKey(f.owner, f.organizationId, ["read:analytics"])).key;
    const routes = [
      ["GET", `/v1/widget/organization/${f.organizationId}/info`],
      ["GET", `/v1/widget/organization/${f.organizationId}/display-board`],
      ["POST", `/v1/widget/queue/${f.queueId}/join`],
    ] as const;
    for (const [method, path] of routes) {
      const body = method === "POST" ? {} : undefined;
      expectError(await call(method, path, { apiKey: other.widgetKey, body }), 404, "NOT_FOUND");
      expectError(await call(method, path, { token: other.owner.token, body }), 404, "NOT_FOUND");
      expectError(await call(method, path, { apiKey: analytics, body }), 403, "AUTHORIZATION_ERROR");
      expectError(await call(method, path, { body }), 401, "AUTHENTICATION_ERROR");
    }
    // A read key may look but not take tickets.
    expectError(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: f.readKey, body: {} }), 403, "AUTHORIZATION_ERROR");
    const write = (await createApiKey(f.owner, f.organizationId, ["write"])).key;
    expectOk(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: write, body: {} }), 201);
  });

  it("a widget key gets 403 on every route that is not a widget route", async () => {
    const f = await widgetFixture();
    for (const [method, path] of [
      ["GET", "/v1/business/queues"],
      ["GET", `/v1/queues/${f.queueId}/tickets`],
      ["POST", `/v1/queues/${f.queueId}/call-next`],
      ["GET", `/v1/organizations/${f.organizationId}`],
    ] as const) {
      expectError(await call(method, path, { apiKey: f.widgetKey }), 403, "AUTHORIZATION_ERROR");
    }
  });

  it("status is public, cached briefly with an ETag, and answers 304 while unchanged", async () => {
    const f = await widgetFixture();
    const res = await call("GET", `/v1/widget/queue/${f.queueId}/status`, { headers: { Origin: "https://shop.example" } });
    expect(expectOk(res)).toEqual({
      queueId: f.queueId,
      name: "Main line",
      status: "active",
      waitingCount: 0,
      estimatedWaitMinutes: 0,
      estimatedWaitRange: { low: 0, high: 0 },
      nowServing: [],
    });
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=5");
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(res.headers.get("Access-Control-Expose-Headers")).toContain("X-Request-ID");
    const etag = res.headers.get("ETag")!;
    expect(etag).toMatch(/^W\/".+"$/);

    const again = await SELF.fetch(`https://api.test/v1/widget/queue/${f.queueId}/status`, { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
    expect(again.headers.get("ETag")).toBe(etag);

    expectOk(await join(f), 201);
    const changed = await call("GET", `/v1/widget/queue/${f.queueId}/status`, { headers: { "If-None-Match": etag } });
    expect(expectOk(changed).waitingCount).toBe(1);
    expect(changed.headers.get("ETag")).not.toBe(etag);
  });

  it("status: unknown queue is 404 with CORS headers; a bad credential is still refused", async () => {
    const f = await widgetFixture();
    const res = await call("GET", "/v1/widget/queue/que_doesnotexist00000000/status", { headers: { Origin: "https://shop.example" } });
    expectError(res, 404, "NOT_FOUND");
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const bad = await call("GET", `/v1/widget/queue/${f.queueId}/status`, {
      apiKey: "qk_live_notakeynotakeynotakeynotakey",
      headers: { Origin: "https://x.example" },
    });
    expectError(bad, 401, "AUTHENTICATION_ERROR");
    expect(bad.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });

  it("answers the CORS preflight for any origin without a credential", async () => {
    const f = await widgetFixture();
    const res = await SELF.fetch(`https://api.test/v1/widget/queue/${f.queueId}/join`, {
      method: "OPTIONS",
      headers: {
        Origin: "https://shop.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "x-api-key, content-type",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(res.headers.get("Access-Control-Allow-Headers")).toContain("X-API-Key");
    expect(res.headers.get("Access-Control-Allow-Headers")).toContain("Idempotency-Key");
    expect(res.headers.get("Access-Control-Allow-Methods")).toContain("POST");
  });

  it("join takes a widget ticket and validates its body", async () => {
    const f = await widgetFixture();
    const ticket = expectOk(await join(f, { visitorName: "Ada", phone: "+33612345678", partySize: 2 }), 201);
    expect(ticket).toMatchObject({
      queueId: f.queueId,
      displayCode: "A-001",
      number: 1,
      status: "waiting",
      position: 1,
      partySize: 2,
      visitorName: "Ada",
      source: "widget",
    });
    expect(typeof ticket.estimatedWaitMinutes).toBe("number");
    expect(ticket).not.toHaveProperty("userId");
    expect(expectOk(await join(f), 201).position).toBe(2);
    const stored = expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { token: f.owner.token }));
    expect([stored.source, stored.isGhostMode]).toEqual(["widget", false]);

    for (const phone of ["0612345678", "+0612345678", "+33 6 12 34 56 78", "+1234567890123456", 33612345678]) {
      expectError(await join(f, { phone }), 400, "VALIDATION_ERROR", "phone");
    }
    expectError(await join(f, { partySize: 0 }), 400, "VALIDATION_ERROR", "partySize");
    expectError(await join(f, { partySize: 51 }), 400, "VALIDATION_ERROR", "partySize");
    expectError(await join(f, { partySize: "2" }), 400, "VALIDATION_ERROR", "partySize");
    expectError(await join(f, { visitorName: "" }), 400, "VALIDATION_ERROR", "visitorName");
    expectError(await join(f, { visitorName: "x".repeat(101) }), 400, "VALIDATION_ERROR", "visitorName");
    expectError(await join(f, { isPriority: true }), 400, "VALIDATION_ERROR");
    expectError(await join(f, {}, "que_doesnotexist00000000"), 404, "NOT_FOUND");
  });

  it("join is refused on a paused queue", async () => {
    const f = await widgetFixture();
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token: f.owner.token, body: { status: "paused" } }));
    expectError(await join(f), 409, "QUEUE_PAUSED");
  });

  it("display board: called tickets with who called, newest first, and the next codes", async () => {
    const f = await widgetFixture();
    for (let i = 0; i < 4; i++) expectOk(await join(f), 201);
    const first = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    const counter = await createApiKey(f.owner, f.organizationId, ["write"]);
    await call("PATCH", `/v1/organizations/${f.organizationId}/api-keys/${counter.id}`, {
      token: f.owner.token,
      body: { name: "Counter 3" },
    });
    const second = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { apiKey: counter.key }));
    const board = expectOk(await call("GET", `/v1/widget/organization/${f.organizationId}/display-board`, { apiKey: f.widgetKey }));
    expect(board.organizationId).toBe(f.organizationId);
    expect(board.queues).toHaveLength(1);
    const q = board.queues[0];
    expect(q).toMatchObject({ queueId: f.queueId, name: "Main line", status: "active", waitingCount: 2, nextWaiting: ["A-003", "A-004"] });
    expect(q.called.map((c: any) => [c.displayCode, c.status, c.assignedTo])).toEqual([
      [second.displayCode, "called", expect.any(String)],
      [first.displayCode, "called", "Test"],
    ]);
    expect(q.called[0].calledAt).toMatch(/Z$/);
  });
});

describe("widget WebSocket", () => {
  it("the spec's flow: subscribe after connecting, updates after join, call and status change", async () => {
    const f = await widgetFixture();
    const client = await Client.open();
    client.send({ action: "subscribe", queueId: f.queueId });
    expect(await client.next()).toEqual({
      type: "queue_update",
      data: {
        queueId: f.queueId,
        name: "Main line",
        status: "active",
        waitingCount: 0,
        estimatedWaitMinutes: 0,
        estimatedWaitRange: { low: 0, high: 0 },
        nowServing: [],
      },
    });
    expectOk(await join(f), 201);
    expect((await client.next()).data).toMatchObject({ waitingCount: 1, nowServing: [] });
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    expect((await client.next()).data).toMatchObject({ waitingCount: 0, nowServing: ["A-001"] });
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token: f.owner.token, body: { status: "paused" } }));
    expect((await client.next()).data).toMatchObject({ status: "paused" });
    client.close();
  });

  it("fast path: ?queueId= subscribes at once; an unknown queue is 404 before the upgrade", async () => {
    const f = await widgetFixture();
    const client = await Client.open(`?queueId=${f.queueId}`);
    expect((await client.next()).data).toMatchObject({ queueId: f.queueId, waitingCount: 0 });
    expectOk(await join(f), 201);
    expect((await client.next()).data.waitingCount).toBe(1);
    // Subscribing again, as embed.js does after connecting, just answers the status again.
    client.send({ action: "subscribe", queueId: f.queueId });
    expect((await client.next()).data.waitingCount).toBe(1);
    client.close();

    expectError(
      await call("GET", "/v1/widget/ws?queueId=que_doesnotexist00000000", { headers: { Upgrade: "websocket" } }),
      404,
      "NOT_FOUND",
    );
    expectError(
      await call("GET", "/v1/widget/ws?queueId=no%20pe", { headers: { Upgrade: "websocket" } }),
      400,
      "VALIDATION_ERROR",
      "queueId",
    );
    expectError(await call("GET", "/v1/widget/ws"), 400, "VALIDATION_ERROR", "Upgrade");
  });

  for (const path of ["hub", "room"] as const) {
    it(`errors keep the socket open (${path}): garbage, bad action, unknown queue, another organization's queue`, async () => {
      const f = await widgetFixture();
      const other = await widgetFixture();
      const client = await Client.open(path === "room" ? `?queueId=${f.queueId}` : "");
      if (path === "room") await client.next();
      client.send("not json");
      expect(await client.next()).toMatchObject({ type: "error", data: { code: "VALIDATION_ERROR" } });
      client.send({ action: "dance", queueId: f.queueId });
      expect(await client.next()).toMatchObject({ type: "error", data: { code: "VALIDATION_ERROR" } });
      client.send({ action: "subscribe", queueId: 42 });
      expect(await client.next()).toMatchObject({ type: "error", data: { code: "VALIDATION_ERROR" } });
      client.send({ action: "subscribe", queueId: "que_doesnotexist00000000" });
      expect(await client.next()).toEqual({
        type: "error",
        data: { code: "NOT_FOUND", message: "Queue not found", queueId: "que_doesnotexist00000000" },
      });
      if (path === "room") {
        client.send({ action: "subscribe", queueId: other.queueId });
        expect(await client.next()).toMatchObject({ type: "error", data: { code: "NOT_FOUND", queueId: other.queueId } });
      }
      client.send("ping");
      expect(await client.next()).toBe("pong");
      client.send({ action: "subscribe", queueId: f.queueId });
      expect(await client.next()).toMatchObject({ type: "queue_update", data: { queueId: f.queueId } });
      expect(client.closed).toBe(false);
      client.close();
    });
  }

  it("an internal failure answers an error and keeps the socket and the room alive", async () => {
    const f = await widgetFixture();
    const second = await addQueue(f);
    const client = await Client.open(`?queueId=${f.queueId}`);
    await client.next();
    // The second queue's room is broken: subscribing to it fails inside this room.
    await runInDurableObject(room(second), (_object, state) => state.storage.sql.exec("DROP TABLE widget_watchers"));
    client.send({ action: "subscribe", queueId: second });
    expect(await client.next()).toMatchObject({ type: "error", data: { code: "INTERNAL_ERROR", queueId: second } });
    expectOk(await join(f), 201);
    expect((await client.next()).data).toMatchObject({ queueId: f.queueId, waitingCount: 1 });
    client.send({ action: "subscribe", queueId: f.queueId, extra: true });
    expect(await client.next()).toMatchObject({ type: "error", data: { code: "VALIDATION_ERROR" } });
    expect(client.closed).toBe(false);
    client.close();
  });

  it("one socket follows two queues of the organization; unsubscribe stops one", async () => {
    const f = await widgetFixture();
    const second = await addQueue(f);
    const other = await widgetFixture();
    const client = await Client.open();
    client.send({ action: "subscribe", queueId: f.queueId });
    expect((await client.next()).data.queueId).toBe(f.queueId);
    client.send({ action: "subscribe", queueId: second });
    expect((await client.next()).data).toMatchObject({ queueId: second, waitingCount: 0 });
    client.send({ action: "subscribe", queueId: other.queueId });
    expect(await client.next()).toMatchObject({ type: "error", data: { code: "NOT_FOUND", queueId: other.queueId } });

    expectOk(await join(f, {}, second), 201);
    expect((await client.next()).data).toMatchObject({ queueId: second, waitingCount: 1 });
    expectOk(await join(f), 201);
    expect((await client.next()).data).toMatchObject({ queueId: f.queueId, waitingCount: 1 });

    client.send({ action: "unsubscribe", queueId: second });
    expectOk(await join(f, {}, second), 201);
    await client.quiet();
    expectOk(await join(f), 201);
    expect((await client.next()).data).toMatchObject({ queueId: f.queueId, waitingCount: 2 });
    client.close();
  });

  it("the room hibernates with its sockets open and still delivers the next update", async () => {
    const f = await widgetFixture();
    const second = await addQueue(f);
    const client = await Client.open(`?queueId=${f.queueId}`);
    await client.next();
    client.send({ action: "subscribe", queueId: second });
    await client.next();
    const instance = await runInDurableObject(room(f.queueId), (object) => object);

    // workerd evicts an idle object after about 10 s; only hibernatable sockets survive that.
    await new Promise((r) => setTimeout(r, EVICTION_WAIT_MS));
    const after = await runInDurableObject(room(f.queueId), (object, state) => ({ object, sockets: state.getWebSockets().length }));
    expect(after.object).not.toBe(instance);
    expect(after.sockets).toBe(1);

    expectOk(await join(f), 201);
    expect((await client.next()).data).toMatchObject({ queueId: f.queueId, waitingCount: 1 });
    expectOk(await join(f, {}, second), 201);
    expect((await client.next()).data).toMatchObject({ queueId: second, waitingCount: 1 });
    client.send("ping");
    expect(await client.next()).toBe("pong");
    expect(client.closed).toBe(false);
    client.close();
  }, 40_000);

  it("a spec-flow socket (held by a hub) follows two queues", async () => {
    const f = await widgetFixture();
    const second = await addQueue(f);
    const client = await Client.open();
    client.send("ping");
    expect(await client.next()).toBe("pong");
    client.send({ action: "subscribe", queueId: f.queueId });
    client.send({ action: "subscribe", queueId: second });
    // Each subscribe reads D1 and the queue's room, so the two answers may arrive in either order.
    const answers = [(await client.next()).data.queueId, (await client.next()).data.queueId];
    expect(answers.sort()).toEqual([f.queueId, second].sort());
    expectOk(await join(f, {}, second), 201);
    expect((await client.next()).data).toMatchObject({ queueId: second, waitingCount: 1 });
    client.close();
  });

  it("a member's session can read the widget routes too", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { slug: unique("w") });
    expectOk(await call("GET", `/v1/widget/organization/${org.id}/display-board`, { token: owner.token }));
  });
});
