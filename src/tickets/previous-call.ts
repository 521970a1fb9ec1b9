import { iso } from "../lib/time";
import type { PreviousCalls, TicketView } from "../queue-room/contract";
import { callAtDesk, type DeskRow } from "../desks/desks";
import type { LocationScope } from "../domain/location-scope";
import type { QueueRow } from "../http/credentials/queues";
import { roomOf } from "./queue-rooms";
import { withRules } from "./room-rules";

// "What became of the previous call" (docs/floor.md): a clerk who only presses call-next never
// starts the tickets they call, and the no-show sweep would expire every one of them five
// minutes later (counted as no-shows in the analytics). At call-next the clerk says what became
// of their previous call; the room settles it (serve and complete, or skip-absent) in the same
// command as the call (queue) or the head read (desk): no extra room round trip (issue 43).

export { NO_SHOW_REASON, PREVIOUS_OUTCOMES, type PreviousOutcome } from "../domain/tickets";
import type { PreviousOutcome } from "../domain/tickets";
import type { Deps } from "../http/deps";

export interface PreviousCallReport {
  /** The caller's latest call there that was never started, left as it is (no previousOutcome sent). */
  previousCallOpen: { ticketId: string; displayCode: string; calledAt: string } | null;
  /** The caller's calls there closed by this call-next's previousOutcome. */
  previousCallsClosed: { ticketId: string; displayCode: string; status: "served" | "skipped" }[];
}

function report(previous: PreviousCalls): PreviousCallReport {
  return {
    previousCallOpen: previous.open && { ...previous.open, calledAt: iso(previous.open.calledAt) },
    previousCallsClosed: previous.closed,
  };
}

/**
 * A queue's call-next after settling the caller's previous call in that queue: one command, so
 * one room round trip (issue 43; the room settles and calls in the same invocation).
 */
export async function callNextAfterPrevious(
  deps: Deps,
  queue: QueueRow,
  operatorId: string,
  userId: string | null,
  at: number,
  counter: string | null,
  outcome: PreviousOutcome | undefined,
): Promise<{ ticket: TicketView; previous: PreviousCallReport }> {
  const { ticket, previous } = await withRules(deps, queue, at, () =>
    roomOf(deps, queue.id).command({
      verb: "callNextAfterPrevious",
      operatorId,
      at,
      counter,
      userId,
      rulesVersion: queue.rulesVersion,
      outcome: outcome ?? null,
    }),
  );
  return { ticket, previous: report(previous) };
}

/** A desk's call-next after settling the caller's previous call at that desk (over its queues). */
export async function callAtDeskAfterPrevious(
  deps: Deps,
  desk: DeskRow,
  operatorId: string,
  userId: string | null,
  at: number,
  outcome: PreviousOutcome | undefined,
  /** The caller's locations if they are scoped (issue 31): the desk's other queues are not theirs to call. */
  scope: LocationScope = null,
): Promise<{ ticket: TicketView; previous: PreviousCallReport }> {
  // The desk's queues settle the caller's previous calls at it as they answer their heads: one
  // room call per queue, in parallel, then the call (docs/desks.md).
  const { ticket, previous } = await callAtDesk(deps, desk, operatorId, userId, at, scope, outcome ?? null);
  return { ticket, previous: report(previous) };
}
