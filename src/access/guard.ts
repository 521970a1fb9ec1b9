import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import { inArray, or } from "drizzle-orm";
import { database } from "../db/client";
import { locations, queues, serviceLocations, services } from "../db/schema";
import type { Permission } from "../domain/permissions";
import { reaches } from "../domain/location-scope";
import { findAppointment, type AppointmentRow } from "../appointments/appointment-rows";
import { findEvent, type EventRow } from "../calendar/calendar";
import { findDesk, type DeskRow } from "../desks/desks";
import { locationsOfService, eventLocations } from "../catalog/location-scope";
import { findLocation, type LocationRow } from "../catalog/locations";
import { tagByNfcId, type NfcTagRow } from "../entry/nfc-tags";
import { liveQrToken, type QrTokenRow } from "../entry/qr-tokens";
import type { QueueRow } from "../http/credentials/queues";
import { findService, type ServiceRow } from "../catalog/services";
import { memberIn, requireCredential, type ResourceLocations } from "../http/auth";
import type { AppEnv, Guarded, ScopedActor } from "../http/context";

export type { Guarded, ScopedActor };
import { ApiError, notFound } from "../http/errors";
import { reachesOrganization } from "../http/livemode";
import { permissionRefused } from "../http/permission-refusal";
import { queueOfCaller, ticketQueueOfCaller } from "../tickets/queue-access";
import { deps, type Deps } from "../http/deps";

// The resource guard (issue 36). Every resource with an id in its path has one guard, mounted
// once in src/app.ts on `/v1/<resource>/:id` and `/v1/<resource>/:id/*`: it loads the resource,
// resolves its organization and locations, and decides whether the caller is a member who
// reaches it, before any handler runs. A caller who is not (another organization, or a member
// scoped to other locations) gets the same 404 as for an unknown id, unless the operation
// declares that callers outside the organization may use it (`x-outside-callers`, e.g. a
// customer's own ticket): then the handler applies its own rule, and `authorize` refuses them.
// Ids that arrive in a body go through `authorizeResources`, the same decision for many ids.

/** The row each guarded resource kind gives its handlers. */
export interface GuardedRows {
  organization: { id: string };
  service: ServiceRow;
  location: LocationRow;
  desk: DeskRow;
  /** A queue, by `/queues/{queueId}` or `/business/queues/{queueId}`. */
  queue: QueueRow;
  /** A ticket's queue (the ticket itself lives in the queue's room). */
  ticket: QueueRow;
  calendarEvent: EventRow;
  appointment: AppointmentRow;
  nfcTag: NfcTagRow;
  qrToken: QrTokenRow;
}
export type ResourceKind = keyof GuardedRows;

interface Loaded<K extends ResourceKind> {
  row: GuardedRows[K];
  organizationId: string;
  /** The resource's locations; null = the whole organization (no location check). */
  at: ResourceLocations | null;
  what: string;
}

type Loader<K extends ResourceKind> = (c: Context<AppEnv>, id: string) => Promise<Loaded<K>>;

async function queueLocations(deps: Deps, queueId: string | null): Promise<string[]> {
  if (queueId === null) return [];
  const row = await deps.db
    .select({ serviceId: queues.serviceId })
    .from(queues)
    .where(inArray(queues.id, [queueId]))
    .get();
  return row ? locationsOfService(deps, row.serviceId) : [];
}

const loaders: { [K in ResourceKind]: Loader<K> } = {
  organization: async (_c, id) => ({ row: { id }, organizationId: id, at: null, what: "Organization" }),
  service: async (c, id) => {
    const row = await findService(deps(c), id);
    if (!row) throw notFound("Service");
    return { row, organizationId: row.organizationId, at: () => locationsOfService(deps(c), row.id), what: "Service" };
  },
  location: async (c, id) => {
    const row = await findLocation(deps(c), id);
    if (!row) throw notFound("Location");
    return { row, organizationId: row.organizationId, at: [row.id], what: "Location" };
  },
  desk: async (c, id) => {
    const row = await findDesk(deps(c), id);
    return { row, organizationId: row.organizationId, at: [row.locationId], what: "Desk" };
  },
  // The queue of `/queues/{id}` and `/tickets/{id}` was read with the credential (queue-access.ts):
  // no D1 round trip here; a member scoped to locations alone pays for the service's locations.
  queue: async (c, id) => {
    const row = await queueOfCaller(c, id);
    return { row, organizationId: row.organizationId, at: () => locationsOfService(deps(c), row.serviceId), what: "Queue" };
  },
  ticket: async (c, id) => {
    const row = await ticketQueueOfCaller(c, id);
    return { row, organizationId: row.organizationId, at: () => locationsOfService(deps(c), row.serviceId), what: "Ticket" };
  },
  calendarEvent: async (c, id) => {
    const row = await findEvent(deps(c), id);
    return { row, organizationId: row.organizationId, at: eventLocations(deps(c), row) ?? null, what: "Calendar event" };
  },
  appointment: async (c, id) => {
    const row = await findAppointment(deps(c), id);
    if (!row) throw notFound("Appointment");
    return { row, organizationId: row.organizationId, at: [row.locationId], what: "Appointment" };
  },
  nfcTag: async (c, id) => {
    const row = await tagByNfcId(deps(c), id);
    return { row, organizationId: row.organizationId, at: () => queueLocations(deps(c), row.queueId), what: "NFC tag" };
  },
  qrToken: async (c, id) => {
    const row = await liveQrToken(deps(c), id);
    const at = row.serviceId !== null ? () => locationsOfService(deps(c), row.serviceId!) : () => queueLocations(deps(c), row.queueId);
    return { row, organizationId: row.organizationId, at, what: "QR token" };
  },
};

