import { describe, expect, it } from "vitest";
import { displayCode, letterAt, nextLetter } from "../../src/domain/display-code";
import { allows, crossesCapacityWarning } from "../../src/domain/tickets";
import { DEFAULT_MINUTES_PER_TICKET, estimatedWaitMinutes, longWaitChange, minutesPerTicket } from "../../src/domain/wait-estimate";

const MIN = 60_000;

describe("display codes", () => {
  it("letters run A..Z then AA, and the first free one is taken", () => {
    expect([letterAt(0), letterAt(25), letterAt(26), letterAt(27), letterAt(701), letterAt(702)]).toEqual([
      "A",
      "Z",
      "AA",
      "AB",
      "ZZ",
      "AAA",
    ]);
    expect(nextLetter(["A", "C"])).toBe("B");
    expect(nextLetter([])).toBe("A");
  });
  it("pads to three digits and grows beyond", () => {
    expect(displayCode("A", 42)).toBe("A-042");
    expect(displayCode("B", 1234)).toBe("B-1234");
  });
});

describe("transitions", () => {
  it("allows only the table's transitions", () => {
    expect(allows("serve", "called")).toBe(true);
    expect(allows("serve", "waiting")).toBe(false);
    expect(allows("recover", "expired")).toBe(true);
    expect(allows("cancel", "serving")).toBe(false);
  });
  it("warns once when crossing 80% of capacity", () => {
    expect(crossesCapacityWarning(7, 8, 10)).toBe(true);
    expect(crossesCapacityWarning(8, 9, 10)).toBe(false);
    expect(crossesCapacityWarning(1, 2, null)).toBe(false);
  });
});

describe("wait estimate", () => {
  it("starts a long-wait episode at 60 minutes and ends it below", () => {
    expect(longWaitChange(59, false)).toBeNull();
    expect(longWaitChange(60, false)).toBe("start");
    expect(longWaitChange(90, true)).toBeNull();
    expect(longWaitChange(59, true)).toBe("end");
  });
  const at = 10 * 60 * MIN;
  it("defaults to 5 minutes a ticket before any history", () => {
    expect(minutesPerTicket([], at)).toBe(DEFAULT_MINUTES_PER_TICKET);
    expect(minutesPerTicket([{ at: at - MIN, operatorId: "a" }], at)).toBe(DEFAULT_MINUTES_PER_TICKET);
  });
  it("averages each operator's intervals and divides by operators active in the last hour", () => {
    const calls = [
      { at: at - 20 * MIN, operatorId: "a" },
      { at: at - 14 * MIN, operatorId: "a" },
      { at: at - 8 * MIN, operatorId: "a" },
      { at: at - 10 * MIN, operatorId: "b" },
    ];
    expect(minutesPerTicket(calls, at)).toBe(3);
    expect(estimatedWaitMinutes(4, 3)).toBe(12);
  });
  it("ignores gaps over an hour (breaks)", () => {
    expect(
      minutesPerTicket(
        [
          { at: at - 3 * 60 * MIN, operatorId: "a" },
          { at: at - MIN, operatorId: "a" },
        ],
        at,
      ),
    ).toBe(DEFAULT_MINUTES_PER_TICKET);
  });
});
