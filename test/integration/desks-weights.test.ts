import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ROOM_KEEP_MS } from "../../src/queue-room/archive";
import { now } from "../../src/lib/clock";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { room, settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { addQueue, createApiKey, createOrganization, createQueueFixture, registerUser, walkIn } from "../helpers/fixtures";

// Desk queue weights (docs/desks.md, the calling rule) and the desk call's fields in the D1
// ticket projection, so an archived ticket still tells where it was called.

interface World {
  key: string;
  organizationId: string;
  locationId: string;
  queueA: string;
  queueB: string;
}

// An API key acts at a desk (a kiosk) and does not idle out when a test moves the clock by days.
async function world(): Promise<World> {
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "banking" });
  const f = await createQueueFixture(owner, org.id);
  const queueB = await addQueue(f);
  const key = (await createApiKey(f.owner, f.organizationId, ["admin"])).key;
  return { key, organizationId: f.organizationId, locationId: f.locationId, queueA: f.queueId, queueB };
}

async function createDesk(w: World, body: Record<string, unknown>) {
  return call("POST", `/v1/locations/${w.locationId}/desks`, { apiKey: w.key, body: { name: unique("Guichet "), ...body } });
}

async function callAt(w: World, deskId: string): Promise<any> {
  return expectOk(await call("POST", `/v1/desks/${deskId}/call-next`, { apiKey: w.key }));
}

describe("desk weights: create, change, refuse", () => {
  it("keeps the weights given, answers them on the desk, replaces, prunes and clears them", async () => {
    const w = await world();
    const desk = expectOk(await createDesk(w, { queueIds: [w.queueA, w.queueB], weights: { [w.queueA]: 3 } }), 201);
    expect(desk.weights).toEqual({ [w.queueA]: 3 });
    const plain = expectOk(await createDesk(w, { queueIds: [w.queueA] }), 201);
    expect(plain.weights).toEqual({});
    expect(expectOk(await call("GET", `/v1/desks/${desk.id}`, { apiKey: w.key })).weights).toEqual({ [w.queueA]: 3 });

    const replaced = expectOk(await call("PATCH", `/v1/desks/${desk.id}`, { apiKey: w.key, body: { weights: { [w.queueB]: 10 } } }));
    expect(replaced.weights).toEqual({ [w.queueB]: 10 });
    // New queues alone keep the weights of the queues that stay, and drop the others'.
    const kept = expectOk(await call("PATCH", `/v1/desks/${desk.id}`, { apiKey: w.key, body: { queueIds: [w.queueB] } }));
    expect(kept).toMatchObject({ queueIds: [w.queueB], weights: { [w.queueB]: 10 } });
    const pruned = expectOk(await call("PATCH", `/v1/desks/${desk.id}`, { apiKey: w.key, body: { queueIds: [w.queueA] } }));
    expect(pruned).toMatchObject({ queueIds: [w.queueA], weights: {} });
    const both = expectOk(
      await call("PATCH", `/v1/desks/${desk.id}`, {
        apiKey: w.key,
        body: { queueIds: [w.queueA, w.queueB], weights: { [w.queueA]: 2, [w.queueB]: 5 } },
      }),
    );
    expect(both.weights).toEqual({ [w.queueA]: 2, [w.queueB]: 5 });
    const cleared = expectOk(await call("PATCH", `/v1/desks/${desk.id}`, { apiKey: w.key, body: { weights: null } }));
    expect(cleared.weights).toEqual({});
  });

  it("refuses a weight for a queue the desk does not call from, and a weight outside 1..10 (400 weights)", async () => {
    const w = await world();
    const stray = await createDesk(w, { queueIds: [w.queueA], weights: { [w.queueB]: 2 } });
    expectError(stray, 400, "VALIDATION_ERROR", "weights");
    expect(stray.body.error.details.queueId).toBe(w.queueB);
    for (const bad of [0, 11, 2.5, "3", null]) {
      const res = await createDesk(w, { queueIds: [w.queueA], weights: { [w.queueA]: bad } });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error.code).toBe("VALIDATION_ERROR");
      expect(String(res.body.error.details.field)).toMatch(/^weights/);
    }
    const desk = expectOk(await createDesk(w, { queueIds: [w.queueA, w.queueB], weights: { [w.queueB]: 4 } }), 201);
    // Dropping B while naming its weight is refused; nothing changes.
    expectError(
      await call("PATCH", `/v1/desks/${desk.id}`, { apiKey: w.key, body: { queueIds: [w.queueA], weights: { [w.queueB]: 4 } } }),
      400,
      "VALIDATION_ERROR",
      "weights",
    );
    expect(expectOk(await call("GET", `/v1/desks/${desk.id}`, { apiKey: w.key })).weights).toEqual({ [w.queueB]: 4 });
  });
});