/** The caller as a member of the organization who reaches `at`, or null (an outsider). */
async function memberReaching(c: Context<AppEnv>, organizationId: string, at: ResourceLocations | null): Promise<ScopedActor | null> {
  const actor = await memberIn(c, organizationId);
  if (actor === null) return null;
  if (actor.locationIds !== null && at !== null) {
    const resourceLocations = typeof at === "function" ? await at() : at;
    if (!reaches(actor.locationIds, resourceLocations)) return null;
  }
  return actor as ScopedActor;
}

/**
 * Operations that callers outside the organization may use (customers, a ticket's owner or
 * holder), as declared on their route with `x-outside-callers`: `METHOD /v1/path/:param`.
 * Filled from the OpenAPI registry when the app is built (`declareOpenOperations`).
 */
const openOperations = new Set<string>();

export const OUTSIDE_CALLERS = "x-outside-callers";

/** Reads the routes' declarations once the app has every route (src/app.ts). */
export function declareOpenOperations(definitions: readonly unknown[]): void {
  for (const d of definitions as { type: string; route?: Record<string, unknown> & { method: string; path: string } }[]) {
    if (d.type !== "route" || !d.route || !d.route[OUTSIDE_CALLERS]) continue;
    openOperations.add(`${d.route.method.toUpperCase()} ${d.route.path.replace(/\{([^}]+)\}/g, ":$1")}`);
  }
}

/** The 404 an outsider gets: the same as for an id that does not exist. */
function outsiderRefusal(c: Context<AppEnv>, kind: ResourceKind, what: string): ApiError {
  if ((kind === "queue" || kind === "ticket") && c.get("principal").kind === "session") {
    // Queues are readable by any signed-in user: a user outside the organization is told why.
    return new ApiError(
      "NOT_FOUND",
      "You are not a member of the organization that runs this queue: operating it needs a role there (owner, admin, manager or operator)",
      { reason: "not_a_member" },
    );
  }
  return notFound(what);
}

/** The handler this request reaches (the last route matched that is not middleware). */
function handlerPath(c: Context<AppEnv>): string | null {
  // The first handler the router matched is the one that answers (`/v1/services/types` is
  // matched by `/v1/services/:serviceId` too, registered after it); middleware is "ALL".
  return matchedRoutes(c).find((r) => r.method !== "ALL")?.path ?? null;
}

/** The operation this request reaches (its handler's method and path) is declared open. */
function operationIsOpen(c: Context<AppEnv>): boolean {
  const path = handlerPath(c);
  return path !== null && openOperations.has(`${c.req.method} ${path}`);
}

/** A path id as the routes accept it (idParam: 1 to 64 characters); a malformed one is the validator's 400. */
const routeId = (id: string) => id.length >= 1 && id.length <= 64;

/**
 * The guard of one resource kind, mounted on `path` (`/v1/services/:serviceId`) and below. It
 * acts on the requests whose handler is a route of that resource (`/v1/services/types` is not);
 * an id the route's validator refuses (`wellFormed`) is left to its 400.
 */
export function guard(kind: ResourceKind, path: string, wellFormed: (id: string) => boolean = routeId) {
  const param = /:([A-Za-z]+)$/.exec(path)![1]!;
  return createMiddleware<AppEnv>(async (c, next) => {
    const handler = handlerPath(c);
    if (handler === null || (handler !== path && !handler.startsWith(`${path}/`))) return next();
    const id = c.req.param(param);
    if (!id || !wellFormed(id) || c.get("guarded")?.id === id) return next();
    const open = operationIsOpen(c);
    if (c.get("principal").kind === "anonymous") {
      if (!open) requireCredential(c);
      return next();
    }
    let loaded: Loaded<ResourceKind>;
    try {
      loaded = await loaders[kind](c, id);
    } catch (err) {
      // An open operation answers an unknown id in its own words (e.g. "Remote join not found").
      if (open && err instanceof ApiError && err.code === "NOT_FOUND") return next();
      throw err;
    }
    const member = await memberReaching(c, loaded.organizationId, loaded.at);
    // A test-mode twin has no outsiders: only its own keys reach it (docs/test-mode.md).
    if (!member && !reachesOrganization(c.get("principal"), loaded.organizationId)) throw notFound(loaded.what);
    if (!member && !open) throw outsiderRefusal(c, kind, loaded.what);
    c.set("guarded", { kind, id, organizationId: loaded.organizationId, row: loaded.row, member, what: loaded.what });
    await next();
  });
}

/**
 * The resource the guard resolved, with the caller allowed `permission` on it. The way for a
 * handler of a path resource to get its row and its actor.
 */
