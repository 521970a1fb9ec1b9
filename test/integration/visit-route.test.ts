import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { now } from "../../src/lib/clock";
import type { RouteSnapshot } from "../../src/queue-room/contract";
import { call, expectError, expectOk } from "../helpers/api";
import { insertService, room, settle } from "../helpers/catalog";
import { expectLogs } from "../helpers/console";
import { createApiKey, queueFixture, type Fixture } from "../helpers/fixtures";
import { capture, eventsOf, type Captured } from "../helpers/notifications";

// Several services in one visit (docs/visits.md): one ticket's route through two queues of two
// services at the same location, handed over by the rooms exactly once.

interface Visit extends Fixture {
  locationId: string;
  secondService: string;
  secondQueue: string;
}

async function twoServices(entry?: "front" | "original_time"): Promise<Visit> {
  const f = await queueFixture("pro");
  const link = await env.DB.prepare("SELECT location_id FROM service_locations WHERE service_id = ?")
    .bind(f.serviceId)
    .first<{ location_id: string }>();
  const locationId = link!.location_id;
  const secondService = await insertService(f.organizationId, locationId);
  if (entry) expectOk(await call("PATCH", `/v1/services/${secondService}`, { token: f.owner.token, body: { routeEntry: entry } }));
  const secondQueue = expectOk(
    await call("POST", "/v1/business/queues", { token: f.owner.token, body: { serviceId: secondService, name: "Cashier" } }),
    201,
  ).id;
  return { ...f, locationId, secondService, secondQueue };
}

async function serve(f: Fixture, queueId: string, ticketId: string): Promise<void> {
  const called = expectOk(await call("POST", `/v1/queues/${queueId}/call-next`, { token: f.owner.token }));
  expect(called.id).toBe(ticketId);
  expectOk(await call("POST", `/v1/tickets/${ticketId}/serve`, { token: f.owner.token }));
}

async function waitingIn(f: Fixture, queueId: string): Promise<any[]> {
  return expectOk(await call("GET", `/v1/queues/${queueId}/tickets?status=waiting&limit=100`, { token: f.owner.token }));
}

let events: Captured;
beforeEach(() => {
  events = capture();
});
afterEach(() => events.restore());

