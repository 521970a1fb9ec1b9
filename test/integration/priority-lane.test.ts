import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { queueFixture, walkIn, type Fixture } from "../helpers/fixtures";

// The priority lane's keys (docs/desks.md): a ticket returned "after" another may take a key past
// the room's priority counter; a VIP created or restored later must still land behind it, never on
// the same key (two tickets at one position, in no defined order).

async function line(f: Fixture): Promise<{ id: string; position: number }[]> {
  const list = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting`, { token: f.owner.token }));
  return list.map((t: any) => ({ id: t.id, position: t.position }));
}

describe("the priority lane", () => {
  it("a VIP created after tickets were returned behind the lane's back lands behind them, one position each", async () => {
    const f = await queueFixture("pro");
    const auth = { token: f.owner.token };
    const v1 = expectOk(await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { ...auth, body: { visitorName: "V1" } }), 201);
    const v2 = expectOk(await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { ...auth, body: { visitorName: "V2" } }), 201);
    const regular = await walkIn(f.owner, f.queueId);
    // V1 is called and goes back after V2; then V2 is called and goes back after V1.
    expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, auth)).id).toBe(v1.id);
    expectOk(await call("POST", `/v1/tickets/${v1.id}/return`, { ...auth, body: { position: "after", afterTicketId: v2.id } }));
    expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, auth)).id).toBe(v2.id);
    expectOk(await call("POST", `/v1/tickets/${v2.id}/return`, { ...auth, body: { position: "after", afterTicketId: v1.id } }));
    const v3 = expectOk(await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { ...auth, body: { visitorName: "V3" } }), 201);

    expect(await line(f)).toEqual([
      { id: v1.id, position: 1 },
      { id: v2.id, position: 2 },
      { id: v3.id, position: 3 },
      { id: regular.id, position: 4 },
    ]);
    // Each ticket read alone (what its visitor sees) has its own place.
    const positions = [];
    for (const t of [v1, v2, v3, regular]) positions.push(expectOk(await call("GET", `/v1/tickets/${t.id}`, auth)).position);
    expect(positions).toEqual([1, 2, 3, 4]);
  });
});
