import { and, desc, eq, inArray, ne, or } from "drizzle-orm";
import { auditInsert } from "../audit/audit";
import {
  appointments,
  auditEvents,
  invitations,
  members,
  notifications,
  organizations,
  pushDevices,
  sessions,
  tickets,
  users,
} from "../db/schema";
import type { AuditOrigin } from "../domain/audit";
import type { UserRow } from "../http/credentials/sessions";
import { ApiError } from "../http/errors";
import { hashPassword } from "../lib/crypto";
import { randomString } from "../lib/ids";
import { iso } from "../lib/time";
import { userRecord } from "./users";
import { changingAccess } from "../http/credentials/access-changes";
import type { Deps } from "../http/deps";

// A signed-in person's own data (GDPR articles 15 and 17, docs/personal-data.md): everything D1
// holds under their account, and its erasure. What an organization holds about them as a visitor
// (tickets by phone, messages, rooms not drained yet) is the organization's to export or erase
// (POST /v1/organizations/{id}/data-subjects/…): it is listed here only where it names the account.

const isoOrNull = (at: number | null) => (at === null ? null : iso(at));

/** Everything held under the account, as one JSON document. */
export async function exportMe({ db }: Deps, user: UserRow, at: number) {
  const [memberships, sessionRows, invited, inbox, devices, ticketRows, appointmentRows, acted] = await Promise.all([
    db
      .select({
        organizationId: members.organizationId,
        organizationName: organizations.name,
        role: members.role,
        locationIds: members.locationIds,
        createdAt: members.createdAt,
      })
      .from(members)
      .innerJoin(organizations, eq(organizations.id, members.organizationId))
      .where(eq(members.userId, user.id))
      .all(),
    db
      .select({
        createdAt: sessions.createdAt,
        lastSeenAt: sessions.lastSeenAt,
        expiresAt: sessions.expiresAt,
        revokedAt: sessions.revokedAt,
      })
      .from(sessions)
      .where(eq(sessions.userId, user.id))
      .all(),
    db.select().from(invitations).where(eq(invitations.email, user.email)).all(),
    db.select().from(notifications).where(eq(notifications.userId, user.id)).orderBy(desc(notifications.createdAt)).all(),
    db
      .select({ id: pushDevices.id, platform: pushDevices.platform, deviceId: pushDevices.deviceId, createdAt: pushDevices.createdAt })
      .from(pushDevices)
      .where(eq(pushDevices.userId, user.id))
      .all(),
    db.select().from(tickets).where(eq(tickets.userId, user.id)).all(),
    db
      .select()
      .from(appointments)
      .where(or(eq(appointments.customerUserId, user.id), eq(appointments.customerEmail, user.email)))
      .all(),
    db
      .select({
        organizationId: auditEvents.organizationId,
        action: auditEvents.action,
        entityType: auditEvents.entityType,
        entityId: auditEvents.entityId,
        ip: auditEvents.ip,
        createdAt: auditEvents.createdAt,
      })
      .from(auditEvents)
      .where(or(eq(auditEvents.actorId, user.id), eq(auditEvents.entityId, user.id)))
      .orderBy(auditEvents.createdAt)
      .all(),
  ]);
  return {
    exportedAt: iso(at),
    user: { ...userRecord(user), smsNotifications: user.smsNotifications, ticketReminders: user.ticketReminders },
    memberships: memberships.map((m) => ({ ...m, locationIds: m.locationIds ?? null, createdAt: iso(m.createdAt) })),
    sessions: sessionRows.map((s) => ({
      createdAt: iso(s.createdAt),
      lastSeenAt: iso(s.lastSeenAt),
      expiresAt: iso(s.expiresAt),
      revokedAt: isoOrNull(s.revokedAt),
    })),
    invitations: invited.map((i) => ({
      id: i.id,
      organizationId: i.organizationId,
      role: i.role,
      status: i.status,
      createdAt: iso(i.createdAt),
    })),
    notifications: inbox.map((n) => ({ ...n, readAt: isoOrNull(n.readAt), createdAt: iso(n.createdAt) })),
    pushDevices: devices.map((d) => ({ ...d, createdAt: iso(d.createdAt) })),
    tickets: ticketRows,
    appointments: appointmentRows.map(({ tokenHash: _secret, ...a }) => a),
    auditEntries: acted.map((e) => ({ ...e, createdAt: iso(e.createdAt) })),
  };
}

/** The organizations the person is the only owner of: they must hand them over or delete them first. */
async function soleOwnerships({ db }: Deps, userId: string): Promise<{ id: string; name: string }[]> {
  const owned = await db
    .select({ id: organizations.id, name: organizations.name })
    .from(members)
    .innerJoin(organizations, eq(organizations.id, members.organizationId))
    .where(and(eq(members.userId, userId), eq(members.role, "owner")))
    .all();
  if (owned.length === 0) return [];
  const others = await db
    .select({ organizationId: members.organizationId })
    .from(members)
    .where(
      and(
        inArray(
          members.organizationId,
          owned.map((o) => o.id),
        ),
        eq(members.role, "owner"),
        ne(members.userId, userId),
      ),
    )
    .all();
  const shared = new Set(others.map((o) => o.organizationId));
  return owned.filter((o) => !shared.has(o.id));
}

/**
 * Erases the account: refused while the person is the last owner of an organization; otherwise,
 * in one batch, each membership's organization records `member.erased`, memberships, sessions,
 * push devices, notifications and invitations go, and the user row keeps only its id (every
 * name, the e-mail and the password are replaced, so no sign-in can reach it again).
 */
export async function eraseMe(deps: Deps, user: UserRow, origin: AuditOrigin, at: number): Promise<{ organizationIds: string[] }> {
  const { db, env } = deps;
  const blocking = await soleOwnerships(deps, user.id);
  if (blocking.length > 0) {
    const names = blocking.map((o) => `"${o.name}" (${o.id})`).join(", ");
    throw new ApiError("CONFLICT", `You are the last owner of ${names}: transfer its ownership or delete it before erasing your account`, {
      field: "organizationId",
      organizations: blocking,
    });
  }
  const memberships = await db.select({ organizationId: members.organizationId }).from(members).where(eq(members.userId, user.id)).all();
  const organizationIds = memberships.map((m) => m.organizationId);
  const unusable = await hashPassword(randomString(32));
  const entries = organizationIds.map((organizationId) =>
    auditInsert(deps, origin, { organizationId, entityType: "member", entityId: user.id, action: "member.erased" }, at),
  );
  // Its sessions, memberships and row: the user's object hears of it before the answer (issue 43).
  await changingAccess(env, [user.id], () =>
    db.batch([
      db.delete(members).where(eq(members.userId, user.id)),
      ...entries,
      db.delete(sessions).where(eq(sessions.userId, user.id)),
      db.delete(pushDevices).where(eq(pushDevices.userId, user.id)),
      db.delete(notifications).where(eq(notifications.userId, user.id)),
      db.delete(invitations).where(eq(invitations.email, user.email)),
      db.update(appointments).set({ customerUserId: null }).where(eq(appointments.customerUserId, user.id)),
      db
        .update(users)
        .set({
          email: `erased+${user.id}@invalid`,
          passwordHash: unusable,
          firstName: "",
          lastName: "",
          defaultOrganizationId: null,
          updatedAt: at,
        })
        .where(eq(users.id, user.id)),
    ]),
  );
  return { organizationIds };
}
