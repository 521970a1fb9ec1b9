import { changedFields, type AuditAction, type AuditChange, type AuditChanges, type AuditOrigin } from "../domain/audit";
import type { ListWindow } from "../http/cursor";
import { keysetPage } from "../http/keyset";
import { auditInsert, auditInsertIfChanged, recordAudit } from "../audit/audit";
import { and, asc, count, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import { members, queues, serviceIntake, serviceLocations, services, subscriptions } from "../db/schema";
import { nextLetter } from "../domain/display-code";
import type { Role } from "../domain/permissions";
import type { LocationScope } from "../domain/location-scope";
import { servicesAt } from "../catalog/location-scope";
import { entitlements } from "../domain/plans";
import { DEFAULT_MAX_DEFER_MINUTES, DEFAULT_MAX_DEFERS, DEFAULT_NO_SHOW_MINUTES, type QueueStatus } from "../domain/tickets";
import { DEFAULT_MINUTES_PER_TICKET } from "../domain/wait-estimate";
import { ApiError, notFound, planRequired } from "../http/errors";
import { newId } from "../lib/ids";
import { iso, isoOrNull } from "../lib/time";
import type { QueueSummary, RoomSettings } from "../queue-room/contract";
import { isUniqueViolation } from "../db/errors";
import { inRoom, openRoom, readRoom } from "./queue-rooms";
import { type QueueRow, queueQuery, sessionRoleInQueueQuery } from "../http/credentials/queues";
import { type Deps } from "../http/deps";
export { type QueueRow, queueQuery, sessionRoleInQueueQuery };

export async function findQueue({ db }: Deps, queueId: string): Promise<QueueRow> {
  const row = await db.select().from(queues).where(eq(queues.id, queueId)).get();
  if (!row) throw notFound("Queue");
  return row;
}

/**
 * The queue and `userId`'s role in its organization (null: not a member) in one read: on the
 * operator's hot path (call-next, serve…) this saves the membership round trip.
 */
export async function findQueueWithRole(
  { db }: Deps,
  queueId: string,
  userId: string,
): Promise<{ queue: QueueRow; role: Role | null; locationIds: string[] | null }> {
  const row = await db
    .select({ queue: queues, role: members.role, locationIds: members.locationIds })
    .from(queues)
    .leftJoin(members, and(eq(members.organizationId, queues.organizationId), eq(members.userId, userId)))
    .where(eq(queues.id, queueId))
    .get();
  if (!row) throw notFound("Queue");
  return { queue: row.queue, role: row.role ?? null, locationIds: row.locationIds ?? null };
}

/** The catalog fields from D1; status, capacity and live counts from the room, the authority. */
export function queueRecord(q: QueueRow, s: QueueSummary) {
  return {
    id: q.id,
    serviceId: q.serviceId,
    name: q.name,
    description: q.description,
    maxCapacity: s.maxCapacity,
    noShowTimeoutMinutes: s.noShowTimeoutMinutes,
    defaultServiceMinutes: s.defaultServiceMinutes,
    targetWaitMinutes: q.targetWaitMinutes,
    maxDeferMinutes: q.maxDeferMinutes,
    maxDefers: q.maxDefers,
    smsKeyword: q.smsKeyword,
    status: s.status,
    letter: q.letter,
    waitingCount: s.waitingCount,
    servingCount: s.servingCount,
    estimatedWaitMinutes: s.estimatedWaitMinutes,
    estimatedWaitRange: s.estimatedWaitRange,
    archivedAt: isoOrNull(s.archivedAt),
    createdAt: iso(q.createdAt),
    updatedAt: iso(q.updatedAt),
  };
}
export type QueueRecord = ReturnType<typeof queueRecord>;

/**
 * The queue's status, capacity and live counts as its room holds them now. D1's status column
 * follows through the room's outbox a moment later: a decision on the status asks the room.
 */
export async function liveSummary(deps: Deps, queue: QueueRow, at: number): Promise<QueueSummary> {
  return readRoom(deps, queue, (room) => room.query({ question: "summary", at }));
}

export async function describeQueue(deps: Deps, queue: QueueRow, at: number): Promise<QueueRecord> {
  return queueRecord(queue, await liveSummary(deps, queue, at));
}

export interface NewQueue {
  serviceId: string;
  name: string;
  description?: string | null | undefined;
  maxCapacity?: number | null | undefined;
  noShowTimeoutMinutes?: number | undefined;
  defaultServiceMinutes?: number | undefined;
  targetWaitMinutes?: number | null | undefined;
  maxDeferMinutes?: number | undefined;
  maxDefers?: number | undefined;
}

const LETTER_ATTEMPTS = 5;

/**
 * Creates a queue with the first free letter of its service, its room first. The plan's queue limit is checked
 * by the insert itself (INSERT … SELECT … WHERE count < limit), so two concurrent creations
 * cannot both pass; a letter taken concurrently is retried with the next one.
 */
export async function createQueue(
  deps: Deps,
  organizationId: string,
  input: NewQueue,
  at: number,
  /** Only the dev seed names its queue (scripts/dev-worker.ts: the documented demo id); the API never does. */
  id?: string,
  /** Who creates it: the entry is written in the insert's batch, only if the insert wrote the row (issue 40). */
  origin?: AuditOrigin,
): Promise<QueueRecord> {
  const { db } = deps;
  const service = await db
    .select({ id: services.id })
    .from(services)
    .where(and(eq(services.id, input.serviceId), eq(services.organizationId, organizationId)))
    .get();
  if (!service) throw new ApiError("NOT_FOUND", "Service not found", { field: "serviceId" });
  const sub = await db
    .select({ plan: subscriptions.plan })
    .from(subscriptions)
    .where(eq(subscriptions.organizationId, organizationId))
    .get();
  const plan = sub?.plan ?? "starter";
  const maxQueues = entitlements({ plan }).features.maxQueues;
  const queueLimitReached = () =>
    planRequired(`The ${plan} plan allows ${maxQueues} queue(s); upgrade to add more`, {
      currentPlan: plan,
      limit: maxQueues,
      feature: "queues",
    });
  if (maxQueues !== null) {
    // Checked once before any room is opened, so a plan at its limit opens none; the insert
    // below checks again, atomically, for concurrent creations.
    const open = await db
      .select({ n: count() })
      .from(queues)
      .where(and(eq(queues.organizationId, organizationId), isNull(queues.archivedAt)))
      .get();
    if ((open?.n ?? 0) >= maxQueues) throw queueLimitReached();
  }

  for (let attempt = 0; attempt < LETTER_ATTEMPTS; attempt++) {
    // Letters are unique per service (the index) and, so one branch's board never shows two
    // A-042, among the open queues of every service offered at the same locations (docs/display-board.md).
    const [own, neighbours] = await Promise.all([
      db.select({ letter: queues.letter }).from(queues).where(eq(queues.serviceId, input.serviceId)).all(),
      db
        .selectDistinct({ letter: queues.letter })
        .from(queues)
        .innerJoin(serviceLocations, eq(serviceLocations.serviceId, queues.serviceId))
        .where(
          and(
            eq(queues.organizationId, organizationId),
            isNull(queues.archivedAt),
            inArray(
              serviceLocations.locationId,
              db.select({ id: serviceLocations.locationId }).from(serviceLocations).where(eq(serviceLocations.serviceId, input.serviceId)),
            ),
          ),
        )
        .all(),
    ]);
    const used = [...own, ...neighbours];
    const row: QueueRow = {
      id: id ?? newId("que"),
      organizationId,
      serviceId: input.serviceId,
      name: input.name,
      description: input.description ?? null,
      maxCapacity: input.maxCapacity ?? null,
      noShowTimeoutMinutes: input.noShowTimeoutMinutes ?? DEFAULT_NO_SHOW_MINUTES,
      defaultServiceMinutes: input.defaultServiceMinutes ?? DEFAULT_MINUTES_PER_TICKET,
      letter: nextLetter(used.map((u) => u.letter)),
      status: "active",
      archivedAt: null,
      createdAt: at,
      updatedAt: at,
      // Its room holds no rules yet: the first join or call-next loads them (room-rules.ts).
      rulesVersion: 0,
      // Copied from its service's questions by the insert below (docs/visits.md).
      intakeQuestions: 0,
      blendPolicy: null,
      targetWaitMinutes: input.targetWaitMinutes ?? null,
      maxDeferMinutes: input.maxDeferMinutes ?? DEFAULT_MAX_DEFER_MINUTES,
      maxDefers: input.maxDefers ?? DEFAULT_MAX_DEFERS,
      smsKeyword: null,
    };
    // The room learns its queue before the row exists, so no D1 row ever names a room that
    // does not know its queue. A refused insert leaves a configured room no id points at.
    await openRoom(deps, row);
    try {
      // A conditional INSERT … SELECT: the row comes from the count of the organization's open
      // queues, only while the plan allows one more; its intake count is copied from its service.
      // Drizzle's insert … select names every column of the table, in the schema's order.
      const openQueues = db
        .select({ n: count().as("n") })
        .from(queues)
        .where(and(eq(queues.organizationId, organizationId), isNull(queues.archivedAt)))
        .as("open_queues");
      const intakeQuestions = db
        .select({ n: sql<number>`json_array_length(${serviceIntake.fields})` })
        .from(serviceIntake)
        .where(eq(serviceIntake.serviceId, row.serviceId));
      const insert = db.insert(queues).select(
        db
          .select({
            id: sql`${row.id}`.as("id"),
            organizationId: sql`${organizationId}`.as("organization_id"),
            serviceId: sql`${row.serviceId}`.as("service_id"),
            name: sql`${row.name}`.as("name"),
            description: sql`${row.description}`.as("description"),
            maxCapacity: sql`${row.maxCapacity}`.as("max_capacity"),
            noShowTimeoutMinutes: sql`${row.noShowTimeoutMinutes}`.as("no_show_timeout_minutes"),
            defaultServiceMinutes: sql`${row.defaultServiceMinutes}`.as("default_service_minutes"),
            letter: sql`${row.letter}`.as("letter"),
            status: sql`'active'`.as("status"),
            archivedAt: sql`NULL`.as("archived_at"),
            createdAt: sql`${at}`.as("created_at"),
            updatedAt: sql`${at}`.as("updated_at"),
            rulesVersion: sql`0`.as("rules_version"),
            intakeQuestions: sql`coalesce(${intakeQuestions}, 0)`.as("intake_questions"),
            blendPolicy: sql`NULL`.as("blend_policy"),
            targetWaitMinutes: sql`${row.targetWaitMinutes}`.as("target_wait_minutes"),
            maxDeferMinutes: sql`${row.maxDeferMinutes}`.as("max_defer_minutes"),
            maxDefers: sql`${row.maxDefers}`.as("max_defers"),
            smsKeyword: sql`NULL`.as("sms_keyword"),
          })
          .from(openQueues)
          .where(maxQueues === null ? undefined : lt(openQueues.n, maxQueues)),
      );
      const change = queueChange(row, "queue.created", changedFields(null, row, QUEUE_AUDITED_FIELDS));
      const [result] = origin ? await db.batch([insert, auditInsertIfChanged(deps, origin, change, at)]) : [await insert.run()];
      if (result.meta.changes === 0) throw queueLimitReached();
    } catch (err) {
      if (isUniqueViolation(err, "letter")) continue;
      throw err;
    }
    return describeQueue(deps, row, at);
  }
  throw new ApiError("CONFLICT", "Too many queues are being created for this service at once; retry", { field: "serviceId" });
}

export async function listQueues(
  deps: Deps,
  organizationId: string,
  serviceId: string | undefined,
  window: ListWindow,
  at: number,
  /** A scoped member's locations (issue 31): only the queues of services offered there. */
  scope: LocationScope = null,
): Promise<{ items: QueueRecord[]; total: number; hasMore: boolean }> {
  const { db } = deps;
  const where = and(
    eq(queues.organizationId, organizationId),
    scope ? inArray(queues.serviceId, servicesAt(deps, scope)) : undefined,
    isNull(queues.archivedAt),
    serviceId === undefined ? undefined : eq(queues.serviceId, serviceId),
  );
  const [page, totals] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: queues,
        cursorColumn: queues.id,
        owner: eq(queues.organizationId, organizationId),
        where,
        keys: [
          { column: queues.createdAt, direction: "asc" },
          { column: queues.id, direction: "asc" },
        ],
      },
      (c) =>
        db
          .select()
          .from(queues)
          .where(c.where)
          .orderBy(...c.orderBy)
          .limit(c.limit)
          .offset(c.offset)
          .all(),
    ),
    db.select({ n: count() }).from(queues).where(where).get(),
  ]);
  const items = await Promise.all(page.rows.map((q) => describeQueue(deps, q, at)));
  return { items, total: totals?.n ?? 0, hasMore: page.hasMore };
}

