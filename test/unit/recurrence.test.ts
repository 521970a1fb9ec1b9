import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  expandOccurrences,
  isValidTimeZone,
  MAX_OCCURRENCES,
  wallTimeAt,
  zonedWallTimeToUtc,
  type RecurrencePattern,
  type RecurringEvent,
} from "../../src/domain/recurrence";

const HOUR = 3_600_000;
const t = (s: string) => Date.parse(s);
const isoList = (occ: { occurrenceStart: number }[]) => occ.map((o) => new Date(o.occurrenceStart).toISOString());

function event(
  start: string,
  end: string,
  recurrencePattern: RecurrencePattern | null,
  recurrenceEndAt: number | null = null,
): RecurringEvent {
  return { id: "evt_test", startAt: t(start), endAt: t(end), recurrencePattern, recurrenceEndAt };
}

describe("zonedWallTimeToUtc", () => {
  it("reads ordinary wall times with the offset in force", () => {
    expect(zonedWallTimeToUtc(2026, 1, 15, 9, 0, 0, "Europe/Paris")).toBe(t("2026-01-15T08:00:00Z"));
    expect(zonedWallTimeToUtc(2026, 7, 15, 9, 0, 0, "Europe/Paris")).toBe(t("2026-07-15T07:00:00Z"));
    expect(zonedWallTimeToUtc(2026, 7, 15, 9, 0, 0, "UTC")).toBe(t("2026-07-15T09:00:00Z"));
    expect(zonedWallTimeToUtc(2026, 7, 15, 9, 0, 0, "Asia/Kolkata")).toBe(t("2026-07-15T03:30:00Z"));
  });

  it("shifts a time skipped by spring-forward forward by the gap", () => {
    // Paris 2026-03-29 02:30 does not exist: read as 03:30 CEST.
    expect(zonedWallTimeToUtc(2026, 3, 29, 2, 30, 0, "Europe/Paris")).toBe(t("2026-03-29T01:30:00Z"));
    // New York 2026-03-08 02:30 does not exist: read as 03:30 EDT.
    expect(zonedWallTimeToUtc(2026, 3, 8, 2, 30, 0, "America/New_York")).toBe(t("2026-03-08T07:30:00Z"));
  });

  it("resolves a time read twice at fall-back to its first occurrence", () => {
    expect(zonedWallTimeToUtc(2026, 10, 25, 2, 30, 0, "Europe/Paris")).toBe(t("2026-10-25T00:30:00Z"));
    expect(zonedWallTimeToUtc(2026, 11, 1, 1, 30, 0, "America/New_York")).toBe(t("2026-11-01T05:30:00Z"));
  });

  it("round-trips with wallTimeAt", () => {
    const w = wallTimeAt(t("2026-07-15T07:00:00.250Z"), "Europe/Paris");
    expect(w).toEqual({ year: 2026, month: 7, day: 15, hour: 9, minute: 0, second: 0, millisecond: 250 });
  });

  it("tells valid IANA names from others", () => {
    expect(isValidTimeZone("Europe/Paris")).toBe(true);
    expect(isValidTimeZone("UTC")).toBe(true);
    expect(isValidTimeZone("Mars/Olympus")).toBe(false);
  });
});

