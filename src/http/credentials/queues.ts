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