describe("a visit of two services", () => {
  it("leg 1 completed: the visitor waits in leg 2's queue with the same code and token, and one ticket.route_advanced", async () => {
    const f = await twoServices();
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const joined = expectOk(
      await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: key, body: { route: [f.serviceId, f.secondService] } }),
      201,
    );
    const first = expectOk(await call("GET", `/v1/tickets/${joined.id}`, { token: f.owner.token }));
    expect(first).toMatchObject({
      leg: { index: 1, of: 2 },
      route: [
        { serviceId: f.serviceId, queueId: f.queueId },
        { serviceId: f.secondService, queueId: f.secondQueue },
      ],
      visitId: joined.id,
      routedToId: null,
    });
    // The whole visit: this wait, the next queue's wait, and a service time per leg (5 min by default).
    expect(first.estimatedVisitMinutes).toBe(first.estimatedWaitMinutes + 10);

    await serve(f, f.queueId, joined.id);
    const done = expectOk(await call("POST", `/v1/tickets/${joined.id}/complete`, { token: f.owner.token }));
    expect(done.status).toBe("served");
    expect(done.routedToId).toMatch(/^tkt_/);

    const next = expectOk(await call("GET", `/v1/tickets/${done.routedToId}`, { token: f.owner.token }));
    expect(next).toMatchObject({
      queueId: f.secondQueue,
      serviceId: f.secondService,
      status: "waiting",
      position: 1,
      displayCode: joined.displayCode,
      leg: { index: 2, of: 2 },
      visitId: joined.id,
      routedFromId: joined.id,
    });
    expect((await waitingIn(f, f.secondQueue)).map((t) => t.id)).toEqual([next.id]);
    expect(await waitingIn(f, f.queueId)).toEqual([]);

    // The visitor's token follows them to the next leg.
    const headers = { "X-Ticket-Token": joined.ticketToken };
    expect(expectOk(await call("GET", `/v1/widget/tickets/${next.id}`, { headers }))).toMatchObject({
      queueId: f.secondQueue,
      displayCode: joined.displayCode,
      status: "waiting",
      leg: { index: 2, of: 2 },
      routedToId: null,
    });
    // The first leg's id and token still answer, to say where the visitor went (the status page follows it).
    expect(expectOk(await call("GET", `/v1/widget/tickets/${joined.id}`, { headers }))).toMatchObject({
      ticketId: joined.id,
      status: "served",
      leg: { index: 1, of: 2 },
      routedToId: next.id,
    });
    expectError(await call("GET", `/v1/widget/tickets/${joined.id}`, { headers: { "X-Ticket-Token": "x".repeat(44) } }), 404, "NOT_FOUND");

    const advanced = (await eventsOf(events, f.queueId)).filter((e) => e.type === "ticket.route_advanced");
    expect(advanced).toHaveLength(1);
    expect(advanced[0]!.data).toMatchObject({
      routedToId: next.id,
      fromQueueId: f.queueId,
      toQueueId: f.secondQueue,
      leg: { index: 2, of: 2 },
      visitId: joined.id,
    });
    // The first leg asks for no review: the visit goes on.
    expect(events.events.filter((e) => e.type === "review.request" && e.ticketId === joined.id)).toEqual([]);

    // The last leg's completion ends the visit as any ticket's: served, no further leg.
    await serve(f, f.secondQueue, next.id);
    const last = expectOk(await call("POST", `/v1/tickets/${next.id}/complete`, { token: f.owner.token }));
    expect(last).toMatchObject({ status: "served", routedToId: null });
    // The last leg ends the visit: its read is 404 as any served ticket's, the first leg's still points to it.
    expectError(await call("GET", `/v1/widget/tickets/${next.id}`, { headers }), 404, "NOT_FOUND");
    expect(expectOk(await call("GET", `/v1/widget/tickets/${joined.id}`, { headers })).routedToId).toBe(next.id);
    const tail = await eventsOf(events, f.secondQueue);
    expect(tail.filter((e) => e.type === "ticket.route_advanced")).toEqual([]);
    expect(tail.filter((e) => e.type === "review.request").map((e) => e.ticketId)).toEqual([next.id]);

    // Each leg is a ticket of its own queue in the projection, carrying the visit.
    await settle(f.secondQueue);
    const legs = await env.DB.prepare(
      "SELECT queue_id, status, visit_id, leg_index, leg_count FROM tickets WHERE visit_id = ? ORDER BY leg_index",
    )
      .bind(joined.id)
      .all();
    expect(legs.results).toEqual([
      { queue_id: f.queueId, status: "served", visit_id: joined.id, leg_index: 0, leg_count: 2 },
      { queue_id: f.secondQueue, status: "served", visit_id: joined.id, leg_index: 1, leg_count: 2 },
    ]);
  });

  async function lineWithEarlierAndLaterJoins(entry: "front" | "original_time") {
    const f = await twoServices(entry);
    const before = expectOk(await call("POST", `/v1/queues/${f.secondQueue}/operator-join`, { token: f.owner.token }), 201);
    const visit = expectOk(
      await call("POST", `/v1/queues/${f.queueId}/operator-join`, {
        token: f.owner.token,
        body: { route: [f.serviceId, f.secondService] },
      }),
      201,
    );
    const after = expectOk(await call("POST", `/v1/queues/${f.secondQueue}/operator-join`, { token: f.owner.token }), 201);
    await serve(f, f.queueId, visit.id);
    const next = expectOk(await call("POST", `/v1/tickets/${visit.id}/complete`, { token: f.owner.token })).routedToId;
    return { f, before: before.id, after: after.id, next };
  }

  it("routeEntry original_time: the next leg stands where the visit's first join would, behind earlier joins and ahead of later ones", async () => {
    const { f, before, after, next } = await lineWithEarlierAndLaterJoins("original_time");
    expect((await waitingIn(f, f.secondQueue)).map((t) => t.id)).toEqual([before, next, after]);
  });

  it("routeEntry front: the next leg is first in line", async () => {
    const { f, before, after, next } = await lineWithEarlierAndLaterJoins("front");
    expect((await waitingIn(f, f.secondQueue)).map((t) => t.id)).toEqual([next, before, after]);
  });

  it("a service's routeEntry is original_time unless set", async () => {
    const f = await twoServices();
    expect(expectOk(await call("GET", `/v1/services/${f.secondService}`, { token: f.owner.token })).routeEntry).toBe("original_time");
    expectError(
      await call("PATCH", `/v1/services/${f.secondService}`, { token: f.owner.token, body: { routeEntry: "back" } }),
      400,
      "VALIDATION_ERROR",
      "routeEntry",
    );
  });

  it("refuses a wrong route naming the entry at fault, and takes no ticket", async () => {
    const f = await twoServices();
    const join = (route: unknown) => call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: { route } });
    // The first entry is the joined queue's service.
    expectError(await join([f.secondService, f.serviceId]), 400, "VALIDATION_ERROR", "route.0");
    // An unknown service, or another organization's.
    const other = await queueFixture("pro");
    expectError(await join([f.serviceId, "svc_00000000000000000000"]), 400, "VALIDATION_ERROR", "route.1");
    expectError(await join([f.serviceId, other.serviceId]), 400, "VALIDATION_ERROR", "route.1");
    // A service offered elsewhere only.
    const elsewhere = await insertService(f.organizationId);
    expect((await call("POST", "/v1/business/queues", { token: f.owner.token, body: { serviceId: elsewhere, name: "Far" } })).status).toBe(
      201,
    );
    expectError(await join([f.serviceId, f.secondService, elsewhere]), 400, "VALIDATION_ERROR", "route.2");
    // A service with no open queue.
    const empty = await insertService(f.organizationId, f.locationId);
    expectError(await join([f.serviceId, empty]), 400, "VALIDATION_ERROR", "route.1");
    // An inactive one.
    expectOk(await call("PATCH", `/v1/services/${f.secondService}`, { token: f.owner.token, body: { status: "inactive" } }));
    expectError(await join([f.serviceId, f.secondService]), 400, "VALIDATION_ERROR", "route.1");
    // More than five.
    expectError(await join(Array.from({ length: 6 }, () => f.serviceId)), 400, "VALIDATION_ERROR", "route");
    expect(await waitingIn(f, f.queueId)).toEqual([]);
  });
});

