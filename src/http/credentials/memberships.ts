// Moved verbatim from src/identity/members.ts (issue #36): the authentication middleware (http/auth.ts) reads it,
// and http/ imports no area. members.ts re-exports it.
import { desc, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { members, users } from "../../db/schema";

/**
 * The organization a session request that names none works in: the only membership, else the
 * user's chosen default while they are still a member there (a stale default is ignored).
 */
export async function defaultOrganizationOf(db: Database, userId: string): Promise<{ organizationId: string | null; memberships: number }> {
  const preferred = sql<number>`${members.organizationId} = (select ${users.defaultOrganizationId} from ${users} where ${users.id} = ${userId})`;
  const rows = await db
    .select({ organizationId: members.organizationId, preferred })
    .from(members)
    .where(eq(members.userId, userId))
    .orderBy(desc(preferred))
    .limit(2)
    .all();
  if (rows.length === 1 || (rows[0] && rows[0].preferred)) return { organizationId: rows[0]!.organizationId, memberships: rows.length };
  return { organizationId: null, memberships: rows.length };
}
