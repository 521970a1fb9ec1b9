import { and, eq, inArray, isNull, or, type SQL } from "drizzle-orm";
import { calendarEvents, locations, serviceLocations } from "../db/schema";
import type { LocationScope } from "../domain/location-scope";
import type { Deps } from "../http/deps";

// The reads behind roles per location (issue 31, src/domain/location-scope.ts). They run only
// for a member scoped to some locations: the whole organization's members never pay for them.

/** The locations a service (and so each of its queues) is offered at. */
export async function locationsOfService({ db }: Pick<Deps, "db">, serviceId: string): Promise<string[]> {
  const rows = await db
    .select({ id: serviceLocations.locationId })
    .from(serviceLocations)
    .where(eq(serviceLocations.serviceId, serviceId))
    .all();
  return rows.map((r) => r.id);
}

/** The services offered at one of the scope's locations, as a subquery for a listing's filter. */
export function servicesAt({ db }: Deps, scope: readonly string[]) {
  return db
    .select({ id: serviceLocations.serviceId })
    .from(serviceLocations)
    .where(inArray(serviceLocations.locationId, [...scope]));
}

/** The ids of `ids` that are locations of `organizationId` (a scope names only its own). */
export async function locationsOfOrganization({ db }: Deps, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .select({ id: locations.id, organizationId: locations.organizationId })
    .from(locations)
    .where(inArray(locations.id, [...ids]))
    .all();
  return new Set(rows.filter((r) => r.organizationId === organizationId).map((r) => r.id));
}

/** A scope that reaches nothing matches no row (SQLite's `IN ()` is valid but drizzle refuses it). */
export function scopeIds(scope: LocationScope): string[] | null {
  return scope === null ? null : scope.length === 0 ? ["-"] : [...scope];
}

/**
 * The calendar events a scoped member sees: those of the whole organization (no location and no
 * service: a public holiday, their own unavailability) and those at or for one of their locations.
 */
export function eventsWithin(deps: Deps, scope: readonly string[]): SQL {
  return or(
    and(isNull(calendarEvents.locationId), isNull(calendarEvents.serviceId)),
    inArray(calendarEvents.locationId, [...scope]),
    inArray(calendarEvents.serviceId, servicesAt(deps, scope)),
  )!;
}

/** Where a calendar event applies, for `authorize`; undefined = the whole organization. */
export function eventLocations(
  deps: Deps,
  event: { locationId: string | null; serviceId: string | null },
): (() => Promise<string[]>) | undefined {
  if (event.locationId !== null) return async () => [event.locationId!];
  if (event.serviceId !== null) return () => locationsOfService(deps, event.serviceId!);
  return undefined;
}
