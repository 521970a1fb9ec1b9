import { abortAllDurableObjects, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import { call, expectOk } from "../helpers/api";
import { now } from "../../src/lib/clock";
import type { NewTicket } from "../../src/queue-room/types";
import { drained, room, rulesVersionOf, settle } from "../helpers/catalog";
import { queueFixture } from "../helpers/fixtures";

// The room's outbox is drained once for a burst of changes (docs/queue-room.md, "Delivery"):
// one D1 batch and one queue send per drain, the drain armed a short moment after the first
// change and covering every change until it runs. These tests let the alarm fire on its own.

/** The queue sends carrying this queue's events, one entry per `sendBatch`, in send order. */
function spySends(queueId: string): DomainEventMessage[][] {
  const sends: DomainEventMessage[][] = [];
  vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
    const mine = [...messages].map((m) => m.body as DomainEventMessage).filter((e) => e.queueId === queueId);
    if (mine.length > 0) sends.push(mine);
    return undefined as never;
  });
  return sends;
}

async function projected(queueId: string): Promise<{ id: string; status: string; number: number }[]> {
  return (await env.DB.prepare("SELECT id, status, number FROM tickets WHERE queue_id = ? ORDER BY number").bind(queueId).all<any>())
    .results;
}

const BURST = 16;
const WALK_IN: Omit<NewTicket, "userId"> = {
  partySize: 1,
  isPriority: false,
  isGhostMode: false,
  visitorName: null,
  phone: null,
  language: null,
  source: "operator",
};

afterEach(() => {
  vi.restoreAllMocks();
});

describe("coalesced drains", () => {
  it("a burst of joins reaches D1 and the queue in a few drains, every event once and in order, within a second", async () => {
    const f = await queueFixture("pro");
    await settle(f.queueId);
    const sends = spySends(f.queueId);
    const joined = await Promise.all(
      Array.from({ length: BURST }, () => call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token })),
    );
    const ids = joined.map((r) => expectOk(r, 201).id as string);
    await drained(f.queueId, 1_000);

    // Far fewer drains than changes: each drain is one D1 batch and one queue send.
    expect(sends.length).toBeGreaterThan(0);
    expect(sends.length).toBeLessThanOrEqual(3);
    const created = sends.flat().filter((e) => e.type === "ticket.created");
    // Every join's event, once, in the order the room took the joins (its numbers).
    expect(created.map((e) => e.ticketId).sort()).toEqual([...ids].sort());
    const numbers = created.map((e) => Number(String(e.data.displayCode).split("-")[1]));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(new Set(sends.flat().map((e) => e.id)).size).toBe(sends.flat().length);
    // The projection followed within the second.
    expect((await projected(f.queueId)).map((t) => t.id).sort()).toEqual([...ids].sort());
  });

  it("changes one after another, each answered before the next is sent, share their drains", async () => {
    const f = await queueFixture("pro");
    await settle(f.queueId);
    const sends = spySends(f.queueId);
    const ids: string[] = [];
    const rulesVersion = await rulesVersionOf(f.queueId);
    // Straight to the room (as the join route does after its checks), so the ten changes fit
    // in one drain's moment even on a busy machine; without coalescing each has its own drain.
    for (let i = 0; i < 10; i++) {
      const joined = await room(f.queueId).command({ verb: "join", input: { ...WALK_IN, userId: f.owner.id }, at: now(), rulesVersion });
      if (!joined.ok) throw new Error("the room refused the join");
      ids.push(joined.value.id);
    }
    await drained(f.queueId, 1_000);
    expect(sends.length).toBeGreaterThan(0);
    expect(sends.length).toBeLessThanOrEqual(3);
    expect(
      sends
        .flat()
        .filter((e) => e.type === "ticket.created")
        .map((e) => e.ticketId),
    ).toEqual(ids);
  });

  it("a change, then more changes before the drain: the projection converges to the latest version", async () => {
    const f = await queueFixture("pro");
    await settle(f.queueId);
    const sends = spySends(f.queueId);
    const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    expectOk(await call("POST", `/v1/tickets/${t.id}/serve`, { token: f.owner.token }));
    await drained(f.queueId, 1_000);
    expect(sends.flat().map((e) => e.type)).toEqual(["ticket.created", "ticket.called", "ticket.serving"]);
    expect(await projected(f.queueId)).toEqual([{ id: t.id, status: "serving", number: 1 }]);
  });

  it("a room killed between the write and the drain loses nothing: the stored alarm drains after the restart", async () => {
    const f = await queueFixture("pro");
    await settle(f.queueId);
    const sends = spySends(f.queueId);
    const joined = await Promise.all(
      Array.from({ length: 5 }, () => call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token })),
    );
    const ids = joined.map((r) => expectOk(r, 201).id as string);
    // Before the drain's moment has come.
    await abortAllDurableObjects();
    // Waits for the restarted room's stored alarm (returns at the drain): what is asserted is that
    // nothing is lost, not how soon; a loaded CI machine took more than 2 s to restart it.
    await drained(f.queueId, 15_000);
    // At least once: a replay repeats an event (same id), never loses one.
    expect(
      [
        ...new Set(
          sends
            .flat()
            .filter((e) => e.type === "ticket.created")
            .map((e) => e.ticketId),
        ),
      ].sort(),
    ).toEqual([...ids].sort());
    expect((await projected(f.queueId)).map((t) => t.id).sort()).toEqual([...ids].sort());
  });
});
