import { changedFields, type AuditOrigin } from "../domain/audit";
import type { ListWindow } from "../http/cursor";
import { keysetPage } from "../http/keyset";
import { auditInsert, auditInsertIfChanged } from "../audit/audit";
import { and, asc, count, eq, exists, inArray, isNull, lt, or, sql, type Column } from "drizzle-orm";
import { DEFAULT_BOOKING, type BookingSettings } from "../domain/slots";
import { DEFAULT_ROUTE_ENTRY, type RouteEntry } from "../domain/visit-route";
import { chunk } from "../db/client";
import { forgetJoinLanguages } from "./join-languages";
import { locations, organizations, queues, serviceLocations, services, serviceTypes, subscriptions, tickets } from "../db/schema";
import { entitlements, type Plan } from "../domain/plans";
import { ApiError, notFound, planRequired, validationError } from "../http/errors";
import { newId } from "../lib/ids";
import { iso, utcDayStart } from "../lib/time";
import { likeContains } from "./locations";
import type { LocationScope } from "../domain/location-scope";
import { servicesAt } from "./location-scope";
import type { Deps } from "../http/deps";

export type ServiceRow = typeof services.$inferSelect;
export type ServiceStatus = ServiceRow["status"];
type OrganizationType = (typeof organizations.$inferSelect)["type"];

// D1 binds at most 100 parameters a statement; id lists are split below that.
const IDS_PER_STATEMENT = 90;

export function serviceTypeRecord(t: typeof serviceTypes.$inferSelect) {
  return { id: t.id, name: { fr: t.nameFr, en: t.nameEn }, organizationType: t.organizationType };
}

/** The types an organization of this type may use: its own, plus the `other` ones that fit all. */
export async function listServiceTypes({ db }: Deps, organizationType?: OrganizationType) {
  const rows = await db
    .select()
    .from(serviceTypes)
    .where(organizationType ? inArray(serviceTypes.organizationType, [organizationType, "other"]) : undefined)
    .orderBy(asc(serviceTypes.organizationType), asc(serviceTypes.id))
    .all();
  return rows.map(serviceTypeRecord);
}

async function assertServiceTypeFits({ db }: Deps, serviceTypeId: string, organizationType: OrganizationType): Promise<void> {
  const type = await db.select().from(serviceTypes).where(eq(serviceTypes.id, serviceTypeId)).get();
  if (!type) throw validationError("serviceTypeId", "unknown service type (see GET /v1/services/types)");
  if (type.organizationType !== organizationType && type.organizationType !== "other") {
    throw validationError("serviceTypeId", `not available to ${organizationType} organizations`, {
      organizationType,
      serviceTypeOrganizationType: type.organizationType,
    });
  }
}

/**
 * The organization the locations belong to. The first known location names it; the caller's
 * right there is checked by `authorizeIn`; any id not of that organization is 404 like an
 * unknown one, so ids of other organizations are never confirmed.
 */
export async function organizationOfLocations(
  deps: Deps,
  locationIds: readonly string[],
  authorizeIn: (organizationId: string) => Promise<unknown>,
): Promise<string> {
  const { db } = deps;
  const rows = await db
    .select({ id: locations.id, organizationId: locations.organizationId })
    .from(locations)
    .where(inArray(locations.id, [...locationIds]))
    .all();
  const first = rows.find((r) => r.id === locationIds[0]) ?? rows[0];
  if (!first) throw new ApiError("NOT_FOUND", "Location not found", { field: "locationIds", id: locationIds[0] });
  await authorizeIn(first.organizationId);
  await assertLocationsOf(deps, first.organizationId, locationIds, rows);
  return first.organizationId;
}

async function assertLocationsOf(
  { db }: Deps,
  organizationId: string,
  locationIds: readonly string[],
  known?: readonly { id: string; organizationId: string }[],
): Promise<void> {
  const rows =
    known ??
    (await db
      .select({ id: locations.id, organizationId: locations.organizationId })
      .from(locations)
      .where(inArray(locations.id, [...locationIds]))
      .all());
  const own = new Set(rows.filter((r) => r.organizationId === organizationId).map((r) => r.id));
  const missing = locationIds.find((id) => !own.has(id));
  if (missing) throw new ApiError("NOT_FOUND", "Location not found", { field: "locationIds", id: missing });
}

