import { and, eq, inArray, ne, sql } from "drizzle-orm";
import { DATA_RETENTION_DEFAULT_DAYS } from "../domain/retention";
import { offeredLanguages } from "../domain/languages";
import { members, organizations, queues, subscriptions } from "../db/schema";
import { ApiError, conflict, notFound, validationError } from "../http/errors";
import { newId } from "../lib/ids";
import { iso, utcMonth } from "../lib/time";
import { isUniqueViolation } from "../db/errors";
import { membershipStatement } from "./members";
import { changingAccess } from "../http/credentials/access-changes";
import { retireQueues } from "../tickets/queue-rooms";
import { forgetJoinLanguages } from "../catalog/join-languages";
import type { Deps } from "../http/deps";

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
    languages: offeredLanguages(o.languages),
    logoUrl: o.logoUrl,
    dataRetentionDays: o.dataRetentionDays,
    createdAt: iso(o.createdAt),
    updatedAt: iso(o.updatedAt),
  };
}

export interface NewOrganization {
  name: string;
  slug: string;
  type?: OrganizationRow["type"] | undefined;
  description?: string | null | undefined;
}

/** The organization, its owner and its starter subscription are written in one batch. */
export async function createOrganization(deps: Deps, ownerId: string, input: NewOrganization, at: number) {
  const { db, env } = deps;
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
    dataRetentionDays: DATA_RETENTION_DEFAULT_DAYS,
    languages: null,
    liveOrganizationId: null,
    catalogueCopiedAt: null,
    createdAt: at,
    updatedAt: at,
  };
  const period = utcMonth(at);
  try {
    await changingAccess(env, [ownerId], () =>
      db.batch([
        db.insert(organizations).values(row),
        membershipStatement(deps, { kind: "grant", organizationId: row.id, userId: ownerId, role: "owner", at }),
        db.insert(subscriptions).values({
          organizationId: row.id,
          currentPeriodStart: period.start,
          currentPeriodEnd: period.end,
          createdAt: at,
          updatedAt: at,
        }),
      ]),
    );
  } catch (err) {
    if (isUniqueViolation(err, "slug")) throw conflict("slug", "This slug is already taken");
    throw err;
  }
  return row;
}

export async function organizationsOfUser({ db }: Deps, userId: string) {
  return db
    .select({ organization: organizations, role: members.role })
    .from(members)
    .innerJoin(organizations, eq(organizations.id, members.organizationId))
    .where(eq(members.userId, userId))
    .orderBy(organizations.createdAt, organizations.id)
    .all();
}

export async function findOrganization({ db }: Deps, organizationId: string): Promise<OrganizationRow | undefined> {
  return db.select().from(organizations).where(eq(organizations.id, organizationId)).get();
}

/** The fields PATCH may change; `null` clears an optional one, an absent key leaves it alone. */
export type OrganizationChanges = Partial<
  Pick<
    OrganizationRow,
    | "name"
    | "legalName"
    | "website"
    | "billingEmail"
    | "availabilityRadiusKm"
    | "siret"
    | "vatNumber"
    | "description"
    | "type"
    | "defaultLanguage"
    | "logoUrl"
    | "dataRetentionDays"
    | "languages"
  >
>;

export async function updateOrganization(
  { db }: Deps,
  organizationId: string,
  changes: OrganizationChanges,
  at: number,
): Promise<OrganizationRow> {
  const updated = await db
    .update(organizations)
    .set({ ...changes, updatedAt: at })
    .where(eq(organizations.id, organizationId))
    .returning()
    .get();
  if (!updated) throw notFound("Organization");
  if (changes.languages !== undefined || changes.defaultLanguage !== undefined) forgetJoinLanguages();
  return updated;
}

/**
 * Deletes the organization; the schema's foreign keys cascade to everything it owns. Its
 * queue ids are read first so their rooms can be retired once the catalog rows are gone.
 */
export async function deleteOrganization(deps: Deps, organizationId: string, at: number): Promise<void> {
  const { db, env } = deps;
  // Its test-mode twin goes with it (by cascade, docs/test-mode.md): the twin's rooms are retired too.
  const twin = await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(eq(organizations.liveOrganizationId, organizationId))
    .get();
  const owned = await db
    .select({ id: queues.id })
    .from(queues)
    .where(inArray(queues.organizationId, twin ? [organizationId, twin.id] : [organizationId]))
    .all();
  const people = await db.select({ userId: members.userId }).from(members).where(eq(members.organizationId, organizationId)).all();
  // The members rows go by cascade: still a membership write, so each member's object hears of it.
  await changingAccess(
    env,
    people.map((p) => p.userId),
    () => db.delete(organizations).where(eq(organizations.id, organizationId)).run(),
  );
  await retireQueues(
    deps,
    owned.map((q) => q.id),
    at,
  );
}

/**
 * Makes a member the owner and the previous owner an admin, in one batch. Each statement is
 * conditional on the roles it expects, so a concurrent transfer or member removal leaves
 * exactly one owner: the promotion only happens while the caller is still the owner, and the
 * demotion only once someone else holds the role.
 */
export async function transferOwnership(
  deps: Deps,
  organizationId: string,
  currentOwnerId: string,
  newOwnerId: string,
  at: number,
): Promise<void> {
  const { db, env } = deps;
  if (newOwnerId === currentOwnerId) throw validationError("newOwnerId", "you already own this organization");
  const target = await db
    .select({ role: members.role })
    .from(members)
    .where(and(eq(members.organizationId, organizationId), eq(members.userId, newOwnerId)))
    .get();
  if (!target) throw new ApiError("NOT_FOUND", "The new owner must be a member of the organization", { field: "newOwnerId" });
  const ownerStill = sql`exists (select 1 from ${members} where ${members.organizationId} = ${organizationId} and ${members.userId} = ${currentOwnerId} and ${members.role} = 'owner')`;
  const [promoted] = await changingAccess(env, [newOwnerId, currentOwnerId], () =>
    db.batch([
      membershipStatement(deps, {
        kind: "role",
        organizationId,
        userId: newOwnerId,
        role: "owner",
        at,
        only: and(ne(members.role, "owner"), ownerStill),
      }),
      membershipStatement(deps, {
        kind: "role",
        organizationId,
        userId: currentOwnerId,
        role: "admin",
        at,
        only: and(
          eq(members.role, "owner"),
          sql`(select count(*) from ${members} where ${members.organizationId} = ${organizationId} and ${members.role} = 'owner') > 1`,
        ),
      }),
    ]),
  );
  if (promoted.meta.changes !== 1) {
    throw new ApiError("CONFLICT", "Ownership changed while this request ran; reload and try again", { field: "newOwnerId" });
  }
}