describe("desk weights: the calling rule", () => {
  it("calls by wait × weight at the call's instant, priority still first", async () => {
    const w = await world();
    const weighted = expectOk(await createDesk(w, { queueIds: [w.queueA, w.queueB], weights: { [w.queueA]: 3 } }), 201);
    expectOk(await call("POST", `/v1/desks/${weighted.id}/open`, { apiKey: w.key }));

    testClock.set("2026-04-02T09:00:00.000Z");
    const b1 = await walkIn({ apiKey: w.key }, w.queueB); // waits 11 s at the call
    testClock.advance(7_000);
    const a1 = await walkIn({ apiKey: w.key }, w.queueA); // waits 4 s × 3 = 12 at the call
    testClock.advance(4_000);
    // Unweighted, B1 (joined first) would be called; weighted, A1 is.
    expect((await callAt(w, weighted.id)).id).toBe(a1.id);

    const a2 = await walkIn({ apiKey: w.key }, w.queueA);
    testClock.advance(2_000);
    const vip = await walkIn({ apiKey: w.key }, w.queueB, { vip: true });
    // B1 has waited 13 s, A2 2 s × 3 = 6: B's VIP first (priority, whatever the weights), then B1, then A2.
    expect((await callAt(w, weighted.id)).id).toBe(vip.id);
    expect((await callAt(w, weighted.id)).id).toBe(b1.id);
    expect((await callAt(w, weighted.id)).id).toBe(a2.id);
    expectError(await call("POST", `/v1/desks/${weighted.id}/call-next`, { apiKey: w.key }), 409, "QUEUE_EMPTY");
  });

  it("without weights goes by who joined first; weights set on the open desk apply from its next call", async () => {
    const w = await world();
    const desk = expectOk(await createDesk(w, { queueIds: [w.queueA, w.queueB] }), 201);
    expectOk(await call("POST", `/v1/desks/${desk.id}/open`, { apiKey: w.key }));
    testClock.set("2026-04-02T09:00:00.000Z");
    const b1 = await walkIn({ apiKey: w.key }, w.queueB);
    testClock.advance(1_000);
    const b2 = await walkIn({ apiKey: w.key }, w.queueB);
    testClock.advance(7_000);
    const a1 = await walkIn({ apiKey: w.key }, w.queueA);
    testClock.advance(4_000);
    // Unweighted: B1 (12 s) before A1 (4 s).
    expect((await callAt(w, desk.id)).id).toBe(b1.id);
    // Weight A by 3: A1's 4 s × 3 = 12 now beats B2's 11 s, which unweighted would go first.
    expectOk(await call("PATCH", `/v1/desks/${desk.id}`, { apiKey: w.key, body: { weights: { [w.queueA]: 3 } } }));
    expect((await callAt(w, desk.id)).id).toBe(a1.id);
    expect((await callAt(w, desk.id)).id).toBe(b2.id);
  });
});

describe("the desk call in the D1 projection", () => {
  it("projects deskId, counter, recallCount and recalledAt, and an archived ticket still answers them", async () => {
    testClock.set("2026-04-03T08:00:00.000Z");
    const w = await world();
    const desk = expectOk(await createDesk(w, { queueIds: [w.queueA, w.queueB], displayName: "Guichet 3" }), 201);
    expectOk(await call("POST", `/v1/desks/${desk.id}/open`, { apiKey: w.key }));
    const t = await walkIn({ apiKey: w.key }, w.queueA);
    testClock.advance(60_000);
    expect((await callAt(w, desk.id)).id).toBe(t.id);
    testClock.advance(30_000);
    const recalled = expectOk(await call("POST", `/v1/tickets/${t.id}/recall`, { apiKey: w.key }));
    expect(recalled).toMatchObject({ recallCount: 1, deskId: desk.id, counter: "Guichet 3" });
    await settle(w.queueA);
    const row = await env.DB.prepare("SELECT status, desk_id, counter, recall_count, recalled_at FROM tickets WHERE id = ?")
      .bind(t.id)
      .first<any>();
    expect(row).toEqual({
      status: "called",
      desk_id: desk.id,
      counter: "Guichet 3",
      recall_count: 1,
      recalled_at: Date.parse(recalled.recalledAt),
    });

    expectOk(await call("POST", `/v1/tickets/${t.id}/serve`, { apiKey: w.key }));
    const done = expectOk(await call("POST", `/v1/tickets/${t.id}/complete`, { apiKey: w.key }));
    await settle(w.queueA);
    // Past the room's keep window the finished ticket leaves the room; reads fall back to D1.
    testClock.advance(ROOM_KEEP_MS + 3_600_000);
    for (let i = 0; i < 100; i++) {
      const r = await room(w.queueA).command({ verb: "archiveFinished", at: now() });
      if (r.more) continue;
      const left = await runInDurableObject(room(w.queueA), (_o, state) =>
        state.storage.sql.exec("SELECT id FROM tickets WHERE id = ?", t.id).toArray(),
      );
      if (left.length === 0) break;
      await runDurableObjectAlarm(room(w.queueA));
    }
    const gone = await runInDurableObject(room(w.queueA), (_o, state) =>
      state.storage.sql.exec("SELECT id FROM tickets WHERE id = ?", t.id).toArray(),
    );
    expect(gone).toEqual([]);
    const archived = expectOk(await call("GET", `/v1/tickets/${t.id}`, { apiKey: w.key }));
    expect(archived).toMatchObject({
      id: t.id,
      status: done.status,
      deskId: desk.id,
      counter: "Guichet 3",
      recallCount: 1,
      recalledAt: recalled.recalledAt,
    });
  });
});