async function organizationContext({ db }: Deps, organizationId: string): Promise<{ type: OrganizationType; plan: Plan }> {
  const row = await db
    .select({ type: organizations.type, plan: subscriptions.plan })
    .from(organizations)
    .leftJoin(subscriptions, eq(subscriptions.organizationId, organizations.id))
    .where(eq(organizations.id, organizationId))
    .get();
  if (!row) throw notFound("Organization");
  return { type: row.type, plan: row.plan ?? "starter" };
}

/** Links inserted only if the service row exists, so a refused service leaves no link behind. */
function linkStatements({ db }: Deps, serviceId: string, locationIds: readonly string[]) {
  return chunk(locationIds, IDS_PER_STATEMENT).map((ids) =>
    db
      .insert(serviceLocations)
      .select(
        db
          .select({ serviceId: bound(serviceId, serviceLocations.serviceId), locationId: locations.id })
          .from(locations)
          .where(
            and(
              inArray(locations.id, [...ids]),
              exists(
                db
                  .select({ one: sql`1` })
                  .from(services)
                  .where(eq(services.id, serviceId)),
              ),
            ),
          ),
      )
      .onConflictDoNothing(),
  );
}

/** A value of ours selected as a column of an INSERT … SELECT, encoded as `column` stores it. */
function bound(value: unknown, column: Column) {
  return sql`${sql.param(value, column)}`.as(column.name);
}

export interface NewService {
  name: string;
  locationIds: string[];
  serviceTypeId: string;
  description?: string | null | undefined;
  isVirtual?: boolean | undefined;
  maxRemoteJoinRadiusKm?: number | null | undefined;
  routeEntry?: RouteEntry | undefined;
}

/**
 * Creates the service and its links in one batch. The plan's service limit is enforced by
 * the INSERT itself (it writes nothing once the organization has as many services as its
 * plan allows), so two concurrent creations cannot both pass a count read beforehand.
 */
/** What a service's creation and deletion record (issue 40). */
const AUDITED_FIELDS = ["name", "description", "serviceTypeId", "isVirtual", "maxRemoteJoinRadiusKm", "status"] as const;

export async function createService(
  deps: Deps,
  organizationId: string,
  input: NewService,
  at: number,
  origin?: AuditOrigin,
): Promise<ServiceRow> {
  const { db } = deps;
  const org = await organizationContext(deps, organizationId);
  await assertServiceTypeFits(deps, input.serviceTypeId, org.type);
  const maxServices = entitlements({ plan: org.plan }).features.maxServices;
  const row: ServiceRow = {
    id: newId("svc"),
    organizationId,
    name: input.name,
    description: input.description ?? null,
    serviceTypeId: input.serviceTypeId,
    isVirtual: input.isVirtual ?? false,
    booking: null,
    maxRemoteJoinRadiusKm: input.maxRemoteJoinRadiusKm ?? null,
    status: "active",
    routeEntry: input.routeEntry ?? DEFAULT_ROUTE_ENTRY,
    createdAt: at,
    updatedAt: at,
  };
  const serviceCount = db.select({ n: count() }).from(services).where(eq(services.organizationId, organizationId));
  const [inserted] = await db.batch([
    // The fields in the table's order (drizzle checks it): the row is written only while the
    // organization is under its plan's limit.
    db.insert(services).select(
      db
        .select({
          id: bound(row.id, services.id),
          organizationId: bound(row.organizationId, services.organizationId),
          name: bound(row.name, services.name),
          description: bound(row.description, services.description),
          serviceTypeId: bound(row.serviceTypeId, services.serviceTypeId),
          isVirtual: bound(row.isVirtual, services.isVirtual),
          maxRemoteJoinRadiusKm: bound(row.maxRemoteJoinRadiusKm, services.maxRemoteJoinRadiusKm),
          status: bound(row.status, services.status),
          createdAt: bound(row.createdAt, services.createdAt),
          updatedAt: bound(row.updatedAt, services.updatedAt),
          booking: sql`NULL`.as(services.booking.name),
          routeEntry: bound(row.routeEntry, services.routeEntry),
        })
        .from(organizations)
        .where(and(eq(organizations.id, organizationId), maxServices === null ? undefined : lt(serviceCount, maxServices))),
    ),
    // Recorded only if the insert just before it wrote the row (under the plan's limit).
    ...(origin
      ? [
          auditInsertIfChanged(
            deps,
            origin,
            {
              organizationId,
              entityType: "service",
              entityId: row.id,
              action: "service.created",
              changes: { ...changedFields(null, row, AUDITED_FIELDS), locationIds: { before: null, after: input.locationIds } },
            },
            at,
          ),
        ]
      : []),
    ...linkStatements(deps, row.id, input.locationIds),
  ]);
  if (inserted.meta.changes === 0) {
    throw planRequired(`The ${org.plan} plan allows ${maxServices} service(s); upgrade to add more`, {
      currentPlan: org.plan,
      limit: maxServices,
      feature: "services",
    });
  }
  return row;
}

