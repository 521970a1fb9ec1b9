import { and, eq, exists } from "drizzle-orm";
import { members, queues, subscriptions, tickets } from "../db/schema";
import { roleAllows } from "../domain/permissions";
import { entitlements } from "../domain/plans";
import type { RecoveryOption, TicketStatus } from "../domain/tickets";
import { ApiError, validationError } from "../http/errors";
import { iso, isoOrNull } from "../lib/time";
import type { DeferBounds, DeferRequest, NewTicket, ReturnPlace, RoomResult, TicketPage, TicketView } from "../queue-room/contract";

export type { DeferRequest, TicketView };
import { findQueue, type QueueRow } from "./queues";
import { inRoom, roomFailure, roomOf, unwrap } from "./queue-rooms";
import { rememberQueueRow } from "../http/credentials/queues";
import { ledgerOf } from "./quota";
import { outcomeOfService } from "../catalog/service-outcomes";
import { reaches, type LocationScope } from "../domain/location-scope";
import { locationsOfService } from "../catalog/location-scope";
import { withRules, withRulesResult } from "./room-rules";
import { answersAtJoin, answersNeededToServe } from "./intake";
import type { IntakeAnswers, IntakeValue } from "../domain/intake";
import { maskPhone } from "../domain/phone-mask";
import { type Deps } from "../http/deps";

export function ticketRecord(t: TicketView) {
  return {
    id: t.id,
    queueId: t.queueId,
    serviceId: t.serviceId,
    organizationId: t.organizationId,
    userId: t.userId,
    number: t.number,
    displayCode: t.displayCode,
    status: t.status,
    partySize: t.partySize,
    isPriority: t.isPriority,
    isGhostMode: t.isGhostMode,
    visitorName: t.visitorName,
    assignedToId: t.assignedToId,
    calledAt: isoOrNull(t.calledAt),
    servedAt: isoOrNull(t.servedAt),
    createdAt: iso(t.createdAt),
    position: t.position,
    estimatedWaitMinutes: t.estimatedWaitMinutes,
    estimatedWaitRange: t.estimatedWaitRange,
    counter: t.counter,
    deskId: t.deskId,
    recallCount: t.recallCount,
    recalledAt: isoOrNull(t.recalledAt),
    heldAt: isoOrNull(t.heldAt),
    holdReason: t.holdReason,
    outcome: t.outcome,
    note: t.note,
    steppedBackPlaces: t.steppedBackPlaces,
    deferredUntil: isoOrNull(t.deferredUntil),
    deferCount: t.deferCount,
    presentAt: isoOrNull(t.presentAt),
    servingAt: isoOrNull(t.servingAt),
    skipReason: t.skipReason,
    recoveredFromId: t.recoveredFromId,
    transferredToId: t.transferredToId,
    source: t.source,
    updatedAt: iso(t.updatedAt),
    intake: t.intake,
    labels: t.labels,
    phoneMasked: t.phoneMasked,
    kind: t.kind,
    appointmentAt: isoOrNull(t.appointmentAt),
    placement: t.placement === null ? null : { ...t.placement, since: iso(t.placement.since) },
    route: t.route === null ? null : t.route.map((leg) => ({ serviceId: leg.serviceId, queueId: leg.queueId })),
    leg: t.leg,
    visitId: t.visitId,
    routedFromId: t.routedFromId,
    routedToId: t.routedToId,
    estimatedVisitMinutes: t.estimatedVisitMinutes ?? null,
  };
}
export type TicketRecord = ReturnType<typeof ticketRecord>;

export async function getTicket(deps: Deps, queue: QueueRow, ticketId: string, at: number): Promise<TicketView> {
  const result = await roomOf(deps, queue.id).query({ question: "ticket", ticketId, at });
  if (result.ok) return result.value;
  // A finished ticket the room archived (docs/retention.md) is read from its D1 projection.
  if (result.error.code === "NOT_FOUND") {
    const archived = await archivedTicket(deps, queue.id, ticketId);
    if (archived) return archived;
  }
  throw roomFailure(result.error);
}

