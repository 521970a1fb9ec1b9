import { and, count, eq, inArray, isNull } from "drizzle-orm";
import type { ListWindow } from "../http/cursor";
import { keysetPage } from "../http/keyset";
import { desks, locations, queues } from "../db/schema";
import { DESK_CALL_ATTEMPTS, pickCandidate, type DeskCandidate } from "../domain/desks";
import { ApiError, invalidState, notFound, validationError } from "../http/errors";
import { newId } from "../lib/ids";
import { iso, isoOrNull } from "../lib/time";
import type { PreviousCalls, TicketView } from "../queue-room/contract";
import type { PreviousOutcome } from "../domain/tickets";
import { operatorBlock } from "../calendar/availability";
import { isUniqueViolation } from "../db/errors";
import { roomFailure, roomOf } from "../tickets/queue-rooms";
import { withRules } from "../tickets/room-rules";
import type { LocationScope } from "../domain/location-scope";
import { servicesAt } from "../catalog/location-scope";
import { auditInsert, auditInsertIfChanged } from "../audit/audit";
import { changedFields, type AuditAction, type AuditOrigin } from "../domain/audit";
import { type Deps } from "../http/deps";

// Desks (counters): where an operator sits and the queues they call from (docs/desks.md).
// The desk row is D1's; the tickets stay their rooms'. A desk call reads each queue's head,
// picks by the rule (domain/desks.ts) and calls in that one room with a bound the room checks.

export type DeskRow = typeof desks.$inferSelect;

export function deskRecord(d: DeskRow) {
  return {
    id: d.id,
    organizationId: d.organizationId,
    locationId: d.locationId,
    name: d.name,
    displayName: d.displayName,
    queueIds: d.queueIds,
    weights: d.queueWeights,
    status: d.operatorId === null ? ("closed" as const) : ("open" as const),
    operatorId: d.operatorId,
    openedAt: isoOrNull(d.openedAt),
    createdAt: iso(d.createdAt),
    updatedAt: iso(d.updatedAt),
  };
}

/** The label a desk's calls carry (the board shows "A-042 → Guichet 3"). */
export function deskLabel(d: DeskRow): string {
  return d.displayName ?? d.name;
}

export async function findDesk({ db }: Deps, deskId: string): Promise<DeskRow> {
  const row = await db.select().from(desks).where(eq(desks.id, deskId)).get();
  if (!row) throw notFound("Desk");
  return row;
}

export async function findDeskLocation({ db }: Deps, locationId: string): Promise<{ id: string; organizationId: string }> {
  const row = await db
    .select({ id: locations.id, organizationId: locations.organizationId })
    .from(locations)
    .where(eq(locations.id, locationId))
    .get();
  if (!row) throw notFound("Location");
  return row;
}

/**
 * Every queue id must be a queue of the organization (404 otherwise, as for any other id), and
 * for a scoped manager one of their locations' queues (issue 31).
 */
async function checkQueues(
  deps: Deps,
  organizationId: string,
  queueIds: readonly string[],
  scope: LocationScope = null,
): Promise<string[]> {
  const { db } = deps;
  const unique = [...new Set(queueIds)];
  const found = await db
    .select({ id: queues.id })
    .from(queues)
    .where(
      and(
        eq(queues.organizationId, organizationId),
        inArray(queues.id, unique),
        scope ? inArray(queues.serviceId, servicesAt(deps, scope)) : undefined,
      ),
    )
    .all();
  const known = new Set(found.map((q) => q.id));
  const missing = unique.find((id) => !known.has(id));
  if (missing !== undefined) throw new ApiError("NOT_FOUND", "Queue not found", { field: "queueIds", queueId: missing });
  return unique;
}

export interface DeskFields {
  name: string;
  displayName?: string | null;
  queueIds: string[];
  /** Queue id → 1..10; a queue not listed weighs 1. Replaced whole on a change; null clears. */
  weights?: Record<string, number> | null;
}

/** Weights name only the desk's own queues (400 `weights` otherwise, with the stray `queueId`). */
function checkWeights(weights: Record<string, number>, queueIds: readonly string[]): Record<string, number> {
  const stray = Object.keys(weights).find((id) => !queueIds.includes(id));
  if (stray !== undefined) throw validationError("weights", "weights may only name the desk's queueIds", { queueId: stray });
  return Object.fromEntries(queueIds.filter((id) => Object.hasOwn(weights, id)).map((id) => [id, weights[id]!]));
}

