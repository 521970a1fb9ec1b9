import { describe, expect, it } from "vitest";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import {
  acceptInvitation,
  addMember,
  addQueue,
  createApiKey,
  createOrganization,
  createQueueFixture,
  registerUser,
} from "../helpers/fixtures";

// The floor of a location (docs/floor.md): desks with their operator and the ticket at them,
// queues with their line, read through HTTP by each role, refused to outsiders.

async function branch() {
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "banking" });
  const f = await createQueueFixture(owner, org.id);
  const queueB = await addQueue(f, { name: "Accounts" });
  const token = owner.token;
  const deskA = expectOk(
    await call("POST", `/v1/locations/${f.locationId}/desks`, {
      token,
      body: { name: "Desk 1", displayName: "Guichet 1", queueIds: [f.queueId, queueB] },
    }),
    201,
  );
  const deskB = expectOk(
    await call("POST", `/v1/locations/${f.locationId}/desks`, { token, body: { name: "Guichet 2", queueIds: [queueB] } }),
    201,
  );
  const clerk = await addMember(owner, org.id, "operator", { firstName: "Awa", lastName: "Koné" });
  return { owner, clerk, organizationId: org.id, locationId: f.locationId, queueA: f.queueId, queueB, deskA, deskB };
}

async function walkIn(token: string, queueId: string): Promise<any> {
  return expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { token, body: {} }), 201);
}