/**
 * A ticket as D1 holds it once its room let it go: finished, so no position nor wait. Only while
 * its queue exists: a deleted queue's tickets stay in D1 for analytics, and a ticket's read may
 * come with a queue row this isolate kept from before the deletion (credentials/queues.ts).
 */
async function archivedTicket({ db }: Deps, queueId: string, ticketId: string): Promise<TicketView | null> {
  const t = await db
    .select()
    .from(tickets)
    .where(
      and(
        eq(tickets.id, ticketId),
        eq(tickets.queueId, queueId),
        exists(db.select({ id: queues.id }).from(queues).where(eq(queues.id, queueId))),
      ),
    )
    .get();
  if (!t) return null;
  return {
    id: t.id,
    queueId: t.queueId,
    serviceId: t.serviceId,
    organizationId: t.organizationId,
    userId: t.userId,
    number: t.number,
    displayCode: t.displayCode,
    status: t.status as TicketStatus,
    partySize: t.partySize,
    isPriority: t.isPriority,
    isGhostMode: t.isGhostMode,
    visitorName: t.visitorName,
    assignedToId: t.assignedToId,
    calledAt: t.calledAt,
    servedAt: t.servedAt,
    createdAt: t.createdAt,
    position: null,
    estimatedWaitMinutes: null,
    estimatedWaitRange: null,
    heldAt: t.heldAt,
    holdReason: null,
    outcome: t.outcome,
    note: t.note,
    steppedBackPlaces: t.steppedBackPlaces,
    // No longer in its room: no later turn is pending.
    deferredUntil: null,
    deferCount: t.deferCount,
    // Its latest call as the projection kept it: where it was called, how often announced again.
    counter: t.counter,
    deskId: t.deskId,
    recallCount: t.recallCount,
    recalledAt: t.recalledAt,
    presentAt: t.presentAt,
    servingAt: t.servingAt,
    skipReason: t.skipReason,
    recoveredFromId: t.recoveredFromId,
    transferredToId: t.transferredToId,
    source: t.source as TicketView["source"],
    updatedAt: t.updatedAt,
    intake: { ...parseJsonAnswers(t.intake), ...parseJsonAnswers(t.intakePersonal) },
    labels: t.labels === null ? [] : (JSON.parse(t.labels) as string[]),
    phoneMasked: maskPhone(t.phone),
    kind: t.kind,
    appointmentId: null,
    appointmentAt: t.appointmentAt,
    placement: null,
    // The projection keeps the visit and the leg (docs/visits.md), not the route's services.
    route: null,
    leg: t.legIndex === null || t.legCount === null ? null : { index: t.legIndex + 1, of: t.legCount },
    visitId: t.visitId,
    routedFromId: null,
    routedToId: null,
  };
}

/**
 * Every way a ticket is created (customer join, operator walk-in, VIP). The room decides alone
 * (docs/room-rules.md): the service must be active and not closed by the calendar (its copy of
 * the rules, at least as new as the queue row's `rulesVersion`), and the organization's
 * monthly quota must have room (a unit its ledger gives, given back if the room refuses).
 */
export async function issueTicket(deps: Deps, queue: QueueRow, given: JoinInput, at: number, tokenHash?: string): Promise<TicketView> {
  const { answers, ...rest } = given;
  const attempt = async (row: QueueRow) => {
    // The intake answers are checked against the service's questions first (docs/visits.md).
    const { open, personal } = await answersAtJoin(deps, row, answers);
    const input: NewTicket = { ...rest, intake: open, intakePersonal: personal };
    return withRulesResult(deps, row, at, () =>
      roomOf(deps, row.id).command({ verb: "join", input, at, tokenHash, rulesVersion: row.rulesVersion, rowMayBeKept: true }),
    );
  };
  let result = await attempt(queue);
  // The row was older than the rules the room holds (one this isolate kept, or read just before
  // a change): judged again on the row as D1 has it now.
  if (!result.ok && result.error.code === "QUEUE_ROW_STALE") {
    const fresh = await findQueue(deps, queue.id);
    rememberQueueRow(fresh);
    result = await attempt(fresh);
  }
  return unwrap(result);
}

