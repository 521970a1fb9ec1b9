// Several services in one visit (docs/visits.md, "Several services in one visit"): the pure
// rules of a route. A route is the list of services a visitor goes through with one ticket;
// each leg waits in one queue of its service.

/** Where a visitor coming from an earlier leg enters a service's line. */
export const ROUTE_ENTRIES = ["front", "original_time"] as const;
export type RouteEntry = (typeof ROUTE_ENTRIES)[number];

/** A service's `routeEntry` when it was never set: the visitor keeps the place their first join earned. */
export const DEFAULT_ROUTE_ENTRY: RouteEntry = "original_time";

/** At most this many services in one visit (the first included). */
export const MAX_ROUTE_LEGS = 5;

/** One leg of a visit as the ticket carries it. */
export interface RouteLeg {
  serviceId: string;
  queueId: string;
  entry: RouteEntry;
}

/** The leg after `index`, or null when `index` is the last. */
export function nextLeg(route: readonly RouteLeg[], index: number): RouteLeg | null {
  return route[index + 1] ?? null;
}
