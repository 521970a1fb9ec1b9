import { changedFields, type AuditOrigin } from "../domain/audit";
import type { ListWindow } from "../http/cursor";
import { keysetPage } from "../http/keyset";
import { auditInsert, auditInsertIfChanged } from "../audit/audit";
import { and, asc, between, count, eq, inArray, ne, notExists, or, sql, type AnyColumn, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { locations, organizations, queues, serviceLocations, services } from "../db/schema";
import { boundingBox, distanceKm, type BoundingBox, type Point } from "../domain/geo";
import type { OpeningHours } from "../domain/opening-hours";
import { offeredLanguages, type Language } from "../domain/languages";
import { validationError } from "../http/errors";
import { newId } from "../lib/ids";
import type { LocationScope } from "../domain/location-scope";
import { scopeIds } from "./location-scope";
import { iso } from "../lib/time";
import type { Deps } from "../http/deps";
import { forgetJoinLanguages } from "./join-languages";

export type LocationRow = typeof locations.$inferSelect;

export function locationRecord(l: LocationRow) {
  return {
    id: l.id,
    organizationId: l.organizationId,
    name: l.name,
    address: l.address,
    latitude: l.latitude,
    longitude: l.longitude,
    timezone: l.timezone,
    phone: l.phone,
    email: l.email,
    openingHours: l.openingHours,
    defaultLanguage: l.defaultLanguage,
    createdAt: iso(l.createdAt),
    updatedAt: iso(l.updatedAt),
  };
}

export interface LocationFields {
  name: string;
  address: string;
  latitude: number;
  longitude: number;
  timezone?: string | null | undefined;
  phone?: string | null | undefined;
  email?: string | null | undefined;
  /** The language its visitors get when they chose none; null: the organization's. */
  defaultLanguage?: Language | null | undefined;
}

/** What a location's creation and deletion record (issue 40): its fields, personal ones redacted (domain/audit.ts). */
const AUDITED_FIELDS = ["name", "address", "latitude", "longitude", "timezone", "phone", "email"] as const;

export async function createLocation(
  deps: Deps,
  organizationId: string,
  input: LocationFields,
  at: number,
  origin?: AuditOrigin,
): Promise<LocationRow> {
  const { db } = deps;
  const row: LocationRow = {
    id: newId("loc"),
    organizationId,
    name: input.name,
    address: input.address,
    latitude: input.latitude,
    longitude: input.longitude,
    timezone: input.timezone ?? "UTC",
    phone: input.phone ?? null,
    email: input.email ?? null,
    openingHours: null,
    defaultLanguage: input.defaultLanguage ?? null,
    createdAt: at,
    updatedAt: at,
  };
  const insert = db.insert(locations).values(row);
  if (!origin) await insert;
  else {
    // The entry in the batch of the change (docs/security.md): one exists exactly when the location does.
    const change = { organizationId, entityType: "location", entityId: row.id, action: "location.created" as const };
    await db.batch([insert, auditInsert(deps, origin, { ...change, changes: changedFields(null, row, AUDITED_FIELDS) }, at)]);
  }
  return row;
}

/**
 * A location's `defaultLanguage` must be one its organization offers (docs/languages.md): else
 * 400 naming the field. null (the organization's default) is always fine.
 */
export async function checkLocationLanguage({ db }: Deps, organizationId: string, language: Language | null | undefined): Promise<void> {
  if (language === null || language === undefined) return;
  const org = await db.select({ languages: organizations.languages }).from(organizations).where(eq(organizations.id, organizationId)).get();
  const offered = offeredLanguages(org?.languages);
  if (!offered.includes(language))
    throw validationError("defaultLanguage", `must be one of the organization's languages: ${offered.join(", ")}`);
}

export async function findLocation({ db }: Deps, id: string): Promise<LocationRow | undefined> {
  return db.select().from(locations).where(eq(locations.id, id)).get();
}

/** `%` and `_` in what the caller typed are literal characters, not wildcards. */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

export function likeContains(column: AnyColumn, q: string): SQL {
  return sql`${column} LIKE ${containsPattern(q)} ESCAPE '\\'`;
}

/** The organization's locations, oldest first; `q` matches name or address (ASCII case-insensitive). */
export async function listLocations(
  { db }: Deps,
  organizationId: string,
  window: ListWindow,
  q?: string,
  /** A scoped member's locations (issue 31): the others are not listed. null = all. */
  scope: LocationScope = null,
): Promise<{ rows: LocationRow[]; total: number; hasMore: boolean }> {
  const within = scopeIds(scope);
  const owner = and(eq(locations.organizationId, organizationId), within ? inArray(locations.id, within) : undefined);
  const where = and(owner, q ? or(likeContains(locations.name, q), likeContains(locations.address, q)) : undefined);
  const [page, totals] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: locations,
        cursorColumn: locations.id,
        owner,
        where,
        keys: [
          { column: locations.createdAt, direction: "asc" },
          { column: locations.id, direction: "asc" },
        ],
      },
      (c) =>
        db
          .select()
          .from(locations)
          .where(c.where)
          .orderBy(...c.orderBy)
          .limit(c.limit)
          .offset(c.offset)
          .all(),
    ),
    db.select({ total: count() }).from(locations).where(where).get(),
  ]);
  return { ...page, total: totals?.total ?? 0 };
}