describe("a hand-off between two legs cut short", () => {
  async function servingLeg() {
    const f = await twoServices();
    const visit = expectOk(
      await call("POST", `/v1/queues/${f.queueId}/operator-join`, {
        token: f.owner.token,
        body: { route: [f.serviceId, f.secondService] },
      }),
      201,
    );
    await serve(f, f.queueId, visit.id);
    return { f, visit };
  }

  function liveLegs(f: Visit, visitId: string): Promise<number> {
    return Promise.all([waitingIn(f, f.queueId), waitingIn(f, f.secondQueue)]).then(
      ([a, b]) => [...a, ...b].filter((t) => t.visitId === visitId).length,
    );
  }

  it("the next leg's room fails: the leg stays completed, the visitor is in no other line, and the alarm hands over once it answers", async () => {
    const { f, visit } = await servingLeg();
    // The destination's storage breaks: every admission throws until it is repaired.
    expectLogs("warn", /no such table: admissions/);
    await runInDurableObject(room(f.secondQueue), (_object, state) =>
      state.storage.sql.exec("ALTER TABLE admissions RENAME TO admissions_away"),
    );
    const done = expectOk(await call("POST", `/v1/tickets/${visit.id}/complete`, { token: f.owner.token }));
    expect(done).toMatchObject({ status: "served", routedToId: null });
    expect(await liveLegs(f, visit.id)).toBe(0);
    // Retried by the alarm while it still fails: nothing lands anywhere.
    await settle(f.queueId);
    await runDurableObjectAlarm(room(f.queueId));
    expect(await liveLegs(f, visit.id)).toBe(0);

    await runInDurableObject(room(f.secondQueue), (_object, state) =>
      state.storage.sql.exec("ALTER TABLE admissions_away RENAME TO admissions"),
    );
    await runDurableObjectAlarm(room(f.queueId));
    const source = expectOk(await call("GET", `/v1/tickets/${visit.id}`, { token: f.owner.token }));
    expect(source.routedToId).toMatch(/^tkt_/);
    const waiting = await waitingIn(f, f.secondQueue);
    expect(waiting.map((t) => t.id)).toEqual([source.routedToId]);
    expect(await liveLegs(f, visit.id)).toBe(1);
    // Another alarm changes nothing: the hand-off is closed.
    await runDurableObjectAlarm(room(f.queueId));
    expect(await liveLegs(f, visit.id)).toBe(1);
    expect((await eventsOf(events, f.queueId)).filter((e) => e.type === "ticket.route_advanced")).toHaveLength(1);
  });

  it("the source stops after the destination admitted: the admission is found again and the visitor is in one line only", async () => {
    const { f, visit } = await servingLeg();
    // The leg is completed in the source room (as call-next's auto-completion does, which leaves the
    // hand-off to the alarm), and the admission a Worker would send next is taken from it as it stands.
    const text = await runInDurableObject(room(f.queueId), (instance, state) => {
      const object = instance as any;
      const result = object.mutate(now(), (cfg: unknown) => {
        object.commands.complete(cfg, visit.id, now(), {});
        const row = state.storage.sql.exec("SELECT * FROM tickets WHERE id = ?", visit.id).one();
        return object.visitRoutes.snapshot(cfg, row);
      });
      return JSON.stringify(result.value);
    });
    const snapshot = JSON.parse(text) as RouteSnapshot;
    // The destination admits it (twice: a retried request), then the source is cut off before recording it.
    const first = await room(f.secondQueue).command({ verb: "admitRouted", snapshot, at: now() });
    const again = await room(f.secondQueue).command({ verb: "admitRouted", snapshot, at: now() });
    expect(first.ok && again.ok && first.value.id === again.value.id).toBe(true);
    // The source's alarm drives the open hand-off: it finds that admission, records it once.
    await settle(f.queueId);
    await runDurableObjectAlarm(room(f.queueId));
    const leg = expectOk(await call("GET", `/v1/tickets/${visit.id}`, { token: f.owner.token }));
    expect(leg.routedToId).toBe(first.ok ? first.value.id : null);
    expect((await waitingIn(f, f.secondQueue)).map((t) => t.id)).toEqual([leg.routedToId]);
    expect(await liveLegs(f, visit.id)).toBe(1);
    expect((await eventsOf(events, f.queueId)).filter((e) => e.type === "ticket.route_advanced")).toHaveLength(1);
  });
});
