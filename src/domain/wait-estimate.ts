// Estimated wait (CONTRACT §4), computed from the room's own recent history of calls.
//
// Each operator's pace is the interval between two of their consecutive calls (the time they
// spent on one ticket). Not every interval is a service: a call a few seconds after the
// previous one is a skip, a no-show, a recall or a double click, and a gap over an hour is a
// break or a quiet period; both are left out. The queue's time per ticket is the median of the
// most recent remaining intervals (one long coffee break does not move it), divided by the
// number of operators who called in the last hour (they work in parallel). Until there are
// MIN_HISTORY service intervals, the queue's own default (`defaultServiceMinutes`: what one
// operator spends on one visitor, 5 unless set) stands in for each missing one, so one odd first interval does not set the pace.
// Whatever the history says, a ticket never takes less than MIN_MINUTES_PER_TICKET and a
// waiting visitor never reads "~0 min". The rule for integrators: docs/wait-estimate.md.

import { HOUR, MINUTE } from "../lib/time";

export const DEFAULT_MINUTES_PER_TICKET = 5;
/** Below this many service intervals, the queue's default fills the gap (see above). */
export const MIN_HISTORY = 3;
/** How many recent per-operator service intervals the estimate looks at. */
export const AVERAGE_WINDOW = 10;
/** A gap longer than this is a break or a quiet period, not the time a ticket took. */
export const MAX_INTERVAL_MS = HOUR;
/** A call this soon after the operator's previous one is a skip, no-show or recall, not a service. */
export const MIN_SERVICE_INTERVAL_MS = 30_000;
/** Floor of the queue's time per ticket, however many operators and however fast the history. */
export const MIN_MINUTES_PER_TICKET = 0.5;
/** Floor of the wait shown to anyone with at least one ticket to wait for (never "~0 min"). */
export const MIN_WAIT_MINUTES = 1;

export interface CallRecord {
  at: number;
  operatorId: string;
}

/** The service intervals of the history (ms), oldest first; skips and breaks left out. */
export function serviceIntervals(calls: readonly CallRecord[]): number[] {
  const sorted = [...calls].sort((a, b) => a.at - b.at);
  const lastCallOf = new Map<string, number>();
  const intervals: number[] = [];
  for (const call of sorted) {
    const previous = lastCallOf.get(call.operatorId);
    if (previous !== undefined) {
      const gap = call.at - previous;
      if (gap >= MIN_SERVICE_INTERVAL_MS && gap <= MAX_INTERVAL_MS) intervals.push(gap);
    }
    lastCallOf.set(call.operatorId, call.at);
  }
  return intervals;
}

/** Operators who called in the hour before `at` (at least 1: someone will call). */
function activeOperators(calls: readonly CallRecord[], at: number): number {
  return Math.max(1, new Set(calls.filter((c) => c.at > at - HOUR && c.at <= at).map((c) => c.operatorId)).size);
}

/**
 * The span of time around `at` over which every estimate from these calls stays what it is at
 * `at`: only the hour's operators depend on the time, and they change when a call enters the
 * hour (its own time) or leaves it (an hour later). A reader may keep an answer for this span.
 */
export function estimateSpan(calls: readonly CallRecord[], at: number): { from: number; until: number } {
  let from = -Infinity;
  let until = Infinity;
  for (const call of calls) {
    for (const edge of [call.at, call.at + HOUR]) {
      if (edge <= at) from = Math.max(from, edge);
      else until = Math.min(until, edge);
    }
  }
  return { from, until };
}

/** The q-quantile (0..1) of a non-empty list, linearly interpolated. */
function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (position - below);
}

/** Minutes per ticket for the queue at a quantile of its recent service intervals. */
function perTicketAt(calls: readonly CallRecord[], at: number, q: number, defaultMinutes: number): number {
  const recent = serviceIntervals(calls).slice(-AVERAGE_WINDOW);
  const fill = Array.from({ length: Math.max(0, MIN_HISTORY - recent.length) }, () => defaultMinutes * MINUTE);
  return Math.max(MIN_MINUTES_PER_TICKET, quantile([...recent, ...fill], q) / activeOperators(calls, at) / MINUTE);
}

/**
 * Minutes one ticket takes the queue as a whole; `calls` in any order. `defaultMinutes` is
 * the queue's time per service before there is history (its `defaultServiceMinutes`).
 */
export function minutesPerTicket(calls: readonly CallRecord[], at: number, defaultMinutes = DEFAULT_MINUTES_PER_TICKET): number {
  return perTicketAt(calls, at, 0.5, defaultMinutes);
}

/**
 * A wait this long is abnormal (the spec's queue.long_wait): an hour is beyond what a
 * customer joining a counter queue expects, whatever the business.
 */
export const LONG_WAIT_MINUTES = 60;

/**
 * Whether the wait a newly joined ticket faces starts or ends a long-wait episode: the event
 * fires once when it crosses the threshold, and again only after it has fallen back below.
 */
export function longWaitChange(estimatedMinutes: number, inEpisode: boolean): "start" | "end" | null {
  const long = estimatedMinutes >= LONG_WAIT_MINUTES;
  if (long && !inEpisode) return "start";
  if (!long && inEpisode) return "end";
  return null;
}

/**
 * Wait of the ticket at `position` (1 = next): every ticket up to and including it takes a turn.
 * Position 0 (nobody to wait for) is 0; anyone else waits at least MIN_WAIT_MINUTES.
 */
export function estimatedWaitMinutes(position: number, perTicket: number): number {
  if (position <= 0) return 0;
  return Math.max(MIN_WAIT_MINUTES, Math.round(position * Math.max(MIN_MINUTES_PER_TICKET, perTicket)));
}

export interface WaitRange {
  low: number;
  high: number;
}

/**
 * The likely range of the wait at `position`: from the faster quarter to the slower quarter
 * of the recent service intervals (before any history, the default ± 40 %). Always contains
 * estimatedWaitMinutes(position, minutesPerTicket(calls, at, defaultMinutes)); low ≥ 1 while
 * anyone waits.
 */
export function estimatedWaitRange(
  position: number,
  calls: readonly CallRecord[],
  at: number,
  defaultMinutes = DEFAULT_MINUTES_PER_TICKET,
): WaitRange {
  if (position <= 0) return { low: 0, high: 0 };
  const perTicket = minutesPerTicket(calls, at, defaultMinutes);
  const middle = estimatedWaitMinutes(position, perTicket);
  const history = serviceIntervals(calls).length > 0;
  const low = history
    ? estimatedWaitMinutes(position, perTicketAt(calls, at, 0.25, defaultMinutes))
    : estimatedWaitMinutes(position, perTicket * 0.6);
  const high = history
    ? estimatedWaitMinutes(position, perTicketAt(calls, at, 0.75, defaultMinutes))
    : estimatedWaitMinutes(position, perTicket * 1.4);
  return { low: Math.min(low, middle), high: Math.max(high, middle) };
}