/** What a desk's entries record (issue 40), in the batch of the change. */
const AUDITED_FIELDS = ["name", "displayName", "locationId", "queueIds", "queueWeights"] as const;

function deskChange(desk: DeskRow, action: AuditAction, before: DeskRow | null, after: DeskRow | null) {
  return {
    organizationId: desk.organizationId,
    entityType: "desk",
    entityId: desk.id,
    action,
    changes: changedFields(before, after, AUDITED_FIELDS),
  };
}

export async function createDesk(
  deps: Deps,
  location: { id: string; organizationId: string },
  input: DeskFields,
  at: number,
  scope: LocationScope = null,
  origin?: AuditOrigin,
) {
  const { db } = deps;
  const queueIds = await checkQueues(deps, location.organizationId, input.queueIds, scope);
  const queueWeights = checkWeights(input.weights ?? {}, queueIds);
  const row: DeskRow = {
    id: newId("dsk"),
    organizationId: location.organizationId,
    locationId: location.id,
    name: input.name,
    displayName: input.displayName ?? null,
    queueIds,
    queueWeights,
    operatorId: null,
    openedAt: null,
    createdAt: at,
    updatedAt: at,
  };
  const insert = db.insert(desks).values(row);
  if (!origin) await insert;
  else await db.batch([insert, auditInsert(deps, origin, deskChange(row, "desk.created", null, row), at)]);
  return row;
}

export async function listDesks(
  { db }: Deps,
  locationId: string,
  window: ListWindow,
): Promise<{ rows: DeskRow[]; total: number; hasMore: boolean }> {
  const where = eq(desks.locationId, locationId);
  const [page, counted] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: desks,
        cursorColumn: desks.id,
        owner: where,
        where,
        keys: [
          { column: desks.createdAt, direction: "asc" },
          { column: desks.id, direction: "asc" },
        ],
      },
      (c) =>
        db
          .select()
          .from(desks)
          .where(c.where)
          .orderBy(...c.orderBy)
          .limit(c.limit)
          .offset(c.offset)
          .all(),
    ),
    db.select({ n: count() }).from(desks).where(where).get(),
  ]);
  return { ...page, total: counted?.n ?? 0 };
}

export async function updateDesk(
  deps: Deps,
  desk: DeskRow,
  patch: Partial<DeskFields>,
  at: number,
  scope: LocationScope = null,
  origin?: AuditOrigin,
): Promise<DeskRow> {
  const { db } = deps;
  const set: Partial<DeskRow> = { updatedAt: at };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.displayName !== undefined) set.displayName = patch.displayName;
  if (patch.queueIds !== undefined) set.queueIds = await checkQueues(deps, desk.organizationId, patch.queueIds, scope);
  // New weights replace the old; new queues alone keep the weights of the queues that stay.
  if (patch.weights !== undefined || set.queueIds !== undefined) {
    set.queueWeights = checkWeights(
      patch.weights === undefined ? pickWeights(desk.queueWeights, set.queueIds!) : (patch.weights ?? {}),
      set.queueIds ?? desk.queueIds,
    );
  }
  const update = db.update(desks).set(set).where(eq(desks.id, desk.id)).returning();
  // The entry only if the update found the desk (changes() of the statement before it).
  const [rows] = origin
    ? await db.batch([update, auditInsertIfChanged(deps, origin, deskChange(desk, "desk.updated", desk, { ...desk, ...set }), at)])
    : [await update.all()];
  const row = rows[0];
  if (!row) throw notFound("Desk");
  return row;
}

function pickWeights(weights: Record<string, number>, queueIds: readonly string[]): Record<string, number> {
  return Object.fromEntries(Object.entries(weights).filter(([id]) => queueIds.includes(id)));
}

export async function deleteDesk(deps: Deps, desk: DeskRow, at: number, origin?: AuditOrigin): Promise<void> {
  const { db } = deps;
  const remove = db.delete(desks).where(eq(desks.id, desk.id));
  if (!origin) await remove;
  else await db.batch([remove, auditInsertIfChanged(deps, origin, deskChange(desk, "desk.deleted", desk, null), at)]);
}

/**
 * One operator per desk and one desk per operator, exact under concurrency: the write is
 * conditional on the desk being free, and the partial unique index on operator_id refuses a
 * second desk. Opening the desk one already holds is a no-op.
 */