export async function setQueueStatus(
  deps: Deps,
  queue: QueueRow,
  status: QueueStatus,
  at: number,
  origin?: AuditOrigin,
): Promise<QueueRecord> {
  // D1's status follows through the room's outbox only: a second writer here could land
  // after a later change had been drained, and leave D1 behind for good.
  const summary = await inRoom(deps, queue, (room) => room.command({ verb: "setStatus", status, at }));
  // The room committed the change: the entry follows it (the room has no D1 batch to share).
  if (origin && queue.status !== status) {
    await recordAudit(deps, origin, queueChange(queue, "queue.status_changed", { status: { before: queue.status, after: status } }), at);
  }
  return queueRecord(queue, summary);
}

export interface QueuePatch {
  name?: string | undefined;
  description?: string | null | undefined;
  maxCapacity?: number | null | undefined;
  noShowTimeoutMinutes?: number | undefined;
  defaultServiceMinutes?: number | undefined;
  targetWaitMinutes?: number | null | undefined;
  maxDeferMinutes?: number | undefined;
  maxDefers?: number | undefined;
  /** Already normalized (domain/keywords.ts smsKeywordOf). */
  smsKeyword?: string | null | undefined;
}

/**
 * The room takes the settings it enforces first (it refuses an archived queue); the D1 row
 * then follows, names included. A failure in between leaves D1 behind the room, and the
 * same PATCH repeated completes it.
 */
