import { abortAllDurableObjects, env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import { call, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { queueFixture } from "../helpers/fixtures";

describe("eviction", () => {
  it("loses and duplicates nothing when rooms are aborted mid-sequence; the projection converges", async () => {
    const f = await queueFixture("pro");
    const sent: DomainEventMessage[] = [];
    const spy = vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
      for (const m of messages) sent.push(m.body as DomainEventMessage);
      return undefined as never;
    });
    const created: string[] = [];
    try {
      for (let round = 0; round < 4; round++) {
        const batch = await Promise.all(
          Array.from({ length: 5 }, () => call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token })),
        );
        for (const r of batch) created.push(expectOk(r, 201).id);
        expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
        await abortAllDurableObjects();
      }
      await settle(f.queueId);
    } finally {
      spy.mockRestore();
    }
    const list = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?limit=100`, { token: f.owner.token }));
    expect(list.map((t: any) => t.id).sort()).toEqual([...created].sort());
    expect(list.map((t: any) => t.number)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(list.filter((t: any) => t.status === "called")).toHaveLength(4);

    // Delivery is at least once (a replay repeats an id, which consumers de-duplicate), but no
    // change may produce two different events.
    const idsPerChange = new Map<string, Set<string>>();
    for (const e of sent) {
      const key = `${e.type}:${e.ticketId}`;
      idsPerChange.set(key, (idsPerChange.get(key) ?? new Set()).add(e.id));
    }
    for (const ids of idsPerChange.values()) expect(ids.size).toBe(1);
    expect(new Set(sent.filter((e) => e.type === "ticket.created").map((e) => e.ticketId)).size).toBe(20);
    expect(new Set(sent.filter((e) => e.type === "ticket.called").map((e) => e.id)).size).toBe(4);

    const projection = await env.DB.prepare("SELECT id, status, number FROM tickets WHERE queue_id = ? ORDER BY number")
      .bind(f.queueId)
      .all<any>();
    expect(projection.results.map((r) => [r.id, r.status])).toEqual(list.map((t: any) => [t.id, t.status]));
  });
});
