// The calling rule of a desk over several queues (docs/desks.md), as pure functions.
//
// Each queue keeps its own order (priority lane first, then by place in the lane). A desk
// compares the queues' heads only, by this rank:
//   1. a head in the priority lane before one in the regular lane;
//   2. then the one that took its place in its lane earliest (`linedUpAt`: the join, or the
//      restore/return that put it back), i.e. the one that has waited longest;
//   3. ties (same millisecond) by queue id, then by place in the lane, so the rank is total.
// Within one queue `linedUpAt` never decreases along the lane, so a queue's next head never
// ranks before the head it follows: this is what makes the bound of a desk call exact.

export interface DeskCandidate {
  ticketId: string;
  queueId: string;
  /** 0 = priority lane, 1 = regular lane. */
  lane: number;
  linedUpAt: number;
  orderKey: number;
}

/** Negative when `a` is called before `b`. */
export function compareCandidates(a: DeskCandidate, b: DeskCandidate): number {
  if (a.lane !== b.lane) return a.lane - b.lane;
  if (a.linedUpAt !== b.linedUpAt) return a.linedUpAt - b.linedUpAt;
  if (a.queueId !== b.queueId) return a.queueId < b.queueId ? -1 : 1;
  return a.orderKey - b.orderKey;
}

/**
 * The head to call and the bound its room must still respect: the best of the other queues'
 * heads (null when no other queue has one). Null when no queue has a head.
 */
export function pickCandidate(heads: readonly (DeskCandidate | null)[]): { pick: DeskCandidate; bound: DeskCandidate | null } | null {
  const present = heads.filter((h): h is DeskCandidate => h !== null).sort(compareCandidates);
  if (present.length === 0) return null;
  const pick = present[0]!;
  const bound = present.find((h) => h.queueId !== pick.queueId) ?? null;
  return { pick, bound };
}

/** How many times a desk call reads the heads again after its room refused the bound. */
export const DESK_CALL_ATTEMPTS = 40;

export const DESK_NAME_MAX = 60;
export const DESK_QUEUES_MAX = 20;
