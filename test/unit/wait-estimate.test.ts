import { describe, expect, it } from "vitest";
import {
  DEFAULT_MINUTES_PER_TICKET,
  estimatedWaitMinutes,
  estimatedWaitRange,
  estimateSpan,
  minutesPerTicket,
  serviceIntervals,
  type CallRecord,
} from "../../src/domain/wait-estimate";

const SEC = 1000;
const MIN = 60 * SEC;
const START = Date.parse("2026-03-02T09:00:00.000Z");

/** A recorded sequence: [offset from START in seconds, operator] per call. */
function recorded(sequence: ReadonlyArray<readonly [number, string]>): CallRecord[] {
  return sequence.map(([seconds, operatorId]) => ({ at: START + seconds * SEC, operatorId }));
}

describe("the estimate on recorded sequences", () => {
  it("two quick calls right after the first do not bring the wait to 0 (the reported '~0 min' with 3 waiting)", () => {
    // Opening: the operator calls, the first visitor is absent, two quick calls follow.
    const calls = recorded([
      [0, "a"],
      [4, "a"],
      [9, "a"],
    ]);
    const at = START + 10 * SEC;
    expect(serviceIntervals(calls)).toEqual([]);
    expect(minutesPerTicket(calls, at)).toBe(DEFAULT_MINUTES_PER_TICKET);
    expect(estimatedWaitMinutes(3, minutesPerTicket(calls, at))).toBe(15);
  });

  it("quick skips, no-shows and recalls among real services are not service intervals", () => {
    // 4-minute services, each followed by a skip 5 s later, a recall 12 s later or a no-show 20 s later.
    const calls = recorded([
      [0, "a"],
      [240, "a"],
      [245, "a"], // skip
      [485, "a"],
      [497, "a"], // recall
      [737, "a"],
      [757, "a"], // no-show
      [997, "a"],
    ]);
    const at = START + 1000 * SEC;
    expect(serviceIntervals(calls).map((ms) => ms / SEC)).toEqual([240, 240, 240, 240]);
    expect(minutesPerTicket(calls, at)).toBe(4);
    expect(estimatedWaitMinutes(3, minutesPerTicket(calls, at))).toBe(12);
  });

  it("a run of only quick calls keeps a floor: anyone waiting sees at least a minute", () => {
    const calls = recorded(Array.from({ length: 12 }, (_, i) => [i * 31, "a"] as const));
    const at = START + 400 * SEC;
    const perTicket = minutesPerTicket(calls, at);
    expect(perTicket).toBeGreaterThanOrEqual(0.5);
    expect(estimatedWaitMinutes(1, perTicket)).toBeGreaterThanOrEqual(1);
    expect(estimatedWaitMinutes(1, 0)).toBe(1);
    expect(estimatedWaitMinutes(3, 0)).toBe(2); // 3 × the 0.5-minute floor, rounded
    expect(estimatedWaitMinutes(0, 7)).toBe(0);
  });

  it("a lunch break (a gap over an hour) is ignored, and one long interval does not move the median", () => {
    const calls = recorded([
      [0, "a"],
      [300, "a"],
      [600, "a"],
      [900, "a"],
      [900 + 75 * 60, "a"], // back from a 75-minute break
      [900 + 75 * 60 + 300, "a"],
      [900 + 75 * 60 + 300 + 50 * 60, "a"], // a 50-minute phone call: kept, but the median holds
      [900 + 75 * 60 + 300 + 50 * 60 + 300, "a"],
    ]);
    const last = START + (900 + 75 * 60 + 300 + 50 * 60 + 300) * SEC;
    expect(serviceIntervals(calls).map((ms) => ms / MIN)).toEqual([5, 5, 5, 5, 50, 5]);
    expect(minutesPerTicket(calls, last + MIN)).toBe(5);
  });

  it("two operators divide the time; one who stopped calling an hour ago no longer does", () => {
    // a and b each take 6 minutes a ticket, in parallel.
    const calls = recorded([
      [0, "a"],
      [180, "b"],
      [360, "a"],
      [540, "b"],
      [720, "a"],
      [900, "b"],
    ]);
    const at = START + 960 * SEC;
    expect(minutesPerTicket(calls, at)).toBe(3);
    expect(estimatedWaitMinutes(4, minutesPerTicket(calls, at))).toBe(12);
    // b leaves after 900 s; a goes on alone for over an hour.
    const alone = [...calls, ...recorded(Array.from({ length: 12 }, (_, i) => [1080 + i * 360, "a"] as const))];
    const later = START + (1080 + 11 * 360 + 60) * SEC;
    expect(minutesPerTicket(alone, later)).toBe(6);
  });

  it("the range brackets the estimate: quartiles of the recent services, the default ± 40 % before any", () => {
    const calls = recorded([
      [0, "a"],
      [120, "a"], // 2 min
      [360, "a"], // 4 min
      [720, "a"], // 6 min
      [1200, "a"], // 8 min
      [1800, "a"], // 10 min
    ]);
    const at = START + 1860 * SEC;
    expect(minutesPerTicket(calls, at)).toBe(6);
    expect(estimatedWaitRange(2, calls, at)).toEqual({ low: 8, high: 16 });
    expect(estimatedWaitMinutes(2, minutesPerTicket(calls, at))).toBe(12);
    expect(estimatedWaitRange(2, [], at)).toEqual({ low: 6, high: 14 });
    expect(estimatedWaitRange(0, calls, at)).toEqual({ low: 0, high: 0 });
    const quick = recorded([
      [0, "a"],
      [3, "a"],
    ]);
    expect(estimatedWaitRange(1, quick, START + 4 * SEC).low).toBeGreaterThanOrEqual(1);
  });

  it("before 3 timed services the queue's default fills in: one odd first interval does not set the pace", () => {
    const opening = recorded([
      [0, "a"],
      [60, "a"], // a 1-minute first service
    ]);
    const at = START + 70 * SEC;
    // Median of [1, 8, 8]: the default (8) holds until history outweighs it.
    expect(minutesPerTicket(opening, at, 8)).toBe(8);
    expect(minutesPerTicket([], at, 8)).toBe(8);
    expect(estimatedWaitRange(3, [], at, 8)).toEqual({ low: 14, high: 34 });
    const three = recorded([
      [0, "a"],
      [120, "a"],
      [240, "a"],
      [360, "a"],
    ]);
    expect(minutesPerTicket(three, START + 400 * SEC, 8)).toBe(2);
    // Two operators share the default too: each takes 10 minutes, in parallel.
    const pair = recorded([
      [0, "a"],
      [5, "b"],
    ]);
    expect(minutesPerTicket(pair, START + 10 * SEC, 10)).toBe(5);
  });

  it("quick skips between two operators' services, then a break: never below a minute for anyone waiting", () => {
    // a and b serve 6 minutes each; a skips twice within seconds; then both stop for 70 minutes.
    const calls = recorded([
      [0, "a"],
      [60, "b"],
      [360, "a"],
      [363, "a"], // skip
      [366, "a"], // skip
      [420, "b"],
      [726, "a"],
      [780, "b"],
      [780 + 70 * 60, "a"], // back from the break
      [780 + 70 * 60 + 4, "a"], // no-show, next
    ]);
    expect(serviceIntervals(calls).map((ms) => ms / MIN)).toEqual([6, 6, 6, 6]);
    const at = START + (780 + 70 * 60 + 10) * SEC;
    // Only a called in the last hour: 6 minutes a ticket, not 3.
    expect(minutesPerTicket(calls, at)).toBe(6);
    const range = estimatedWaitRange(1, calls, at);
    expect(range.low).toBeGreaterThanOrEqual(1);
    expect(estimatedWaitMinutes(1, minutesPerTicket(calls, at))).toBe(6);
    for (let position = 1; position <= 20; position++) {
      expect(estimatedWaitMinutes(position, minutesPerTicket(calls, at))).toBeGreaterThan(0);
      expect(estimatedWaitRange(position, calls, at).low).toBeGreaterThan(0);
    }
  });
});

describe("the span an estimate holds", () => {
  it("is bounded by the calls entering and leaving the hour, and every estimate within it is the same", () => {
    const calls = recorded([
      [0, "a"],
      [600, "b"],
      [1500, "b"],
      [4000, "c"],
    ]);
    const at = START + 3700 * SEC;
    const span = estimateSpan(calls, at);
    // a's call left the hour at 3600 s (two operators became one); c's call joins at 4000 s (two again).
    expect(span).toEqual({ from: START + 3600 * SEC, until: START + 4000 * SEC });
    const answer = (t: number) => [minutesPerTicket(calls, t, 5), estimatedWaitRange(4, calls, t, 5)];
    for (const t of [span.from, at, span.until - 1]) expect(answer(t)).toEqual(answer(at));
    expect(answer(span.from - 1)).not.toEqual(answer(at));
    expect(answer(span.until)).not.toEqual(answer(at));
  });

  it("is all time without calls, and open-ended after the last one leaves the hour", () => {
    expect(estimateSpan([], START)).toEqual({ from: -Infinity, until: Infinity });
    expect(estimateSpan(recorded([[0, "a"]]), START + 2 * 3600 * SEC)).toEqual({ from: START + 3600 * SEC, until: Infinity });
  });
});
