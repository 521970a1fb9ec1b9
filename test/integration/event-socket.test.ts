import { SELF } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { call, expectError, expectOk, type ApiResponse } from "../helpers/api";
import { createApiKey, queueFixture, walkIn, type Fixture } from "../helpers/fixtures";
import { capture, eventsOf, feedEvents, type Captured } from "../helpers/notifications";

// GET /v1/organizations/{id}/events/stream (issue 41): the organization's events pushed over a
// WebSocket as the EVENTS consumer records them, in the webhook envelope. The events are the
// ones a room really produced, fed to the consumer as the platform would.

let captured: Captured | null = null;
const sockets: EventSocket[] = [];
afterEach(() => {
  captured?.restore();
  for (const s of sockets.splice(0)) s.close();
});

class EventSocket {
  readonly events: any[] = [];
  private waiter: (() => void) | null = null;
  closeCode: number | null = null;

  constructor(
    readonly ws: WebSocket,
    readonly protocol: string | null,
  ) {
    ws.accept();
    ws.addEventListener("message", (ev) => {
      this.events.push(JSON.parse(ev.data as string));
      this.waiter?.();
    });
    ws.addEventListener("close", (ev) => {
      this.closeCode = ev.code;
      this.waiter?.();
    });
    sockets.push(this);
  }

  /** Waits until `count` events have arrived in all (or fails after `ms`). */
  async received(count: number, ms = 5000): Promise<any[]> {
    const deadline = Date.now() + ms;
    while (this.events.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.events.length} of ${count} events within ${ms} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.events;
  }

  close(): void {
    try {
      this.ws.close(1000, "done");
    } catch {
      // closed already
    }
  }
}

/** Opens the stream as a browser would: the key as a subprotocol beside `queue-events`. */
async function open(organizationId: string, key: string, query = ""): Promise<EventSocket> {
  const res = await upgrade(organizationId, { "Sec-WebSocket-Protocol": `queue-events, ${key}` }, query);
  if (res.status !== 101) throw new Error(`${res.status} ${await res.text()}`);
  return new EventSocket(res.webSocket!, res.headers.get("Sec-WebSocket-Protocol"));
}

function upgrade(organizationId: string, headers: Record<string, string>, query = ""): Promise<Response> {
  return SELF.fetch(`https://api.test/v1/organizations/${organizationId}/events/stream${query}`, {
    headers: { Upgrade: "websocket", ...headers },
  });
}

async function refused(res: Response): Promise<ApiResponse> {
  return { status: res.status, headers: res.headers, body: await res.json() } as ApiResponse;
}

/** Joins the queue and records the events the join produced, as the EVENTS consumer does. */
async function joinAndRecord(f: Fixture): Promise<string[]> {
  await walkIn(f.owner, f.queueId);
  const events = await eventsOf(captured!, f.queueId);
  await feedEvents(events);
  return events.map((e) => e.id);
}