describe("expandOccurrences: DST keeps the local wall-clock time", () => {
  it("weekly 09:00 in Paris across the March change: 08:00Z then 07:00Z", () => {
    const e = event("2026-03-16T08:00:00Z", "2026-03-16T16:00:00Z", "weekly");
    const occ = expandOccurrences(e, t("2026-03-16T00:00:00Z"), t("2026-04-07T00:00:00Z"), "Europe/Paris");
    expect(isoList(occ)).toEqual([
      "2026-03-16T08:00:00.000Z",
      "2026-03-23T08:00:00.000Z",
      "2026-03-30T07:00:00.000Z",
      "2026-04-06T07:00:00.000Z",
    ]);
    // 09:00–17:00 local stays 09:00–17:00 local.
    expect(occ[2]!.occurrenceEnd).toBe(t("2026-03-30T15:00:00Z"));
  });

  it("weekly 09:00 in Paris across the October change: 07:00Z then 08:00Z", () => {
    const e = event("2026-10-19T07:00:00Z", "2026-10-19T08:00:00Z", "weekly");
    const occ = expandOccurrences(e, t("2026-10-01T00:00:00Z"), t("2026-11-03T00:00:00Z"), "Europe/Paris");
    expect(isoList(occ)).toEqual(["2026-10-19T07:00:00.000Z", "2026-10-26T08:00:00.000Z", "2026-11-02T08:00:00.000Z"]);
  });

  it("weekly 09:00 in New York across both changes", () => {
    const spring = event("2026-03-02T14:00:00Z", "2026-03-02T15:00:00Z", "weekly");
    expect(isoList(expandOccurrences(spring, t("2026-03-01T00:00:00Z"), t("2026-03-10T00:00:00Z"), "America/New_York"))).toEqual([
      "2026-03-02T14:00:00.000Z",
      "2026-03-09T13:00:00.000Z",
    ]);
    const fall = event("2026-10-26T13:00:00Z", "2026-10-26T14:00:00Z", "weekly");
    expect(isoList(expandOccurrences(fall, t("2026-10-20T00:00:00Z"), t("2026-11-03T00:00:00Z"), "America/New_York"))).toEqual([
      "2026-10-26T13:00:00.000Z",
      "2026-11-02T14:00:00.000Z",
    ]);
  });

  it("daily across the March change in Paris", () => {
    const e = event("2026-03-27T08:00:00Z", "2026-03-27T16:00:00Z", "daily");
    const occ = expandOccurrences(e, t("2026-03-27T00:00:00Z"), t("2026-03-31T00:00:00Z"), "Europe/Paris");
    expect(isoList(occ)).toEqual([
      "2026-03-27T08:00:00.000Z",
      "2026-03-28T08:00:00.000Z",
      "2026-03-29T07:00:00.000Z",
      "2026-03-30T07:00:00.000Z",
    ]);
  });

  it("keeps the wall-clock length: a 22:00–06:00 night shift lasts 7 h on the spring-forward night", () => {
    const e = event("2026-03-27T21:00:00Z", "2026-03-28T05:00:00Z", "daily");
    const occ = expandOccurrences(e, t("2026-03-28T12:00:00Z"), t("2026-03-29T12:00:00Z"), "Europe/Paris");
    expect(occ).toHaveLength(1);
    expect(occ[0]!.occurrenceStart).toBe(t("2026-03-28T21:00:00Z"));
    expect(occ[0]!.occurrenceEnd).toBe(t("2026-03-29T04:00:00Z"));
  });

  it("an occurrence whose wall time falls in a DST gap is shifted forward", () => {
    const e = event("2026-03-27T01:30:00Z", "2026-03-27T02:00:00Z", "daily"); // 02:30–03:00 Paris
    const occ = expandOccurrences(e, t("2026-03-29T00:00:00Z"), t("2026-03-30T00:00:00Z"), "Europe/Paris");
    expect(occ).toHaveLength(1);
    expect(occ[0]!.occurrenceStart).toBe(t("2026-03-29T01:30:00Z"));
    // The wall-clock end (03:00 CEST = 01:00Z) is before that start: the elapsed length is kept.
    expect(occ[0]!.occurrenceEnd).toBe(t("2026-03-29T02:00:00Z"));
  });
});

describe("expandOccurrences: monthly", () => {
  it("from the 31st falls on the last day of shorter months", () => {
    const e = event("2026-01-31T10:00:00Z", "2026-01-31T11:00:00Z", "monthly");
    expect(isoList(expandOccurrences(e, t("2026-01-01T00:00:00Z"), t("2026-06-01T00:00:00Z"), "UTC"))).toEqual([
      "2026-01-31T10:00:00.000Z",
      "2026-02-28T10:00:00.000Z",
      "2026-03-31T10:00:00.000Z",
      "2026-04-30T10:00:00.000Z",
      "2026-05-31T10:00:00.000Z",
    ]);
    const leap = event("2028-01-31T10:00:00Z", "2028-01-31T11:00:00Z", "monthly");
    expect(isoList(expandOccurrences(leap, t("2028-02-01T00:00:00Z"), t("2028-03-01T00:00:00Z"), "UTC"))).toEqual([
      "2028-02-29T10:00:00.000Z",
    ]);
  });

  it("from 29 February: the 29th where it exists, else the last day of February", () => {
    const e = event("2028-02-29T10:00:00Z", "2028-02-29T11:00:00Z", "monthly");
    const occ = isoList(expandOccurrences(e, t("2028-02-01T00:00:00Z"), t("2029-04-01T00:00:00Z"), "UTC"));
    expect(occ[0]).toBe("2028-02-29T10:00:00.000Z");
    expect(occ[1]).toBe("2028-03-29T10:00:00.000Z");
    expect(occ).toContain("2029-02-28T10:00:00.000Z");
    expect(occ.at(-1)).toBe("2029-03-29T10:00:00.000Z");
    expect(occ).toHaveLength(14);
  });

  it("uses the local day of the month, not the UTC one", () => {
    // 00:30 on 31 January in Paris is 23:30Z on the 30th.
    const e = event("2026-01-30T23:30:00Z", "2026-01-31T00:30:00Z", "monthly");
    const occ = isoList(expandOccurrences(e, t("2026-02-01T00:00:00Z"), t("2026-05-01T00:00:00Z"), "Europe/Paris"));
    expect(occ).toEqual(["2026-02-27T23:30:00.000Z", "2026-03-30T22:30:00.000Z", "2026-04-29T22:30:00.000Z"]);
  });
});

