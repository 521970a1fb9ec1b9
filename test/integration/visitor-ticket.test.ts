import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sha256Hex } from "../../src/lib/crypto";
import { SOCKET_BURST } from "../../src/queue-room/sockets";
import { call, expectError, expectOk } from "../helpers/api";
import { room } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { createApiKey, type Fixture, queueFixture } from "../helpers/fixtures";
import { SocketClient, hubSocketCount, hubs } from "../helpers/widget-socket";

// The visitor's ticket: the join's token, the two routes that take it, and the socket that
// follows one ticket; the spec-flow sockets held (hibernating) by the socket hubs; the
// per-socket message bucket.

interface Widget extends Fixture {
  widgetKey: string;
}

async function widgetFixture(): Promise<Widget> {
  const f = await queueFixture("pro");
  return { ...f, widgetKey: (await createApiKey(f.owner, f.organizationId, ["widget"])).key };
}

async function join(f: Widget): Promise<{ id: string; ticketToken: string; displayCode: string }> {
  return expectOk(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: f.widgetKey, body: {} }), 201);
}

let ipCounter = 0;
/** A client address of its own, so the failed-credential counts of one test do not reach another. */
function address(): string {
  ipCounter += 1;
  return `203.0.113.${ipCounter}`;
}

function read(ticketId: string, token: string | undefined, ip = address()) {
  const headers: Record<string, string> = { "X-Forwarded-For": ip };
  if (token !== undefined) headers["X-Ticket-Token"] = token;
  return call("GET", `/v1/widget/tickets/${ticketId}`, { headers });
}

function leave(ticketId: string, token: string | undefined, ip = address()) {
  const headers: Record<string, string> = { "X-Forwarded-For": ip };
  if (token !== undefined) headers["X-Ticket-Token"] = token;
  return call("POST", `/v1/widget/tickets/${ticketId}/cancel`, { headers });
}

