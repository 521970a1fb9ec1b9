// Estimated wait (CONTRACT §4), computed from the room's own recent history of calls.
//
// Each operator's pace is the interval between two of their consecutive calls (the time they
// spent on one ticket). The queue's time per ticket is the moving average of the most recent
// such intervals, divided by the number of operators who called in the last hour (they work
// in parallel). Before there is any interval, a ticket is assumed to take 5 minutes.

import { HOUR, MINUTE } from "../lib/time";

export const DEFAULT_MINUTES_PER_TICKET = 5;
/** How many recent per-operator intervals the moving average covers. */
export const AVERAGE_WINDOW = 10;
/** A gap longer than this is a break or a quiet period, not the time a ticket took. */
export const MAX_INTERVAL_MS = HOUR;

export interface CallRecord {
  at: number;
  operatorId: string;
}

/** Minutes one ticket takes the queue as a whole; `calls` in any order. */
export function minutesPerTicket(calls: readonly CallRecord[], at: number): number {
  const sorted = [...calls].sort((a, b) => a.at - b.at);
  const lastCallOf = new Map<string, number>();
  const intervals: number[] = [];
  for (const call of sorted) {
    const previous = lastCallOf.get(call.operatorId);
    if (previous !== undefined && call.at - previous <= MAX_INTERVAL_MS) intervals.push(call.at - previous);
    lastCallOf.set(call.operatorId, call.at);
  }
  if (intervals.length === 0) return DEFAULT_MINUTES_PER_TICKET;
  const recent = intervals.slice(-AVERAGE_WINDOW);
  const average = recent.reduce((sum, v) => sum + v, 0) / recent.length;
  const active = new Set(sorted.filter((c) => c.at > at - HOUR && c.at <= at).map((c) => c.operatorId)).size;
  return average / Math.max(1, active) / MINUTE;
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

/** Wait of the ticket at `position` (1 = next): every ticket up to and including it takes a turn. */
export function estimatedWaitMinutes(position: number, perTicket: number): number {
  return Math.round(position * perTicket);
}