describe("expandOccurrences: bounds", () => {
  it("a non-recurring event is one occurrence when it overlaps the range", () => {
    const e = event("2026-06-01T10:00:00Z", "2026-06-01T12:00:00Z", null);
    expect(expandOccurrences(e, t("2026-06-01T11:00:00Z"), t("2026-06-02T00:00:00Z"), "UTC")).toEqual([
      { eventId: "evt_test", occurrenceStart: t("2026-06-01T10:00:00Z"), occurrenceEnd: t("2026-06-01T12:00:00Z") },
    ]);
    expect(expandOccurrences(e, t("2026-06-01T12:00:00Z"), t("2026-06-02T00:00:00Z"), "UTC")).toEqual([]);
    expect(expandOccurrences(e, t("2026-05-31T00:00:00Z"), t("2026-06-01T10:00:00Z"), "UTC")).toEqual([]);
  });

  it("stops at recurrenceEndAt, an occurrence starting exactly then included", () => {
    const e = event("2026-06-01T10:00:00Z", "2026-06-01T11:00:00Z", "daily", t("2026-06-05T10:00:00Z"));
    const occ = expandOccurrences(e, t("2026-05-01T00:00:00Z"), t("2026-07-01T00:00:00Z"), "UTC");
    expect(isoList(occ)).toEqual([
      "2026-06-01T10:00:00.000Z",
      "2026-06-02T10:00:00.000Z",
      "2026-06-03T10:00:00.000Z",
      "2026-06-04T10:00:00.000Z",
      "2026-06-05T10:00:00.000Z",
    ]);
  });

  it("includes an occurrence the range cuts in half, at either end", () => {
    const e = event("2026-06-01T10:00:00Z", "2026-06-01T12:00:00Z", "daily");
    const occ = expandOccurrences(e, t("2026-06-03T11:00:00Z"), t("2026-06-04T11:00:00Z"), "UTC");
    expect(isoList(occ)).toEqual(["2026-06-03T10:00:00.000Z", "2026-06-04T10:00:00.000Z"]);
  });

  it("expands an event longer than its repetition period (daily, 30 hours)", () => {
    const e = event("2026-06-01T08:00:00Z", "2026-06-02T14:00:00Z", "daily");
    expect(isoList(expandOccurrences(e, t("2026-06-10T00:00:00Z"), t("2026-06-10T01:00:00Z"), "UTC"))).toEqual([
      "2026-06-09T08:00:00.000Z",
    ]);
    const both = expandOccurrences(e, t("2026-06-10T10:00:00Z"), t("2026-06-10T11:00:00Z"), "Europe/Paris");
    expect(isoList(both)).toEqual(["2026-06-09T08:00:00.000Z", "2026-06-10T08:00:00.000Z"]);
    expect(both[0]!.occurrenceEnd - both[0]!.occurrenceStart).toBe(30 * HOUR);
  });

  it("expands in UTC without any shift", () => {
    const e = event("2026-03-01T09:00:00Z", "2026-03-01T10:00:00Z", "weekly");
    const occ = expandOccurrences(e, t("2026-03-01T00:00:00Z"), t("2026-04-06T00:00:00Z"), "UTC");
    expect(occ.map((o) => new Date(o.occurrenceStart).getUTCHours())).toEqual([9, 9, 9, 9, 9, 9]);
  });

  it("reaches a distant range without walking from the first occurrence, and caps the count", () => {
    const e = event("2000-01-01T09:00:00Z", "2000-01-01T10:00:00Z", "daily");
    const occ = expandOccurrences(e, t("2090-01-01T00:00:00Z"), t("2090-01-03T00:00:00Z"), "Europe/Paris");
    expect(isoList(occ)).toEqual(["2090-01-01T09:00:00.000Z", "2090-01-02T09:00:00.000Z"]);
    expect(expandOccurrences(e, t("2026-01-01T00:00:00Z"), t("2027-01-01T00:00:00Z"), "UTC", 10)).toHaveLength(10);
    expect(MAX_OCCURRENCES).toBe(5000);
  });

  it("matches a brute-force expansion from the first occurrence (property)", () => {
    const zones = ["UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe"];
    const base = t("2026-01-01T00:00:00Z");
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 400 * 24 }),
        fc.integer({ min: 1, max: 80 * 24 }),
        fc.constantFrom<RecurrencePattern>("daily", "weekly", "monthly"),
        fc.constantFrom(...zones),
        fc.integer({ min: 0, max: 500 * 24 }),
        fc.integer({ min: 1, max: 60 * 24 }),
        (startH, lengthH, pattern, zone, fromH, spanH) => {
          const e: RecurringEvent = {
            id: "e",
            startAt: base + startH * HOUR,
            endAt: base + (startH + lengthH) * HOUR,
            recurrencePattern: pattern,
            recurrenceEndAt: null,
          };
          const from = base + fromH * HOUR;
          const to = from + spanH * HOUR;
          const all = expandOccurrences(e, e.startAt, to, zone, 100_000);
          const expected = all.filter((o) => o.occurrenceStart < to && o.occurrenceEnd > from);
          expect(expandOccurrences(e, from, to, zone, 100_000)).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });
});