/** A join as an entry channel gives it: the ticket's facts and the visitor's intake answers, unchecked. */
export type JoinInput = NewTicket & { answers?: Record<string, IntakeValue | null> | undefined };

function parseJsonAnswers(json: string | null): IntakeAnswers {
  return json === null ? {} : (JSON.parse(json) as IntakeAnswers);
}

/** Refused OPERATOR_UNAVAILABLE while a break, closure or unavailability covers the calling member (the room's copy). */
export async function callNext(
  deps: Deps,
  queue: QueueRow,
  operatorId: string,
  userId: string | null,
  at: number,
  counter: string | null = null,
): Promise<TicketView> {
  return withRules(deps, queue, at, () =>
    roomOf(deps, queue.id).command({ verb: "callNext", operatorId, at, counter, userId, rulesVersion: queue.rulesVersion }),
  );
}

export async function listTickets(
  deps: Deps,
  queue: QueueRow,
  status: TicketStatus | undefined,
  window: { offset: number; limit: number },
  at: number,
  cursor: { startingAfter: string | null; endingBefore: string | null } | null = null,
  label: string | null = null,
): Promise<TicketPage> {
  return inRoom(deps, queue, (room) =>
    room.query({
      question: "tickets",
      query: { status: status ?? null, offset: window.offset, limit: window.limit, label, ...cursor },
      at,
    }),
  );
}

/** Cancels a waiting or called ticket (its owner or an operator: the route decides who may). */
export async function cancelTicket(deps: Deps, queue: QueueRow, ticketId: string, at: number): Promise<TicketView> {
  return inRoom(deps, queue, (room) => room.command({ verb: "cancel", ticketId, at }));
}

/** The customer is here: a waiting or called ticket is marked present (a remote join becomes callable). */
export async function returnTicket(deps: Deps, queue: QueueRow, ticketId: string, place: ReturnPlace, at: number): Promise<TicketView> {
  return inRoom(deps, queue, (room) => room.command({ verb: "returnToLine", ticketId, place, at }));
}

export async function recallTicket(deps: Deps, queue: QueueRow, ticketId: string, at: number): Promise<TicketView> {
  return inRoom(deps, queue, (room) => room.command({ verb: "recall", ticketId, at }));
}

export async function markPresent(deps: Deps, queue: QueueRow, ticketId: string, at: number): Promise<TicketView> {
  return inRoom(deps, queue, (room) => room.command({ verb: "present", ticketId, at }));
}

/** Refused (409 INTAKE_REQUIRED) while one of the service's `at_serve` questions is unanswered on the ticket. */
export async function startServing(deps: Deps, queue: QueueRow, ticketId: string, at: number): Promise<TicketView> {
  const requiredAnswers = await answersNeededToServe(deps, queue);
  return inRoom(deps, queue, (room) => room.command({ verb: "serve", ticketId, at, requiredAnswers }));
}

/** With an outcome, it must be one of the queue's service's (400 VALIDATION_ERROR, field outcome, otherwise). */
export async function completeTicket(
  deps: Deps,
  queue: QueueRow,
  ticketId: string,
  at: number,
  given: { outcome?: string | undefined; note?: string | undefined } = {},
): Promise<TicketView> {
  const outcome = given.outcome === undefined ? null : await outcomeOfService(deps, queue.serviceId, given.outcome);
  const result = { outcome: outcome?.code ?? null, outcomeLabel: outcome?.label ?? null, note: given.note ?? null };
  const requiredAnswers = await answersNeededToServe(deps, queue);
  return inRoom(deps, queue, (room) => room.command({ verb: "complete", ticketId, at, result, requiredAnswers }));
}

