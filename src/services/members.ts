import { and, count, eq, ne } from "drizzle-orm";
import type { Database } from "../db/client";
import { members, users } from "../db/schema";
import type { Role } from "../domain/permissions";
import { ApiError, conflict, forbidden, notFound } from "../http/errors";
import { iso } from "../lib/time";
import { isUniqueViolation } from "./organizations";
import { findUserByEmail } from "./users";

/** Roles these routes may give; the owner role only moves through transfer-ownership. */
export type GrantableRole = Exclude<Role, "owner">;

const memberColumns = {
  userId: members.userId,
  role: members.role,
  email: users.email,
  firstName: users.firstName,
  lastName: users.lastName,
  createdAt: members.createdAt,
  updatedAt: members.updatedAt,
};

type MemberRow = { userId: string; role: Role; email: string; firstName: string; lastName: string; createdAt: number; updatedAt: number };

export function memberRecord(m: MemberRow) {
  return {
    userId: m.userId,
    email: m.email,
    firstName: m.firstName,
    lastName: m.lastName,
    role: m.role,
    createdAt: iso(m.createdAt),
    updatedAt: iso(m.updatedAt),
  };
}

function ownerIsUntouchable(): ApiError {
  return forbidden("The owner cannot be changed or removed here; use transfer-ownership");
}

export async function findMember(db: Database, organizationId: string, userId: string): Promise<MemberRow | undefined> {
  return db
    .select(memberColumns)
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.organizationId, organizationId), eq(members.userId, userId)))
    .get();
}

export async function listMembers(db: Database, organizationId: string, window: { offset: number; limit: number }) {
  const where = eq(members.organizationId, organizationId);
  const [rows, total] = await Promise.all([
    db
      .select(memberColumns)
      .from(members)
      .innerJoin(users, eq(users.id, members.userId))
      .where(where)
      .orderBy(members.createdAt, members.userId)
      .limit(window.limit)
      .offset(window.offset)
      .all(),
    db.select({ n: count() }).from(members).where(where).get(),
  ]);
  return { rows, total: total?.n ?? 0 };
}

/** Adds an existing account to the organization. */
export async function addMember(db: Database, organizationId: string, email: string, role: GrantableRole, at: number): Promise<MemberRow> {
  const user = await findUserByEmail(db, email);
  if (!user) throw new ApiError("NOT_FOUND", "No account uses this email; the person must register first", { field: "email" });
  try {
    await db.insert(members).values({ organizationId, userId: user.id, role, createdAt: at, updatedAt: at });
  } catch (err) {
    if (isUniqueViolation(err, "members.")) throw conflict("email", "This person is already a member");
    throw err;
  }
  return { userId: user.id, role, email: user.email, firstName: user.firstName, lastName: user.lastName, createdAt: at, updatedAt: at };
}

/**
 * Changes a member's role. The write is conditional on the member not being the owner, so a
 * transfer of ownership running at the same time cannot be undone by it.
 */
export async function changeMemberRole(
  db: Database,
  organizationId: string,
  userId: string,
  role: GrantableRole,
  at: number,
): Promise<MemberRow> {
  const result = await db
    .update(members)
    .set({ role, updatedAt: at })
    .where(and(eq(members.organizationId, organizationId), eq(members.userId, userId), ne(members.role, "owner")))
    .run();
  if (result.meta.changes === 0) await explainUntouched(db, organizationId, userId);
  const updated = await findMember(db, organizationId, userId);
  if (!updated) throw notFound("Member");
  return updated;
}

export async function removeMember(db: Database, organizationId: string, userId: string): Promise<void> {
  const result = await db
    .delete(members)
    .where(and(eq(members.organizationId, organizationId), eq(members.userId, userId), ne(members.role, "owner")))
    .run();
  if (result.meta.changes === 0) await explainUntouched(db, organizationId, userId);
}

async function explainUntouched(db: Database, organizationId: string, userId: string): Promise<never> {
  const existing = await findMember(db, organizationId, userId);
  throw existing ? ownerIsUntouchable() : notFound("Member");
}
