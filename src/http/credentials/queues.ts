// Moved verbatim from src/tickets/queues.ts (issue #36): the authentication middleware (http/auth.ts) reads it,
// and http/ imports no area. queues.ts re-exports it.
import { and, eq, sql, type SQLWrapper } from "drizzle-orm";
import { type Database } from "../../db/client";
import { preparedRead } from "../../db/prepared";
import { members, queues, sessions } from "../../db/schema";

export type QueueRow = typeof queues.$inferSelect;

/** The statement that reads a queue row: batchable with the credential's (src/http/auth.ts). */
export function queueQuery(db: Database, queueId: string | SQLWrapper) {
  return db.select().from(queues).where(eq(queues.id, queueId)).limit(1);
}

/**
 * The role, in the queue's organization, of the user whose session has this token hash (no
 * row: not a member): batched with the session's own read, so both cost one round trip.
 */
export function sessionRoleInQueueQuery(db: Database, queueId: string | SQLWrapper, tokenHash: string | SQLWrapper) {
  return db
    .select({ role: members.role, locationIds: members.locationIds })
    .from(members)
    .where(
      and(
        eq(members.organizationId, sql`(SELECT ${queues.organizationId} FROM ${queues} WHERE ${queues.id} = ${queueId})`),
        eq(members.userId, sql`(SELECT ${sessions.userId} FROM ${sessions} WHERE ${sessions.tokenHash} = ${tokenHash})`),
      ),
    )
    .limit(1);
}

/** The same two reads, prepared once per binding (the credential lookup, src/http/auth.ts). */
export const queueRead = preparedRead(["queueId"], (db, p) => queueQuery(db, p.queueId).prepare());
export const sessionRoleInQueueRead = preparedRead(["queueId", "tokenHash"], (db, p) =>
  sessionRoleInQueueQuery(db, p.queueId, p.tokenHash).prepare(),
);

/**
 * The role, in the organization `organizationId`, of the user whose session has this token hash:
 * the hot routes' read when the isolate already knows the queue's organization (no queue read).
 */
export function sessionRoleInOrganizationQuery(db: Database, organizationId: string | SQLWrapper, tokenHash: string | SQLWrapper) {
  return db
    .select({ role: members.role, locationIds: members.locationIds })
    .from(members)
    .where(
      and(
        eq(members.organizationId, organizationId),
        eq(members.userId, sql`(SELECT ${sessions.userId} FROM ${sessions} WHERE ${sessions.tokenHash} = ${tokenHash})`),
      ),
    )
    .limit(1);
}

export const sessionRoleInOrganizationRead = preparedRead(["organizationId", "tokenHash"], (db, p) =>
  sessionRoleInOrganizationQuery(db, p.organizationId, p.tokenHash).prepare(),
);

// The queue row off the hot paths (issue 43, docs/hot-path.md). A join, a call-next and a
// ticket's read take from the queue row only what never changes (its id, organization, service
// and letter) and the rules version it was read at; the room decides the rest (status,
// capacity, rules, quota, whether the queue still exists), and refuses a join whose row is older
// than the rules it holds (QUEUE_ROW_STALE: the Worker reads the row again). So these three
// routes may use a row this isolate read recently instead of reading it with the credential;
// every other route reads it fresh.

/** How long a queue row read from D1 may stand in for it on the hot routes (its name, at worst, is that old). */
export const HOT_QUEUE_TTL_MS = 60_000;
const HOT_QUEUE_CACHE_SIZE = 1_000;
const hotQueues = new Map<string, { queue: QueueRow; until: number }>();

/** Keeps a queue row just read from D1 for the hot routes. */
export function rememberQueueRow(queue: QueueRow, at = Date.now()): void {
  hotQueues.delete(queue.id);
  if (hotQueues.size >= HOT_QUEUE_CACHE_SIZE) hotQueues.delete(hotQueues.keys().next().value!);
  hotQueues.set(queue.id, { queue, until: at + HOT_QUEUE_TTL_MS });
}

/** The row of a queue this isolate read in the last HOT_QUEUE_TTL_MS, or null. */
export function recentQueueRow(queueId: string, at = Date.now()): QueueRow | null {
  const kept = hotQueues.get(queueId);
  return kept && kept.until > at ? kept.queue : null;
}

/** The routes that may use a recent row: a join and a call-next on `/v1/queues/{queueId}/…`, a ticket's read. */
const HOT_WRITE = /^\/v1\/queues\/[^/]+\/(join|call-next)$/;
const HOT_READ = /^\/v1\/tickets\/[^/]+$/;

export function isHotQueueRoute(method: string, path: string): boolean {
  return method === "POST" ? HOT_WRITE.test(path) : method === "GET" && HOT_READ.test(path);
}
