import worker from "../../src/index";
import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { addMember, addQueue, createOrganization, createQueueFixture, registerUser } from "../helpers/fixtures";
import { meter } from "../helpers/meter";

// "What became of the previous call" (docs/floor.md): call-next's previousOutcome completes the
// caller's previous, never started call as served or marks it absent, before the next call, so
// the no-show sweep never turns a served customer into a no-show; without it, meta names it.

async function sweep(at: number) {
  const ctx = createExecutionContext();
  await worker.scheduled!(createScheduledController({ scheduledTime: at, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

async function branch() {
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "banking" });
  const f = await createQueueFixture(owner, org.id);
  const queueB = await addQueue(f);
  const clerk = await addMember(owner, org.id, "operator", { firstName: "Awa" });
  const desk = expectOk(
    await call("POST", `/v1/locations/${f.locationId}/desks`, {
      token: owner.token,
      body: { name: "Guichet 3", queueIds: [f.queueId, queueB] },
    }),
    201,
  );
  return { owner, clerk, queueA: f.queueId, queueB, desk };
}

async function walkIns(token: string, queueId: string, n: number): Promise<any[]> {
  const out = [];
  for (let i = 0; i < n; i++) out.push(expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { token, body: {} }), 201));
  return out;
}

const ticket = async (token: string, id: string) => expectOk(await call("GET", `/v1/tickets/${id}`, { token }));

describe("call-next on a queue: previousOutcome", () => {
  it("names the open previous call without the field, completes it as served with it, and the sweep leaves it served", async () => {
    const b = await branch();
    const token = b.clerk.token;
    const [t1, t2, t3] = await walkIns(b.owner.token, b.queueA, 3);
    const at = Date.parse("2026-04-02T09:00:00.000Z");
    testClock.set(at);

    const first = await call("POST", `/v1/queues/${b.queueA}/call-next`, { token, body: {} });
    expect(expectOk(first).id).toBe(t1.id);
    expect(first.body.meta).toEqual({ previousCallOpen: null, previousCallsClosed: [] });

    testClock.set(at + 60_000);
    const second = await call("POST", `/v1/queues/${b.queueA}/call-next`, { token, body: {} });
    expect(expectOk(second).id).toBe(t2.id);
    expect(second.body.meta).toEqual({
      previousCallOpen: { ticketId: t1.id, displayCode: t1.displayCode, calledAt: "2026-04-02T09:00:00.000Z" },
      previousCallsClosed: [],
    });
    expect((await ticket(token, t1.id)).status).toBe("called");

    testClock.set(at + 120_000);
    const third = await call("POST", `/v1/queues/${b.queueA}/call-next`, { token, body: { previousOutcome: "served" } });
    expect(expectOk(third).id).toBe(t3.id);
    // Both calls the clerk left open are closed (t2 was the previous one; t1 had been left before).
    expect(third.body.meta.previousCallOpen).toBeNull();
    expect(third.body.meta.previousCallsClosed).toEqual([
      { ticketId: t2.id, displayCode: t2.displayCode, status: "served" },
      { ticketId: t1.id, displayCode: t1.displayCode, status: "served" },
    ]);

    await settle(b.queueA);
    await sweep(at + 30 * 60_000);
    for (const id of [t1.id, t2.id]) {
      const t = await ticket(token, id);
      expect(t.status).toBe("served");
      expect(t.servedAt).toBe("2026-04-02T09:02:00.000Z");
    }
    // The one called last and never told about expires as a no-show, as before.
    expect((await ticket(token, t3.id)).status).toBe("expired");
  });

  it("marks the previous call absent with no_show, and leaves other operators' calls alone", async () => {
    const b = await branch();
    const [t1, t2, t3] = await walkIns(b.owner.token, b.queueA, 3);
    const mine = expectOk(await call("POST", `/v1/queues/${b.queueA}/call-next`, { token: b.clerk.token, body: {} }));
    const theirs = expectOk(await call("POST", `/v1/queues/${b.queueA}/call-next`, { token: b.owner.token, body: {} }));
    expect([mine.id, theirs.id]).toEqual([t1.id, t2.id]);
    const next = await call("POST", `/v1/queues/${b.queueA}/call-next`, { token: b.clerk.token, body: { previousOutcome: "no_show" } });
    expect(expectOk(next).id).toBe(t3.id);
    expect(next.body.meta.previousCallsClosed).toEqual([{ ticketId: t1.id, displayCode: t1.displayCode, status: "skipped" }]);
    const absent = await ticket(b.clerk.token, t1.id);
    expect(absent).toMatchObject({ status: "skipped", skipReason: "no_show" });
    expect((await ticket(b.clerk.token, t2.id)).status).toBe("called");
  });

  it("leaves a started previous call to call-next's own completion, and refuses an unknown outcome", async () => {
    const b = await branch();
    const [t1] = await walkIns(b.owner.token, b.queueA, 2);
    const token = b.clerk.token;
    expectOk(await call("POST", `/v1/queues/${b.queueA}/call-next`, { token, body: {} }));
    expectOk(await call("POST", `/v1/tickets/${t1.id}/serve`, { token }));
    const next = await call("POST", `/v1/queues/${b.queueA}/call-next`, { token, body: { previousOutcome: "no_show" } });
    expectOk(next);
    expect(next.body.meta).toEqual({ previousCallOpen: null, previousCallsClosed: [] });
    expect((await ticket(token, t1.id)).status).toBe("served");
    expectError(
      await call("POST", `/v1/queues/${b.queueA}/call-next`, { token, body: { previousOutcome: "gone" } }),
      400,
      "VALIDATION_ERROR",
      "previousOutcome",
    );
  });
});

