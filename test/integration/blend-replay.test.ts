import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { bookAppointment } from "../helpers/booked-appointments";
import { settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { addMember, createOrganization, createQueueFixture, registerUser, walkIn, type QueueFixture } from "../helpers/fixtures";

// POST /v1/business/queues/{id}/blend/replay (docs/blend.md, "Replay"): a recorded morning
// replayed under the policy in force gives back its own order and figures; under other
// policies the figures hand-checked below.

const T0 = Date.parse("2026-06-10T10:30:00.000Z"); // the appointment's time
const MIN = 60_000;
const at = (minutes: number) => T0 + minutes * MIN;

async function clinic(): Promise<QueueFixture> {
  testClock.set(at(-60));
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "healthcare" });
  return createQueueFixture(owner, org.id);
}

/** Calls the next ticket at `minute`, serves it, and completes it at `doneAt`. */
async function serveNext(f: QueueFixture, minute: number, doneAt: number): Promise<string> {
  testClock.set(at(minute));
  const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
  expectOk(await call("POST", `/v1/tickets/${t.id}/serve`, { token: f.owner.token }));
  testClock.set(at(doneAt));
  expectOk(await call("POST", `/v1/tickets/${t.id}/complete`, { token: f.owner.token }));
  return t.id;
}

/**
 * The recorded morning (default policy: appointments first at their time, no cap), one desk:
 *   09:50 W1 joins · 09:55 W2 joins · 10:00 A (10:30) checks in · 10:10 W3 joins
 *   10:05 W1 called (done 10:18) · 10:20 W2 (done 10:30) · 10:35 A, due, ahead of W3 (done 10:42) · 10:45 W3 (done 10:50)
 */
async function recordedMorning(f: QueueFixture) {
  testClock.set(at(-40));
  const w1 = await walkIn(f.owner, f.queueId);
  testClock.set(at(-35));
  const w2 = await walkIn(f.owner, f.queueId);
  testClock.set(at(-30));
  const booked = await bookAppointment({ auth: { token: f.owner.token }, serviceId: f.serviceId, locationId: f.locationId, startAt: T0 });
  const a = expectOk(await call("POST", `/v1/appointments/${booked.id}/check-in`, { token: f.owner.token }), 201).ticket;
  testClock.set(at(-20));
  const w3 = await walkIn(f.owner, f.queueId);
  const order = [await serveNext(f, -25, -12), await serveNext(f, -10, 0), await serveNext(f, 5, 12), await serveNext(f, 15, 20)];
  await settle(f.queueId);
  return { w1: w1.id, w2: w2.id, a: a.id, w3: w3.id, order };
}

const replay = (f: QueueFixture, body: unknown, token = f.owner.token) =>
  call("POST", `/v1/business/queues/${f.queueId}/blend/replay`, { token, body });

const DAY = { from: "2026-06-10", to: "2026-06-10" };