/** Sets a called or serving ticket aside (docs/desks.md, hold). */
export async function holdTicket(deps: Deps, queue: QueueRow, ticketId: string, reason: string | null, at: number): Promise<TicketView> {
  return inRoom(deps, queue, (room) => room.command({ verb: "hold", ticketId, reason, at }));
}

/** A held ticket goes back to the state it was held from, with its operator and desk. */
export async function resumeTicket(deps: Deps, queue: QueueRow, ticketId: string, at: number): Promise<TicketView> {
  return inRoom(deps, queue, (room) => room.command({ verb: "resume", ticketId, at }));
}

/** Staff make a waiting ticket VIP: into the priority lane, behind the VIPs already waiting (issue 27). */
export async function prioritizeTicket(deps: Deps, queue: QueueRow, ticketId: string, at: number): Promise<TicketView> {
  return inRoom(deps, queue, (room) => room.command({ verb: "prioritize", ticketId, at }));
}

/** Undoes a VIP mark: the waiting ticket goes back to the regular line at its number's place. */
export async function unprioritizeTicket(deps: Deps, queue: QueueRow, ticketId: string, at: number): Promise<TicketView> {
  return inRoom(deps, queue, (room) => room.command({ verb: "unprioritize", ticketId, at }));
}

/** "Let others pass": the waiting ticket moves behind up to `places` tickets, once. */
export async function stepBackTicket(deps: Deps, queue: QueueRow, ticketId: string, places: number, at: number): Promise<TicketView> {
  return inRoom(deps, queue, (room) => room.command({ verb: "stepBack", ticketId, places, at }));
}

/** The queue's bounds on a later turn (docs/visits.md, defer), from its row. */
export function deferBounds(queue: QueueRow): DeferBounds {
  return { maxDeferMinutes: queue.maxDeferMinutes, maxDefers: queue.maxDefers };
}

/** A later turn: not called before `until`, or `places` further back, within the queue's bounds. */
export async function deferTicket(deps: Deps, queue: QueueRow, ticketId: string, request: DeferRequest, at: number): Promise<TicketView> {
  return inRoom(deps, queue, (room) => room.command({ verb: "defer", ticketId, request, bounds: deferBounds(queue), at }));
}

export async function skipAbsent(deps: Deps, queue: QueueRow, ticketId: string, reason: string, at: number): Promise<TicketView> {
  return inRoom(deps, queue, (room) => room.command({ verb: "skipAbsent", ticketId, reason, at }));
}

/**
 * `rejoin` creates a ticket, so it takes a unit of the organization's monthly quota from its
 * ledger first, as a join does, and gives it back if the room refuses (issue 26: rejoins went
 * past the quota). `restore` creates nothing and is not counted.
 */
export async function recoverTicket(
  deps: Deps,
  queue: QueueRow,
  ticketId: string,
  option: RecoveryOption,
  at: number,
): Promise<TicketView> {
  const { db } = deps;
  if (option !== "rejoin") return inRoom(deps, queue, (room) => room.command({ verb: "recover", ticketId, option, at }));
  const subscription = await db
    .select({ plan: subscriptions.plan, rateTierOverride: subscriptions.rateTierOverride })
    .from(subscriptions)
    .where(eq(subscriptions.organizationId, queue.organizationId))
    .get();
  const limit = entitlements(subscription ?? { plan: "starter" }).quotas.ticketsPerMonth;
  const ledger = ledgerOf(deps, queue.organizationId);
  const unit = await ledger.take(queue.organizationId, at, limit);
  if (!unit.ok) throw roomFailure(unit.error);
  let recovered: RoomResult<TicketView>;
  try {
    recovered = await roomOf(deps, queue.id).command({ verb: "recover", ticketId, option, at });
  } catch (err) {
    await ledger.refund(unit.value.period);
    throw err;
  }
  if (!recovered.ok) {
    await ledger.refund(unit.value.period);
    throw roomFailure(recovered.error);
  }
  return recovered.value;
}

