import { eq } from "drizzle-orm";
import type { Database } from "../db/client";
import { users } from "../db/schema";
import { iso } from "../lib/time";
import type { UserRow } from "../http/credentials/sessions";

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

export async function findUserByEmail(db: Database, email: string): Promise<UserRow | undefined> {
  return db.select().from(users).where(eq(users.email, email.toLowerCase())).get();
}
