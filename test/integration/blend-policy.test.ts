import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { bookAppointment } from "../helpers/booked-appointments";
import { testClock } from "../helpers/clock";
import { addMember, createOrganization, createQueueFixture, registerUser, walkIn, type QueueFixture } from "../helpers/fixtures";

// The blend policy per queue (docs/blend.md): GET/PUT, and the room applying it to call-next,
// positions and the waiting list, each ticket saying why in its placement.

const START = Date.parse("2026-06-10T10:30:00.000Z");
const MIN = 60_000;

async function clinic(): Promise<QueueFixture> {
  testClock.set(START - 60 * MIN);
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "healthcare" });
  return createQueueFixture(owner, org.id);
}

async function appointmentTicket(f: QueueFixture, startAt: number, language: "fr" | "en" = "en") {
  const apt = await bookAppointment({
    auth: { token: f.owner.token },
    serviceId: f.serviceId,
    locationId: f.locationId,
    startAt,
    language,
  });
  return expectOk(await call("POST", `/v1/appointments/${apt.id}/check-in`, { token: f.owner.token }), 201).ticket;
}

const blend = (f: QueueFixture, body: unknown) => call("PUT", `/v1/business/queues/${f.queueId}/blend`, { token: f.owner.token, body });
const waiting = async (f: QueueFixture) =>
  expectOk<any[]>(await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting`, { token: f.owner.token }));
const callNext = async (f: QueueFixture) => expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));

describe("blend policy", () => {
  it("answers the defaults, takes a policy from a manager, refuses bad values and an operator", async () => {
    const f = await clinic();
    const got = expectOk(await call("GET", `/v1/business/queues/${f.queueId}/blend`, { token: f.owner.token }));
    expect(got).toEqual({ queueId: f.queueId, isDefault: true, policy: { appointmentsFirstFromMinutes: 0, walkInMaxWaitMinutes: null } });
    const put = expectOk(await blend(f, { appointmentsFirstFromMinutes: 5, walkInMaxWaitMinutes: 30 }));
    expect(put).toEqual({ queueId: f.queueId, isDefault: false, policy: { appointmentsFirstFromMinutes: 5, walkInMaxWaitMinutes: 30 } });
    expectError(await blend(f, { walkInMaxWaitMinutes: 0 }), 400, "VALIDATION_ERROR", "walkInMaxWaitMinutes");
    expectError(await blend(f, { lateAction: "walk_in" }), 400, "VALIDATION_ERROR");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expectError(
      await call("PUT", `/v1/business/queues/${f.queueId}/blend`, { token: operator.token, body: {} }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectOk(await call("GET", `/v1/business/queues/${f.queueId}/blend`, { token: operator.token }));
    const stranger = await registerUser();
    expectError(await call("GET", `/v1/business/queues/${f.queueId}/blend`, { token: stranger.token }), 404, "NOT_FOUND");
  });

  it("an appointment checked in early waits behind walk-ins until appointmentsFirstFromMinutes before its time, then goes first", async () => {
    const f = await clinic();
    expectOk(await blend(f, { appointmentsFirstFromMinutes: 5 }));
    testClock.set(START - 20 * MIN);
    const w1 = await walkIn(f.owner, f.queueId);
    const apt = await appointmentTicket(f, START);
    const w2 = await walkIn(f.owner, f.queueId);
    expect(apt.placement).toMatchObject({ rule: "appointment_early" });
    expect(apt.placement.reason).toBe("Appointment at 10:30: early, goes ahead of walk-ins at 10:25");
    expect((await waiting(f)).map((t) => t.id)).toEqual([w1.id, w2.id, apt.id]);

    testClock.set(START - 5 * MIN);
    const line = await waiting(f);
    expect(line.map((t) => t.id)).toEqual([apt.id, w1.id, w2.id]);
    expect(line.map((t) => t.position)).toEqual([1, 2, 3]);
    expect(line[0].placement).toMatchObject({ rule: "appointment_due", reason: "Appointment at 10:30: ahead of walk-ins since 10:25" });
    expect(line[1].placement.rule).toBe("walk_in_arrival");
    const own = expectOk(await call("GET", `/v1/tickets/${w1.id}`, { token: f.owner.token }));
    expect(own).toMatchObject({ position: 2, placement: { rule: "walk_in_arrival" } });
    expect((await callNext(f)).id).toBe(apt.id);
    expect((await callNext(f)).id).toBe(w1.id);
  });

  it("a walk-in past the cap goes ahead of a due appointment, and says so in its language", async () => {
    const f = await clinic();
    expectOk(await blend(f, { appointmentsFirstFromMinutes: 0, walkInMaxWaitMinutes: 30 }));
    testClock.set(START - 25 * MIN);
    const w = await walkIn(f.owner, f.queueId);
    testClock.set(START - 10 * MIN);
    const apt = await appointmentTicket(f, START, "fr");
    testClock.set(START + 6 * MIN);
    const line = await waiting(f);
    expect(line.map((t) => t.id)).toEqual([w.id, apt.id]);
    expect(line[0].placement).toMatchObject({ rule: "walk_in_over_cap", since: "2026-06-10T10:35:00.000Z" });
    expect(line[1].placement.reason).toBe("Rendez-vous de 10 h 30 : avant les personnes sans rendez-vous depuis 10 h 30");
    expect((await callNext(f)).id).toBe(w.id);
    expect((await callNext(f)).id).toBe(apt.id);
  });

  it("without a cap a due appointment passes every walk-in; VIP tickets stay first", async () => {
    const f = await clinic();
    testClock.set(START - 2 * MIN);
    const w = await walkIn(f.owner, f.queueId);
    const apt = await appointmentTicket(f, START);
    const vip = await walkIn(f.owner, f.queueId, { vip: true });
    testClock.set(START);
    const line = await waiting(f);
    expect(line.map((t) => t.id)).toEqual([vip.id, apt.id, w.id]);
    expect(line[0].placement.rule).toBe("priority");
  });

  it("the widget's visitor ticket carries kind and placement", async () => {
    const f = await clinic();
    testClock.set(START - 2 * MIN);
    const key = await (await import("../helpers/fixtures")).createApiKey(f.owner, f.organizationId, ["widget"]);
    const joined = expectOk(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: key.key, body: {} }), 201);
    expect(joined).toMatchObject({ kind: "walk_in", appointmentAt: null, placement: { rule: "walk_in_arrival" } });
    const visitor = expectOk(
      await call("GET", `/v1/widget/tickets/${joined.id}`, { apiKey: key.key, headers: { "X-Ticket-Token": joined.ticketToken } }),
    );
    expect(visitor).toMatchObject({ kind: "walk_in", placement: { rule: "walk_in_arrival" } });
  });

  it("the board's next codes and the cursor pages of the waiting line follow the blended order", async () => {
    const f = await clinic();
    testClock.set(START - 5 * MIN);
    const w1 = await walkIn(f.owner, f.queueId);
    const w2 = await walkIn(f.owner, f.queueId);
    const w3 = await walkIn(f.owner, f.queueId);
    const apt = await appointmentTicket(f, START);
    testClock.set(START);
    expect((await waiting(f)).map((t) => t.id)).toEqual([apt.id, w1.id, w2.id, w3.id]);

    const key = await (await import("../helpers/fixtures")).createApiKey(f.owner, f.organizationId, ["widget"]);
    const board = expectOk(await call("GET", `/v1/widget/organization/${f.organizationId}/display-board`, { apiKey: key.key }));
    const ours = board.queues.find((q: any) => q.queueId === f.queueId);
    expect(ours.nextWaiting).toEqual([apt.displayCode, w1.displayCode, w2.displayCode, w3.displayCode]);

    const page = async (query: string) => {
      const res = await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting&${query}`, { token: f.owner.token });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as { data: any[]; meta: any };
    };
    const p1 = await page("limit=2");
    expect(p1.data.map((t) => t.id)).toEqual([apt.id, w1.id]);
    const p2 = await page(`limit=2&startingAfter=${p1.meta.nextCursor}`);
    expect(p2.data.map((t) => [t.id, t.position])).toEqual([
      [w2.id, 3],
      [w3.id, 4],
    ]);
    expect(p2.meta.hasMore).toBe(false);
    const back = await page(`limit=2&endingBefore=${w2.id}`);
    expect(back.data.map((t) => [t.id, t.position])).toEqual([
      [apt.id, 1],
      [w1.id, 2],
    ]);
    // A cursor on a ticket that left the line (called) still reads from its place in the blend.
    expect((await callNext(f)).id).toBe(apt.id);
    const after = await page(`limit=5&startingAfter=${apt.id}`);
    expect(after.data.map((t) => t.id)).toEqual([w1.id, w2.id, w3.id]);
  });

  it("a walk-in's estimate counts the appointment checked in early that will pass it before its turn", async () => {
    const f = await clinic();
    // 5 min a ticket (the queue's default, no history yet), one desk.
    testClock.set(START - 20 * MIN);
    const apt = await appointmentTicket(f, START);
    const walkIns = [];
    for (let i = 0; i < 4; i++) walkIns.push(await walkIn(f.owner, f.queueId));
    const line = await waiting(f);
    expect(line.map((t) => t.id)).toEqual([...walkIns.map((w) => w.id), apt.id]);
    // The 4th walk-in's turn (10:30) is when the appointment goes ahead of walk-ins: one more before it.
    expect(line.map((t) => [t.position, t.estimatedWaitMinutes])).toEqual([
      [1, 5],
      [2, 10],
      [3, 15],
      [4, 25],
      [5, 25],
    ]);
    const own = expectOk(await call("GET", `/v1/tickets/${walkIns[3]!.id}`, { token: f.owner.token }));
    expect(own).toMatchObject({ position: 4, estimatedWaitMinutes: 25 });
    // A newcomer waits behind the four walk-ins, and the appointment passes it too.
    const queue = expectOk(await call("GET", `/v1/queues/${f.queueId}`, { token: f.owner.token }));
    expect(queue).toMatchObject({ waitingCount: 5, estimatedWaitMinutes: 25 });
  });
});
