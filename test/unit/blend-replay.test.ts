import { describe, expect, it } from "vitest";
import { recordedOutcome, replayBlend, type RecordedTicket } from "../../src/domain/blend-replay";

// The replay's desks (src/domain/blend-replay.ts): each calls as often as it did, no earlier
// than it did and no earlier than the end of the service it would have been giving.

const MIN = 60_000;
const walkIn = (n: number, joined: number, called: number, serviceMin: number, desk = "usr_a"): RecordedTicket => ({
  id: `tkt_${n}`,
  displayCode: `A-00${n}`,
  lane: 1,
  orderKey: n,
  kind: "walk_in",
  appointmentAt: null,
  late: false,
  joinedAt: joined * MIN,
  calledAt: called * MIN,
  calledBy: desk,
  serviceMs: serviceMin * MIN,
});
const appointment = (n: number, joined: number, time: number, called: number, serviceMin: number, desk = "usr_a"): RecordedTicket => ({
  ...walkIn(n, joined, called, serviceMin, desk),
  kind: "appointment",
  appointmentAt: time * MIN,
});

describe("blend replay", () => {
  it("a longer service moved earlier pushes the desk's next call back", () => {
    // Recorded (by arrival): W1 at 0 (2 min), A (time 10) at 5 (20 min), W2 at 30 (2 min).
    const day = [walkIn(1, 0, 0, 2), appointment(2, 0, 10, 5, 20), walkIn(3, 0, 30, 2)];
    expect(recordedOutcome(day).calls.map((c) => c.ticketId)).toEqual(["tkt_1", "tkt_2", "tkt_3"]);
    // Appointments first from 10 min before: A at 0 (20 min: the desk is free at 20, not 5), W1 at 20, W3 at 30.
    const r = replayBlend(day, { appointmentsFirstFromMinutes: 10, walkInMaxWaitMinutes: null });
    expect(r.calls.map((c) => [c.ticketId, c.calledAt / MIN])).toEqual([
      ["tkt_2", 0],
      ["tkt_1", 20],
      ["tkt_3", 30],
    ]);
    expect(r.walkIns).toEqual({ count: 2, meanWaitMinutes: 25, p90WaitMinutes: 30, longestWaitMinutes: 30 });
  });

  it("two desks: the one free first calls first; a desk waits for an arrival", () => {
    const day = [walkIn(1, 0, 0, 5, "usr_a"), walkIn(2, 1, 1, 5, "usr_b"), walkIn(3, 12, 12, 5, "usr_a")];
    const r = replayBlend(day, { appointmentsFirstFromMinutes: 0, walkInMaxWaitMinutes: null });
    expect(r.calls.map((c) => [c.ticketId, c.calledAt / MIN])).toEqual([
      ["tkt_1", 0],
      ["tkt_2", 1],
      ["tkt_3", 12],
    ]);
    expect(r).toEqual({ ...recordedOutcome(day), calls: r.calls });
  });
});