describe("call-next at a desk: previousOutcome", () => {
  it("settles the caller's previous call at the desk, across the desk's queues", async () => {
    const b = await branch();
    const token = b.clerk.token;
    const [a1] = await walkIns(b.owner.token, b.queueA, 1);
    const [b1] = await walkIns(b.owner.token, b.queueB, 1);
    expectOk(await call("POST", `/v1/desks/${b.desk.id}/open`, { token }));

    const first = await call("POST", `/v1/desks/${b.desk.id}/call-next`, { token });
    expect(expectOk(first).id).toBe(a1.id);
    expect(first.body.meta).toEqual({ previousCallOpen: null, previousCallsClosed: [] });

    const second = await call("POST", `/v1/desks/${b.desk.id}/call-next`, { token, body: {} });
    expect(expectOk(second).id).toBe(b1.id);
    expect(second.body.meta.previousCallOpen).toMatchObject({ ticketId: a1.id, displayCode: a1.displayCode });

    // Nothing left to call: the previous call is still closed as the clerk said.
    const third = await call("POST", `/v1/desks/${b.desk.id}/call-next`, { token, body: { previousOutcome: "served" } });
    expectError(third, 409, "QUEUE_EMPTY");
    expect((await ticket(token, a1.id)).status).toBe("served");
    expect((await ticket(token, b1.id)).status).toBe("served");
  });

  it("settles inside each queue's head read: one room call per queue, then the call and the finish elsewhere (issue 43)", async () => {
    const b = await branch();
    const token = b.clerk.token;
    const [a1, a2] = await walkIns(b.owner.token, b.queueA, 2);
    await walkIns(b.owner.token, b.queueB, 1);
    expectOk(await call("POST", `/v1/desks/${b.desk.id}/open`, { token }));
    expect(expectOk(await call("POST", `/v1/desks/${b.desk.id}/call-next`, { token })).id).toBe(a1.id);
    const { cost, reset } = meter();

    // Two queues: 2 head reads (each settling the clerk's calls at this desk there), 1 call, 1 finish
    // in the queue not called. Settling in the Worker cost 2 listings and 2 commands more.
    reset();
    const second = await call("POST", `/v1/desks/${b.desk.id}/call-next`, { token, body: { previousOutcome: "served" } });
    expect(expectOk(second).id).toBe(a2.id);
    expect(second.body.meta.previousCallsClosed).toEqual([{ ticketId: a1.id, displayCode: a1.displayCode, status: "served" }]);
    expect(cost.rooms).toBe(4);
    expect((await ticket(token, a1.id)).status).toBe("served");

    reset();
    const third = await call("POST", `/v1/desks/${b.desk.id}/call-next`, { token, body: {} });
    expect(third.body.meta.previousCallOpen).toMatchObject({ ticketId: a2.id, displayCode: a2.displayCode });
    expect(cost.rooms).toBe(4);

    // A call made by the clerk on the queue itself (no desk) is not the desk's to settle.
    const [a3] = await walkIns(b.owner.token, b.queueA, 1);
    const own = expectOk(await call("POST", `/v1/queues/${b.queueA}/call-next`, { token }));
    expect(own.id).toBe(a3.id);
    await walkIns(b.owner.token, b.queueA, 1);
    const fourth = await call("POST", `/v1/desks/${b.desk.id}/call-next`, { token, body: { previousOutcome: "no_show" } });
    expectOk(fourth);
    expect(fourth.body.meta.previousCallsClosed.map((c: { ticketId: string }) => c.ticketId)).not.toContain(a3.id);
    expect((await ticket(token, a3.id)).status).toBe("called");
  });

  it("refuses previousOutcome at a desk held by someone else before touching any ticket", async () => {
    const b = await branch();
    const [a1] = await walkIns(b.owner.token, b.queueA, 2);
    expectOk(await call("POST", `/v1/desks/${b.desk.id}/open`, { token: b.clerk.token }));
    expectOk(await call("POST", `/v1/desks/${b.desk.id}/call-next`, { token: b.clerk.token }));
    const other = await call("POST", `/v1/desks/${b.desk.id}/call-next`, { token: b.owner.token, body: { previousOutcome: "no_show" } });
    expectError(other, 409, "CONFLICT");
    expect((await ticket(b.clerk.token, a1.id)).status).toBe("called");
    expectError(
      await call("POST", `/v1/desks/${b.desk.id}/call-next`, { token: b.clerk.token, body: { previousOutcome: "served", extra: 1 } }),
      400,
      "VALIDATION_ERROR",
    );
  });
});
