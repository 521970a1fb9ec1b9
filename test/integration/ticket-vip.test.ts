import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { addMember, createApiKey, queueFixture, walkIn, type Fixture } from "../helpers/fixtures";

// Issue 27, the console's "mark VIP": POST /v1/tickets/{ticketId}/vip moves a waiting ticket into
// the priority lane, behind the VIPs already waiting, ahead of every regular ticket.

/** The events the room's outbox sends while `act` runs (and the outbox drains). */
async function eventsOf(queueId: string, act: () => Promise<void>): Promise<DomainEventMessage[]> {
  await settle(queueId);
  const sent: DomainEventMessage[] = [];
  const spy = vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
    for (const m of messages) sent.push(m.body as DomainEventMessage);
    return undefined as never;
  });
  try {
    await act();
    await settle(queueId);
  } finally {
    spy.mockRestore();
  }
  return sent;
}

async function waitingLine(f: Fixture): Promise<{ code: string; position: number; isPriority: boolean }[]> {
  const list = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting`, { token: f.owner.token }));
  return list.map((t: any) => ({ code: t.displayCode, position: t.position, isPriority: t.isPriority }));
}

const vip = (ticketId: string, auth: { token: string } | { apiKey: string }) => call("POST", `/v1/tickets/${ticketId}/vip`, auth);
const unVip = (ticketId: string, auth: { token: string } | { apiKey: string }) => call("DELETE", `/v1/tickets/${ticketId}/vip`, auth);

describe("POST /v1/tickets/{ticketId}/vip", () => {
  it("moves a waiting ticket behind the VIPs already waiting and ahead of every regular one; call-next calls it in that order", async () => {
    const f = await queueFixture("pro");
    const a1 = await walkIn(f.owner, f.queueId);
    const a2 = await walkIn(f.owner, f.queueId);
    const a3 = await walkIn(f.owner, f.queueId);
    const v4 = await walkIn(f.owner, f.queueId, { vip: true });
    expect(await waitingLine(f)).toEqual([
      { code: v4.displayCode, position: 1, isPriority: true },
      { code: a1.displayCode, position: 2, isPriority: false },
      { code: a2.displayCode, position: 3, isPriority: false },
      { code: a3.displayCode, position: 4, isPriority: false },
    ]);

    let marked: any;
    const events = await eventsOf(f.queueId, async () => {
      marked = expectOk(await vip(a3.id, { token: f.owner.token }));
    });
    expect(marked).toMatchObject({ id: a3.id, status: "waiting", isPriority: true, position: 2, number: a3.number });
    expect(events.filter((e) => e.type === "ticket.prioritized")).toEqual([
      expect.objectContaining({
        type: "ticket.prioritized",
        ticketId: a3.id,
        queueId: f.queueId,
        data: expect.objectContaining({ position: 2 }),
      }),
    ]);
    expect(await waitingLine(f)).toEqual([
      { code: v4.displayCode, position: 1, isPriority: true },
      { code: a3.displayCode, position: 2, isPriority: true },
      { code: a1.displayCode, position: 3, isPriority: false },
      { code: a2.displayCode, position: 4, isPriority: false },
    ]);
    // A VIP created after it lands behind it.
    const v5 = await walkIn(f.owner, f.queueId, { vip: true });
    expect(v5.position).toBe(3);

    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      order.push(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })).id);
    }
    expect(order).toEqual([v4.id, a3.id, v5.id]);
    expect((await waitingLine(f)).map((t) => t.code)).toEqual([a1.displayCode, a2.displayCode]);
  });

  it("answers an already VIP ticket unchanged (no event); a ticket returned first keeps its place at the front", async () => {
    const f = await queueFixture("pro");
    const v1 = await walkIn(f.owner, f.queueId, { vip: true });
    await walkIn(f.owner, f.queueId);
    let again: any;
    const events = await eventsOf(f.queueId, async () => {
      again = expectOk(await vip(v1.id, { token: f.owner.token }));
    });
    expect(again).toMatchObject({ id: v1.id, isPriority: true, position: 1, updatedAt: v1.updatedAt });
    expect(events.filter((e) => e.type === "ticket.prioritized")).toEqual([]);

    // Called, then sent back first: in the priority lane ahead of the VIP; marked VIP, it stays there.
    const r = await walkIn(f.owner, f.queueId);
    const extra = await walkIn(f.owner, f.queueId, { vip: true });
    expect(extra.position).toBe(2);
    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    expect(called.id).toBe(v1.id);
    expectOk(await call("POST", `/v1/tickets/${v1.id}/return`, { token: f.owner.token, body: { position: "first" } }));
    expect(expectOk(await vip(r.id, { token: f.owner.token }))).toMatchObject({ isPriority: true, position: 3 });
    expect(expectOk(await vip(v1.id, { token: f.owner.token }))).toMatchObject({ isPriority: true, position: 1 });
  });

  it("refuses a ticket that is not waiting (409 naming its status), another organization (404), a widget or read key (403)", async () => {
    const f = await queueFixture("pro");
    const waiting = await walkIn(f.owner, f.queueId);
    const second = await walkIn(f.owner, f.queueId);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    const refused = await vip(waiting.id, { token: f.owner.token });
    expectError(refused, 409, "INVALID_STATE");
    expect(refused.body.error.details).toEqual({ status: "called", allowed: ["waiting"] });
    expect(refused.body.error.message).toContain("called");

    const other = await queueFixture("pro");
    expectError(await vip(second.id, { token: other.owner.token }), 404, "NOT_FOUND");
    const widget = await createApiKey(f.owner as any, f.organizationId, ["widget"]);
    expect((await vip(second.id, { apiKey: widget.key })).status).toBe(403);
    const readOnly = await createApiKey(f.owner as any, f.organizationId, ["read"]);
    expectError(await vip(second.id, { apiKey: readOnly.key }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("POST", "/v1/tickets/tkt_unknown/vip", { token: f.owner.token }), 404, "NOT_FOUND");
    expect(await waitingLine(f)).toEqual([{ code: second.displayCode, position: 1, isPriority: false }]);

    // An operator of the organization may; so may a key with write:queues.
    const operator = await addMember(f.owner as any, f.organizationId, "operator");
    expect(expectOk(await vip(second.id, { token: operator.token })).isPriority).toBe(true);
    const writer = await createApiKey(f.owner as any, f.organizationId, ["write:queues"]);
    expectOk(await vip(second.id, { apiKey: writer.key }));
  });
});

describe("DELETE /v1/tickets/{ticketId}/vip", () => {
  it("sends a ticket marked VIP back to the place its number gives it in the regular line; a ticket created VIP too", async () => {
    const f = await queueFixture("pro");
    const a1 = await walkIn(f.owner, f.queueId);
    const a2 = await walkIn(f.owner, f.queueId);
    const a3 = await walkIn(f.owner, f.queueId);
    expectOk(await vip(a2.id, { token: f.owner.token }));
    expect((await waitingLine(f)).map((t) => t.code)).toEqual([a2.displayCode, a1.displayCode, a3.displayCode]);

    let undone: any;
    const events = await eventsOf(f.queueId, async () => {
      undone = expectOk(await unVip(a2.id, { token: f.owner.token }));
    });
    expect(undone).toMatchObject({ id: a2.id, status: "waiting", isPriority: false, position: 2 });
    expect(events.filter((e) => e.type === "ticket.priority_removed")).toEqual([
      expect.objectContaining({ ticketId: a2.id, data: expect.objectContaining({ position: 2 }) }),
    ]);
    expect(await waitingLine(f)).toEqual([
      { code: a1.displayCode, position: 1, isPriority: false },
      { code: a2.displayCode, position: 2, isPriority: false },
      { code: a3.displayCode, position: 3, isPriority: false },
    ]);

    // Created VIP after a3, then undone: behind a3, ahead of a later walk-in.
    const v4 = await walkIn(f.owner, f.queueId, { vip: true });
    const a5 = await walkIn(f.owner, f.queueId);
    expect(expectOk(await unVip(v4.id, { token: f.owner.token }))).toMatchObject({ isPriority: false, position: 4 });
    expect((await waitingLine(f)).map((t) => t.code)).toEqual([
      a1.displayCode,
      a2.displayCode,
      a3.displayCode,
      v4.displayCode,
      a5.displayCode,
    ]);
    const called: string[] = [];
    for (let i = 0; i < 5; i++) called.push(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })).id);
    expect(called).toEqual([a1.id, a2.id, a3.id, v4.id, a5.id]);
  });

  it("answers a ticket that is not VIP unchanged (no event); refuses the wrong state (409), another organization (404), a widget key (403)", async () => {
    const f = await queueFixture("pro");
    const regular = await walkIn(f.owner, f.queueId);
    let same: any;
    const events = await eventsOf(f.queueId, async () => {
      same = expectOk(await unVip(regular.id, { token: f.owner.token }));
    });
    expect(same).toMatchObject({ isPriority: false, position: 1, updatedAt: regular.updatedAt });
    expect(events.filter((e) => e.type === "ticket.priority_removed")).toEqual([]);

    const v = await walkIn(f.owner, f.queueId, { vip: true });
    const other = await queueFixture("pro");
    expectError(await unVip(v.id, { token: other.owner.token }), 404, "NOT_FOUND");
    const widget = await createApiKey(f.owner as any, f.organizationId, ["widget"]);
    expect((await unVip(v.id, { apiKey: widget.key })).status).toBe(403);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    const refused = await unVip(v.id, { token: f.owner.token });
    expectError(refused, 409, "INVALID_STATE");
    expect(refused.body.error.details).toEqual({ status: "called", allowed: ["waiting"] });
  });
});
