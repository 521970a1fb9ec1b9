import type { AuditChange, AuditChanges, AuditOrigin } from "../domain/audit";
import type { ListWindow } from "../http/cursor";
import { keysetPage } from "../http/keyset";
import { auditInsertIfChanged } from "../audit/audit";
import { and, count, eq, ne, type SQL } from "drizzle-orm";
import { members, users } from "../db/schema";
import type { Role } from "../domain/permissions";
import { ApiError, conflict, forbidden, notFound, validationError } from "../http/errors";
import { iso } from "../lib/time";
import { isUniqueViolation } from "../db/errors";
import { defaultOrganizationOf } from "../http/credentials/memberships";
import type { Deps } from "../http/deps";
import { changingAccess } from "../http/credentials/access-changes";
export { defaultOrganizationOf };

/** Roles these routes may give; the owner role only moves through transfer-ownership. */
export type GrantableRole = Exclude<Role, "owner">;

const memberColumns = {
  userId: members.userId,
  role: members.role,
  locationIds: members.locationIds,
  email: users.email,
  firstName: users.firstName,
  lastName: users.lastName,
  createdAt: members.createdAt,
  updatedAt: members.updatedAt,
};

type MemberRow = {
  userId: string;
  role: Role;
  locationIds: string[] | null;
  email: string;
  firstName: string;
  lastName: string;
  createdAt: number;
  updatedAt: number;
};

/** Roles that act on the whole organization: only managers and operators are scoped to locations. */
export const UNSCOPED_ROLES: readonly Role[] = ["owner", "admin"];

export function memberRecord(m: MemberRow) {
  return {
    userId: m.userId,
    email: m.email,
    firstName: m.firstName,
    lastName: m.lastName,
    role: m.role,
    locationIds: m.locationIds ?? null,
    createdAt: iso(m.createdAt),
    updatedAt: iso(m.updatedAt),
  };
}

function ownerIsUntouchable(): ApiError {
  return forbidden("The owner cannot be changed or removed here; use transfer-ownership");
}

export async function findMember({ db }: Deps, organizationId: string, userId: string): Promise<MemberRow | undefined> {
  return db
    .select(memberColumns)
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.organizationId, organizationId), eq(members.userId, userId)))
    .get();
}

export async function listMembers({ db }: Deps, organizationId: string, window: ListWindow) {
  const where = eq(members.organizationId, organizationId);
  const [page, total] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: members,
        cursorColumn: members.userId,
        owner: where,
        where,
        keys: [
          { column: members.createdAt, direction: "asc" },
          { column: members.userId, direction: "asc" },
        ],
      },
      (c) =>
        db
          .select(memberColumns)
          .from(members)
          .innerJoin(users, eq(users.id, members.userId))
          .where(c.where)
          .orderBy(...c.orderBy)
          .limit(c.limit)
          .offset(c.offset)
          .all(),
    ),
    db.select({ n: count() }).from(members).where(where).get(),
  ]);
  return { ...page, total: total?.n ?? 0 };
}

/**
 * One change to who belongs where. Every write to `members` in the code base is built by
 * `membershipStatement` and sent inside `changingAccess` (http/credentials/access-changes.ts):
 * the user's object holds their memberships for the hot path (issue 43) and must hear of it
 * before the change is answered (scripts/check-access-writes.mjs).
 */
export type MembershipWrite =
  | { kind: "grant"; organizationId: string; userId: string; role: Role; at: number; locationIds?: string[] | null }
  | { kind: "role"; organizationId: string; userId: string; role?: Role; at: number; only?: SQL; locationIds?: string[] | null }
  | { kind: "revoke"; organizationId: string; userId: string; only?: SQL };

export function membershipStatement({ db }: Deps, w: MembershipWrite) {
  const row = and(eq(members.organizationId, w.organizationId), eq(members.userId, w.userId));
  switch (w.kind) {
    case "grant":
      return db.insert(members).values({
        organizationId: w.organizationId,
        userId: w.userId,
        role: w.role,
        locationIds: w.locationIds ?? null,
        createdAt: w.at,
        updatedAt: w.at,
      });
    case "role":
      return db
        .update(members)
        .set({
          ...(w.role === undefined ? {} : { role: w.role }),
          // Owners and admins act on the whole organization: becoming one drops a location scope.
          ...(w.role !== undefined && UNSCOPED_ROLES.includes(w.role)
            ? { locationIds: null }
            : w.locationIds === undefined
              ? {}
              : { locationIds: w.locationIds }),
          updatedAt: w.at,
        })
        .where(w.only ? and(row, w.only) : row);
    case "revoke":
      return db.delete(members).where(w.only ? and(row, w.only) : row);
  }
}

/** Runs one membership write, the member's object told around it; answers the rows it changed. */
async function writeMembership(
  deps: Deps,
  w: MembershipWrite,
  audit?: { origin: AuditOrigin; change: AuditChange; at: number },
): Promise<number> {
  const { db, env } = deps;
  // The audit entry, if any, is written in the same batch and only if the write changed a row.
  const result = await changingAccess(env, [w.userId], async () =>
    audit
      ? (await db.batch([membershipStatement(deps, w), auditInsertIfChanged(deps, audit.origin, audit.change, audit.at)]))[0]
      : await membershipStatement(deps, w).run(),
  );
  return result.meta.changes;
}

