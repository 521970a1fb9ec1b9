import { and, desc, eq, gt, count } from "drizzle-orm";
import type { ListWindow } from "../http/cursor";
import { keysetPage } from "../http/keyset";
import { invitations, notifications, organizations } from "../db/schema";
import { ApiError, conflict, invalidState, notFound } from "../http/errors";
import { newId } from "../lib/ids";
import { iso } from "../lib/time";
import { outboxSend } from "../providers/outbox";
import { publishEvent } from "../webhooks/domain-events";
import { findMember, grantMembership, type GrantableRole } from "./members";
import { findUserByEmail } from "./users";
import type { UserRow } from "../http/credentials/sessions";
import { type Deps } from "../http/deps";

// Membership by consent (issue 26). Adding a member only offers membership: the invitee
// accepts (or declines) with their own session, signed in with the invited e-mail. The answer
// to the inviter is the same whether the e-mail has an account or not, so the route is no
// oracle of who is registered.

export const INVITATION_VALIDITY_MS = 7 * 24 * 60 * 60 * 1000;
/** Pending invitations an organization may hold at once: invitations send e-mail to anyone. */
export const MAX_PENDING_INVITATIONS = 100;

export type InvitationRow = typeof invitations.$inferSelect;

export function invitationRecord(i: InvitationRow, at: number, organizationName?: string) {
  return {
    id: i.id,
    organizationId: i.organizationId,
    ...(organizationName === undefined ? {} : { organizationName }),
    email: i.email,
    role: i.role,
    locationIds: i.locationIds ?? null,
    status: i.status === "pending" && i.expiresAt <= at ? ("expired" as const) : i.status,
    expiresAt: iso(i.expiresAt),
    createdAt: iso(i.createdAt),
    updatedAt: iso(i.updatedAt),
  };
}

/**
 * Invites `email` with `role`. Inviting the same e-mail again while an invitation is pending
 * refreshes that invitation (new role, 7 more days) and sends it again.
 */
export async function inviteMember(
  deps: Deps,
  input: {
    organizationId: string;
    email: string;
    role: GrantableRole;
    invitedBy: string | null;
    origin: string;
    /** The locations the membership will be limited to (issue 31); null = the whole organization. */
    locationIds?: string[] | null;
  },
  at: number,
): Promise<InvitationRow> {
  const { db } = deps;
  const { organizationId, email, role } = input;
  const locationIds = input.locationIds ?? null;
  const [organization, account] = await Promise.all([
    db.select({ name: organizations.name }).from(organizations).where(eq(organizations.id, organizationId)).get(),
    findUserByEmail(deps, email),
  ]);
  if (!organization) throw notFound("Organization");
  // Already a member: the inviter can list members anyway, so saying so reveals nothing new.
  if (account && (await findMember(deps, organizationId, account.id))) throw conflict("email", "This person is already a member");

  const expiresAt = at + INVITATION_VALIDITY_MS;
  const pending = and(eq(invitations.organizationId, organizationId), eq(invitations.email, email), eq(invitations.status, "pending"));
  let invitation = await db
    .update(invitations)
    .set({ role, locationIds, invitedBy: input.invitedBy, expiresAt, updatedAt: at })
    .where(pending)
    .returning()
    .get();
  if (!invitation) {
    const open = await db
      .select({ n: count() })
      .from(invitations)
      .where(and(eq(invitations.organizationId, organizationId), eq(invitations.status, "pending"), gt(invitations.expiresAt, at)))
      .get();
    if ((open?.n ?? 0) >= MAX_PENDING_INVITATIONS) {
      throw new ApiError("QUOTA_EXCEEDED", `At most ${MAX_PENDING_INVITATIONS} invitations may be pending; revoke some first`, {
        limit: MAX_PENDING_INVITATIONS,
        used: open?.n ?? 0,
      });
    }
    invitation = await db
      .insert(invitations)
      .values({
        id: newId("ivt"),
        organizationId,
        email,
        role,
        locationIds,
        status: "pending",
        invitedBy: input.invitedBy,
        expiresAt,
        createdAt: at,
        updatedAt: at,
      })
      .returning()
      .get();
  }
  await deliverInvitation(deps, invitation, organization.name, account, input.origin, at);
  return invitation;
}

/**
 * The invitee hears of it: an in-app notification when the e-mail has an account, and an
 * e-mail in every case (through the outbox stand-in: no e-mail provider is configured yet), so
 * the work done does not depend on whether the account exists.
 */
