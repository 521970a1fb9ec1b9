import { describe, expect, it } from "vitest";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { testClock } from "../helpers/clock";
import {
  addMember,
  addQueue,
  createApiKey,
  createOrganization,
  createQueueFixture,
  registerUser,
  type TestUser,
  walkIn,
} from "../helpers/fixtures";

// Desks (docs/desks.md): CRUD, open/close (one operator per desk, one desk per operator,
// exact under concurrency) and call-next over several queues (the rule and the cross-room step).

interface World {
  owner: TestUser;
  organizationId: string;
  locationId: string;
  serviceId: string;
  queueA: string;
  queueB: string;
}

async function world(): Promise<World> {
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "banking" });
  const f = await createQueueFixture(owner, org.id);
  const queueB = await addQueue(f);
  return { owner, organizationId: org.id, locationId: f.locationId, serviceId: f.serviceId, queueA: f.queueId, queueB };
}

async function createDesk(w: World, queueIds: string[], body: Record<string, unknown> = {}): Promise<any> {
  return expectOk(
    await call("POST", `/v1/locations/${w.locationId}/desks`, {
      token: w.owner.token,
      body: { name: unique("Guichet "), queueIds, ...body },
    }),
    201,
  );
}

async function openDesk(user: TestUser, deskId: string): Promise<any> {
  return expectOk(await call("POST", `/v1/desks/${deskId}/open`, { token: user.token }));
}

