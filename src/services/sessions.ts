import { and, eq, isNull } from "drizzle-orm";
import type { Database } from "../db/client";
import { sessions, users } from "../db/schema";
import { sha256Hex } from "../lib/crypto";
import { randomString } from "../lib/ids";
import { DAY, HOUR, MINUTE } from "../lib/time";

export const SESSION_IDLE_MS = 12 * HOUR;
export const SESSION_ABSOLUTE_MS = 30 * DAY;
/** Sliding the idle window writes to D1 at most this often per session. */
const SLIDE_GRANULARITY_MS = MINUTE;

export type UserRow = typeof users.$inferSelect;

export async function createSession(db: Database, userId: string, at: number) {
  const token = `sess_${randomString(40)}`;
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

export async function findSession(db: Database, token: string, at: number): Promise<SessionLookup> {
  const tokenHash = await sha256Hex(token);
  const row = await db
    .select({ session: sessions, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, tokenHash), isNull(sessions.revokedAt)))
    .get();
  if (!row) return { state: "unknown" };
  if (row.session.expiresAt <= at) return { state: "expired" };
  return {
    state: "valid",
    user: row.user,
    tokenHash,
    expiresAt: row.session.expiresAt,
    lastSeenAt: row.session.lastSeenAt,
    absoluteExpiresAt: row.session.absoluteExpiresAt,
  };
}

/** Moves the idle expiry forward; returns the new expiry (unchanged if slid recently). */
export async function slideSession(
  db: Database,
  s: { tokenHash: string; lastSeenAt: number; absoluteExpiresAt: number; expiresAt: number },
  at: number,
  force = false,
): Promise<number> {
  if (!force && at - s.lastSeenAt < SLIDE_GRANULARITY_MS) return s.expiresAt;
  const expiresAt = Math.min(at + SESSION_IDLE_MS, s.absoluteExpiresAt);
  await db.update(sessions).set({ lastSeenAt: at, expiresAt }).where(eq(sessions.tokenHash, s.tokenHash));
  return expiresAt;
}

export async function revokeSession(db: Database, tokenHash: string, at: number): Promise<void> {
  await db.update(sessions).set({ revokedAt: at }).where(eq(sessions.tokenHash, tokenHash));
}