/** The new operator must be a member whose role may operate queues. */
export async function transferToOperator(
  deps: Deps,
  queue: QueueRow,
  ticketId: string,
  targetOperatorId: string,
  at: number,
): Promise<TicketView> {
  const { db } = deps;
  const member = await db
    .select({ role: members.role })
    .from(members)
    .where(and(eq(members.organizationId, queue.organizationId), eq(members.userId, targetOperatorId)))
    .get();
  if (!member || !roleAllows(member.role, "QUEUE_OPERATE")) {
    throw validationError("targetOperatorId", "not a member of this organization who may operate queues");
  }
  return inRoom(deps, queue, (room) => room.command({ verb: "assign", ticketId, operatorId: targetOperatorId, at }));
}

/**
 * Moves a ticket to another queue of the same organization as a hand-off that is safe to
 * retry after a failure at any step (docs/queue-room.md, "Hand-offs"):
 *  1. the source reserves the ticket under a new hand-off id (call-next skips it from now on);
 *  2. the target admits that hand-off, at most once;
 *  3. the source closes the ticket (cancelled, transferredToId), idempotently.
 * A hand-off left open by an interrupted move to another target is settled first by the
 * source room with that target: either it had admitted the ticket (then the move is finished
 * there) or it is told never to admit that hand-off, and the ticket is free again.
 */
export async function transferToQueue(
  deps: Deps,
  source: QueueRow,
  ticketId: string,
  targetQueueId: string,
  prioritize: boolean,
  at: number,
  /** The caller's locations if scoped (issue 31): another location's queue is not theirs to send to. */
  scope: LocationScope = null,
): Promise<TicketView> {
  if (targetQueueId === source.id) throw validationError("targetQueueId", "the ticket is already in this queue");
  const target = await findQueue(deps, targetQueueId).catch((err: unknown) => {
    if (err instanceof ApiError && err.code === "NOT_FOUND") throw new ApiError("NOT_FOUND", "Queue not found", { field: "targetQueueId" });
    throw err;
  });
  if (
    target.organizationId !== source.organizationId ||
    (scope !== null && !reaches(scope, await locationsOfService(deps, target.serviceId)))
  ) {
    throw new ApiError("NOT_FOUND", "Queue not found", { field: "targetQueueId" });
  }

  for (let attempt = 0; attempt < 2; attempt++) {
    const reservation = await inRoom(deps, source, (room) =>
      room.command({ verb: "reserveTransfer", ticketId, targetQueueId: target.id, at }),
    );
    const { handOffId } = reservation.snapshot;
    if (reservation.kind === "pending" && reservation.targetQueueId !== target.id) {
      const admitted = await inRoom(deps, source, (room) => room.command({ verb: "settleTransfer", ticketId, at }));
      if (admitted !== null) {
        throw new ApiError("INVALID_STATE", "The ticket was already moved to another queue", {
          status: "cancelled",
          allowed: ["waiting", "called"],
          transferredToId: admitted,
        });
      }
      continue;
    }
    let admitted: TicketView;
    try {
      admitted = await inRoom(deps, target, (room) =>
        room.command({ verb: "admitTransferred", snapshot: reservation.snapshot, prioritize, at }),
      );
    } catch (err) {
      // Only a definite refusal frees the ticket; after a failure of unknown outcome the
      // reservation stays, and a retry (or the source's alarm) finds out whether the target admitted it.
      if (err instanceof ApiError) await roomOf(deps, source.id).command({ verb: "releaseTransfer", ticketId, handOffId, at });
      throw err;
    }
    await inRoom(deps, source, (room) => room.command({ verb: "completeTransfer", ticketId, handOffId, newTicketId: admitted.id, at }));
    return admitted;
  }
  throw roomFailure({ code: "CONFLICT", message: "The ticket is being moved by another request; retry", details: { field: "ticketId" } });
}