/**
 * The candidates of a nearby search: the rows inside the bounding box, found through
 * `locations_geo_idx` (a latitude range on the index, longitudes checked on its entries).
 * Exported so a test can check the query plan of this very statement.
 */
export function nearbyCandidates({ db }: Deps, box: BoundingBox) {
  const [[west1, east1], [west2, east2]] = box.longitudeRanges;
  return db
    .select({ location: locations, organizationName: organizations.name })
    .from(locations)
    .innerJoin(organizations, eq(organizations.id, locations.organizationId))
    .where(
      and(
        between(locations.latitude, box.minLatitude, box.maxLatitude),
        or(between(locations.longitude, west1, east1), between(locations.longitude, west2, east2)),
      ),
    );
}

export interface NearbyLocation {
  location: LocationRow;
  organizationName: string;
  distanceKm: number;
}

/** Locations of every organization within the radius, nearest first. */
export async function findNearby(deps: Deps, center: Point, radiusKm: number, limit: number): Promise<NearbyLocation[]> {
  const candidates = await nearbyCandidates(deps, boundingBox(center, radiusKm)).all();
  return candidates
    .map((c) => ({ ...c, distanceKm: distanceKm(center, c.location) }))
    .filter((c) => c.distanceKm <= radiusKm)
    .sort((a, b) => a.distanceKm - b.distanceKm || a.location.id.localeCompare(b.location.id))
    .slice(0, limit);
}

export type LocationPatch = Partial<LocationFields> & { openingHours?: OpeningHours | null | undefined };

export async function updateLocation(
  deps: Deps,
  current: LocationRow,
  patch: LocationPatch,
  at: number,
  origin?: AuditOrigin,
): Promise<LocationRow> {
  const { db } = deps;
  const changes: Partial<LocationRow> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.address !== undefined) changes.address = patch.address;
  if (patch.latitude !== undefined) changes.latitude = patch.latitude;
  if (patch.longitude !== undefined) changes.longitude = patch.longitude;
  if (patch.timezone !== undefined) changes.timezone = patch.timezone ?? "UTC";
  if (patch.phone !== undefined) changes.phone = patch.phone;
  if (patch.email !== undefined) changes.email = patch.email;
  if (patch.openingHours !== undefined) changes.openingHours = patch.openingHours;
  if (patch.defaultLanguage !== undefined) changes.defaultLanguage = patch.defaultLanguage;
  if (Object.keys(changes).length === 0) return current;
  const audited = changedFields(current, changes, Object.keys(changes));
  changes.updatedAt = at;
  const update = db.update(locations).set(changes).where(eq(locations.id, current.id)).returning();
  const [[updated]] =
    origin && Object.keys(audited).length > 0
      ? await db.batch([
          update,
          auditInsert(
            deps,
            origin,
            {
              organizationId: current.organizationId,
              entityType: "location",
              entityId: current.id,
              action: "location.updated",
              changes: audited,
            },
            at,
          ),
        ])
      : [await update.all()];
  // After the write: a join in between would keep the old default again.
  if (changes.defaultLanguage !== undefined) forgetJoinLanguages();
  return updated ?? { ...current, ...changes };
}

/**
 * Deletes the location, and the services linked to no other location (their queues and
 * links go by cascade). Services linked elsewhere only lose this link. One batch, so the
 * queue ids returned are exactly those deleted: their rooms must then be retired.
 */
export async function deleteLocation(
  deps: Deps,
  current: LocationRow,
  at: number,
  origin?: AuditOrigin,
): Promise<{ queueIds: string[]; serviceIds: string[] }> {
  const { db } = deps;
  const id = current.id;
  const other = alias(serviceLocations, "other_link");
  const linkedOnlyHere = db
    .select({ id: serviceLocations.serviceId })
    .from(serviceLocations)
    .where(
      and(
        eq(serviceLocations.locationId, id),
        notExists(
          db
            .select({ one: sql`1` })
            .from(other)
            .where(and(eq(other.serviceId, serviceLocations.serviceId), ne(other.locationId, id))),
        ),
      ),
    );
  const [goneServices, goneQueues] = await db.batch([
    db.select({ id: services.id }).from(services).where(inArray(services.id, linkedOnlyHere)),
    db.select({ id: queues.id }).from(queues).where(inArray(queues.serviceId, linkedOnlyHere)),
    db.delete(services).where(inArray(services.id, linkedOnlyHere)),
    db.delete(locations).where(eq(locations.id, id)),
    // Recorded only if the delete just before it removed the row (a concurrent deletion records once).
    ...(origin
      ? [
          auditInsertIfChanged(
            deps,
            origin,
            {
              organizationId: current.organizationId,
              entityType: "location",
              entityId: id,
              action: "location.deleted",
              changes: changedFields(current, null, AUDITED_FIELDS),
            },
            at,
          ),
        ]
      : []),
  ]);
  forgetJoinLanguages();
  return { serviceIds: goneServices.map((s) => s.id), queueIds: goneQueues.map((q) => q.id) };
}