describe("blend replay", () => {
  it("replays a recorded morning: under the policy in force, the day's own order and figures; under others, what the rule says", async () => {
    const f = await clinic();
    const m = await recordedMorning(f);
    expect(m.order).toEqual([m.w1, m.w2, m.a, m.w3]);
    testClock.set(at(60));

    const same = expectOk(await replay(f, { policy: {}, ...DAY }));
    expect(same).toMatchObject({
      queueId: f.queueId,
      from: "2026-06-10T00:00:00.000Z",
      to: "2026-06-11T00:00:00.000Z",
      policyInForce: { appointmentsFirstFromMinutes: 0, walkInMaxWaitMinutes: null },
    });
    // What happened: walk-ins waited 15, 25 and 35 min; A waited 5 min past its time.
    expect(same.happened.walkIns).toEqual({ count: 3, meanWaitMinutes: 25, p90WaitMinutes: 35, longestWaitMinutes: 35 });
    expect(same.happened.appointments).toEqual({ count: 1, meanWaitMinutes: 5, p90WaitMinutes: 5, longestWaitMinutes: 5, calledLate: 1 });
    expect(same.happened.calls.map((c: any) => c.ticketId)).toEqual(m.order);
    // The policy in force replays the same calls at the same moments, with the same figures.
    expect(same.replayed.calls.map((c: any) => [c.ticketId, c.calledAt])).toEqual(
      same.happened.calls.map((c: any) => [c.ticketId, c.calledAt]),
    );
    expect(same.replayed.calls.map((c: any) => c.rule)).toEqual([
      "walk_in_arrival",
      "walk_in_arrival",
      "appointment_due",
      "walk_in_arrival",
    ]);
    expect(same.replayed.walkIns).toEqual(same.happened.walkIns);
    expect(same.replayed.appointments).toEqual(same.happened.appointments);

    // A 20 min cap: at 10:35 W3 has waited 25 min, over the cap, and goes before A; its 5 min
    // service makes the desk free at 10:40, but it called next at 10:45 that day: A at 10:45.
    const capped = expectOk(await replay(f, { policy: { walkInMaxWaitMinutes: 20 }, ...DAY }));
    expect(capped.policy).toEqual({ appointmentsFirstFromMinutes: 0, walkInMaxWaitMinutes: 20 });
    expect(capped.replayed.calls.map((c: any) => [c.ticketId, c.calledAt, c.waitMinutes, c.rule])).toEqual([
      [m.w1, "2026-06-10T10:05:00.000Z", 15, "walk_in_arrival"],
      [m.w2, "2026-06-10T10:20:00.000Z", 25, "walk_in_over_cap"],
      [m.w3, "2026-06-10T10:35:00.000Z", 25, "walk_in_over_cap"],
      [m.a, "2026-06-10T10:45:00.000Z", 15, "appointment_due"],
    ]);
    expect(capped.replayed.walkIns).toEqual({ count: 3, meanWaitMinutes: 21.7, p90WaitMinutes: 25, longestWaitMinutes: 25 });
    expect(capped.replayed.appointments).toEqual({
      count: 1,
      meanWaitMinutes: 15,
      p90WaitMinutes: 15,
      longestWaitMinutes: 15,
      calledLate: 1,
    });
    expect(capped.happened).toEqual(same.happened);

    // Appointments first from 30 min before: A goes at 10:05 (before its time: no wait, not
    // late); its 7 min leave the desk's 10:20 call as it was; W1, W2, W3 then wait 30, 40, 35.
    const early = expectOk(await replay(f, { policy: { appointmentsFirstFromMinutes: 30 }, ...DAY }));
    expect(early.replayed.calls.map((c: any) => [c.ticketId, c.calledAt])).toEqual([
      [m.a, "2026-06-10T10:05:00.000Z"],
      [m.w1, "2026-06-10T10:20:00.000Z"],
      [m.w2, "2026-06-10T10:35:00.000Z"],
      [m.w3, "2026-06-10T10:45:00.000Z"],
    ]);
    expect(early.replayed.walkIns).toEqual({ count: 3, meanWaitMinutes: 35, p90WaitMinutes: 40, longestWaitMinutes: 40 });
    expect(early.replayed.appointments).toEqual({ count: 1, meanWaitMinutes: 0, p90WaitMinutes: 0, longestWaitMinutes: 0, calledLate: 0 });

    // The queue's own policy is untouched.
    const kept = expectOk(await call("GET", `/v1/business/queues/${f.queueId}/blend`, { token: f.owner.token }));
    expect(kept.isDefault).toBe(true);
  });

  it("a period without calls replays nothing; instants are taken as given", async () => {
    const f = await clinic();
    await recordedMorning(f);
    testClock.set(at(60));
    const empty = expectOk(await replay(f, { policy: {}, from: "2026-06-09", to: "2026-06-09" }));
    expect(empty.happened.walkIns).toEqual({ count: 0, meanWaitMinutes: null, p90WaitMinutes: null, longestWaitMinutes: null });
    expect(empty.replayed.calls).toEqual([]);
    // 09:52 to noon: W1 (09:50) is left out.
    const part = expectOk(await replay(f, { policy: {}, from: "2026-06-10T09:52:00Z", to: "2026-06-10T12:00:00+00:00" }));
    expect(part.from).toBe("2026-06-10T09:52:00.000Z");
    expect(part.happened.calls).toHaveLength(3);
    expect(part.replayed.walkIns.count).toBe(2);
  });

  it("refuses bad input with its field, an operator, and another organization", async () => {
    const f = await clinic();
    expectError(await replay(f, { policy: {}, from: "yesterday", to: "2026-06-10" }), 400, "VALIDATION_ERROR", "from");
    expectError(await replay(f, { policy: {}, from: "2026-06-10", to: "2026-06-09" }), 400, "VALIDATION_ERROR", "to");
    expectError(await replay(f, { policy: {}, from: "2026-05-01", to: "2026-06-10" }), 400, "VALIDATION_ERROR", "to");
    expectError(await replay(f, { policy: { walkInMaxWaitMinutes: 0 }, ...DAY }), 400, "VALIDATION_ERROR", "policy.walkInMaxWaitMinutes");
    expectError(await replay(f, { policy: { lateAction: "walk_in" }, ...DAY }), 400, "VALIDATION_ERROR");
    expectError(await replay(f, { ...DAY }), 400, "VALIDATION_ERROR", "policy");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expectError(await replay(f, { policy: {}, ...DAY }, operator.token), 403, "AUTHORIZATION_ERROR");
    const stranger = await registerUser();
    expectError(await replay(f, { policy: {}, ...DAY }, stranger.token), 404, "NOT_FOUND");
  });
});
