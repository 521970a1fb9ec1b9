import { eq } from "drizzle-orm";
import { members, users } from "../db/schema";
import { iso } from "../lib/time";
import { hashPassword } from "../lib/crypto";
import { newId } from "../lib/ids";
import { createSession, type UserRow } from "../http/credentials/sessions";
import type { Deps } from "../http/deps";
import { conflict } from "../http/errors";
import type { Language } from "../domain/languages";

export function userRecord(u: Omit<UserRow, "defaultOrganizationId"> & { defaultOrganizationId?: string | null }) {
  return {
    id: u.id,
    email: u.email,
    firstName: u.firstName,
    lastName: u.lastName,
    role: u.role,
    accountType: u.accountType,
    language: u.language,
    defaultOrganizationId: u.defaultOrganizationId ?? null,
    createdAt: iso(u.createdAt),
    updatedAt: iso(u.updatedAt),
  };
}

export async function findUserByEmail({ db }: Deps, email: string): Promise<UserRow | undefined> {
  return db.select().from(users).where(eq(users.email, email.toLowerCase())).get();
}

/** The account asked for by e-mail (a sign-in), through the caller's dependencies. */
export async function accountByEmail(deps: Deps, email: string): Promise<UserRow | undefined> {
  return findUserByEmail(deps, email);
}

export interface Registration {
  email: string;
  password: string;
  firstName: string;
  lastName: string;
  accountType: "business" | "customer";
  language?: Language;
}

/** A new account and its first session; an e-mail already registered is 409 CONFLICT (field email). */
export async function registerAccount(deps: Deps, input: Registration, at: number) {
  const { db, env } = deps;
  if (await findUserByEmail(deps, input.email)) throw conflict("email", "An account with this email already exists");
  const user = {
    id: newId("usr"),
    email: input.email,
    passwordHash: await hashPassword(input.password),
    firstName: input.firstName,
    lastName: input.lastName,
    accountType: input.accountType,
    role: "user" as const,
    language: input.language ?? "en",
    smsNotifications: true,
    ticketReminders: true,
    createdAt: at,
    updatedAt: at,
  };
  try {
    await db.insert(users).values(user);
  } catch (err) {
    if (String(err).includes("UNIQUE")) throw conflict("email", "An account with this email already exists");
    throw err;
  }
  return { user, session: await createSession(db, env, user.id, at) };
}

/** A session for a user whose credentials were checked (a password sign-in). */
export function openSession({ db, env }: Deps, userId: string, at: number) {
  return createSession(db, env, userId, at);
}

/** The user's memberships, oldest first, as `GET /auth/me` shows them. */
export async function membershipsOfUser({ db }: Deps, userId: string) {
  const rows = await db
    .select({ organizationId: members.organizationId, role: members.role, locationIds: members.locationIds })
    .from(members)
    .where(eq(members.userId, userId))
    .orderBy(members.createdAt)
    .all();
  return rows.map((m) => ({ ...m, locationIds: m.locationIds ?? null }));
}