export async function updateQueue(deps: Deps, queue: QueueRow, patch: QueuePatch, at: number, origin?: AuditOrigin): Promise<QueueRecord> {
  const { db } = deps;
  const settings: RoomSettings = {};
  if (patch.maxCapacity !== undefined) settings.maxCapacity = patch.maxCapacity;
  if (patch.noShowTimeoutMinutes !== undefined) settings.noShowTimeoutMinutes = patch.noShowTimeoutMinutes;
  if (patch.defaultServiceMinutes !== undefined) settings.defaultServiceMinutes = patch.defaultServiceMinutes;
  const summary = await inRoom(deps, queue, (room) => room.command({ verb: "reconfigure", settings, at }));
  const changes: Partial<QueueRow> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.description !== undefined) changes.description = patch.description;
  if (patch.maxCapacity !== undefined) changes.maxCapacity = patch.maxCapacity;
  if (patch.noShowTimeoutMinutes !== undefined) changes.noShowTimeoutMinutes = patch.noShowTimeoutMinutes;
  if (patch.defaultServiceMinutes !== undefined) changes.defaultServiceMinutes = patch.defaultServiceMinutes;
  if (patch.targetWaitMinutes !== undefined) changes.targetWaitMinutes = patch.targetWaitMinutes;
  if (patch.maxDeferMinutes !== undefined) changes.maxDeferMinutes = patch.maxDeferMinutes;
  if (patch.maxDefers !== undefined) changes.maxDefers = patch.maxDefers;
  if (patch.smsKeyword !== undefined) changes.smsKeyword = patch.smsKeyword;
  if (Object.keys(changes).length === 0) return queueRecord(queue, summary);
  const audited = changedFields(queue, changes, Object.keys(changes));
  changes.updatedAt = at;
  const update = db.update(queues).set(changes).where(eq(queues.id, queue.id)).returning();
  let updated: QueueRow | undefined;
  try {
    [[updated]] =
      origin && Object.keys(audited).length > 0
        ? await db.batch([update, auditInsert(deps, origin, queueChange(queue, "queue.updated", audited), at)])
        : [await update.all()];
  } catch (err) {
    if (isUniqueViolation(err, "sms_keyword")) {
      throw new ApiError("CONFLICT", "Another queue of this organization already answers to this keyword", { field: "smsKeyword" });
    }
    throw err;
  }
  return queueRecord(updated ?? { ...queue, ...changes }, summary);
}