describe("the live event socket", () => {
  it("pushes a join within a second, in the webhook envelope; the key travels as a subprotocol", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks"]);
    captured = capture();
    const socket = await open(f.organizationId, key);
    expect(socket.protocol).toBe("queue-events");

    const started = Date.now();
    const ticket = await walkIn(f.owner, f.queueId);
    await feedEvents(await eventsOf(captured, f.queueId));
    const [created] = await socket.received(1, 1000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(created).toMatchObject({
      type: "ticket.created",
      organizationId: f.organizationId,
      data: { queueId: f.queueId, ticketId: ticket.id, displayCode: ticket.displayCode },
    });
    expect(created.id).toMatch(/^evt_/);
    // The same event, in the same envelope, as the feed lists it.
    const feed = expectOk(await call("GET", "/v1/events", { apiKey: key }));
    expect(feed[0]).toEqual(created);
  });

  it("resumes after a disconnect from the last id received: every event exactly once, in order, then live", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks"]);
    captured = capture();
    const first = await open(f.organizationId, key);
    const before = await joinAndRecord(f);
    await first.received(before.length);
    first.close();
    const lastSeen = first.events.at(-1)!.id;

    // Away: three joins are recorded.
    const missed = [...(await joinAndRecord(f)), ...(await joinAndRecord(f)), ...(await joinAndRecord(f))];
    const resumed = await open(f.organizationId, key, `?after=${lastSeen}`);
    await resumed.received(missed.length);
    // Live again: the next join follows the replay.
    const live = await joinAndRecord(f);
    // The consumer sees the same batch again (at least once): nothing is sent twice.
    await feedEvents(captured.events.filter((e) => live.includes(e.id)));
    await resumed.received(missed.length + live.length);
    // A repeat would arrive before anything later: one more join, and it must come right after.
    const next = await joinAndRecord(f);
    await resumed.received(missed.length + live.length + next.length);
    expect(resumed.events.map((e) => e.id)).toEqual([...missed, ...live, ...next]);
    expect(first.events.map((e) => e.id)).toEqual(before);
  });

  it("filters by type", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["admin"]);
    captured = capture();
    const calls = await open(f.organizationId, key, "?types=ticket.called");
    const all = await open(f.organizationId, key);
    const ticket = await walkIn(f.owner, f.queueId);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    const events = await eventsOf(captured, f.queueId);
    await feedEvents(events);
    await all.received(events.length);
    await calls.received(1);
    expect(calls.events).toHaveLength(1);
    expect(calls.events[0]).toMatchObject({ type: "ticket.called", data: { ticketId: ticket.id } });
    expect(all.events.map((e) => e.type)).toEqual(events.map((e) => e.type));
  });

  it("refuses a key without the events permission, another organization's key, an unknown cursor or type, no credential", async () => {
    const f = await queueFixture("pro");
    const { key: readOnly } = await createApiKey(f.owner, f.organizationId, ["read", "write"]);
    expectError(
      await refused(await upgrade(f.organizationId, { "Sec-WebSocket-Protocol": `queue-events, ${readOnly}` })),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(await refused(await upgrade(f.organizationId, { "X-API-Key": readOnly })), 403, "AUTHORIZATION_ERROR");

    const other = await queueFixture("pro");
    const { key: otherKey } = await createApiKey(other.owner, other.organizationId, ["admin"]);
    const theirs = await upgrade(f.organizationId, { "Sec-WebSocket-Protocol": `queue-events, ${otherKey}` });
    expect(theirs.status).not.toBe(101);
    expect([403, 404]).toContain(theirs.status);

    const { key } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks"]);
    const auth = { "Sec-WebSocket-Protocol": `queue-events, ${key}` };
    expectError(await refused(await upgrade(f.organizationId, auth, "?after=evt_unknown")), 400, "VALIDATION_ERROR", "after");
    expectError(await refused(await upgrade(f.organizationId, auth, "?types=ticket.teleported")), 400, "VALIDATION_ERROR", "types");
    // A credential that is there and wrong is refused before the upgrade.
    expectError(await refused(await upgrade(f.organizationId, { "X-API-Key": "qk_live_wrong" })), 401, "AUTHENTICATION_ERROR");
    // A plain GET is told to upgrade.
    expectError(
      await call("GET", `/v1/organizations/${f.organizationId}/events/stream`, { apiKey: key }),
      400,
      "VALIDATION_ERROR",
      "Upgrade",
    );
  });

  it("a session with the permission connects with its token as the subprotocol", async () => {
    const f = await queueFixture("pro");
    captured = capture();
    const socket = await open(f.organizationId, f.owner.token);
    const ids = await joinAndRecord(f);
    await socket.received(ids.length);
    expect(socket.events.map((e) => e.id)).toEqual(ids);
  });

  it("a browser without a credential on the upgrade logs in with its first message; a bad login or another message is refused and closed", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks"]);
    captured = capture();
    const pending = async (query = "") => {
      const res = await upgrade(f.organizationId, { "Sec-WebSocket-Protocol": "queue-events" }, query);
      expect(res.status).toBe(101);
      return new EventSocket(res.webSocket!, res.headers.get("Sec-WebSocket-Protocol"));
    };

    // Logged in by its first message: the filter of its URL applies, then events arrive as for a header key.
    const socket = await pending("?types=ticket.created");
    expect(socket.protocol).toBe("queue-events");
    socket.ws.send(JSON.stringify({ action: "authenticate", key }));
    expect((await socket.received(1))[0]).toEqual({ type: "authenticated", organizationId: f.organizationId });
    const ticket = await walkIn(f.owner, f.queueId);
    await feedEvents(await eventsOf(captured, f.queueId));
    const [, created] = await socket.received(2, 1000);
    expect(created).toMatchObject({ type: "ticket.created", data: { ticketId: ticket.id } });
    expect(socket.closeCode).toBeNull();

    // Refused and closed: an unknown key, a key without the permission, a message that is not a login.
    const { key: readOnly } = await createApiKey(f.owner, f.organizationId, ["read"]);
    const cases: [unknown, string, number][] = [
      [{ action: "authenticate", key: "qk_live_notakeyatall00000000000000" }, "AUTHENTICATION_ERROR", 4401],
      [{ action: "authenticate", key: readOnly }, "AUTHORIZATION_ERROR", 4403],
      [{ hello: "world" }, "VALIDATION_ERROR", 4400],
    ];
    for (const [message, code, closeCode] of cases) {
      const s = await pending();
      s.ws.send(JSON.stringify(message));
      const [answer] = await s.received(1);
      expect(answer).toMatchObject({ type: "error", error: { code } });
      const deadline = Date.now() + 2000;
      while (s.closeCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(s.closeCode).toBe(closeCode);
    }
    // A login's bad query is judged at login, as a header key's is before the upgrade.
    const badQuery = await pending("?types=ticket.teleported");
    badQuery.ws.send(JSON.stringify({ action: "authenticate", key }));
    expect((await badQuery.received(1))[0]).toMatchObject({ type: "error", error: { code: "VALIDATION_ERROR" } });
  });
});
