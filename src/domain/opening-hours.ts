// A location's weekly opening hours (docs/appointments.md). Pure: wall-clock ranges per weekday
// in the location's IANA timezone, turned into UTC intervals with the calendar's DST-safe
// helpers (src/domain/recurrence.ts), so "08:30" stays 08:30 local across a DST change.

import { wallTimeAt, zonedWallTimeToUtc } from "./recurrence";

export const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** One opening range of a day, "HH:MM" local; `close` may be "24:00" (until midnight). */
export interface OpeningRange {
  open: string;
  close: string;
}

/** A day absent or empty is closed all day; a location with no hours at all (null) is open all day. */
export type OpeningHours = Partial<Record<Weekday, OpeningRange[]>>;

export interface Interval {
  start: number;
  end: number;
}

/** Minutes since local midnight of "HH:MM" (0–1440). */
export function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(":").map(Number);
  return h! * 60 + m!;
}

/** Why these ranges cannot be a day's hours, or null when they can: each opens before it closes, in order, no overlap. */
export function rangesProblem(ranges: readonly OpeningRange[]): string | null {
  let previousClose = -1;
  for (const r of ranges) {
    const open = minutesOf(r.open);
    const close = minutesOf(r.close);
    if (open >= close) return `opens at ${r.open}, not before it closes at ${r.close}`;
    if (open < previousClose) return "ranges must be in order and must not overlap";
    previousClose = close;
  }
  return null;
}

const DAY_MS = 86_400_000;

/** Weekday of a civil date (Monday first), whatever the zone. */
function weekdayOf(year: number, month: number, day: number): Weekday {
  const js = new Date(Date.UTC(year, month - 1, day)).getUTCDay(); // 0 = Sunday
  return WEEKDAYS[(js + 6) % 7]!;
}

/**
 * The open intervals (UTC) that overlap [from, to), in order, clipped to it. Each local day
 * from the one containing `from` is walked; a range is converted at its own wall times, so a
 * day of a DST change is 23 or 25 hours long and the hours still read the same on the clock.
 */
export function openIntervals(hours: OpeningHours, timeZone: string, from: number, to: number): Interval[] {
  const out: Interval[] = [];
  if (to <= from) return out;
  const first = wallTimeAt(from - DAY_MS, timeZone);
  // Civil days as plain UTC dates: safe to step by 24 h.
  for (let civil = Date.UTC(first.year, first.month - 1, first.day); ; civil += DAY_MS) {
    const d = new Date(civil);
    const [year, month, day] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
    const dayStart = zonedWallTimeToUtc(year, month, day, 0, 0, 0, timeZone);
    if (dayStart >= to) break;
    for (const r of hours[weekdayOf(year, month, day)] ?? []) {
      const open = minutesOf(r.open);
      const close = minutesOf(r.close);
      const start = zonedWallTimeToUtc(year, month, day, Math.floor(open / 60), open % 60, 0, timeZone);
      const end = zonedWallTimeToUtc(year, month, day + Math.floor(close / 1440), Math.floor(close / 60) % 24, close % 60, 0, timeZone);
      const s = Math.max(start, from);
      const e = Math.min(end, to);
      if (s < e) out.push({ start: s, end: e });
    }
  }
  return mergeIntervals(out);
}

/** Sorted, overlapping or touching intervals joined. */
export function mergeIntervals(intervals: readonly Interval[]): Interval[] {
  const sorted = [...intervals].sort((a, b) => a.start - b.start);
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i.start <= last.end) last.end = Math.max(last.end, i.end);
    else out.push({ ...i });
  }
  return out;
}

/** [from, to) minus the open intervals. */
export function complement(open: readonly Interval[], from: number, to: number): Interval[] {
  const out: Interval[] = [];
  let cursor = from;
  for (const i of mergeIntervals(open)) {
    if (i.start > cursor) out.push({ start: cursor, end: Math.min(i.start, to) });
    cursor = Math.max(cursor, i.end);
    if (cursor >= to) break;
  }
  if (cursor < to) out.push({ start: cursor, end: to });
  return out.filter((i) => i.start < i.end);
}

/**
 * When a service with these locations is closed by their hours, over [from, to): it is open
 * wherever at least one of its locations is; a location without hours keeps it open always.
 */
export function closedByHours(
  places: readonly { openingHours: OpeningHours | null; timeZone: string }[],
  from: number,
  to: number,
): Interval[] {
  if (places.length === 0 || places.some((p) => p.openingHours === null)) return [];
  return complement(
    places.flatMap((p) => openIntervals(p.openingHours!, p.timeZone, from, to)),
    from,
    to,
  );
}
