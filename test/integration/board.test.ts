import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { insertLocation } from "../helpers/catalog";
import { addMember, addQueue, createApiKey, queueFixture, type Fixture, walkIn } from "../helpers/fixtures";
import { SocketClient as Client } from "../helpers/widget-socket";

// The display board's data: the counter label of each call (call-next's `counter`, else the
// member's first name, never a key's name), the display-board route's organization, clock time
// zone and waits, and the WebSocket's board_update, which carries all of it so the board never
// refetches over HTTP.

interface Board extends Fixture {
  widgetKey: string;
}

async function boardFixture(): Promise<Board> {
  const f = await queueFixture("pro");
  return { ...f, widgetKey: (await createApiKey(f.owner, f.organizationId, ["widget"])).key };
}

function callNext(f: Fixture, auth: { token?: string; apiKey?: string }, body?: Record<string, unknown>, queueId = f.queueId) {
  return call("POST", `/v1/queues/${queueId}/call-next`, { ...auth, body });
}

describe("the counter label of a call", () => {
  it("is call-next's counter, else the member's first name; an API key's call without one has none", async () => {
    const f = await boardFixture();
    for (let i = 0; i < 4; i++) await walkIn(f.owner, f.queueId);
    const desk = expectOk(await callNext(f, { token: f.owner.token }, { counter: "  Guichet 3 " }));
    expect(desk.counter).toBe("Guichet 3");
    const operator = await addMember(f.owner, f.organizationId, "operator", { firstName: "Amina" });
    const named = expectOk(await callNext(f, { token: operator.token }));
    expect(named.counter).toBe("Amina");
    const key = await createApiKey(f.owner, f.organizationId, ["write"]);
    const keyCall = expectOk(await callNext(f, { apiKey: key.key }));
    expect(keyCall.counter).toBeNull();
    const keyDesk = expectOk(await callNext(f, { apiKey: key.key }, { counter: "Desk 7" }));
    expect(keyDesk.counter).toBe("Desk 7");
    // The ticket keeps it.
    expect(expectOk(await call("GET", `/v1/tickets/${desk.id}`, { token: f.owner.token })).counter).toBe("Guichet 3");
  });

  it("refuses an empty, blank or over-long label", async () => {
    const f = await boardFixture();
    await walkIn(f.owner, f.queueId);
    for (const counter of ["", "   ", "x".repeat(41), 3, null]) {
      expectError(await callNext(f, { token: f.owner.token }, { counter }), 400, "VALIDATION_ERROR", "counter");
    }
  });
});

describe("display-board route", () => {
  it("carries the organization's name and logo, the clock's time zone, waits and each call's counter", async () => {
    const f = await boardFixture();
    const empty = expectOk(await call("GET", `/v1/widget/organization/${f.organizationId}/display-board`, { apiKey: f.widgetKey }));
    expect(empty).toMatchObject({ organization: { name: "Test organization", logoUrl: null }, timeZone: "UTC" });
    expect(empty.queues[0]).toMatchObject({
      waitingCount: 0,
      estimatedWaitMinutes: 0,
      estimatedWaitRange: { low: 0, high: 0 },
      called: [],
    });

    expectOk(
      await call("PATCH", `/v1/organizations/${f.organizationId}`, {
        token: f.owner.token,
        body: { logoUrl: "https://cdn.example/logo.png" },
      }),
    );
    // The clock follows the organization's first location (back-dated before the fixture's own).
    await insertLocation(f.organizationId, "Europe/Paris", Date.parse("2020-01-01T00:00:00Z"));
    for (let i = 0; i < 3; i++) await walkIn(f.owner, f.queueId);
    const called = expectOk(await callNext(f, { token: f.owner.token }, { counter: "Guichet 3" }));
    const board = expectOk(await call("GET", `/v1/widget/organization/${f.organizationId}/display-board`, { apiKey: f.widgetKey }));
    expect(board).toMatchObject({
      organization: { name: "Test organization", logoUrl: "https://cdn.example/logo.png" },
      timeZone: "Europe/Paris",
    });
    const q = board.queues[0];
    expect(q).toMatchObject({
      waitingCount: 2,
      estimatedWaitMinutes: 10,
      estimatedWaitRange: { low: 6, high: 14 },
      nextWaiting: ["A-002", "A-003"],
    });
    expect(q.called).toEqual([
      {
        displayCode: called.displayCode,
        status: "called",
        counter: "Guichet 3",
        assignedTo: "Test",
        calledAt: expect.stringMatching(/Z$/),
        kind: "walk_in",
        language: null,
      },
    ]);
    expect(q.generatedAt).toBe(board.generatedAt);
  });
});