const operate = (f: Widget, path: string) => call("POST", path, { token: f.owner.token });

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the visitor's ticket over HTTP", () => {
  it("the join answers a token; the read answers the ticket as the widget shows it, through call and service", async () => {
    const f = await widgetFixture();
    const first = await join(f);
    const mine = await join(f);
    expect(mine.ticketToken).toMatch(/^[A-Za-z0-9_-]{44}$/);
    expect(mine.ticketToken).not.toBe(first.ticketToken);

    expect(expectOk(await read(mine.id, mine.ticketToken))).toEqual({
      ticketId: mine.id,
      queueId: f.queueId,
      queueName: "Main line",
      displayCode: "A-002",
      status: "waiting",
      position: 2,
      estimatedWaitMinutes: expect.any(Number),
      estimatedWaitRange: { low: expect.any(Number), high: expect.any(Number) },
      counter: null,
      calledAt: null,
      // docs/blend.md: a walk-in, placed by arrival, told in the ticket's language.
      kind: "walk_in",
      appointmentAt: null,
      placement: { rule: "walk_in_arrival", reason: expect.any(String), since: expect.any(String) },
      // docs/visits.md, defer: not deferred.
      deferredUntil: null,
      deferCount: 0,
      // docs/visits.md, several services: a one-service visit.
      leg: null,
      routedToId: null,
      // The join gave no language.
      language: null,
    });
    expectOk(await operate(f, `/v1/queues/${f.queueId}/call-next`));
    expect(expectOk(await read(mine.id, mine.ticketToken))).toMatchObject({ status: "waiting", position: 1 });
    expectOk(await operate(f, `/v1/queues/${f.queueId}/call-next`));
    const called = expectOk(await read(mine.id, mine.ticketToken));
    expect(called).toMatchObject({ status: "called", position: null, counter: "Test" });
    expect(called.calledAt).toMatch(/^\d{4}-/);
    expectOk(await operate(f, `/v1/tickets/${mine.id}/serve`));
    expect(expectOk(await read(mine.id, mine.ticketToken))).toMatchObject({ status: "serving", counter: "Test" });
    // Finished: the token dies with the ticket.
    expectOk(await operate(f, `/v1/tickets/${mine.id}/complete`));
    expectError(await read(mine.id, mine.ticketToken), 404, "NOT_FOUND");
  });

  it("the read answers the language the visitor chose at the join: the status page speaks it (issue 39)", async () => {
    const f = await widgetFixture();
    const joined = expectOk(
      await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: f.widgetKey, body: { language: "fr" } }),
      201,
    );
    expect(expectOk(await read(joined.id, joined.ticketToken))).toMatchObject({ ticketId: joined.id, language: "fr" });
    // The visitor's own changes answer it too.
    const left = expectOk(await leave(joined.id, joined.ticketToken));
    expect(left).toMatchObject({ status: "cancelled", language: "fr" });
  });

  it("the room keeps the token's SHA-256 beside the ticket, never the token", async () => {
    const f = await widgetFixture();
    const mine = await join(f);
    const rows = await runInDurableObject(room(f.queueId), (_o, state) =>
      state.storage.sql.exec<{ ticket_id: string; hash: string }>("SELECT ticket_id, hash FROM ticket_tokens").toArray(),
    );
    expect(rows).toEqual([{ ticket_id: mine.id, hash: await sha256Hex(mine.ticketToken) }]);
  });

  it("a missing, wrong or other ticket's token is 404, as is an unknown ticket", async () => {
    const f = await widgetFixture();
    const mine = await join(f);
    const other = await join(f);
    expectError(await read(mine.id, undefined), 404, "NOT_FOUND");
    expectError(await read(mine.id, "x".repeat(43)), 404, "NOT_FOUND");
    expectError(await read(mine.id, "short"), 404, "NOT_FOUND");
    expectError(await read(mine.id, other.ticketToken), 404, "NOT_FOUND");
    expectError(await read(`tkt_${f.queueId.slice(4)}000000000000`, mine.ticketToken), 404, "NOT_FOUND");
    expectError(await read("tkt_nope", mine.ticketToken), 404, "NOT_FOUND");
    expectError(await leave(mine.id, other.ticketToken), 404, "NOT_FOUND");
    expect(expectOk(await read(mine.id, mine.ticketToken)).status).toBe("waiting");
  });

  it("leave the queue: cancels with the token, which then dies; being served is 409", async () => {
    const f = await widgetFixture();
    const mine = await join(f);
    const behind = await join(f);
    const left = expectOk(await leave(mine.id, mine.ticketToken));
    expect(left).toMatchObject({ ticketId: mine.id, status: "cancelled", position: null });
    expectError(await leave(mine.id, mine.ticketToken), 404, "NOT_FOUND");
    expectError(await read(mine.id, mine.ticketToken), 404, "NOT_FOUND");
    expect(expectOk(await read(behind.id, behind.ticketToken)).position).toBe(1);

    expectOk(await operate(f, `/v1/queues/${f.queueId}/call-next`));
    expectOk(await operate(f, `/v1/tickets/${behind.id}/serve`));
    expectError(await leave(behind.id, behind.ticketToken), 409, "INVALID_STATE");
  });

  it("wrong tokens of the unsigned format count as failed credentials of the IP; the 31st such try is refused before any lookup, a signed token never", async () => {
    const f = await widgetFixture();
    const mine = await join(f);
    const ip = address();
    for (let i = 0; i < 30; i++) expectError(await read(mine.id, "y".repeat(43), ip), 404, "NOT_FOUND");
    const refused = await read(mine.id, "z".repeat(43), ip);
    expectError(refused, 429, "API_RATE_LIMIT_EXCEEDED");
    expect(refused.body.error.details.window).toBe("failed_credentials");
    // The visitor's own (signed) token is served from that address all the same (CONTRACT §10),
    // and a forged signed-shape token is a plain 404 that counts nowhere.
    expectOk(await read(mine.id, mine.ticketToken, ip));
    expectError(await read(mine.id, "y".repeat(44), ip), 404, "NOT_FOUND");
    // Another address is not affected.
    expectOk(await read(mine.id, mine.ticketToken));
  });

  it("CORS lets a page send the token", async () => {
    const res = await call("OPTIONS", "/v1/widget/tickets/tkt_x", {
      headers: {
        Origin: "https://shop.example",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "x-ticket-token",
      },
    });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get("Access-Control-Allow-Headers")?.toLowerCase()).toContain("x-ticket-token");
  });
});

