import { and, eq, isNull, lt, sql, type SQLWrapper } from "drizzle-orm";
import type { Database } from "../../db/client";
import { preparedRead } from "../../db/prepared";
import { members, sessions, users } from "../../db/schema";
import { sha256Hex } from "../../lib/crypto";
import { credentialForm, signCredential, type CredentialForm } from "../../lib/credentials";
import { randomString } from "../../lib/ids";
import { DAY, HOUR, MINUTE } from "../../lib/time";
import type { Deps } from "../deps";
import { changingAccess } from "./access-changes";

export const SESSION_IDLE_MS = 12 * HOUR;
export const SESSION_ABSOLUTE_MS = 30 * DAY;
/**
 * Sliding the idle window writes to D1 at most this often per session (docs/hot-path.md): an
 * idle session may end up to this much before 12 idle hours, never after.
 */
export const SLIDE_GRANULARITY_MS = 5 * MINUTE;

export type UserRow = typeof users.$inferSelect;

/**
 * `sess_` + the user's id + `_` + 40 random characters + the MAC of all of it (issue 43): the
 * MAC vouches for the user id, so the request reaches the user's own object (sessions,
 * memberships, the per-user count) before any lookup (docs/hot-path.md).
 */
const SIGNED_SESSION_OF_USER = /^sess_(usr_[0-9a-z]{20})_[0-9a-z]{40}[0-9a-f]{32}$/;
/** `sess_` + 40 random characters + the MAC of both: issued until issue 43, judged by the D1 lookup. */
const SIGNED_SESSION = /^sess_(?:usr_[0-9a-z]{20}_)?[0-9a-z]{40}[0-9a-f]{32}$/;
/** Tokens issued before they were signed: judged by a lookup only. */
const LEGACY_SESSION = /^sess_[0-9a-z]{40}$/;

export function sessionTokenForm(env: Parameters<typeof credentialForm>[0], token: string): Promise<CredentialForm> {
  return credentialForm(env, token, { signed: SIGNED_SESSION, legacy: LEGACY_SESSION });
}

/**
 * The user id a session token carries, or null for the formats issued before it did. Trust it
 * only once `sessionTokenForm` said "signed": the MAC covers it.
 */
export function userIdOfSessionToken(token: string): string | null {
  return SIGNED_SESSION_OF_USER.exec(token)?.[1] ?? null;
}

export async function createSession(db: Database, env: Parameters<typeof signCredential>[0], userId: string, at: number) {
  const token = await signCredential(env, `sess_${userId}_${randomString(40)}`);
  const absoluteExpiresAt = at + SESSION_ABSOLUTE_MS;
  const expiresAt = Math.min(at + SESSION_IDLE_MS, absoluteExpiresAt);
  await db.insert(sessions).values({
    tokenHash: await sha256Hex(token),
    userId,
    createdAt: at,
    lastSeenAt: at,
    expiresAt,
    absoluteExpiresAt,
  });
  return { token, expiresAt };
}

export type SessionLookup =
  | { state: "valid"; user: UserRow; tokenHash: string; expiresAt: number; lastSeenAt: number; absoluteExpiresAt: number }
  | { state: "expired" }
  | { state: "unknown" };

// The statements below read one table each, so they can go in one `db.batch` with others:
// drizzle maps a batch's rows by column name, and two joined tables' `created_at` would collide.

/** The live (not revoked) session with this token hash. */
export function sessionQuery(db: Database, tokenHash: string | SQLWrapper) {
  return db
    .select()
    .from(sessions)
    .where(and(eq(sessions.tokenHash, tokenHash), isNull(sessions.revokedAt)))
    .limit(1);
}

/** The user of the session with this token hash. */
export function sessionUserQuery(db: Database, tokenHash: string | SQLWrapper) {
  return db
    .select()
    .from(users)
    .where(eq(users.id, sql`(SELECT ${sessions.userId} FROM ${sessions} WHERE ${sessions.tokenHash} = ${tokenHash})`))
    .limit(1);
}

/** The same two reads, prepared once per binding (the credential lookup, src/http/auth.ts). */
export const sessionRead = preparedRead(["tokenHash"], (db, p) => sessionQuery(db, p.tokenHash).prepare());
export const sessionUserRead = preparedRead(["tokenHash"], (db, p) => sessionUserQuery(db, p.tokenHash).prepare());

// What the user's object is loaded with (http/auth.ts, rate-limiter/caller-access.ts): the
// session, the user and every membership of the user, in one batch.
export const userRead = preparedRead(["userId"], (db, p) => db.select().from(users).where(eq(users.id, p.userId)).limit(1).prepare());
export const membershipsOfUserRead = preparedRead(["userId"], (db, p) =>
  db
    .select({ organizationId: members.organizationId, role: members.role, locationIds: members.locationIds })
    .from(members)
    .where(eq(members.userId, p.userId))
    .prepare(),
);

/** What the rows found by `sessionQuery` and `sessionUserQuery` mean at `at`. */
export function sessionOf(
  session: typeof sessions.$inferSelect | undefined,
  user: UserRow | undefined,
  tokenHash: string,
  at: number,
): SessionLookup {
  if (!session || !user) return { state: "unknown" };
  if (session.expiresAt <= at) return { state: "expired" };
  return {
    state: "valid",
    user,
    tokenHash,
    expiresAt: session.expiresAt,
    lastSeenAt: session.lastSeenAt,
    absoluteExpiresAt: session.absoluteExpiresAt,
  };
}

export async function findSession(db: Database, token: string, at: number): Promise<SessionLookup> {
  const tokenHash = await sha256Hex(token);
  const [[session], [user]] = await db.batch([sessionQuery(db, tokenHash), sessionUserQuery(db, tokenHash)]);
  return sessionOf(session, user, tokenHash, at);
}

interface Sliding {
  tokenHash: string;
  lastSeenAt: number;
  absoluteExpiresAt: number;
  expiresAt: number;
}

/**
 * The session's idle expiry after a use at `at`, and whether it moved enough to be written:
 * a session used all day long is written once per SLIDE_GRANULARITY_MS, not once per request.
 */
export function slidExpiry(s: Sliding, at: number, force = false): { expiresAt: number; write: boolean } {
  if (!force && at - s.lastSeenAt < SLIDE_GRANULARITY_MS) return { expiresAt: s.expiresAt, write: false };
  return { expiresAt: Math.min(at + SESSION_IDLE_MS, s.absoluteExpiresAt), write: true };
}

/** Writes the slid expiry (only ever forward: a slower, older write never moves it back). */
export async function writeSlide(db: Database, tokenHash: string, at: number, expiresAt: number): Promise<void> {
  await db
    .update(sessions)
    .set({ lastSeenAt: at, expiresAt })
    .where(and(eq(sessions.tokenHash, tokenHash), lt(sessions.expiresAt, expiresAt)))
    .run();
}

/** Moves the idle expiry forward now; returns the new expiry (unchanged if slid recently). */
export async function slideSession({ db }: Deps, s: Sliding, at: number, force = false): Promise<number> {
  const { expiresAt, write } = slidExpiry(s, at, force);
  if (write) await writeSlide(db, s.tokenHash, at, expiresAt);
  return expiresAt;
}

/** Logout: the user's object hears of it before the answer (./access-changes.ts). */
export async function revokeSession({ db, env }: Deps, userId: string, tokenHash: string, at: number): Promise<void> {
  await changingAccess(env, [userId], () => db.update(sessions).set({ revokedAt: at }).where(eq(sessions.tokenHash, tokenHash)).run());
}