async function deliverInvitation(
  { db }: Deps,
  invitation: InvitationRow,
  organizationName: string,
  account: UserRow | undefined,
  origin: string,
  at: number,
): Promise<void> {
  const link = `${origin}/v1/invitations/${invitation.id}`;
  const title = "Invitation to join an organization";
  const body = `You are invited to join ${organizationName} as ${invitation.role}. Accept or decline before ${iso(invitation.expiresAt)}.`;
  if (account) {
    await db.insert(notifications).values({
      id: newId("ntf"),
      userId: account.id,
      organizationId: invitation.organizationId,
      type: "member.invited",
      title,
      body,
      data: { invitationId: invitation.id, organizationId: invitation.organizationId },
      readAt: null,
      createdAt: at,
    });
  }
  outboxSend("email", invitation.email, {
    subject: title,
    text: `${body}\nSign in with this e-mail address (or register with it), then accept: POST ${link}/accept`,
    invitationId: invitation.id,
  });
}

/** Pending invitations of an organization, newest first (expired ones included, marked). */
export async function listOrganizationInvitations({ db }: Deps, organizationId: string, window: ListWindow) {
  const where = and(eq(invitations.organizationId, organizationId), eq(invitations.status, "pending"));
  const [page, total] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: invitations,
        cursorColumn: invitations.id,
        owner: eq(invitations.organizationId, organizationId),
        where,
        keys: [
          { column: invitations.createdAt, direction: "desc" },
          { column: invitations.id, direction: "asc" },
        ],
      },
      (c) =>
        db
          .select()
          .from(invitations)
          .where(c.where)
          .orderBy(...c.orderBy)
          .limit(c.limit)
          .offset(c.offset)
          .all(),
    ),
    db.select({ n: count() }).from(invitations).where(where).get(),
  ]);
  return { ...page, total: total?.n ?? 0 };
}

/** Pending, unexpired invitations addressed to the signed-in user's e-mail. */
export async function listMyInvitations({ db }: Deps, user: UserRow, at: number) {
  return db
    .select({ invitation: invitations, organizationName: organizations.name })
    .from(invitations)
    .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
    .where(and(eq(invitations.email, user.email.toLowerCase()), eq(invitations.status, "pending"), gt(invitations.expiresAt, at)))
    .orderBy(desc(invitations.createdAt))
    .limit(100)
    .all();
}

export async function revokeInvitation({ db }: Deps, organizationId: string, invitationId: string, at: number): Promise<InvitationRow> {
  const row = await db
    .update(invitations)
    .set({ status: "revoked", updatedAt: at })
    .where(and(eq(invitations.id, invitationId), eq(invitations.organizationId, organizationId), eq(invitations.status, "pending")))
    .returning()
    .get();
  if (row) return row;
  const existing = await db
    .select()
    .from(invitations)
    .where(and(eq(invitations.id, invitationId), eq(invitations.organizationId, organizationId)))
    .get();
  if (!existing) throw notFound("Invitation");
  throw invalidState(existing.status, ["pending"], "Only a pending invitation can be revoked");
}

/**
 * The invitee's answer. Someone else's invitation is 404 (its id reveals nothing); a used,
 * revoked or expired one is 409 INVALID_STATE. The status changes only from pending, so two
 * answers at once settle it once.
 */
export async function answerInvitation(
  deps: Deps,
  user: UserRow,
  invitationId: string,
  answer: "accepted" | "declined",
  at: number,
): Promise<InvitationRow> {
  const { db, env } = deps;
  const mine = and(eq(invitations.id, invitationId), eq(invitations.email, user.email.toLowerCase()));
  const row = await db
    .update(invitations)
    .set({ status: answer, updatedAt: at })
    .where(and(mine, eq(invitations.status, "pending"), gt(invitations.expiresAt, at)))
    .returning()
    .get();
  if (!row) {
    const existing = await db.select().from(invitations).where(mine).get();
    if (!existing) throw notFound("Invitation");
    const status = existing.status === "pending" ? "expired" : existing.status;
    throw invalidState(status, ["pending"], `This invitation is ${status}`);
  }
  if (answer === "accepted") {
    await grantMembership({ db, env }, row.organizationId, user.id, row.role, at, row.locationIds ?? null);
    await publishEvent(deps, {
      id: newId("evt"),
      type: "member.joined",
      organizationId: row.organizationId,
      queueId: null,
      ticketId: null,
      occurredAt: iso(at),
      data: { userId: user.id, role: row.role, addedBy: row.invitedBy, invitationId: row.id },
    });
  }
  return row;
}