export async function archiveQueue(deps: Deps, queue: QueueRow, at: number, origin?: AuditOrigin): Promise<QueueRecord> {
  const { db } = deps;
  const summary = await inRoom(deps, queue, (room) => room.command({ verb: "archive", at }));
  if (origin && queue.archivedAt === null) await recordAudit(deps, origin, queueChange(queue, "queue.archived"), at);
  // Archiving is final (the room refuses every later change), so recording it at once cannot
  // go stale: listings and the plan's queue count leave the queue out right away. The status
  // column itself is still written by the room's outbox only.
  await db
    .update(queues)
    .set({ archivedAt: summary.archivedAt, updatedAt: at })
    .where(and(eq(queues.id, queue.id), isNull(queues.archivedAt)))
    .run();
  return queueRecord({ ...queue, updatedAt: at }, summary);
}

export async function clearQueue(deps: Deps, queue: QueueRow, at: number, origin?: AuditOrigin): Promise<{ cancelled: number }> {
  const cleared = await inRoom(deps, queue, (room) => room.command({ verb: "clear", at }));
  if (origin) {
    await recordAudit(
      deps,
      origin,
      queueChange(queue, "queue.cleared", { cancelledTickets: { before: null, after: cleared.cancelled } }),
      at,
    );
  }
  return cleared;
}

/** What a queue's creation records (issue 40). */
const QUEUE_AUDITED_FIELDS = [
  "serviceId",
  "name",
  "description",
  "maxCapacity",
  "noShowTimeoutMinutes",
  "letter",
  "targetWaitMinutes",
] as const;

/** A queue's audit entry (docs/security.md). */
function queueChange(queue: QueueRow, action: AuditAction, changes: AuditChanges = {}): AuditChange {
  return { organizationId: queue.organizationId, entityType: "queue", entityId: queue.id, action, changes };
}