/**
 * Makes an account a member: only ever called when the person accepted an invitation
 * (identity/invitations.ts), never on someone else's say-so.
 */
export async function grantMembership(
  deps: Deps,
  organizationId: string,
  userId: string,
  role: GrantableRole,
  at: number,
  locationIds: string[] | null = null,
): Promise<void> {
  try {
    await writeMembership(deps, { kind: "grant", organizationId, userId, role, at, locationIds });
  } catch (err) {
    if (isUniqueViolation(err, "members.")) throw conflict("invitationId", "You are already a member of this organization");
    throw err;
  }
}

/**
 * Changes a member's role. The write is conditional on the member not being the owner, so a
 * transfer of ownership running at the same time cannot be undone by it.
 */
export async function changeMemberRole(
  deps: Deps,
  organizationId: string,
  userId: string,
  change: { role?: GrantableRole; locationIds?: string[] | null },
  at: number,
  origin?: AuditOrigin,
): Promise<MemberRow> {
  const { role, locationIds } = change;
  if (locationIds && role === undefined) {
    // Only managers and operators work at some locations; an admin keeps the whole organization.
    const current = await findMember(deps, organizationId, userId);
    if (current && UNSCOPED_ROLES.includes(current.role)) throw scopeOfUnscopedRole(current.role);
  }
  const before = origin ? await findMember(deps, organizationId, userId) : undefined;
  const audited: AuditChanges = {};
  if (before && role !== undefined && before.role !== role) audited.role = { before: before.role, after: role };
  if (before && locationIds !== undefined && JSON.stringify(before.locationIds ?? null) !== JSON.stringify(locationIds ?? null))
    audited.locationIds = { before: before.locationIds ?? null, after: locationIds ?? null };
  const audit =
    origin && Object.keys(audited).length > 0
      ? {
          origin,
          at,
          change: {
            organizationId,
            entityType: "member",
            entityId: userId,
            action: "member.role_changed" as const,
            changes: audited,
          },
        }
      : undefined;
  const changes = await writeMembership(
    deps,
    { kind: "role", organizationId, userId, role, locationIds, at, only: ne(members.role, "owner") },
    audit,
  );
  if (changes === 0) await explainUntouched(deps, organizationId, userId);
  const updated = await findMember(deps, organizationId, userId);
  if (!updated) throw notFound("Member");
  return updated;
}

export async function removeMember(deps: Deps, organizationId: string, userId: string, origin?: AuditOrigin, at = 0): Promise<void> {
  const before = origin ? await findMember(deps, organizationId, userId) : undefined;
  const audit =
    origin && before
      ? {
          origin,
          at,
          change: {
            organizationId,
            entityType: "member",
            entityId: userId,
            action: "member.removed" as const,
            changes: { role: { before: before.role, after: null } },
          },
        }
      : undefined;
  const changes = await writeMembership(deps, { kind: "revoke", organizationId, userId, only: ne(members.role, "owner") }, audit);
  if (changes === 0) await explainUntouched(deps, organizationId, userId);
}

/**
 * A member leaves on their own: any organization but one they own (the owner transfers
 * ownership first, or deletes the organization).
 */
export async function leaveOrganization(deps: Deps, organizationId: string, userId: string): Promise<void> {
  const changes = await writeMembership(deps, { kind: "revoke", organizationId, userId, only: ne(members.role, "owner") });
  if (changes === 0) {
    const existing = await findMember(deps, organizationId, userId);
    if (!existing) throw notFound("Member");
    throw forbidden("The owner cannot leave; transfer ownership or delete the organization first");
  }
}

/** Sets (or with null clears) the user's default organization; they must be a member of it. */
export async function setDefaultOrganization(deps: Deps, userId: string, organizationId: string | null, at: number): Promise<void> {
  const { db, env } = deps;
  if (organizationId !== null && !(await findMember(deps, organizationId, userId))) {
    throw new ApiError("NOT_FOUND", "You are not a member of this organization", { field: "defaultOrganizationId" });
  }
  // The user row is held by the user's object too (issue 43).
  await changingAccess(env, [userId], () =>
    db.update(users).set({ defaultOrganizationId: organizationId, updatedAt: at }).where(eq(users.id, userId)).run(),
  );
}

/** An owner or admin acts on the whole organization: a location scope would be a lie. */
export function scopeOfUnscopedRole(role: Role): ApiError {
  return validationError("locationIds", `a ${role} acts on the whole organization; only managers and operators work at some locations`);
}

async function explainUntouched(deps: Deps, organizationId: string, userId: string): Promise<never> {
  const existing = await findMember(deps, organizationId, userId);
  throw existing ? ownerIsUntouchable() : notFound("Member");
}
