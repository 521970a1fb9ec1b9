import { eq } from "drizzle-orm";
import type { Database } from "../db/client";
import { members, organizations, subscriptions } from "../db/schema";
import { conflict } from "../http/errors";
import { newId } from "../lib/ids";
import { iso, utcMonth } from "../lib/time";

export type OrganizationRow = typeof organizations.$inferSelect;

export function organizationRecord(o: OrganizationRow) {
  return {
    id: o.id,
    name: o.name,
    slug: o.slug,
    type: o.type,
    description: o.description,
    legalName: o.legalName,
    siret: o.siret,
    vatNumber: o.vatNumber,
    website: o.website,
    billingEmail: o.billingEmail,
    availabilityRadiusKm: o.availabilityRadiusKm,
    defaultLanguage: o.defaultLanguage,
    logoUrl: o.logoUrl,
    createdAt: iso(o.createdAt),
    updatedAt: iso(o.updatedAt),
  };
}

export function isUniqueViolation(err: unknown, column: string): boolean {
  return String(err).includes("UNIQUE constraint failed") && String(err).includes(column);
}

export interface NewOrganization {
  name: string;
  slug: string;
  type?: OrganizationRow["type"] | undefined;
  description?: string | null | undefined;
}

/** The organization, its owner and its starter subscription are written in one batch. */
export async function createOrganization(db: Database, ownerId: string, input: NewOrganization, at: number) {
  const row: OrganizationRow = {
    id: newId("org"),
    name: input.name,
    slug: input.slug,
    type: input.type ?? "other",
    description: input.description ?? null,
    legalName: null,
    siret: null,
    vatNumber: null,
    website: null,
    billingEmail: null,
    availabilityRadiusKm: null,
    defaultLanguage: "en",
    logoUrl: null,
    createdAt: at,
    updatedAt: at,
  };
  const period = utcMonth(at);
  try {
    await db.batch([
      db.insert(organizations).values(row),
      db.insert(members).values({ organizationId: row.id, userId: ownerId, role: "owner", createdAt: at, updatedAt: at }),
      db.insert(subscriptions).values({
        organizationId: row.id,
        currentPeriodStart: period.start,
        currentPeriodEnd: period.end,
        createdAt: at,
        updatedAt: at,
      }),
    ]);
  } catch (err) {
    if (isUniqueViolation(err, "slug")) throw conflict("slug", "This slug is already taken");
    throw err;
  }
  return row;
}

export async function organizationsOfUser(db: Database, userId: string) {
  return db
    .select({ organization: organizations, role: members.role })
    .from(members)
    .innerJoin(organizations, eq(organizations.id, members.organizationId))
    .where(eq(members.userId, userId))
    .orderBy(organizations.createdAt)
    .all();
}

