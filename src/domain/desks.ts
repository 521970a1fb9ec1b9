// The calling rule of a desk over several queues (docs/desks.md), as pure functions.
//
// Each queue keeps its own order (priority lane first, then by place in the lane). A desk
// compares the queues' heads only, by this rank:
//   1. a head in the priority lane before one in the regular lane;
//   2. then the one that has waited longest: the earliest `linedUpAt` (the join, or the
//      restore/return that put it back); with queue weights, the longest *weighted* wait,
//      (now − linedUpAt) × the queue's weight at this desk (1 unless the desk says otherwise);
//   3. ties (same millisecond) by queue id, then by place in the lane, so the rank is total.
// Within one queue `linedUpAt` never decreases along the lane, so a queue's next head never
// ranks before the head it follows: this is what makes the bound of a desk call exact. With
// weights that stays true at any one instant (the weight is the queue's, the same along its
// lane), so a desk call ranks every head at the one instant it was made (`at`).

export interface DeskCandidate {
  ticketId: string;
  queueId: string;
  /** 0 = priority lane, 1 = regular lane. */
  lane: number;
  linedUpAt: number;
  orderKey: number;
}

/** A desk's queue weights (1..DESK_WEIGHT_MAX; a queue not listed weighs 1) and the instant of its call. */
export interface DeskWeighting {
  at: number;
  weights: Readonly<Record<string, number>>;
}

function weightOf(weighting: DeskWeighting, queueId: string): number {
  return Object.hasOwn(weighting.weights, queueId) ? weighting.weights[queueId]! : 1;
}

/** Negative when `a` is called before `b`. Without weights (or all 1) the instant does not matter. */
export function compareCandidates(a: DeskCandidate, b: DeskCandidate, weighting: DeskWeighting | null = null): number {
  if (a.lane !== b.lane) return a.lane - b.lane;
  if (weighting !== null) {
    // Integers: a wait in ms times a weight of at most 10 stays far below 2^53.
    const waitA = (weighting.at - a.linedUpAt) * weightOf(weighting, a.queueId);
    const waitB = (weighting.at - b.linedUpAt) * weightOf(weighting, b.queueId);
    if (waitA !== waitB) return waitB - waitA;
  } else if (a.linedUpAt !== b.linedUpAt) return a.linedUpAt - b.linedUpAt;
  if (a.queueId !== b.queueId) return a.queueId < b.queueId ? -1 : 1;
  return a.orderKey - b.orderKey;
}

/**
 * The head to call and the bound its room must still respect: the best of the other queues'
 * heads (null when no other queue has one). Null when no queue has a head.
 */
export function pickCandidate(
  heads: readonly (DeskCandidate | null)[],
  weighting: DeskWeighting | null = null,
): { pick: DeskCandidate; bound: DeskCandidate | null } | null {
  const present = heads.filter((h): h is DeskCandidate => h !== null).sort((a, b) => compareCandidates(a, b, weighting));
  if (present.length === 0) return null;
  const pick = present[0]!;
  const bound = present.find((h) => h.queueId !== pick.queueId) ?? null;
  return { pick, bound };
}

/** How many times a desk call reads the heads again after its room refused the bound. */
export const DESK_CALL_ATTEMPTS = 40;

export const DESK_NAME_MAX = 60;
export const DESK_QUEUES_MAX = 20;
/** A queue's weight at a desk: 1 (the default) to 10 (its customers' waits count ten times). */
export const DESK_WEIGHT_MAX = 10;