describe("following a ticket over the socket", () => {
  for (const flow of ["spec flow", "fast path"] as const) {
    it(`${flow}: ticket_update on every move: position, called with the counter, serving, served`, async () => {
      const f = await widgetFixture();
      const first = await join(f);
      const mine = await join(f);
      const client = await SocketClient.open(flow === "fast path" ? `?queueId=${f.queueId}` : "");
      if (flow === "fast path") expect((await client.next()).type).toBe("queue_update");
      client.send({ action: "subscribe", ticketId: mine.id, token: mine.ticketToken });
      const updates = async () => {
        for (;;) {
          const m = await client.next();
          if (m.type === "ticket_update") return m.data;
        }
      };
      expect(await updates()).toMatchObject({ ticketId: mine.id, queueName: "Main line", status: "waiting", position: 2, counter: null });

      // Someone behind joins: nothing moves for this ticket, no update.
      await join(f);
      expectOk(await operate(f, `/v1/queues/${f.queueId}/call-next`));
      expect(await updates()).toMatchObject({ status: "waiting", position: 1 });
      expectOk(await operate(f, `/v1/tickets/${first.id}/serve`));
      expectOk(await operate(f, `/v1/queues/${f.queueId}/call-next`));
      expect(await updates()).toMatchObject({ status: "called", position: null, counter: "Test", displayCode: "A-002" });
      expectOk(await operate(f, `/v1/tickets/${mine.id}/serve`));
      expect(await updates()).toMatchObject({ status: "serving", counter: "Test" });
      expectOk(await operate(f, `/v1/tickets/${mine.id}/complete`));
      expect(await updates()).toMatchObject({ status: "served" });
      // Nothing more once finished.
      expectOk(await operate(f, `/v1/queues/${f.queueId}/call-next`));
      await new Promise((r) => setTimeout(r, 300));
      expect(client.messages.filter((m) => m.type === "ticket_update")).toHaveLength(5);
      expect(client.closed).toBe(false);
      client.close();
    });
  }

  it("a wrong token or an unknown ticket answers NOT_FOUND and the socket stays open; leaving is pushed", async () => {
    const f = await widgetFixture();
    const mine = await join(f);
    const other = await join(f);
    const client = await SocketClient.open();
    client.send({ action: "subscribe", ticketId: mine.id, token: other.ticketToken });
    expect(await client.next()).toEqual({ type: "error", data: { code: "NOT_FOUND", message: "Ticket not found", ticketId: mine.id } });
    client.send({ action: "subscribe", ticketId: "tkt_nope", token: "x" });
    expect(await client.next()).toMatchObject({ type: "error", data: { code: "NOT_FOUND", ticketId: "tkt_nope" } });
    client.send({ action: "subscribe", ticketId: mine.id });
    expect(await client.next()).toMatchObject({ type: "error", data: { code: "VALIDATION_ERROR" } });
    client.send({ action: "subscribe", ticketId: mine.id, token: mine.ticketToken });
    expect(await client.next()).toMatchObject({ type: "ticket_update", data: { status: "waiting", position: 1 } });
    expectOk(await leave(mine.id, mine.ticketToken));
    expect(await client.next()).toMatchObject({ type: "ticket_update", data: { status: "cancelled", position: null } });
    expect(client.closed).toBe(false);
    client.close();
  });

  it("unsubscribe stops a ticket's updates", async () => {
    const f = await widgetFixture();
    const first = await join(f);
    const mine = await join(f);
    const client = await SocketClient.open();
    client.send({ action: "subscribe", ticketId: mine.id, token: mine.ticketToken });
    expect((await client.next()).data.position).toBe(2);
    client.send({ action: "unsubscribe", ticketId: mine.id });
    expectOk(await leave(first.id, first.ticketToken));
    await client.quiet();
    client.close();
  });
});

describe("spec-flow sockets live in the socket hubs", () => {
  it("are accepted by a hub's hibernation API, survive its eviction and get the next update", async () => {
    const f = await widgetFixture();
    const before = await hubSocketCount();
    const client = await SocketClient.open();
    client.send({ action: "subscribe", queueId: f.queueId });
    expect((await client.next()).data).toMatchObject({ queueId: f.queueId, waitingCount: 0 });
    expect(await hubSocketCount()).toBe(before + 1);
    const instances = await Promise.all(hubs().map((h) => runInDurableObject(h, (object) => object)));

    // workerd evicts an idle object after about 10 s; only hibernatable sockets survive that.
    await new Promise((r) => setTimeout(r, 15_000));
    const after = await Promise.all(hubs().map((h) => runInDurableObject(h, (object) => object)));
    expect(after.every((o, i) => o !== instances[i])).toBe(true);
    expect(await hubSocketCount()).toBe(before + 1);

    await join(f);
    expect((await client.next()).data).toMatchObject({ queueId: f.queueId, waitingCount: 1 });
    client.send("ping");
    expect(await client.next()).toBe("pong");
    client.close();
  }, 40_000);

  it("300 sockets from one address connect through the spec flow and all get the next update", async () => {
    const f = await widgetFixture();
    const ip = { "X-Forwarded-For": address() };
    const clients = await Promise.all(Array.from({ length: 300 }, () => SocketClient.open("", ip)));
    for (const c of clients) c.send({ action: "subscribe", queueId: f.queueId });
    await Promise.all(clients.map((c) => c.received(1, 20_000)));
    expect(clients.every((c) => c.messages[0].type === "queue_update" && c.messages[0].data.waitingCount === 0)).toBe(true);
    await join(f);
    await Promise.all(clients.map((c) => c.received(2, 20_000)));
    expect(clients.every((c) => c.messages[1].type === "queue_update" && c.messages[1].data.waitingCount === 1)).toBe(true);
    for (const c of clients) c.close();
  }, 120_000);
});