export async function openDesk(deps: Deps, desk: DeskRow, operatorId: string, at: number): Promise<DeskRow> {
  const { db } = deps;
  let row: DeskRow | undefined;
  try {
    row = await db
      .update(desks)
      .set({ operatorId, openedAt: at, updatedAt: at })
      .where(and(eq(desks.id, desk.id), isNull(desks.operatorId)))
      .returning()
      .get();
  } catch (err) {
    if (!isUniqueViolation(err, "operator_id")) throw err;
    const other = await db.select({ id: desks.id }).from(desks).where(eq(desks.operatorId, operatorId)).get();
    throw new ApiError("CONFLICT", "You already have another desk open: close it first", {
      reason: "operator_has_desk",
      deskId: other?.id ?? null,
    });
  }
  if (row) return row;
  const current = await findDesk(deps, desk.id);
  if (current.operatorId === operatorId) return current;
  throw new ApiError("CONFLICT", "Another operator has this desk open", { reason: "desk_occupied", operatorId: current.operatorId });
}

/** Closed by the operator who has it open, or by a manager (`force`). */
export async function closeDesk({ db }: Deps, desk: DeskRow, operatorId: string, force: boolean, at: number): Promise<DeskRow> {
  if (desk.operatorId === null) throw invalidState("closed", ["open"], "This desk is not open");
  if (desk.operatorId !== operatorId && !force) {
    throw new ApiError("CONFLICT", "Another operator has this desk open", { reason: "desk_occupied", operatorId: desk.operatorId });
  }
  const row = await db
    .update(desks)
    .set({ operatorId: null, openedAt: null, updatedAt: at })
    .where(and(eq(desks.id, desk.id), eq(desks.operatorId, desk.operatorId)))
    .returning()
    .get();
  if (!row) throw invalidState("closed", ["open"], "This desk is not open");
  return row;
}

/** The desk the caller works at: open, and by them. */
export function assertAtDesk(desk: DeskRow, operatorId: string): void {
  if (desk.operatorId === null) throw invalidState("closed", ["open"], "Open this desk before calling from it");
  if (desk.operatorId !== operatorId) {
    throw new ApiError("CONFLICT", "Another operator has this desk open", { reason: "desk_occupied", operatorId: desk.operatorId });
  }
}

/**
 * Calls the next ticket over the desk's queues (docs/desks.md):
 *  1. read each live queue's head (the ticket its room would call next);
 *  2. pick by the rule (domain/desks.ts): the best head, and as `bound` the best head of the
 *     other queues;
 *  3. call in the picked queue's room: the room calls its current head only if it still ranks
 *     before `bound` (one transaction of its single writer), else answers HEAD_MOVED;
 *  4. on HEAD_MOVED (or the picked queue emptied or closed meanwhile) read again, at most
 *     DESK_CALL_ATTEMPTS times.
 * A ticket called this way ranked first among the desk's queues' heads at the moment its room
 * called it, unless a queue gained a better head after it was read (a join racing the call,
 * which may be ordered after it). Two desks never get the same ticket: only its room calls it.
 */
