import { and, count, desc, eq, isNull, type SQL } from "drizzle-orm";
import type { ListWindow } from "../http/cursor";
import { keysetPage } from "../http/keyset";
import { qrTokens } from "../db/schema";
import { qrTargetProblem, qrTokenStatus, type QrPurpose } from "../domain/qr";
import { notFound, validationError } from "../http/errors";
import { newId, randomString } from "../lib/ids";
import { iso, isoOrNull } from "../lib/time";
import { queueTarget, serviceTarget, type QueueTarget } from "./channel-targets";
import type { Deps } from "../http/deps";

export type QrTokenRow = typeof qrTokens.$inferSelect;

/** 32 characters of a 32-letter alphabet: 160 random bits, short enough for a small code. */
const TOKEN_LENGTH = 32;

export function qrImageUrl(token: string): string {
  return `/v1/qr/generate?token=${encodeURIComponent(token)}`;
}

export function qrTokenRecord(t: QrTokenRow, at: number) {
  return {
    id: t.id,
    purpose: t.purpose,
    serviceId: t.serviceId,
    queueId: t.queueId,
    token: t.token,
    status: qrTokenStatus(t, at),
    expiresAt: isoOrNull(t.expiresAt),
    usedAt: isoOrNull(t.usedAt),
    revokedAt: isoOrNull(t.revokedAt),
    createdAt: iso(t.createdAt),
    imageUrl: qrImageUrl(t.token),
  };
}

export interface QrTarget {
  organizationId: string;
  serviceId: string | null;
  queueId: string | null;
  queue: QueueTarget | null;
}

/**
 * The organization, service and queue a new token points at. The service of a queue is
 * recorded even when only the queue was given, so a scan knows both without another read.
 * Whether a given serviceId matches the queue is checked only after authorization
 * (assertQueueOfService): before it, another organization's queue must stay a plain 404.
 */
export async function resolveQrTarget(
  deps: Deps,
  purpose: QrPurpose,
  ids: { queueId?: string | undefined; serviceId?: string | undefined },
): Promise<QrTarget> {
  const problem = qrTargetProblem(purpose, ids);
  if (problem) throw validationError(problem.field, problem.reason);
  if (ids.queueId) {
    const queue = await queueTarget(deps, ids.queueId);
    return { organizationId: queue.organizationId, serviceId: queue.serviceId, queueId: queue.id, queue };
  }
  const service = await serviceTarget(deps, ids.serviceId!);
  return { organizationId: service.organizationId, serviceId: service.id, queueId: null, queue: null };
}

/** A serviceId given alongside a queueId must be that queue's; call once the caller may see the queue. */
export function assertQueueOfService(target: QrTarget, serviceId: string | undefined): void {
  if (target.queue && serviceId && serviceId !== target.queue.serviceId)
    throw validationError("serviceId", "the queue does not belong to this service");
}

export async function createQrToken(
  { db }: Deps,
  input: { purpose: QrPurpose; target: QrTarget; expiresAt: number | null; createdById: string | null },
  at: number,
): Promise<QrTokenRow> {
  const row: QrTokenRow = {
    id: newId("qrt"),
    organizationId: input.target.organizationId,
    purpose: input.purpose,
    serviceId: input.target.serviceId,
    queueId: input.target.queueId,
    token: randomString(TOKEN_LENGTH),
    expiresAt: input.expiresAt,
    usedAt: null,
    usedByUserId: null,
    createdById: input.createdById,
    createdAt: at,
    revokedAt: null,
  };
  await db.insert(qrTokens).values(row);
  return row;
}

export interface QrTokenFilter {
  purpose?: QrPurpose | undefined;
  queueId?: string | undefined;
  serviceId?: string | undefined;
}

/** The organization's tokens that are not revoked, newest first. */
export async function listQrTokens(
  { db }: Deps,
  organizationId: string,
  filter: QrTokenFilter,
  window: ListWindow,
): Promise<{ rows: QrTokenRow[]; total: number; hasMore: boolean }> {
  const conditions: SQL[] = [eq(qrTokens.organizationId, organizationId), isNull(qrTokens.revokedAt)];
  if (filter.purpose) conditions.push(eq(qrTokens.purpose, filter.purpose));
  if (filter.queueId) conditions.push(eq(qrTokens.queueId, filter.queueId));
  if (filter.serviceId) conditions.push(eq(qrTokens.serviceId, filter.serviceId));
  const where = and(...conditions);
  const [page, totals] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: qrTokens,
        cursorColumn: qrTokens.id,
        owner: eq(qrTokens.organizationId, organizationId),
        where,
        keys: [
          { column: qrTokens.createdAt, direction: "desc" },
          { column: qrTokens.id, direction: "desc" },
        ],
      },
      (c) =>
        db
          .select()
          .from(qrTokens)
          .where(c.where)
          .orderBy(...c.orderBy)
          .limit(c.limit)
          .offset(c.offset)
          .all(),
    ),
    db.select({ total: count() }).from(qrTokens).where(where).get(),
  ]);
  return { ...page, total: totals?.total ?? 0 };
}

/** A token that is not revoked; a revoked one is gone as far as the management routes go. */
export async function liveQrToken({ db }: Deps, id: string): Promise<QrTokenRow> {
  const row = await db
    .select()
    .from(qrTokens)
    .where(and(eq(qrTokens.id, id), isNull(qrTokens.revokedAt)))
    .get();
  if (!row) throw notFound("QR token");
  return row;
}

/** Revokes once: of two concurrent revocations the second finds nothing left to revoke. */
export async function revokeQrToken({ db }: Deps, id: string, at: number): Promise<QrTokenRow> {
  const row = await db
    .update(qrTokens)
    .set({ revokedAt: at })
    .where(and(eq(qrTokens.id, id), isNull(qrTokens.revokedAt)))
    .returning()
    .get();
  if (!row) throw notFound("QR token");
  return row;
}