export function guarded<K extends ResourceKind>(
  c: Context<AppEnv>,
  kind: K,
  permission: Permission,
): { row: GuardedRows[K]; actor: ScopedActor } {
  const g = guardedRow(c, kind);
  const resolved = c.get("guarded")!;
  if (!resolved.member) throw outsiderRefusal(c, kind, resolved.what);
  if (!resolved.member.can(permission)) throw permissionRefused(permission, resolved.member);
  return { row: g, actor: resolved.member };
}

/** "calendarEvent" → "Calendar event", as a 404 names it. */
const kindName = (kind: ResourceKind) => kind.charAt(0).toUpperCase() + kind.slice(1).replace(/[A-Z]/g, (l) => ` ${l.toLowerCase()}`);

/** The guarded row alone (open operations, whose handler decides who may act). */
export function guardedRow<K extends ResourceKind>(c: Context<AppEnv>, kind: K): GuardedRows[K] {
  const g = c.get("guarded");
  // An open operation's unknown id passed the guard (it may answer in its own words); a handler
  // that still asks for the row gets the 404 the id deserves.
  if (!g && operationIsOpen(c)) throw notFound(kindName(kind));
  // A route of a guarded resource that is not mounted behind its guard is a bug, not a 404.
  if (!g || g.kind !== kind) throw new Error(`No ${kind} guard ran for ${c.req.method} ${c.req.path}`);
  return g.row as GuardedRows[K];
}

/** Resource ids named in a body: every one is resolved and authorized here. */
export interface ResourceRefs {
  queueIds?: readonly (string | null | undefined)[];
  serviceIds?: readonly (string | null | undefined)[];
  locationIds?: readonly (string | null | undefined)[];
}

/**
 * The one decision for resources that arrive in a body (QR tokens, NFC tags, desks and their
 * queues, transfers, a service's locations): every id must exist, belong to one organization,
 * and be reached by the caller, who needs `permission` there. Any failure is the 404 of the
 * id at fault, as for an unknown id. One D1 batch for all the ids.
 */
export async function authorizeResources(
  c: Context<AppEnv>,
  permission: Permission,
  refs: ResourceRefs,
): Promise<{ organizationId: string; actor: ScopedActor }> {
  const ids = (list: ResourceRefs[keyof ResourceRefs]) => [...new Set((list ?? []).filter((v): v is string => typeof v === "string"))];
  const queueIds = ids(refs.queueIds);
  const serviceIds = ids(refs.serviceIds);
  const locationIds = ids(refs.locationIds);
  if (queueIds.length + serviceIds.length + locationIds.length === 0) throw new Error("authorizeResources needs at least one id");
  const db = database(c.env.DB);
  // SQLite's `IN ()` is valid but drizzle refuses an empty list: "-" matches no id.
  const orNone = (list: string[]) => (list.length ? list : ["-"]);
  const [queueRows, serviceRows, locationRows, links] = await db.batch([
    db
      .select({ id: queues.id, organizationId: queues.organizationId, serviceId: queues.serviceId })
      .from(queues)
      .where(inArray(queues.id, orNone(queueIds))),
    db
      .select({ id: services.id, organizationId: services.organizationId })
      .from(services)
      .where(inArray(services.id, orNone(serviceIds))),
    db
      .select({ id: locations.id, organizationId: locations.organizationId })
      .from(locations)
      .where(inArray(locations.id, orNone(locationIds))),
    db
      .select({ serviceId: serviceLocations.serviceId, locationId: serviceLocations.locationId })
      .from(serviceLocations)
      .where(
        or(
          inArray(serviceLocations.serviceId, orNone(serviceIds)),
          inArray(
            serviceLocations.serviceId,
            db
              .select({ id: queues.serviceId })
              .from(queues)
              .where(inArray(queues.id, orNone(queueIds))),
          ),
        ),
      ),
  ]);
  const locationsOf = (serviceId: string) => links.filter((l) => l.serviceId === serviceId).map((l) => l.locationId);
  const named: { what: string; organizationId: string | undefined; at: readonly string[] }[] = [
    ...queueIds.map((id) => {
      const row = queueRows.find((r) => r.id === id);
      return { what: "Queue", organizationId: row?.organizationId, at: row ? locationsOf(row.serviceId) : [] };
    }),
    ...serviceIds.map((id) => ({
      what: "Service",
      organizationId: serviceRows.find((r) => r.id === id)?.organizationId,
      at: locationsOf(id),
    })),
    ...locationIds.map((id) => ({ what: "Location", organizationId: locationRows.find((r) => r.id === id)?.organizationId, at: [id] })),
  ];
  const first = named[0]!;
  if (first.organizationId === undefined) throw notFound(first.what);
  const organizationId = first.organizationId;
  const actor = await memberReaching(c, organizationId, null);
  if (!actor) throw notFound(first.what);
  for (const resource of named) {
    if (resource.organizationId !== organizationId || !reaches(actor.locationIds, resource.at)) throw notFound(resource.what);
  }
  if (!actor.can(permission)) throw permissionRefused(permission, actor);
  return { organizationId, actor };
}
