import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { room } from "../helpers/catalog";
import { createApiKey, queueFixture } from "../helpers/fixtures";
import { SocketClient, hubSocketCount } from "../helpers/widget-socket";

// The socket hubs are their own Durable Object class (issue 36): a queue's room is only a queue.

async function widgetFixture() {
  const f = await queueFixture("pro");
  return { ...f, widgetKey: (await createApiKey(f.owner, f.organizationId, ["widget"])).key };
}

async function join(f: Awaited<ReturnType<typeof widgetFixture>>) {
  return expectOk(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: f.widgetKey, body: {} }), 201);
}

/** A socket opened on a stub the way the Worker opens one (a Request with `Upgrade: websocket`). */
async function openOn(stub: { fetch(request: Request): Promise<Response> }, query: string): Promise<SocketClient> {
  const res = await stub.fetch(new Request(`https://queue-room/ws${query}`, { headers: { Upgrade: "websocket" } }));
  expect(res.status).toBe(101);
  return new SocketClient(res.webSocket!);
}

describe("socket hubs, their own class", () => {
  it("a spec-flow socket lands in a SocketHub, and a queue's room refuses to become a hub", async () => {
    const f = await widgetFixture();
    const before = await hubSocketCount();
    const client = await SocketClient.open();
    client.send({ action: "subscribe", queueId: f.queueId });
    expect((await client.next()).data).toMatchObject({ queueId: f.queueId, waitingCount: 0 });
    expect(await hubSocketCount()).toBe(before + 1);

    const res = await room("hub:0").fetch(new Request("https://queue-room/ws?hub=hub:0", { headers: { Upgrade: "websocket" } }));
    expect(res.status).toBe(409);
    expect(await runInDurableObject(room("hub:0"), (_o, state) => state.getWebSockets().length)).toBe(0);

    await join(f);
    expect((await client.next()).data).toMatchObject({ queueId: f.queueId, waitingCount: 1 });
    client.close();
  });

  it("a board left on a hub of the old kind (a QueueRoom named hub:<n>) is told to reconnect at the next update, and gets the one after from a SocketHub", async () => {
    const f = await widgetFixture();
    // What the deploy finds: a QueueRoom that served as hub 7 and still holds a board's socket.
    const legacy = room("hub:7");
    await runInDurableObject(legacy, (_object, state) => {
      state.storage.sql.exec("UPDATE widget SET hub = 'hub:7' WHERE id = 1");
    });
    const board = await openOn(legacy, "?hub=hub:7");
    board.send({ action: "subscribe", queueId: f.queueId });
    expect((await board.next()).data).toMatchObject({ queueId: f.queueId, waitingCount: 0 });

    // The queue's room pushes the change to its watcher hub:7, which closes the socket: 1012, reconnect.
    await join(f);
    for (let i = 0; i < 100 && !board.closed; i++) await new Promise((r) => setTimeout(r, 20));
    expect(board.closeCode).toBe(1012);
    expect(await runInDurableObject(legacy, (_o, state) => state.getWebSockets().length)).toBe(0);

    // The board's client reconnects through the spec flow (embed.js and board.js do) and lands in a SocketHub.
    const again = await SocketClient.open();
    again.send({ action: "subscribe", queueId: f.queueId });
    expect((await again.next()).data).toMatchObject({ queueId: f.queueId, waitingCount: 1 });
    await join(f);
    expect((await again.next()).data).toMatchObject({ queueId: f.queueId, waitingCount: 2 });
    again.close();
  });
});
