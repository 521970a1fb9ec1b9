import type { Env } from "../env";
import { iso } from "../lib/time";
import type { RoomResult, TicketView } from "../queue-room/contract";
import { assertAtDesk, callAtDesk, type DeskRow } from "../desks/desks";
import type { LocationScope } from "../domain/location-scope";
import type { QueueRow } from "../http/credentials/queues";
import { roomFailure, roomOf } from "./queue-rooms";
import { withRules } from "./room-rules";

// "What became of the previous call" (docs/floor.md): a clerk who only presses call-next never
// starts the tickets they call, and the no-show sweep would expire every one of them five
// minutes later (counted as no-shows in the analytics). At call-next the clerk says what became
// of their previous call; it is composed here from the room's existing verbs (serve, complete,
// skip-absent), before the next call.

export { NO_SHOW_REASON, PREVIOUS_OUTCOMES, type PreviousOutcome } from "../domain/tickets";
import { NO_SHOW_REASON, type PreviousOutcome } from "../domain/tickets";

/** Called tickets read per queue to find the caller's own (far above what one caller leaves open). */
const CALLED_READ_MAX = 100;

export interface PreviousCallReport {
  /** The caller's latest call there that was never started, left as it is (no previousOutcome sent). */
  previousCallOpen: { ticketId: string; displayCode: string; calledAt: string } | null;
  /** The caller's calls there closed by this call-next's previousOutcome. */
  previousCallsClosed: { ticketId: string; displayCode: string; status: "served" | "skipped" }[];
}

/**
 * The caller's open calls in these queues (called, never started), `mine` saying which are theirs:
 * with an outcome each is completed as served or marked absent (skipped, reason `no_show`);
 * without, the latest is reported. A ticket that moved on meanwhile (expired, recalled by a
 * colleague's verb) is left alone.
 */
export async function settlePreviousCalls(
  env: Env,
  queueIds: readonly string[],
  mine: (t: TicketView) => boolean,
  outcome: PreviousOutcome | undefined,
  at: number,
): Promise<PreviousCallReport> {
  const pages = await Promise.all(
    queueIds.map((id) =>
      roomOf(env, id).query({ question: "tickets", query: { status: "called", offset: 0, limit: CALLED_READ_MAX }, at }),
    ),
  );
  const open = pages
    .flatMap((p) => (p.ok ? p.value.items : []))
    .filter(mine)
    .sort((a, b) => (b.calledAt ?? 0) - (a.calledAt ?? 0));
  if (outcome === undefined) {
    const latest = open[0];
    return {
      previousCallOpen: latest
        ? { ticketId: latest.id, displayCode: latest.displayCode, calledAt: iso(latest.calledAt ?? latest.updatedAt) }
        : null,
      previousCallsClosed: [],
    };
  }
  const closed = await Promise.all(open.map((t) => closeCall(env, t, outcome, at)));
  return { previousCallOpen: null, previousCallsClosed: closed.filter((c) => c !== null) };
}

async function closeCall(env: Env, t: TicketView, outcome: PreviousOutcome, at: number) {
  const room = roomOf(env, t.queueId);
  const steps: (() => Promise<RoomResult<TicketView>>)[] =
    outcome === "served"
      ? [
          () => room.command({ verb: "serve", ticketId: t.id, at }),
          () => room.command({ verb: "complete", ticketId: t.id, at, result: {} }),
        ]
      : [() => room.command({ verb: "skipAbsent", ticketId: t.id, reason: NO_SHOW_REASON, at })];
  let last: TicketView | null = null;
  for (const step of steps) {
    const result = await step();
    if (!result.ok) {
      if (result.error.code === "INVALID_STATE" || result.error.code === "NOT_FOUND") return null;
      throw roomFailure(result.error);
    }
    last = result.value;
  }
  return { ticketId: t.id, displayCode: t.displayCode, status: last!.status as "served" | "skipped" };
}

/**
 * A queue's call-next after settling the caller's previous call in that queue: one command, so
 * one room round trip (issue 43; the room settles and calls in the same invocation).
 */
export async function callNextAfterPrevious(
  env: Env,
  queue: QueueRow,
  operatorId: string,
  userId: string | null,
  at: number,
  counter: string | null,
  outcome: PreviousOutcome | undefined,
): Promise<{ ticket: TicketView; previous: PreviousCallReport }> {
  const { ticket, previous } = await withRules(env, queue, at, () =>
    roomOf(env, queue.id).command({
      verb: "callNextAfterPrevious",
      operatorId,
      at,
      counter,
      userId,
      rulesVersion: queue.rulesVersion,
      outcome: outcome ?? null,
    }),
  );
  return {
    ticket,
    previous: {
      previousCallOpen: previous.open && { ...previous.open, calledAt: iso(previous.open.calledAt) },
      previousCallsClosed: previous.closed,
    },
  };
}

/** A desk's call-next after settling the caller's previous call at that desk (over its queues). */
export async function callAtDeskAfterPrevious(
  env: Env,
  desk: DeskRow,
  operatorId: string,
  userId: string | null,
  at: number,
  outcome: PreviousOutcome | undefined,
  /** The caller's locations if they are scoped (issue 31): the desk's other queues are not theirs to call. */
  scope: LocationScope = null,
): Promise<{ ticket: TicketView; previous: PreviousCallReport }> {
  assertAtDesk(desk, operatorId);
  const previous = await settlePreviousCalls(env, desk.queueIds, (t) => t.deskId === desk.id && t.assignedToId === operatorId, outcome, at);
  const ticket = await callAtDesk(env, desk, operatorId, userId, at, scope);
  return { ticket, previous };
}