describe("the ticket's language on the board's calls (issue 39)", () => {
  it("the display-board route and the socket's board_update carry each call's ticket language, for the board to say it in", async () => {
    const f = await boardFixture();
    const socket = await Client.open(`?queueId=${f.queueId}&view=board`);
    expect((await socket.next()).type).toBe("board_update");
    const join = (language?: string) =>
      call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: f.widgetKey, body: language ? { language } : {} });
    const arabic = expectOk(await join("ar"), 201);
    const none = expectOk(await join(), 201);
    await socket.next();
    await socket.next();
    expectOk(await callNext(f, { token: f.owner.token }, { counter: "Guichet 2" }));
    const update = await socket.next();
    expect(update.data.called).toEqual([expect.objectContaining({ displayCode: arabic.displayCode, language: "ar" })]);
    expectOk(await callNext(f, { token: f.owner.token }, { counter: "Guichet 3" }));
    expect((await socket.next()).data.called[0]).toMatchObject({ displayCode: none.displayCode, language: null });
    const board = expectOk(await call("GET", `/v1/widget/organization/${f.organizationId}/display-board`, { apiKey: f.widgetKey }));
    const languageOf = new Map(
      board.queues[0].called.map((c: { displayCode: string; language: string | null }) => [c.displayCode, c.language]),
    );
    expect(languageOf.get(arabic.displayCode)).toBe("ar");
    expect(languageOf.get(none.displayCode)).toBeNull();
    socket.close();
  });
});

describe("board_update over the WebSocket", () => {
  it("a board subscription gets the whole board of the queue at once and after every change; a status one still gets queue_update", async () => {
    const f = await boardFixture();
    const board = await Client.open(`?queueId=${f.queueId}&view=board`);
    const status = await Client.open(`?queueId=${f.queueId}`);
    const first = await board.next();
    expect(first).toEqual({
      type: "board_update",
      data: {
        queueId: f.queueId,
        name: "Main line",
        status: "active",
        waitingCount: 0,
        estimatedWaitMinutes: 0,
        estimatedWaitRange: { low: 0, high: 0 },
        called: [],
        nextWaiting: [],
        generatedAt: expect.stringMatching(/Z$/),
      },
    });
    expect((await status.next()).type).toBe("queue_update");

    await walkIn(f.owner, f.queueId);
    await walkIn(f.owner, f.queueId);
    expect((await board.next()).data).toMatchObject({ waitingCount: 1, nextWaiting: ["A-001"] });
    expect((await board.next()).data).toMatchObject({ waitingCount: 2, estimatedWaitMinutes: 10, nextWaiting: ["A-001", "A-002"] });
    expectOk(await callNext(f, { token: f.owner.token }, { counter: "Guichet 3" }));
    const afterCall = await board.next();
    expect(afterCall.type).toBe("board_update");
    expect(afterCall.data).toMatchObject({
      waitingCount: 1,
      nextWaiting: ["A-002"],
      called: [{ displayCode: "A-001", status: "called", counter: "Guichet 3", calledAt: expect.stringMatching(/Z$/) }],
    });
    // The status widget is unchanged: its smaller message, no board.
    await status.next();
    await status.next();
    const statusAfterCall = await status.next();
    expect(statusAfterCall).toMatchObject({ type: "queue_update", data: { waitingCount: 1, nowServing: ["A-001"] } });
    expect(statusAfterCall.data).not.toHaveProperty("called");
    board.close();
    status.close();
  });

  it("the spec's flow with view board, on two queues of the organization (one relayed by another room)", async () => {
    const f = await boardFixture();
    const second = await addQueue(f, { name: "Second line" });
    const client = await Client.open();
    client.send({ action: "subscribe", queueId: f.queueId, view: "board" });
    expect(await client.next()).toMatchObject({ type: "board_update", data: { queueId: f.queueId, called: [] } });
    client.send({ action: "subscribe", queueId: second, view: "board" });
    expect(await client.next()).toMatchObject({ type: "board_update", data: { queueId: second, name: "Second line", called: [] } });

    await walkIn(f.owner, second);
    expect(await client.next()).toMatchObject({ type: "board_update", data: { queueId: second, waitingCount: 1, nextWaiting: ["B-001"] } });
    expectOk(await callNext(f, { token: f.owner.token }, { counter: "Desk 2" }, second));
    expect(await client.next()).toMatchObject({
      type: "board_update",
      data: { queueId: second, waitingCount: 0, called: [{ displayCode: "B-001", counter: "Desk 2" }] },
    });
    // Back to the status view for one queue: queue_update again.
    client.send({ action: "subscribe", queueId: f.queueId });
    expect(await client.next()).toMatchObject({ type: "queue_update", data: { queueId: f.queueId } });
    await walkIn(f.owner, f.queueId);
    expect(await client.next()).toMatchObject({ type: "queue_update", data: { queueId: f.queueId, waitingCount: 1 } });
    client.send({ action: "subscribe", queueId: f.queueId, view: "wall" });
    expect(await client.next()).toMatchObject({ type: "error", data: { code: "VALIDATION_ERROR" } });
    client.close();
  });
});