export async function findService({ db }: Deps, id: string): Promise<ServiceRow | undefined> {
  return db.select().from(services).where(eq(services.id, id)).get();
}

export interface ServiceFilter {
  ids?: readonly string[] | undefined;
  q?: string | undefined;
  statuses?: readonly ServiceStatus[] | undefined;
  /** A scoped member's locations (issue 31): only services offered at one of them. */
  scope?: LocationScope | undefined;
}

export async function listServices(
  deps: Deps,
  organizationId: string,
  window: ListWindow,
  filter: ServiceFilter = {},
): Promise<{ rows: ServiceRow[]; total: number; hasMore: boolean }> {
  const { db } = deps;
  const where = and(
    eq(services.organizationId, organizationId),
    // One bound parameter for the whole id list, whatever its length.
    filter.ids ? sql`${services.id} IN (SELECT value FROM json_each(${JSON.stringify(filter.ids)}))` : undefined,
    filter.q ? likeContains(services.name, filter.q) : undefined,
    filter.statuses ? inArray(services.status, [...filter.statuses]) : undefined,
    filter.scope ? inArray(services.id, servicesAt(deps, filter.scope)) : undefined,
  );
  const [page, totals] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: services,
        cursorColumn: services.id,
        owner: eq(services.organizationId, organizationId),
        where,
        keys: [
          { column: services.createdAt, direction: "asc" },
          { column: services.id, direction: "asc" },
        ],
      },
      (c) =>
        db
          .select()
          .from(services)
          .where(c.where)
          .orderBy(...c.orderBy)
          .limit(c.limit)
          .offset(c.offset)
          .all(),
    ),
    db.select({ total: count() }).from(services).where(where).get(),
  ]);
  return { ...page, total: totals?.total ?? 0 };
}

export interface QueueSummary {
  id: string;
  name: string;
  letter: string;
  status: "active" | "paused" | "closed";
}

export interface ServiceDetails {
  locationIds: string[];
  queues: QueueSummary[];
  statistics: { queueCount: number; waitingCount: number; servedToday: number };
}

async function inChunks<T>(ids: readonly string[], read: (ids: string[]) => Promise<T[]>): Promise<T[]> {
  const parts = await Promise.all(chunk(ids, IDS_PER_STATEMENT).map(read));
  return parts.flat();
}

/**
 * Links, live (not archived) queues and ticket figures of several services at once.
 * Figures come from the tickets projection of those queues; "today" is the UTC day.
 */
export async function serviceDetails({ db }: Deps, serviceIds: readonly string[], at: number): Promise<Map<string, ServiceDetails>> {
  const details = new Map<string, ServiceDetails>(
    serviceIds.map((id) => [id, { locationIds: [], queues: [], statistics: { queueCount: 0, waitingCount: 0, servedToday: 0 } }]),
  );
  if (serviceIds.length === 0) return details;
  const [links, queueRows] = await Promise.all([
    inChunks(serviceIds, (ids) =>
      db.select().from(serviceLocations).where(inArray(serviceLocations.serviceId, ids)).orderBy(asc(serviceLocations.locationId)).all(),
    ),
    inChunks(serviceIds, (ids) =>
      db
        .select({ id: queues.id, serviceId: queues.serviceId, name: queues.name, letter: queues.letter, status: queues.status })
        .from(queues)
        .where(and(inArray(queues.serviceId, ids), isNull(queues.archivedAt)))
        .orderBy(asc(queues.letter))
        .all(),
    ),
  ]);
  for (const link of links) details.get(link.serviceId)?.locationIds.push(link.locationId);
  for (const { serviceId, ...queue } of queueRows) {
    const d = details.get(serviceId);
    if (!d) continue;
    d.queues.push(queue);
    d.statistics.queueCount += 1;
  }
  const dayStart = utcDayStart(at);
  const figures = await inChunks(
    queueRows.map((q) => q.id),
    (ids) =>
      db
        .select({
          serviceId: tickets.serviceId,
          waiting: sql<number>`sum(${tickets.status} = 'waiting')`,
          servedToday: sql<number>`sum(${tickets.status} = 'served' AND ${tickets.servedAt} >= ${dayStart})`,
        })
        .from(tickets)
        .where(and(inArray(tickets.queueId, ids), or(eq(tickets.status, "waiting"), eq(tickets.status, "served"))))
        .groupBy(tickets.serviceId)
        .all(),
  );
  for (const f of figures) {
    const d = details.get(f.serviceId);
    if (!d) continue;
    d.statistics.waitingCount += Number(f.waiting ?? 0);
    d.statistics.servedToday += Number(f.servedToday ?? 0);
  }
  return details;
}

