// Roles per location (issue 31): a membership may be limited to some of the organization's
// locations. A scoped member reaches a resource only through one of its locations; anything
// else is answered as if it belonged to another organization (404), never confirmed to exist.

/** The locations a member works at; null = the whole organization (every membership before 0024). */
export type LocationScope = readonly string[] | null;

/** The most locations one membership may name (a bank's branches in one region, not a catalogue). */
export const MAX_SCOPED_LOCATIONS = 100;

/**
 * Whether a member with `scope` reaches a resource at `resourceLocations`. A service at several
 * locations is reached from any of them (its Lyon staff serve it, so do its Paris staff). A
 * resource at no location (a service whose locations were all deleted) is reached only by the
 * whole organization.
 */
export function reaches(scope: LocationScope, resourceLocations: readonly string[]): boolean {
  if (scope === null) return true;
  return resourceLocations.some((id) => scope.includes(id));
}

/** A scope as stored: distinct ids; an absent scope stays absent (the whole organization). */
export function normaliseScope(ids: readonly string[] | null | undefined): string[] | null {
  if (ids === null || ids === undefined) return null;
  return [...new Set(ids)];
}

/** The ids of `wanted` the scope does not reach (a scoped manager cannot hand out Paris). */
export function outsideScope(scope: LocationScope, wanted: readonly string[]): string[] {
  if (scope === null) return [];
  return wanted.filter((id) => !scope.includes(id));
}
