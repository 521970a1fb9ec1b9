// The time range of an analytics read (pure). `from` and `to` are ISO instants or bare dates;
// a date is read in the time zone of the queues it applies to: `from=2026-03-01` starts at
// 00:00 there, and `to=2026-03-31` INCLUDES that day (the range ends at the next 00:00), which
// is what a person asking for "March 1 to March 31" means. Instants are taken as given,
// `to` exclusive.

import type { InstantInput } from "../lib/instant";
import { DAY } from "../lib/time";
import { wallTimeAt, zonedWallTimeToUtc } from "./recurrence";

/** A year and a day: any calendar year (leap or not) plus a DST hour fits. */
export const MAX_ANALYTICS_RANGE_MS = 366 * DAY;
export const MAX_ANALYTICS_RANGE_DAYS = 366;

export interface ResolvedRange {
  from: number;
  to: number;
}

/**
 * A bound the caller left out: today, as a date in the time zone it is read in (issue #32: a
 * dashboard asking for "today" near midnight in Paris must not get the UTC day's zeros).
 */
export type RangeBound = InstantInput | { kind: "today" };

/** The local date in `timeZone` at the instant `at`. */
function todayIn(timeZone: string, at: number): Extract<InstantInput, { kind: "date" }> {
  const wall = wallTimeAt(at, timeZone);
  return { kind: "date", year: wall.year, month: wall.month, day: wall.day };
}

/** 00:00 of a date in `timeZone`, as a UTC instant. */
function startOfDate(input: Extract<InstantInput, { kind: "date" }>, timeZone: string, plusDays = 0): number {
  const day = new Date(Date.UTC(input.year, input.month - 1, input.day + plusDays));
  return zonedWallTimeToUtc(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate(), 0, 0, 0, timeZone);
}

/**
 * The instants [from, to) the inputs stand for in `timeZone` (see the header); a bound left out
 * is today there (`at` is now), so no bounds at all is today, whole.
 */
export function resolveRange(fromBound: RangeBound, toBound: RangeBound, timeZone: string, at: number): ResolvedRange {
  const from = fromBound.kind === "today" ? todayIn(timeZone, at) : fromBound;
  const to = toBound.kind === "today" ? todayIn(timeZone, at) : toBound;
  return {
    from: from.kind === "instant" ? from.ms : startOfDate(from, timeZone),
    to: to.kind === "instant" ? to.ms : startOfDate(to, timeZone, 1),
  };
}

/** Why a range is refused (the field to blame and the reason), or null when it is acceptable. */
export function rangeProblem(range: ResolvedRange): { field: "to"; reason: string } | null {
  if (range.to <= range.from) return { field: "to", reason: "must be after from" };
  if (range.to - range.from > MAX_ANALYTICS_RANGE_MS) {
    return { field: "to", reason: `the range is longer than a year (${MAX_ANALYTICS_RANGE_DAYS} days at most)` };
  }
  return null;
}
