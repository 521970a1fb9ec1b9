import { eq } from "drizzle-orm";
import { auditInsert } from "../audit/audit";
import { members } from "../db/schema";
import type { AuditOrigin } from "../domain/audit";
import type { Deps } from "../http/deps";

/** How a person signed in: a password (POST /v1/auth/login) or their organization's identity provider. */
export type SignInMethod = "password" | "sso";

/**
 * A sign-in to the console is recorded in the log of every organization the person is a member
 * of (`session.signed_in`, issue 40): who, how, from which address. The session's token is never
 * written. A person with no membership (a customer) leaves no entry: no organization's log is theirs.
 */
export async function recordSignIn(deps: Deps, origin: AuditOrigin, userId: string, method: SignInMethod, at: number): Promise<number> {
  const { db } = deps;
  const memberships = await db.select({ organizationId: members.organizationId }).from(members).where(eq(members.userId, userId)).all();
  const entries = memberships.map((m) =>
    auditInsert(
      deps,
      origin,
      {
        organizationId: m.organizationId,
        entityType: "user",
        entityId: userId,
        action: "session.signed_in",
        changes: { method: { before: null, after: method } },
      },
      at,
    ),
  );
  if (entries.length > 0) await db.batch(entries as [(typeof entries)[0], ...typeof entries]);
  return entries.length;
}
