// Recurrence expansion and timezone arithmetic for the team calendar. Pure: plain numbers in,
// plain numbers out, no I/O. Timezone math uses Intl (workerd ships full ICU), no library.
//
// Rules (README "Calendar"):
// - A recurring event repeats its LOCAL wall-clock start time in its IANA timezone, so a
//   09:00 shift stays at 09:00 across DST changes.
// - An occurrence keeps the wall-clock length of the original (09:00–17:00 stays 09:00–17:00
//   local); across a DST change that is one hour more or less of elapsed time.
// - Monthly repeats on the original day of the month, or the last day of a shorter month
//   (31 Jan → 28/29 Feb, 31 Mar, 30 Apr; 29 Feb → 29 Mar, …, 28 Feb in common years).
// - `recurrenceEndAt` is the last instant an occurrence may start (inclusive).
// - The first occurrence is the stored event itself, to the millisecond.

export type RecurrencePattern = "daily" | "weekly" | "monthly";

export interface RecurringEvent {
  id: string;
  startAt: number;
  endAt: number;
  recurrencePattern: RecurrencePattern | null;
  recurrenceEndAt: number | null;
}

export interface Occurrence {
  eventId: string;
  occurrenceStart: number;
  occurrenceEnd: number;
}

/** Most occurrences one query may expand, so no range or event can make a request unbounded. */
export const MAX_OCCURRENCES = 5_000;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Larger than any UTC offset change (the widest real ones are 1–2 h); used as slack. */
const OFFSET_SLACK = 3 * HOUR;

export interface WallTime {
  year: number;
  month: number; // 1–12
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock reading in `timeZone` at the instant `utcMs`. */
export function wallTimeAt(utcMs: number, timeZone: string): WallTime {
  const parts: Record<string, number> = {};
  for (const p of formatterFor(timeZone).formatToParts(new Date(utcMs))) {
    if (p.type !== "literal") parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour!,
    minute: parts.minute!,
    second: parts.second!,
    millisecond: ((utcMs % 1000) + 1000) % 1000,
  };
}

/** A wall time as if it were UTC: lets calendar arithmetic run on plain numbers. */
function naiveMs(w: WallTime): number {
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.millisecond);
}

/** Offset of `timeZone` from UTC at the instant `utcMs`, in ms (Paris in summer: +2 h). */
function offsetAt(utcMs: number, timeZone: string): number {
  return naiveMs(wallTimeAt(utcMs, timeZone)) - utcMs;
}

/**
 * The UTC instant at which the clocks of `timeZone` read this wall time.
 * - A time skipped by a DST change (02:30 on a spring-forward night) does not exist: it is
 *   read with the offset in force before the change, i.e. shifted forward by the gap
 *   (02:30 → 03:30 local), as Temporal's "compatible" disambiguation does.
 * - A time read twice (01:30 on a fall-back night) resolves to its first occurrence.
 */
export function zonedWallTimeToUtc(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  timeZone: string,
  millisecond = 0,
): number {
  return naiveToUtc(Date.UTC(year, month - 1, day, hour, minute, second, millisecond), timeZone);
}

function naiveToUtc(naive: number, timeZone: string): number {
  const before = offsetAt(naive - DAY, timeZone);
  const after = offsetAt(naive + DAY, timeZone);
  const candidates = [naive - before, naive - after].filter((utc) => naive - offsetAt(utc, timeZone) === utc);
  // Two valid readings: an overlap, take the earlier instant. None: a gap, shift forward.
  return candidates.length > 0 ? Math.min(...candidates) : naive - before;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Wall-clock start of occurrence `k` (k = 0 is the original), as a naive ms value. */
function nthNaiveStart(start: WallTime, pattern: RecurrencePattern, k: number): number {
  if (pattern === "daily" || pattern === "weekly") {
    const days = pattern === "daily" ? k : 7 * k;
    return Date.UTC(start.year, start.month - 1, start.day + days, start.hour, start.minute, start.second, start.millisecond);
  }
  const monthIndex = start.month - 1 + k;
  const year = start.year + Math.floor(monthIndex / 12);
  const month = (monthIndex % 12) + 1;
  const day = Math.min(start.day, daysInMonth(year, month));
  return Date.UTC(year, month - 1, day, start.hour, start.minute, start.second, start.millisecond);
}

/** An index no later than the first occurrence that can still overlap `from`. */
function firstUsefulIndex(start: WallTime, startAt: number, pattern: RecurrencePattern, from: number): number {
  if (from <= startAt) return 0;
  const elapsed = from - startAt;
  if (pattern === "monthly") {
    const f = new Date(from);
    const months = (f.getUTCFullYear() - start.year) * 12 + (f.getUTCMonth() + 1 - start.month);
    return Math.max(0, months - 1);
  }
  const period = pattern === "daily" ? DAY : 7 * DAY;
  return Math.max(0, Math.floor(elapsed / period) - 1);
}

/**
 * The occurrences of `event` that overlap `[rangeStart, rangeEnd)` (an occurrence cut by
 * the range is included), in start order, at most `limit` of them.
 */
export function expandOccurrences(
  event: RecurringEvent,
  rangeStart: number,
  rangeEnd: number,
  timeZone: string,
  limit = MAX_OCCURRENCES,
): Occurrence[] {
  const overlaps = (s: number, e: number) => s < rangeEnd && e > rangeStart;
  const pattern = event.recurrencePattern;
  if (pattern === null) {
    return overlaps(event.startAt, event.endAt) && limit > 0
      ? [{ eventId: event.id, occurrenceStart: event.startAt, occurrenceEnd: event.endAt }]
      : [];
  }

  const startWall = wallTimeAt(event.startAt, timeZone);
  const elapsed = event.endAt - event.startAt;
  const wallLength = naiveMs(wallTimeAt(event.endAt, timeZone)) - naiveMs(startWall);
  // Occurrences starting before this cannot reach the range, even lengthened by a DST change.
  const earliestUsefulStart = rangeStart - Math.max(elapsed, wallLength) - OFFSET_SLACK;
  const lastStart = Math.min(rangeEnd - 1, event.recurrenceEndAt ?? Number.POSITIVE_INFINITY);

  const out: Occurrence[] = [];
  for (let k = firstUsefulIndex(startWall, event.startAt, pattern, earliestUsefulStart); out.length < limit; k++) {
    let start = event.startAt;
    let end = event.endAt;
    if (k > 0) {
      const naiveStart = nthNaiveStart(startWall, pattern, k);
      start = naiveToUtc(naiveStart, timeZone);
      end = naiveToUtc(naiveStart + wallLength, timeZone);
      // A wall-clock end inside the same DST gap (or a stored event read across an
      // overlap) could land at or before the start: keep the elapsed length instead.
      if (wallLength <= 0 || end <= start) end = start + elapsed;
    }
    if (start > lastStart) break;
    if (overlaps(start, end)) out.push({ eventId: event.id, occurrenceStart: start, occurrenceEnd: end });
  }
  return out;
}
