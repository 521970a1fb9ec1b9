// The ticket state machine and the order of a queue (CONTRACT §4), as pure functions over
// plain data. The QueueRoom applies them inside its storage transactions.

// `held` (docs/desks.md, hold): a called or serving ticket the operator set aside; not in the
// line, not expiring. After the spec's seven so their order is unchanged.
export const TICKET_STATUSES = ["waiting", "called", "serving", "served", "skipped", "expired", "cancelled", "held"] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

export const TICKET_SOURCES = ["app", "operator", "vip", "widget", "qr", "nfc", "remote", "transfer", "recovery", "sms", "ussd"] as const;
export type TicketSource = (typeof TICKET_SOURCES)[number];

export const QUEUE_STATUSES = ["active", "paused", "closed"] as const;
export type QueueStatus = (typeof QUEUE_STATUSES)[number];

export const RECOVERY_OPTIONS = ["rejoin", "restore"] as const;
export type RecoveryOption = (typeof RECOVERY_OPTIONS)[number];

/** Operations on an existing ticket, each allowed only from the listed statuses. */
export const TICKET_TRANSITIONS = {
  call: ["waiting"],
  present: ["waiting", "called"],
  serve: ["called"],
  complete: ["serving"],
  skip: ["called"],
  expire: ["called"],
  cancel: ["waiting", "called"],
  recover: ["skipped", "expired"],
  transferQueue: ["waiting", "called"],
  transferOperator: ["called", "serving"],
  recall: ["called"],
  return: ["called", "serving"],
  hold: ["called", "serving"],
  resume: ["held"],
  stepBack: ["waiting"],
  defer: ["waiting"],
  prioritize: ["waiting"],
} as const satisfies Record<string, readonly TicketStatus[]>;
export type TicketOperation = keyof typeof TICKET_TRANSITIONS;

export function allowedFrom(operation: TicketOperation): readonly TicketStatus[] {
  return TICKET_TRANSITIONS[operation];
}

export function allows(operation: TicketOperation, status: TicketStatus): boolean {
  return (TICKET_TRANSITIONS[operation] as readonly TicketStatus[]).includes(status);
}

/**
 * Priority tickets (VIP, prioritized transfers, restores) come first, in the order they
 * entered the priority lane; then regular tickets by number.
 */
export const LANE = { priority: 0, regular: 1 } as const;
export type Lane = (typeof LANE)[keyof typeof LANE];

export const CAPACITY_WARNING_RATIO = 0.8;

/** True when a change takes the queue from under 80% of its capacity to 80% or more. */
export function crossesCapacityWarning(before: number, after: number, maxCapacity: number | null): boolean {
  if (maxCapacity === null) return false;
  const threshold = maxCapacity * CAPACITY_WARNING_RATIO;
  return before < threshold && after >= threshold;
}

/** A ticket with this many people or fewer ahead of it gets `ticket.almost_called` (once). */
export const ALMOST_CALLED_AHEAD = 3;

/** CONTRACT §4: a called ticket expires after 5 minutes unless its queue says otherwise. */
export const DEFAULT_NO_SHOW_MINUTES = 5;

/** A held ticket goes back to the state it was held from (docs/desks.md, hold). */
export const HOLDABLE_STATUSES = ["called", "serving"] as const;
export type HoldableStatus = (typeof HOLDABLE_STATUSES)[number];

/** How far a ticket's owner may step back, once (docs/desks.md, let others pass). */
export const STEP_BACK_MAX_PLACES = 10;

/**
 * A later turn on request (docs/visits.md, defer): a queue's bounds unless it sets its own. A
 * `maxDefers` of 0 turns deferral off for the queue.
 */
export const DEFAULT_MAX_DEFER_MINUTES = 60;
export const DEFAULT_MAX_DEFERS = 2;
/** The most places one `places` defer moves a ticket back. */
export const DEFER_MAX_PLACES = 50;

/** An operator's note at completion (docs/desks.md, outcomes). */
export const COMPLETION_NOTE_MAX = 500;

/** What became of a caller's previous call, said at their next call-next (docs/floor.md). */
export const PREVIOUS_OUTCOMES = ["served", "no_show"] as const;
export type PreviousOutcome = (typeof PREVIOUS_OUTCOMES)[number];

/** The skip reason of a previous call marked absent. */
export const NO_SHOW_REASON = "no_show";