describe("socket hubs keep a socket to one organization", () => {
  it("a hub's socket subscribed to one organization's queue gets NOT_FOUND for another's", async () => {
    const f = await widgetFixture();
    const other = await widgetFixture();
    const client = await SocketClient.open();
    client.send({ action: "subscribe", queueId: f.queueId });
    expect((await client.next()).data.queueId).toBe(f.queueId);
    client.send({ action: "subscribe", queueId: other.queueId });
    expect(await client.next()).toMatchObject({ type: "error", data: { code: "NOT_FOUND", queueId: other.queueId } });
    await join(other);
    await client.quiet();
    client.close();
  });
});

describe("the per-socket message bucket", () => {
  it("lives in the socket's attachment: an evicted room still remembers a spent bucket", async () => {
    const f = await widgetFixture();
    testClock.set(Date.now());
    const client = await SocketClient.open(`?queueId=${f.queueId}`);
    await client.next();
    for (let i = 0; i < SOCKET_BURST; i++) client.send({ action: "unsubscribe", queueId: "que_nothing" });
    client.send({ action: "subscribe", queueId: f.queueId });
    // The room may broadcast its status meanwhile (an alarm); the subscribe's answer is the error.
    expect(await client.nextExcept("queue_update")).toMatchObject({ type: "error", data: { code: "RATE_LIMITED" } });
    const instance = await runInDurableObject(room(f.queueId), (object) => object);
    // workerd evicts an object idle for about 10 s, later on a loaded machine. Looking at the
    // object wakes it, so each look comes after a whole idle period.
    let evicted = false;
    for (let attempt = 0; !evicted && attempt < 4; attempt++) {
      await new Promise((r) => setTimeout(r, 15_000));
      evicted = (await runInDurableObject(room(f.queueId), (object) => object)) !== instance;
    }
    expect(evicted).toBe(true);
    // The clock has not moved: a bucket kept in memory would be full again after the eviction.
    client.send({ action: "subscribe", queueId: f.queueId });
    expect(await client.nextExcept("queue_update")).toMatchObject({ type: "error", data: { code: "RATE_LIMITED", retryAfter: 1 } });
    testClock.advance(1_000);
    const before = client.messages.length;
    client.send({ action: "subscribe", queueId: f.queueId });
    expect(await client.next()).toMatchObject({ type: "queue_update", data: { queueId: f.queueId } });
    await new Promise((r) => setTimeout(r, 300));
    expect(client.messages.slice(before).filter((m) => m.type === "error")).toEqual([]);
    client.close();
  }, 80_000);

  it("1,000 subscribes on one socket are throttled (RATE_LIMITED, socket open) without 1,000 D1 reads", async () => {
    const f = await widgetFixture();
    const client = await SocketClient.open(`?queueId=${f.queueId}`);
    await client.next();
    // Every D1 statement the queue's room prepares from here on (its socket's subscribes) is counted.
    const prepared = await runInDurableObject(room(f.queueId), (object) => vi.spyOn((object as any).env.DB, "prepare"));
    for (let i = 0; i < 1000; i++) client.send({ action: "subscribe", queueId: f.queueId });
    await client.received(1001, 30_000);
    const answers = client.messages.slice(1);
    const accepted = answers.filter((m) => m.type === "queue_update").length;
    const limited = answers.filter((m) => m.type === "error" && m.data.code === "RATE_LIMITED");
    expect(accepted).toBeGreaterThanOrEqual(SOCKET_BURST);
    expect(accepted).toBeLessThan(SOCKET_BURST + 20);
    expect(limited.length).toBe(1000 - accepted);
    expect(limited[0].data.retryAfter).toBeGreaterThanOrEqual(1);
    expect(prepared.mock.calls.length).toBe(accepted);
    expect(prepared.mock.calls.length).toBeLessThan(100);
    expect(client.closed).toBe(false);
    client.send("ping");
    expect(client.messages.length).toBe(1001);
    await client.received(1002);
    expect(client.messages[1001]).toBe("pong");
    client.close();
  });
});