export function serviceRecord(s: ServiceRow, d: ServiceDetails) {
  return {
    id: s.id,
    organizationId: s.organizationId,
    name: s.name,
    description: s.description,
    serviceTypeId: s.serviceTypeId,
    isVirtual: s.isVirtual,
    maxRemoteJoinRadiusKm: s.maxRemoteJoinRadiusKm,
    status: s.status,
    // Settings saved before a field existed read with its default.
    booking: s.booking ? { ...DEFAULT_BOOKING, ...s.booking } : null,
    routeEntry: s.routeEntry,
    locationIds: d.locationIds,
    queues: d.queues,
    statistics: d.statistics,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
  };
}

export async function serviceRecords(deps: Deps, rows: readonly ServiceRow[], at: number) {
  const details = await serviceDetails(
    deps,
    rows.map((r) => r.id),
    at,
  );
  return rows.map((r) => serviceRecord(r, details.get(r.id)!));
}

export interface ServicePatch {
  name?: string | undefined;
  description?: string | null | undefined;
  serviceTypeId?: string | undefined;
  isVirtual?: boolean | undefined;
  maxRemoteJoinRadiusKm?: number | null | undefined;
  status?: ServiceStatus | undefined;
  locationIds?: string[] | undefined;
  booking?: BookingSettings | null | undefined;
  routeEntry?: RouteEntry | undefined;
}

/** Changes the fields given; `locationIds` replaces every link, in the same batch. */
export async function updateService(
  deps: Deps,
  current: ServiceRow,
  patch: ServicePatch,
  at: number,
  origin?: AuditOrigin,
): Promise<ServiceRow> {
  const { db } = deps;
  if (patch.serviceTypeId !== undefined && patch.serviceTypeId !== current.serviceTypeId) {
    const org = await organizationContext(deps, current.organizationId);
    await assertServiceTypeFits(deps, patch.serviceTypeId, org.type);
  }
  if (patch.locationIds) await assertLocationsOf(deps, current.organizationId, patch.locationIds);
  const { locationIds, ...fields } = patch;
  const changes: Partial<ServiceRow> = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  if (Object.keys(changes).length === 0 && !locationIds) return current;
  const updated: ServiceRow = { ...current, ...changes, updatedAt: at };
  const audited = changedFields(current, changes, Object.keys(changes));
  if (locationIds) audited.locationIds = { before: null, after: locationIds };
  await db.batch([
    db
      .update(services)
      .set({ ...changes, updatedAt: at })
      .where(eq(services.id, current.id)),
    ...(locationIds
      ? [db.delete(serviceLocations).where(eq(serviceLocations.serviceId, current.id)), ...linkStatements(deps, current.id, locationIds)]
      : []),
    ...(origin && Object.keys(audited).length > 0
      ? [
          auditInsert(
            deps,
            origin,
            {
              organizationId: current.organizationId,
              entityType: "service",
              entityId: current.id,
              action: "service.updated",
              changes: audited,
            },
            at,
          ),
        ]
      : []),
  ]);
  // After the write: a join in between would keep the old locations' defaults again.
  if (locationIds) forgetJoinLanguages();
  return updated;
}

/** Deletes the service; its queues and links go by cascade. Returns the queue ids to retire. */
export async function deleteService(deps: Deps, current: ServiceRow, at: number, origin?: AuditOrigin): Promise<string[]> {
  const { db } = deps;
  const id = current.id;
  const [gone] = await db.batch([
    db.select({ id: queues.id }).from(queues).where(eq(queues.serviceId, id)),
    db.delete(services).where(eq(services.id, id)),
    // Recorded only if the delete just before it removed the row.
    ...(origin
      ? [
          auditInsertIfChanged(
            deps,
            origin,
            {
              organizationId: current.organizationId,
              entityType: "service",
              entityId: id,
              action: "service.deleted",
              changes: changedFields(current, null, AUDITED_FIELDS),
            },
            at,
          ),
        ]
      : []),
  ]);
  return gone.map((q) => q.id);
}
