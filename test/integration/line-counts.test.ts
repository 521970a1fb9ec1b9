import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { room } from "../helpers/catalog";
import { queueFixture } from "../helpers/fixtures";

// The room's line counters (schema.ts line_counts, kept by triggers) stand in for counting
// the line: every position, the waiting count and the capacity used must be what counting
// the rows gives, whatever moved the tickets (joins in both lanes, calls, returns, cancels).

async function counted(queueId: string) {
  return runInDurableObject(room(queueId), (_object, state) => {
    const sql = state.storage.sql;
    const kept = sql
      .exec<{ status: string; lane: number; tickets: number; people: number }>(
        "SELECT status, lane, tickets, people FROM line_counts WHERE tickets > 0 ORDER BY status, lane",
      )
      .toArray();
    const actual = sql
      .exec<{ status: string; lane: number; tickets: number; people: number }>(
        `SELECT status, lane, COUNT(*) AS tickets, SUM(party_size) AS people FROM tickets
         WHERE status IN ('waiting', 'called', 'serving') GROUP BY status, lane ORDER BY status, lane`,
      )
      .toArray();
    return { kept, actual };
  });
}

describe("the line's counters", () => {
  it("positions, waiting count and capacity match the rows after joins, VIPs, calls, returns and cancels", async () => {
    const f = await queueFixture("pro", { maxCapacity: 40 });
    const owner = { token: f.owner.token };
    const walkIn = async (partySize = 1) =>
      expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { ...owner, body: { partySize } }), 201).id as string;
    const vip = async () => expectOk(await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, owner), 201).id as string;
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await walkIn(1 + (i % 3)));
    ids.push(await vip());
    for (let i = 0; i < 3; i++) ids.push(await walkIn());
    ids.push(await vip());
    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, owner));
    const second = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, owner));
    expectOk(await call("POST", `/v1/tickets/${ids[2]}/cancel`, owner));
    expectOk(await call("POST", `/v1/tickets/${called.id}/return`, { ...owner, body: { position: "after", afterTicketId: ids[4] } }));
    expectOk(await call("POST", `/v1/tickets/${second.id}/serve`, owner));
    ids.push(await walkIn(2));

    const { kept, actual } = await counted(f.queueId);
    expect(kept).toEqual(actual);
    // Each waiting ticket's own position (the counters and the order index) is its rank in the line.
    const line = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting&limit=100`, owner));
    expect(line.length).toBeGreaterThan(8);
    for (const [rank, t] of line.entries()) {
      expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, owner)).position).toBe(rank + 1);
    }
    const queue = expectOk(await call("GET", `/v1/queues/${f.queueId}`, owner));
    expect(queue.waitingCount).toBe(line.length);
  });

  it("a new ticket's position, counted from the counters alone, is its rank after returns to the back, step-backs and VIP moves", async () => {
    const f = await queueFixture("pro");
    const owner = { token: f.owner.token };
    const walkIn = async () => expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { ...owner, body: {} }), 201);
    const vip = async () => expectOk(await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, owner), 201);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await walkIn()).id);
    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, owner));
    // Sent to the back of the line, then the one now last steps back: keys between and past the others.
    expectOk(await call("POST", `/v1/tickets/${called.id}/return`, { ...owner, body: { position: "last" } }));
    expectOk(await call("POST", `/v1/tickets/${ids[3]}/step-back`, { ...owner, body: { places: 2 } }));
    expectOk(await call("POST", `/v1/tickets/${ids[4]}/vip`, owner));
    const second = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, owner));
    expectOk(await call("POST", `/v1/tickets/${second.id}/return`, { ...owner, body: { position: "first" } }));
    const rankOf = async (id: string) => {
      const line = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting&limit=100`, owner));
      return line.findIndex((t: { id: string }) => t.id === id) + 1;
    };
    for (const join of [walkIn, vip, walkIn, vip, walkIn]) {
      const joined = await join();
      expect(joined.position).toBe(await rankOf(joined.id));
    }
  });
});