export async function callAtDesk(
  deps: Deps,
  desk: DeskRow,
  operatorId: string,
  userId: string | null,
  at: number,
  /** A scoped caller's locations (issue 31): a desk listing another location's queue never calls there for them. */
  scope: LocationScope = null,
  /** What became of the caller's previous calls at this desk (docs/floor.md); null: report the latest open one. */
  outcome: PreviousOutcome | null = null,
): Promise<{ ticket: TicketView; previous: PreviousCalls }> {
  const { db } = deps;
  assertAtDesk(desk, operatorId);
  // Queues deleted since the desk was set up are left out (their rows are gone).
  const liveQueues =
    desk.queueIds.length === 0
      ? []
      : await db
          .select({ id: queues.id, organizationId: queues.organizationId, rulesVersion: queues.rulesVersion })
          .from(queues)
          .where(
            and(
              eq(queues.organizationId, desk.organizationId),
              inArray(queues.id, desk.queueIds),
              scope ? inArray(queues.serviceId, servicesAt(deps, scope)) : undefined,
            ),
          )
          .all();
  const live = liveQueues.map((q) => q.id);
  // Each room checks the member's breaks on its copy of the rules as it answers its head; with
  // no queue left to ask, the calendar is read.
  if (userId !== null && liveQueues.length === 0) await assertMayCall(deps, desk.organizationId, userId, at);
  const label = deskLabel(desk);
  // The first read of each queue settles the caller's previous calls at this desk there, in the
  // same room call (issue 43): committed even when nothing is then left to call.
  let previous: PreviousCalls = { open: null, closed: [] };
  for (let attempt = 0; attempt < DESK_CALL_ATTEMPTS; attempt++) {
    let heads: (DeskCandidate | null)[];
    if (attempt === 0) {
      const settled = await Promise.all(liveQueues.map((q) => readHeadAfterPrevious(deps, q, desk.id, operatorId, userId, outcome, at)));
      heads = settled.map((s) => s.head);
      previous = mergePrevious(settled.map((s) => s.previous));
    } else {
      heads = await Promise.all(liveQueues.map((q) => readHead(deps, q, userId, at)));
    }
    // Every head is ranked at the call's one instant, here and in the room (docs/desks.md).
    const weighting = { at, weights: desk.queueWeights };
    const choice = pickCandidate(heads, weighting);
    if (choice === null) throw new ApiError("QUEUE_EMPTY", "No ticket is waiting to be called at this desk's queues", { deskId: desk.id });
    const result = await roomOf(deps, choice.pick.queueId).command({
      verb: "callAtDesk",
      operatorId,
      deskId: desk.id,
      counter: label,
      bound: choice.bound,
      at,
      weights: desk.queueWeights,
    });
    if (result.ok) {
      await finishElsewhere(deps, live, choice.pick.queueId, operatorId, at);
      return { ticket: result.value, previous };
    }
    // The picked queue moved on (another desk called its head, it emptied or closed): read again.
    if (result.error.code === "HEAD_MOVED" || result.error.code === "QUEUE_EMPTY" || result.error.code === "QUEUE_CLOSED") continue;
    throw roomFailure(result.error);
  }
  throw new ApiError("CONFLICT", "The desk's queues are changing too fast; call again", { reason: "desk_contended", deskId: desk.id });
}

async function assertMayCall(deps: Deps, organizationId: string, userId: string, at: number): Promise<void> {
  const block = await operatorBlock(deps, organizationId, userId, at);
  if (block) {
    throw new ApiError("OPERATOR_UNAVAILABLE", "You are on a break, closure or unavailability right now", {
      eventId: block.eventId,
      until: iso(block.until),
    });
  }
}

type LiveQueue = { id: string; organizationId: string; rulesVersion: number };

async function readHead(deps: Deps, queue: LiveQueue, userId: string | null, at: number): Promise<DeskCandidate | null> {
  try {
    return await withRules(deps, queue, at, () =>
      roomOf(deps, queue.id).query({ question: "deskHead", at, userId, rulesVersion: queue.rulesVersion }),
    );
  } catch (err) {
    if (err instanceof ApiError && err.code === "NOT_FOUND") return null; // deleted meanwhile
    throw err;
  }
}

async function readHeadAfterPrevious(
  deps: Deps,
  queue: LiveQueue,
  deskId: string,
  operatorId: string,
  userId: string | null,
  outcome: PreviousOutcome | null,
  at: number,
): Promise<{ head: DeskCandidate | null; previous: PreviousCalls | null }> {
  try {
    return await withRules(deps, queue, at, () =>
      roomOf(deps, queue.id).command({
        verb: "deskHeadAfterPrevious",
        operatorId,
        deskId,
        at,
        userId,
        rulesVersion: queue.rulesVersion,
        outcome,
      }),
    );
  } catch (err) {
    if (err instanceof ApiError && err.code === "NOT_FOUND") return { head: null, previous: null }; // deleted meanwhile
    throw err;
  }
}

/** The desk's queues' settlements as one: every call closed, and the latest call left open. */
function mergePrevious(parts: readonly (PreviousCalls | null)[]): PreviousCalls {
  let open: PreviousCalls["open"] = null;
  const closed: PreviousCalls["closed"] = [];
  for (const part of parts) {
    if (part === null) continue;
    closed.push(...part.closed);
    if (part.open && (open === null || part.open.calledAt > open.calledAt)) open = part.open;
  }
  return { open, closed };
}

/** As a call on one queue completes what the operator was serving there, a desk call does at all its queues. */
async function finishElsewhere(deps: Deps, queueIds: readonly string[], calledIn: string, operatorId: string, at: number): Promise<void> {
  await Promise.all(
    queueIds.filter((id) => id !== calledIn).map((id) => roomOf(deps, id).command({ verb: "finishServingOf", operatorId, at })),
  );
}