describe("desks: create, read, change, delete", () => {
  it("creates a desk over the organization's queues, lists, reads, changes and deletes it", async () => {
    const w = await world();
    const desk = await createDesk(w, [w.queueA, w.queueB, w.queueA], { name: "Guichet 3", displayName: "G3" });
    expect(desk).toMatchObject({
      name: "Guichet 3",
      displayName: "G3",
      queueIds: [w.queueA, w.queueB],
      status: "closed",
      operatorId: null,
    });
    expect(desk.id).toMatch(/^dsk_/);
    const list = await call("GET", `/v1/locations/${w.locationId}/desks`, { token: w.owner.token });
    expect(expectOk(list).map((d: any) => d.id)).toEqual([desk.id]);
    expect(list.body.meta.total).toBe(1);
    expect(expectOk(await call("GET", `/v1/desks/${desk.id}`, { token: w.owner.token })).id).toBe(desk.id);
    const changed = expectOk(
      await call("PATCH", `/v1/desks/${desk.id}`, { token: w.owner.token, body: { displayName: null, queueIds: [w.queueB] } }),
    );
    expect(changed).toMatchObject({ displayName: null, queueIds: [w.queueB], name: "Guichet 3" });
    expectOk(await call("DELETE", `/v1/desks/${desk.id}`, { token: w.owner.token }));
    expectError(await call("GET", `/v1/desks/${desk.id}`, { token: w.owner.token }), 404, "NOT_FOUND");
  });

  it("refuses a queue of another organization (404), an empty name or no queue (400)", async () => {
    const w = await world();
    const other = await world();
    const res = await call("POST", `/v1/locations/${w.locationId}/desks`, {
      token: w.owner.token,
      body: { name: "G1", queueIds: [w.queueA, other.queueA] },
    });
    expectError(res, 404, "NOT_FOUND");
    expect(res.body.error.details.queueId).toBe(other.queueA);
    expectError(
      await call("POST", `/v1/locations/${w.locationId}/desks`, { token: w.owner.token, body: { name: " ", queueIds: [w.queueA] } }),
      400,
      "VALIDATION_ERROR",
      "name",
    );
    expectError(
      await call("POST", `/v1/locations/${w.locationId}/desks`, { token: w.owner.token, body: { name: "G", queueIds: [] } }),
      400,
      "VALIDATION_ERROR",
      "queueIds",
    );
  });

  it("needs QUEUE_MANAGE to create, change or delete (an operator gets 403) and hides other organizations' desks (404)", async () => {
    const w = await world();
    const operator = await addMember(w.owner, w.organizationId, "operator");
    const desk = await createDesk(w, [w.queueA]);
    expectError(
      await call("POST", `/v1/locations/${w.locationId}/desks`, { token: operator.token, body: { name: "G", queueIds: [w.queueA] } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(await call("PATCH", `/v1/desks/${desk.id}`, { token: operator.token, body: { name: "X" } }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("DELETE", `/v1/desks/${desk.id}`, { token: operator.token }), 403, "AUTHORIZATION_ERROR");
    expectOk(await call("GET", `/v1/desks/${desk.id}`, { token: operator.token }));

    const stranger = (await world()).owner;
    for (const [method, path] of [
      ["GET", `/v1/desks/${desk.id}`],
      ["PATCH", `/v1/desks/${desk.id}`],
      ["DELETE", `/v1/desks/${desk.id}`],
      ["POST", `/v1/desks/${desk.id}/open`],
      ["POST", `/v1/desks/${desk.id}/close`],
      ["POST", `/v1/desks/${desk.id}/call-next`],
      ["GET", `/v1/locations/${w.locationId}/desks`],
    ] as const) {
      const res = await call(method, path, { token: stranger.token, ...(method === "PATCH" ? { body: { name: "X" } } : {}) });
      expectError(res, 404, "NOT_FOUND");
    }
  });
});

describe("desks: open and close", () => {
  it("one operator per desk, one desk per operator; closing frees both", async () => {
    const w = await world();
    const [ana, ben] = [await addMember(w.owner, w.organizationId, "operator"), await addMember(w.owner, w.organizationId, "operator")];
    const [d1, d2] = [await createDesk(w, [w.queueA]), await createDesk(w, [w.queueB])];
    const opened = await openDesk(ana, d1.id);
    expect(opened).toMatchObject({ status: "open", operatorId: ana.id });
    expect(typeof opened.openedAt).toBe("string");
    expect((await openDesk(ana, d1.id)).operatorId).toBe(ana.id); // again: no change

    const taken = await call("POST", `/v1/desks/${d1.id}/open`, { token: ben.token });
    expectError(taken, 409, "CONFLICT");
    expect(taken.body.error.details).toMatchObject({ reason: "desk_occupied", operatorId: ana.id });
    const second = await call("POST", `/v1/desks/${d2.id}/open`, { token: ana.token });
    expectError(second, 409, "CONFLICT");
    expect(second.body.error.details).toMatchObject({ reason: "operator_has_desk", deskId: d1.id });

    // Ben may not close Ana's desk (no QUEUE_MANAGE); Ana may.
    expectError(await call("POST", `/v1/desks/${d1.id}/close`, { token: ben.token }), 409, "CONFLICT");
    expect(expectOk(await call("POST", `/v1/desks/${d1.id}/close`, { token: ana.token }))).toMatchObject({
      status: "closed",
      operatorId: null,
    });
    const again = await call("POST", `/v1/desks/${d1.id}/close`, { token: ana.token });
    expectError(again, 409, "INVALID_STATE");
    expect(again.body.error.details).toMatchObject({ status: "closed", allowed: ["open"] });
    expect((await openDesk(ben, d1.id)).operatorId).toBe(ben.id);
    expect((await openDesk(ana, d2.id)).operatorId).toBe(ana.id);
    // A manager closes anyone's desk at the end of the day.
    expect(expectOk(await call("POST", `/v1/desks/${d1.id}/close`, { token: w.owner.token })).status).toBe("closed");
  });

  it("is exact under concurrency: 6 operators racing for one desk, one operator racing for 6 desks", async () => {
    const w = await world();
    const operators = await Promise.all(Array.from({ length: 6 }, () => addMember(w.owner, w.organizationId, "operator")));
    const desk = await createDesk(w, [w.queueA]);
    const race = await Promise.all(operators.map((o) => call("POST", `/v1/desks/${desk.id}/open`, { token: o.token })));
    expect(race.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of race.filter((r) => r.status !== 200)) expectError(r, 409, "CONFLICT");

    const solo = await addMember(w.owner, w.organizationId, "operator");
    const desks = await Promise.all(Array.from({ length: 6 }, () => createDesk(w, [w.queueB])));
    const grab = await Promise.all(desks.map((d) => call("POST", `/v1/desks/${d.id}/open`, { token: solo.token })));
    expect(grab.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of grab.filter((r) => r.status !== 200)) expectError(r, 409, "CONFLICT");
    const held = (await Promise.all(desks.map((d) => call("GET", `/v1/desks/${d.id}`, { token: w.owner.token })))).filter(
      (r) => r.body.data.operatorId === solo.id,
    );
    expect(held).toHaveLength(1);
  });
});

describe("desks: call-next over several queues", () => {
  it("calls priority heads first, then the longest-waiting head; the ticket carries deskId and the desk's label", async () => {
    const w = await world();
    const operator = await addMember(w.owner, w.organizationId, "operator");
    const desk = await createDesk(w, [w.queueA, w.queueB], { name: "Guichet 3" });
    testClock.set("2026-03-20T09:00:00.000Z");
    const a1 = await walkIn(w.owner, w.queueA);
    testClock.advance(1000);
    const b1 = await walkIn(w.owner, w.queueB);
    testClock.advance(1000);
    const a2 = await walkIn(w.owner, w.queueA);
    testClock.advance(1000);
    const bVip = await walkIn(w.owner, w.queueB, { vip: true });

    const closed = await call("POST", `/v1/desks/${desk.id}/call-next`, { token: operator.token });
    expectError(closed, 409, "INVALID_STATE");
    expect(closed.body.error.details).toMatchObject({ status: "closed", allowed: ["open"] });
    await openDesk(operator, desk.id);

    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      const t = expectOk(await call("POST", `/v1/desks/${desk.id}/call-next`, { token: operator.token }));
      expect(t).toMatchObject({ status: "called", deskId: desk.id, counter: "Guichet 3", assignedToId: operator.id });
      order.push(t.id);
    }
    expect(order).toEqual([bVip.id, a1.id, b1.id, a2.id]);
    const empty = await call("POST", `/v1/desks/${desk.id}/call-next`, { token: operator.token });
    expectError(empty, 409, "QUEUE_EMPTY");
    // The ticket read back carries the desk too.
    expect(expectOk(await call("GET", `/v1/tickets/${a1.id}`, { token: w.owner.token })).deskId).toBe(desk.id);
  });

  it("completes what the operator was serving at any of the desk's queues once the next is called", async () => {
    const w = await world();
    const desk = await createDesk(w, [w.queueA, w.queueB], { displayName: "G7" });
    await openDesk(w.owner, desk.id);
    testClock.set("2026-03-20T09:00:00.000Z");
    await walkIn(w.owner, w.queueA);
    testClock.advance(1000);
    await walkIn(w.owner, w.queueB);
    const first = expectOk(await call("POST", `/v1/desks/${desk.id}/call-next`, { token: w.owner.token }));
    expect(first.queueId).toBe(w.queueA);
    expect(first.counter).toBe("G7");
    expectOk(await call("POST", `/v1/tickets/${first.id}/serve`, { token: w.owner.token }));
    const second = expectOk(await call("POST", `/v1/desks/${desk.id}/call-next`, { token: w.owner.token }));
    expect(second.queueId).toBe(w.queueB);
    expect(expectOk(await call("GET", `/v1/tickets/${first.id}`, { token: w.owner.token })).status).toBe("served");
  });

  it("needs QUEUE_OPERATE and the desk open by the caller", async () => {
    const w = await world();
    const ana = await addMember(w.owner, w.organizationId, "operator");
    const ben = await addMember(w.owner, w.organizationId, "operator");
    const desk = await createDesk(w, [w.queueA]);
    await openDesk(ana, desk.id);
    await walkIn(w.owner, w.queueA);
    const other = await call("POST", `/v1/desks/${desk.id}/call-next`, { token: ben.token });
    expectError(other, 409, "CONFLICT");
    expect(other.body.error.details.reason).toBe("desk_occupied");
    const readOnly = await createApiKey(w.owner, w.organizationId, ["read:queues"]);
    expectError(await call("POST", `/v1/desks/${desk.id}/call-next`, { apiKey: readOnly.key }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("POST", `/v1/desks/${desk.id}/open`, { apiKey: readOnly.key }), 403, "AUTHORIZATION_ERROR");
    const customer = await registerUser({ accountType: "customer" });
    expectError(await call("POST", `/v1/desks/${desk.id}/call-next`, { token: customer.token }), 404, "NOT_FOUND");
    expectOk(await call("POST", `/v1/desks/${desk.id}/call-next`, { token: ana.token }));
  });

  /**
   * 3 desks over 2 queues (D1 and D2 call from A and B, D3 from B only), 50 waiting tickets
   * (25 per queue, 3 of them VIP, every one joined at its own millisecond), 60 desk calls in 5
   * waves of 12 concurrent calls; D3 calls only in the first two waves (24 calls cannot empty B,
   * so every D3 call finds a ticket and the 50/10 count is exact).
   *
   * What is asserted, and why it must hold under any interleaving (no joins during the calls):
   *  - 50 distinct tickets called and exactly 10 × QUEUE_EMPTY, all in the last wave; every
   *    ticket ends called (none lost, none called twice: only its room calls it);
   *  - after each wave, each queue's called tickets are exactly the front of its line (a room
   *    calls its head only);
   *  - after each wave, every ticket a two-queue desk called ranks, by the desk rule, before
   *    every ticket still waiting: at the instant its room called it, it ranked before the head
   *    of the other queue as read earlier, and that head can only have been called since
   *    (worse heads follow) — so it was the best of both heads then, and every ticket still
   *    waiting was waiting then too.
   */
  it("60 concurrent desk calls on 50 waiting tickets: 50 distinct, 10 × QUEUE_EMPTY, in rule order", async () => {
    const w = await world();
    const ops = await Promise.all([0, 1, 2].map(() => addMember(w.owner, w.organizationId, "operator")));
    const d1 = await createDesk(w, [w.queueA, w.queueB]);
    const d2 = await createDesk(w, [w.queueB, w.queueA]);
    const d3 = await createDesk(w, [w.queueB]);
    const desks = [d1, d2, d3];
    await Promise.all(desks.map((d, i) => openDesk(ops[i]!, d.id)));

    testClock.set("2026-03-20T09:00:00.000Z");
    const tickets: any[] = [];
    const vipAt = new Set([7, 20, 33]);
    for (let i = 0; i < 50; i++) {
      testClock.advance(1000);
      tickets.push(await walkIn(w.owner, i % 2 === 0 ? w.queueA : w.queueB, { vip: vipAt.has(i) }));
    }
    const rank = (t: any) => [t.isPriority ? 0 : 1, Date.parse(t.createdAt)];
    const before = (x: any, y: any) => {
      const [a, b] = [rank(x), rank(y)];
      return a[0]! !== b[0]! ? a[0]! < b[0]! : a[1]! < b[1]!;
    };
    const lineOf = (q: string) => tickets.filter((t) => t.queueId === q).sort((x, y) => (before(x, y) ? -1 : 1));
    const lines = { [w.queueA]: lineOf(w.queueA), [w.queueB]: lineOf(w.queueB) };

    const called = new Map<string, { deskId: string }>();
    let empty = 0;
    for (let wave = 0; wave < 5; wave++) {
      const deskOf = (i: number) => (wave < 2 ? desks[i % 3]! : desks[i % 2]!);
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => {
          const desk = deskOf(i);
          return call("POST", `/v1/desks/${desk.id}/call-next`, { token: ops[desks.indexOf(desk)]!.token }).then((r) => ({ r, desk }));
        }),
      );
      for (const { r, desk } of results) {
        if (r.status === 200) {
          expect(called.has(r.body.data.id), "called twice").toBe(false);
          expect(r.body.data.deskId).toBe(desk.id);
          called.set(r.body.data.id, { deskId: desk.id });
        } else {
          expectError(r, 409, "QUEUE_EMPTY");
          expect(wave).toBe(4);
          empty += 1;
        }
      }
      // Each queue's called tickets are the front of its line.
      for (const q of [w.queueA, w.queueB]) {
        const line = lines[q]!;
        const n = line.filter((t) => called.has(t.id)).length;
        expect(line.slice(0, n).every((t) => called.has(t.id))).toBe(true);
      }
      // What a two-queue desk called ranks before everything still waiting.
      const waiting = tickets.filter((t) => !called.has(t.id));
      for (const t of tickets.filter((t) => called.get(t.id) && called.get(t.id)!.deskId !== d3.id)) {
        for (const u of waiting) expect(before(t, u), `${t.displayCode} called before waiting ${u.displayCode}`).toBe(true);
      }
    }
    expect(called.size).toBe(50);
    expect(empty).toBe(10);
    const states = await Promise.all(tickets.map((t) => call("GET", `/v1/tickets/${t.id}`, { token: w.owner.token })));
    expect(states.every((s) => s.body.data.status === "called")).toBe(true);
  }, 240_000);
});
