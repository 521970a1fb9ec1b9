import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { queueFixture, walkIn, type Fixture } from "../helpers/fixtures";

// Cursor pagination of a queue's tickets (issue #32): read page after page with
// startingAfter = meta.nextCursor while tickets join, are called and cancelled, and every
// ticket present from start to end is read exactly once; page/offset keep working.

async function page(f: Fixture, query: string) {
  const res = await call("GET", `/v1/queues/${f.queueId}/tickets?${query}`, { token: f.owner.token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { data: { id: string; number: number; position: number | null }[]; meta: any };
}

async function walkIns(f: Fixture, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await walkIn(f.owner, f.queueId)).id);
  return ids;
}

describe("GET /v1/queues/{queueId}/tickets with a cursor", () => {
  it("by number: pages read while tickets join and leave neither skip nor repeat a ticket", async () => {
    const f = await queueFixture("pro");
    const first = await walkIns(f, 12);
    const seen: string[] = [];
    let p = await page(f, "limit=5");
    expect(p.meta).toMatchObject({ page: 1, limit: 5, total: 12, hasMore: true, nextCursor: first[4], previousCursor: null });
    seen.push(...p.data.map((t) => t.id));
    let rounds = 0;
    while (p.meta.nextCursor) {
      // Between pages: two more join, one already read is cancelled, the head of the line is called.
      const more = await walkIns(f, 2);
      first.push(...more);
      expectOk(await call("POST", `/v1/tickets/${seen[rounds]}/cancel`, { token: f.owner.token }));
      expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
      p = await page(f, `limit=5&startingAfter=${p.meta.nextCursor}`);
      expect(p.meta.page).toBeNull();
      seen.push(...p.data.map((t) => t.id));
      rounds += 1;
      if (rounds > 10) break;
    }
    // By number, nothing moves: every ticket made is read once, in creation order.
    expect(seen).toEqual(first);
    expect(new Set(seen).size).toBe(seen.length);
    // Offsets, as before, shift under the same changes (the reason for cursors): still served.
    expect((await page(f, "page=2&limit=5")).meta).toMatchObject({ page: 2, limit: 5 });
  });

  it("the waiting line in calling order: a VIP joining at the front and a call at the head do not disturb the pages after the cursor", async () => {
    const f = await queueFixture("pro");
    const line = await walkIns(f, 8);
    const p1 = await page(f, "status=waiting&limit=3");
    expect(p1.data.map((t) => t.id)).toEqual(line.slice(0, 3));
    expect(p1.data.map((t) => t.position)).toEqual([1, 2, 3]);
    await walkIn(f.owner, f.queueId, { vip: true });
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })); // the VIP
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })); // line[0]
    const p2 = await page(f, `status=waiting&limit=3&startingAfter=${p1.meta.nextCursor}`);
    expect(p2.data.map((t) => t.id)).toEqual(line.slice(3, 6));
    // Positions are today's: line[1] and line[2] are ahead, so line[3] is third.
    expect(p2.data.map((t) => t.position)).toEqual([3, 4, 5]);
    expect(p2.meta).toMatchObject({ hasMore: true, nextCursor: line[5], previousCursor: line[3] });
    const p3 = await page(f, `status=waiting&limit=3&startingAfter=${p2.meta.nextCursor}`);
    expect(p3.data.map((t) => t.id)).toEqual(line.slice(6));
    expect(p3.meta).toMatchObject({ hasMore: false, nextCursor: null });
    // Backwards from the last page gives the one before it.
    const back = await page(f, `status=waiting&limit=3&endingBefore=${p3.meta.previousCursor}`);
    expect(back.data.map((t) => t.id)).toEqual(line.slice(3, 6));
    expect(back.meta).toMatchObject({ hasMore: true, nextCursor: line[5], previousCursor: line[3] });
  });

  it("a cursor mixed with a page, both cursors, or an id not in the queue: 400 naming the field", async () => {
    const f = await queueFixture("pro");
    const [a] = await walkIns(f, 1);
    const path = `/v1/queues/${f.queueId}/tickets`;
    const auth = { token: f.owner.token };
    expectError(await call("GET", `${path}?startingAfter=${a}&endingBefore=${a}`, auth), 400, "VALIDATION_ERROR", "endingBefore");
    expectError(await call("GET", `${path}?startingAfter=${a}&page=2`, auth), 400, "VALIDATION_ERROR", "startingAfter");
    expectError(await call("GET", `${path}?endingBefore=tkt_nothing`, auth), 400, "VALIDATION_ERROR", "endingBefore");
  });
});