describe("GET /v1/locations/{locationId}/floor", () => {
  it("shows each desk's operator and ticket, and each queue's line, held and served today", async () => {
    const b = await branch();
    const owner = b.owner.token;
    const t0 = Date.parse("2026-03-20T09:00:00.000Z");
    testClock.set(t0);
    const first = await walkIn(owner, b.queueA);
    testClock.set(t0 + 60_000);
    await walkIn(owner, b.queueA);
    await walkIn(owner, b.queueB);
    await walkIn(owner, b.queueB);

    // The clerk opens Guichet 1 and calls from it: the longest waiting (A's first) comes.
    expectOk(await call("POST", `/v1/desks/${b.deskA.id}/open`, { token: b.clerk.token }));
    testClock.set(t0 + 120_000);
    const called = expectOk(await call("POST", `/v1/desks/${b.deskA.id}/call-next`, { token: b.clerk.token }));
    expect(called.id).toBe(first.id);
    // The owner serves B's head from the queue, holds it, then serves and completes another.
    const heldOne = expectOk(await call("POST", `/v1/queues/${b.queueB}/call-next`, { token: owner, body: {} }));
    expectOk(await call("POST", `/v1/tickets/${heldOne.id}/hold`, { token: owner, body: {} }));
    const servedOne = expectOk(await call("POST", `/v1/queues/${b.queueB}/call-next`, { token: owner, body: {} }));
    expectOk(await call("POST", `/v1/tickets/${servedOne.id}/serve`, { token: owner }));
    expectOk(await call("POST", `/v1/tickets/${servedOne.id}/complete`, { token: owner, body: {} }));
    await settle(b.queueB);

    testClock.set(t0 + 180_000);
    const floor = expectOk(await call("GET", `/v1/locations/${b.locationId}/floor`, { token: b.clerk.token }));
    expect(floor.locationId).toBe(b.locationId);
    expect(floor.at).toBe("2026-03-20T09:03:00.000Z");
    expect(floor.desks).toEqual([
      {
        id: b.deskA.id,
        name: "Guichet 1",
        status: "open",
        queueIds: [b.queueA, b.queueB],
        operator: { id: b.clerk.id, name: "Awa Koné" },
        current: { ticketId: first.id, displayCode: first.displayCode, status: "called", since: "2026-03-20T09:02:00.000Z" },
      },
      { id: b.deskB.id, name: "Guichet 2", status: "closed", queueIds: [b.queueB], operator: null, current: null },
    ]);
    const byId = new Map(floor.queues.map((q: any) => [q.id, q]));
    expect(byId.get(b.queueA)).toMatchObject({
      name: "Main queue",
      letter: "A",
      waitingCount: 1,
      longestWaitSeconds: 120,
      heldCount: 0,
      servedToday: 0,
    });
    expect(byId.get(b.queueB)).toMatchObject({ name: "Accounts", waitingCount: 0, longestWaitSeconds: 0, heldCount: 1, servedToday: 1 });
  });

  it("shows a ticket served at a desk as the desk's current one, with when service started", async () => {
    const b = await branch();
    await walkIn(b.owner.token, b.queueB);
    expectOk(await call("POST", `/v1/desks/${b.deskB.id}/open`, { token: b.clerk.token }));
    const t = expectOk(await call("POST", `/v1/desks/${b.deskB.id}/call-next`, { token: b.clerk.token }));
    const serving = expectOk(await call("POST", `/v1/tickets/${t.id}/serve`, { token: b.clerk.token }));
    const floor = expectOk(await call("GET", `/v1/locations/${b.locationId}/floor`, { token: b.owner.token }));
    const desk = floor.desks.find((d: any) => d.id === b.deskB.id);
    expect(desk.current).toEqual({ ticketId: t.id, displayCode: t.displayCode, status: "serving", since: serving.servingAt });
  });

  it("is read by every role of the organization and a key with read:queues", async () => {
    const b = await branch();
    for (const role of ["admin", "manager", "operator"]) {
      const member = await addMember(b.owner, b.organizationId, role);
      expectOk(await call("GET", `/v1/locations/${b.locationId}/floor`, { token: member.token }));
    }
    const key = await createApiKey(b.owner, b.organizationId, ["read:queues"]);
    expectOk(await call("GET", `/v1/locations/${b.locationId}/floor`, { apiKey: key.key }));
  });

  it("is refused to a key without QUEUE_VIEW, to another organization, and without credential", async () => {
    const b = await branch();
    const widgetKey = await createApiKey(b.owner, b.organizationId, ["widget"]);
    expectError(await call("GET", `/v1/locations/${b.locationId}/floor`, { apiKey: widgetKey.key }), 403, "AUTHORIZATION_ERROR");
    const servicesKey = await createApiKey(b.owner, b.organizationId, ["read:services"]);
    expectError(await call("GET", `/v1/locations/${b.locationId}/floor`, { apiKey: servicesKey.key }), 403, "AUTHORIZATION_ERROR");

    const stranger = await registerUser();
    await createOrganization(stranger);
    expectError(await call("GET", `/v1/locations/${b.locationId}/floor`, { token: stranger.token }), 404, "NOT_FOUND");
    const customer = await registerUser({ accountType: "customer" });
    expectError(await call("GET", `/v1/locations/${b.locationId}/floor`, { token: customer.token }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/locations/${b.locationId}/floor`), 401, "AUTHENTICATION_ERROR");
    expectError(await call("GET", `/v1/locations/loc_${unique("nope")}/floor`, { token: b.owner.token }), 404, "NOT_FOUND");
  });
});

describe("the floor as a supervisor's page (issue 39)", () => {
  it("lists each line with names, waits and marks; today's averages and no-shows; the branch", async () => {
    const b = await branch();
    const owner = b.owner.token;
    const t0 = Date.parse("2026-03-20T09:00:00.000Z");
    testClock.set(t0);
    const first = expectOk(
      await call("POST", `/v1/queues/${b.queueA}/operator-join`, { token: owner, body: { visitorName: "Léa Martin" } }),
      201,
    );
    testClock.set(t0 + 60_000);
    const vip = expectOk(await call("POST", `/v1/queues/${b.queueA}/vip-ticket`, { token: owner, body: { visitorName: "Jo VIP" } }), 201);
    // On B: one called after 2 min, served for 3 min; one called after 4 min, absent.
    const b1 = await walkIn(owner, b.queueB);
    const b2 = await walkIn(owner, b.queueB);
    testClock.set(t0 + 60_000 + 120_000);
    expect(expectOk(await call("POST", `/v1/queues/${b.queueB}/call-next`, { token: owner, body: {} })).id).toBe(b1.id);
    expectOk(await call("POST", `/v1/tickets/${b1.id}/serve`, { token: owner }));
    testClock.set(t0 + 60_000 + 240_000);
    expectOk(await call("POST", `/v1/tickets/${b1.id}/complete`, { token: owner, body: {} }));
    expect(expectOk(await call("POST", `/v1/queues/${b.queueB}/call-next`, { token: owner, body: {} })).id).toBe(b2.id);
    expectOk(await call("POST", `/v1/tickets/${b2.id}/skip-absent`, { token: owner, body: { reason: "gone" } }));
    await settle(b.queueB);

    testClock.set(t0 + 600_000);
    const floor = expectOk(await call("GET", `/v1/locations/${b.locationId}/floor`, { token: b.clerk.token }));
    expect(floor.location).toMatchObject({ id: b.locationId });
    expect(typeof floor.location.name).toBe("string");
    const a = floor.queues.find((q: any) => q.id === b.queueA);
    expect(a.waiting).toEqual([
      {
        ticketId: vip.id,
        displayCode: vip.displayCode,
        name: "Jo VIP",
        joinedAt: "2026-03-20T09:01:00.000Z",
        waitedSeconds: 540,
        vip: true,
        appointmentAt: null,
        level: "ok",
      },
      {
        ticketId: first.id,
        displayCode: first.displayCode,
        name: "Léa Martin",
        joinedAt: "2026-03-20T09:00:00.000Z",
        waitedSeconds: 600,
        vip: false,
        appointmentAt: null,
        level: "ok",
      },
    ]);
    expect(a).toMatchObject({ targetWaitMinutes: null, level: "ok", longestWaitSeconds: 600 });
    const q = floor.queues.find((x: any) => x.id === b.queueB);
    expect(q.today).toEqual({ served: 1, noShows: 1, averageWaitSeconds: 180, averageServiceSeconds: 120 });
    expect(q.servedToday).toBe(1);
  });

  it("a target wait (PATCH /v1/business/queues/{id}) turns the line amber then red, and alerts when a desk is idle, on the test clock", async () => {
    const b = await branch();
    const owner = b.owner.token;
    expectError(
      await call("PATCH", `/v1/business/queues/${b.queueA}`, { token: owner, body: { targetWaitMinutes: 0 } }),
      400,
      "VALIDATION_ERROR",
    );
    const patched = expectOk(await call("PATCH", `/v1/business/queues/${b.queueA}`, { token: owner, body: { targetWaitMinutes: 10 } }));
    expect(patched.targetWaitMinutes).toBe(10);
    expect(expectOk(await call("GET", `/v1/queues/${b.queueA}`, { token: owner })).targetWaitMinutes).toBe(10);
    const t0 = Date.parse("2026-03-20T09:00:00.000Z");
    testClock.set(t0);
    const waiting = await walkIn(owner, b.queueA);
    const read = async () => expectOk(await call("GET", `/v1/locations/${b.locationId}/floor`, { token: b.clerk.token }));
    const lineA = (f: any) => f.queues.find((q: any) => q.id === b.queueA);

    testClock.set(t0 + 7 * 60_000);
    let f = await read();
    expect([lineA(f).level, lineA(f).waiting[0].level, f.alerts]).toEqual(["ok", "ok", []]);
    testClock.set(t0 + 7.5 * 60_000);
    f = await read();
    expect([lineA(f).level, lineA(f).waiting[0].level]).toEqual(["amber", "amber"]);
    // Red at the target; no desk is open yet: no alert.
    testClock.set(t0 + 10 * 60_000);
    f = await read();
    expect([lineA(f).level, f.alerts]).toEqual(["red", []]);
    // The clerk opens Guichet 1 (which calls from A) and does nothing: the alert names it.
    expectOk(await call("POST", `/v1/desks/${b.deskA.id}/open`, { token: b.clerk.token }));
    testClock.set(t0 + 11 * 60_000);
    f = await read();
    expect(f.alerts).toEqual([
      {
        queueId: b.queueA,
        ticketId: waiting.id,
        displayCode: waiting.displayCode,
        waitedSeconds: 660,
        targetWaitMinutes: 10,
        idleDesks: [{ id: b.deskA.id, name: "Guichet 1" }],
      },
    ]);
    // Called: the line is empty and the desk busy; no alert. Cleared target: never red.
    expectOk(await call("POST", `/v1/desks/${b.deskA.id}/call-next`, { token: b.clerk.token }));
    f = await read();
    expect([lineA(f).level, f.alerts]).toEqual(["ok", []]);
    expect(
      expectOk(await call("PATCH", `/v1/business/queues/${b.queueA}`, { token: owner, body: { targetWaitMinutes: null } }))
        .targetWaitMinutes,
    ).toBe(null);
  });

  it("a visitor who joined at 23:55 and still waits at 00:06 (Paris) is red, with the alert: the wait crosses midnight", async () => {
    const b = await branch();
    const owner = b.owner.token;
    expectOk(await call("PATCH", `/v1/locations/${b.locationId}`, { token: owner, body: { timezone: "Europe/Paris" } }));
    expectOk(await call("PATCH", `/v1/business/queues/${b.queueA}`, { token: owner, body: { targetWaitMinutes: 10 } }));
    expectOk(await call("POST", `/v1/desks/${b.deskA.id}/open`, { token: b.clerk.token }));
    // 23:55 in Paris (UTC+1 in March).
    const t0 = Date.parse("2026-03-20T22:55:00.000Z");
    testClock.set(t0);
    const waiting = await walkIn(owner, b.queueA);
    const read = async () => expectOk(await call("GET", `/v1/locations/${b.locationId}/floor`, { token: b.clerk.token }));
    const lineA = (f: any) => f.queues.find((q: any) => q.id === b.queueA);
    testClock.set(t0 + 8 * 60_000);
    let f = await read();
    expect([lineA(f).level, lineA(f).waiting[0].level, lineA(f).waiting[0].waitedSeconds]).toEqual(["amber", "amber", 480]);
    // 00:06 the next day.
    testClock.set(t0 + 11 * 60_000);
    f = await read();
    expect(lineA(f).waiting.map((w: any) => [w.ticketId, w.level, w.waitedSeconds])).toEqual([[waiting.id, "red", 660]]);
    expect([lineA(f).level, lineA(f).longestWaitSeconds]).toEqual(["red", 660]);
    expect(f.alerts.map((a: any) => [a.ticketId, a.waitedSeconds])).toEqual([[waiting.id, 660]]);
  });

  it("is refused to a member scoped to another location, and read by one scoped to this one", async () => {
    const b = await branch();
    const other = expectOk(
      await call("POST", "/v1/locations", {
        token: b.owner.token,
        body: { organizationId: b.organizationId, name: "Lyon", address: "1 rue de Lyon", latitude: 45.76, longitude: 4.83 },
      }),
      201,
    );
    const invite = async (locationIds: string[]) => {
      const user = await registerUser();
      expectOk(
        await call("POST", `/v1/organizations/${b.organizationId}/members`, {
          token: b.owner.token,
          body: { email: user.email, role: "manager", locationIds },
        }),
        202,
      );
      await acceptInvitation(user, b.organizationId);
      return user;
    };
    const elsewhere = await invite([other.id]);
    expectError(await call("GET", `/v1/locations/${b.locationId}/floor`, { token: elsewhere.token }), 404, "NOT_FOUND");
    const here = await invite([b.locationId]);
    expectOk(await call("GET", `/v1/locations/${b.locationId}/floor`, { token: here.token }));
  });
});
