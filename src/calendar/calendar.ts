import { and, asc, eq, inArray, isNotNull, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import { chunk } from "../db/client";
import { calendarEvents, locations, members, services } from "../db/schema";
import {
  expandOccurrences,
  isValidTimeZone,
  MAX_OCCURRENCES,
  zonedWallTimeToUtc,
  type Occurrence,
  type RecurrencePattern,
} from "../domain/recurrence";
import type { Actor } from "../http/auth";
import { ApiError, forbidden, notFound, validationError } from "../http/errors";
import { permissionRefused } from "../http/permission-refusal";
import type { InstantInput } from "../lib/instant";
import { newId } from "../lib/ids";
import { DAY, iso, isoOrNull } from "../lib/time";
import type { Deps } from "../http/deps";

export type EventRow = typeof calendarEvents.$inferSelect;
export type EventType = EventRow["eventType"];
export const EVENT_TYPES = ["shift", "break", "closure", "event", "unavailability", "appointment"] as const satisfies readonly EventType[];

/** A recurring event's occurrence may last at most this long, so expansions stay small. */
export const MAX_RECURRING_LENGTH = 31 * DAY;

// ── Timezones ────────────────────────────────────────────────────────────────────────────

/** The zones an organization's events can use: per location, and the fallback. */
export interface OrganizationZones {
  byLocation: ReadonlyMap<string, string>;
  /** The organization's first location's zone (by creation), else UTC. */
  fallback: string;
}

export async function organizationZones(deps: Deps, organizationId: string): Promise<OrganizationZones> {
  return zonesOf(await organizationZonesQuery(deps, organizationId).all());
}

/** The read behind `organizationZones`, for a caller that batches it with others. */
export function organizationZonesQuery({ db }: Deps, organizationId: string) {
  return db
    .select({ id: locations.id, timezone: locations.timezone })
    .from(locations)
    .where(eq(locations.organizationId, organizationId))
    .orderBy(asc(locations.createdAt), asc(locations.id));
}

export function zonesOf(rows: readonly { id: string; timezone: string }[]): OrganizationZones {
  const byLocation = new Map(rows.map((r) => [r.id, isValidTimeZone(r.timezone) ? r.timezone : "UTC"]));
  return { byLocation, fallback: rows[0] ? byLocation.get(rows[0].id)! : "UTC" };
}

export function zoneOf(zones: OrganizationZones, locationId: string | null): string {
  return (locationId && zones.byLocation.get(locationId)) || zones.fallback;
}

/** A bare date is 00:00 in the event's timezone. */
function instantIn(input: InstantInput, timeZone: string): number {
  return input.kind === "instant" ? input.ms : zonedWallTimeToUtc(input.year, input.month, input.day, 0, 0, 0, timeZone);
}

/** A bare recurrence end date includes every occurrence starting on that local day. */
function lastStartIn(input: InstantInput, timeZone: string): number {
  return input.kind === "instant" ? input.ms : zonedWallTimeToUtc(input.year, input.month, input.day + 1, 0, 0, 0, timeZone) - 1;
}

// ── Records ──────────────────────────────────────────────────────────────────────────────

export function eventRecord(e: EventRow, timeZone: string) {
  return {
    id: e.id,
    organizationId: e.organizationId,
    title: e.title,
    description: e.description,
    startDate: iso(e.startAt),
    endDate: iso(e.endAt),
    eventType: e.eventType,
    serviceId: e.serviceId,
    locationId: e.locationId,
    attendees: e.attendees,
    color: e.color,
    recurrencePattern: e.recurrencePattern,
    recurrenceEndDate: isoOrNull(e.recurrenceEndAt),
    timezone: timeZone,
    createdById: e.createdById,
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
  };
}

export function occurrenceRecord(e: EventRow, o: Occurrence, timeZone: string) {
  return { ...eventRecord(e, timeZone), occurrenceStart: iso(o.occurrenceStart), occurrenceEnd: iso(o.occurrenceEnd) };
}

// ── Writes ───────────────────────────────────────────────────────────────────────────────

/** Fields of a create or a patch: undefined leaves a field as it is, null clears it. */
export interface EventInput {
  title?: string | undefined;
  description?: string | null | undefined;
  startDate?: InstantInput | undefined;
  endDate?: InstantInput | undefined;
  eventType?: EventType | undefined;
  serviceId?: string | null | undefined;
  locationId?: string | null | undefined;
  attendees?: string[] | null | undefined;
  color?: string | null | undefined;
  recurrencePattern?: RecurrencePattern | null | undefined;
  recurrenceEndDate?: InstantInput | null | undefined;
}

async function assertService({ db }: Deps, organizationId: string, serviceId: string): Promise<void> {
  const row = await db
    .select({ id: services.id })
    .from(services)
    .where(and(eq(services.id, serviceId), eq(services.organizationId, organizationId)))
    .get();
  if (!row) throw new ApiError("NOT_FOUND", "Service not found", { field: "serviceId" });
}

async function assertMembers({ db }: Deps, organizationId: string, userIds: readonly string[]): Promise<void> {
  const found = new Set<string>();
  // One parameter is the organization id; D1 binds at most 100 a statement.
  for (const ids of chunk(userIds, 90)) {
    const rows = await db
      .select({ userId: members.userId })
      .from(members)
      .where(and(eq(members.organizationId, organizationId), inArray(members.userId, ids)))
      .all();
    for (const r of rows) found.add(r.userId);
  }
  const strangers = userIds.filter((id) => !found.has(id));
  if (strangers.length > 0) {
    throw validationError("attendees", "every attendee must be a member of the organization", { notMembers: strangers });
  }
}

/** The event row a create or patch produces, checked as a whole (a patch may move one end). */
async function resolveEvent(deps: Deps, base: EventRow, input: EventInput, zones: OrganizationZones): Promise<EventRow> {
  const organizationId = base.organizationId;
  if (input.locationId && !zones.byLocation.has(input.locationId)) {
    throw new ApiError("NOT_FOUND", "Location not found", { field: "locationId" });
  }
  const locationId = input.locationId === undefined ? base.locationId : input.locationId;
  const timeZone = zoneOf(zones, locationId);
  const startAt = input.startDate ? instantIn(input.startDate, timeZone) : base.startAt;
  const endAt = input.endDate ? instantIn(input.endDate, timeZone) : base.endAt;
  if (endAt <= startAt) throw validationError("endDate", "must be after startDate");

  const recurrencePattern = input.recurrencePattern === undefined ? base.recurrencePattern : input.recurrencePattern;
  if (recurrencePattern && endAt - startAt > MAX_RECURRING_LENGTH) {
    throw validationError("endDate", "a recurring event may last at most 31 days");
  }
  let recurrenceEndAt = base.recurrenceEndAt;
  if (input.recurrenceEndDate !== undefined) {
    if (input.recurrenceEndDate !== null && !recurrencePattern) {
      throw validationError("recurrenceEndDate", "needs a recurrencePattern");
    }
    recurrenceEndAt = input.recurrenceEndDate === null ? null : lastStartIn(input.recurrenceEndDate, timeZone);
  }
  // Clearing the pattern ends the recurrence and what bounded it.
  if (!recurrencePattern) recurrenceEndAt = null;
  if (recurrenceEndAt !== null && recurrenceEndAt < startAt) {
    throw validationError("recurrenceEndDate", "must not be before startDate");
  }

  if (input.serviceId) await assertService(deps, organizationId, input.serviceId);
  let attendees = base.attendees;
  if (input.attendees !== undefined) {
    attendees = [...new Set(input.attendees ?? [])];
    await assertMembers(deps, organizationId, attendees);
  }

  return {
    ...base,
    title: input.title ?? base.title,
    description: input.description === undefined ? base.description : input.description,
    startAt,
    endAt,
    eventType: input.eventType ?? base.eventType,
    serviceId: input.serviceId === undefined ? base.serviceId : input.serviceId,
    locationId,
    attendees,
    color: input.color === undefined ? base.color : input.color,
    recurrencePattern,
    recurrenceEndAt,
  };
}

export async function createEvent(
  deps: Deps,
  organizationId: string,
  createdById: string | null,
  input: EventInput & { title: string; startDate: InstantInput; endDate: InstantInput },
  at: number,
): Promise<{ event: EventRow; timeZone: string }> {
  const { db } = deps;
  const blank: EventRow = {
    id: newId("evt"),
    organizationId,
    title: input.title,
    description: null,
    startAt: 0,
    endAt: 0,
    eventType: "event",
    serviceId: null,
    locationId: null,
    attendees: [],
    color: null,
    recurrencePattern: null,
    recurrenceEndAt: null,
    createdById,
    createdAt: at,
    updatedAt: at,
  };
  const zones = await organizationZones(deps, organizationId);
  const event = await resolveEvent(deps, blank, input, zones);
  await db.insert(calendarEvents).values(event);
  return { event, timeZone: zoneOf(zones, event.locationId) };
}

export async function updateEvent(deps: Deps, current: EventRow, patch: EventInput, at: number) {
  const { db } = deps;
  const zones = await organizationZones(deps, current.organizationId);
  const event = { ...(await resolveEvent(deps, current, patch, zones)), updatedAt: at };
  await db.update(calendarEvents).set(event).where(eq(calendarEvents.id, current.id));
  return { event, timeZone: zoneOf(zones, event.locationId) };
}

export async function findEvent({ db }: Deps, eventId: string): Promise<EventRow> {
  const row = await db.select().from(calendarEvents).where(eq(calendarEvents.id, eventId)).get();
  if (!row) throw notFound("Calendar event");
  return row;
}

export async function deleteEvent({ db }: Deps, eventId: string): Promise<void> {
  await db.delete(calendarEvents).where(eq(calendarEvents.id, eventId));
}

/** "owner, admin or manager", from a refusal's details. */
function rolesOf(details: Record<string, unknown>): string {
  const roles = (details.roles as string[] | undefined) ?? [];
  return roles.length > 1 ? `${roles.slice(0, -1).join(", ")} or ${roles[roles.length - 1]}` : (roles[0] ?? "another role");
}

/** What an operator may change on their own unavailability: the fields they could create it with. */
const OWN_AVAILABILITY_FIELDS = new Set(["title", "description", "startDate", "endDate", "recurrencePattern", "recurrenceEndDate"]);

/**
 * CALENDAR_MANAGE may change any event of the organization. With only
 * CALENDAR_CREATE_OWN_AVAILABILITY, a user may change or delete the unavailability events
 * they created themselves, and only in the fields the availability route accepts.
 */
export function assertMayChange(actor: Actor, event: EventRow, patchedFields: readonly string[] = []): void {
  if (actor.can("CALENDAR_MANAGE")) return;
  const own = actor.userId !== null && event.eventType === "unavailability" && event.createdById === actor.userId;
  // The 403 names the roles (or the key scope) a person can act on, not the internal permission (issue 39).
  if (!actor.can("CALENDAR_CREATE_OWN_AVAILABILITY") || !own) {
    if (actor.apiKeyId !== null || !actor.can("CALENDAR_CREATE_OWN_AVAILABILITY")) throw permissionRefused("CALENDAR_MANAGE", actor);
    const { details } = permissionRefused("CALENDAR_MANAGE", actor);
    throw new ApiError(
      "AUTHORIZATION_ERROR",
      `Only your own unavailability events can be changed: this one needs ${rolesOf(details)}`,
      details,
    );
  }
  const refused = patchedFields.find((f) => !OWN_AVAILABILITY_FIELDS.has(f));
  if (refused) {
    const { details } = permissionRefused("CALENDAR_MANAGE", actor);
    throw new ApiError("AUTHORIZATION_ERROR", `Changing ${refused} needs ${rolesOf(details)}`, { ...details, field: refused });
  }
}

// ── Reads ────────────────────────────────────────────────────────────────────────────────

/**
 * Events of the organization that may have an occurrence overlapping [from, to). Exact
 * overlap is decided by the expansion; this only keeps the candidate set small, with a
 * day of slack for wall-clock lengths stretched by a DST change.
 */
export async function candidateEvents(deps: Deps, organizationId: string, from: number, to: number, extra?: SQL): Promise<EventRow[]> {
  return candidateEventsQuery(deps, organizationId, from, to, extra).all();
}

/** The read behind `candidateEvents`, for a caller that batches it with others. */
export function candidateEventsQuery({ db }: Deps, organizationId: string, from: number, to: number, extra?: SQL) {
  return db
    .select()
    .from(calendarEvents)
    .where(
      and(
        eq(calendarEvents.organizationId, organizationId),
        lt(calendarEvents.startAt, to),
        or(
          and(isNull(calendarEvents.recurrencePattern), sql`${calendarEvents.endAt} > ${from}`),
          and(
            isNotNull(calendarEvents.recurrencePattern),
            or(
              isNull(calendarEvents.recurrenceEndAt),
              sql`${calendarEvents.recurrenceEndAt} + (${calendarEvents.endAt} - ${calendarEvents.startAt}) + ${DAY} > ${from}`,
            ),
          ),
        ),
        extra,
      ),
    )
    .orderBy(asc(calendarEvents.startAt), asc(calendarEvents.id));
}

export interface ExpandedOccurrence {
  event: EventRow;
  occurrence: Occurrence;
  timeZone: string;
}

/** Every occurrence overlapping [from, to), in start order; more than MAX_OCCURRENCES is refused. */
export async function occurrencesBetween(
  deps: Deps,
  organizationId: string,
  from: number,
  to: number,
  /** Only these events (a scoped member's, issue 31); absent = every event of the organization. */
  only?: SQL,
): Promise<ExpandedOccurrence[]> {
  const [events, zones] = await Promise.all([
    candidateEvents(deps, organizationId, from, to, only),
    organizationZones(deps, organizationId),
  ]);
  const out: ExpandedOccurrence[] = [];
  for (const event of events) {
    const timeZone = zoneOf(zones, event.locationId);
    for (const occurrence of expandOccurrences(event, from, to, timeZone, MAX_OCCURRENCES + 1 - out.length)) {
      out.push({ event, occurrence, timeZone });
    }
    if (out.length > MAX_OCCURRENCES) {
      throw validationError("endDate", `the range holds more than ${MAX_OCCURRENCES} occurrences; ask for a shorter one`);
    }
  }
  return out.sort((a, b) => a.occurrence.occurrenceStart - b.occurrence.occurrenceStart || a.event.id.localeCompare(b.event.id));
}

/** Occurrences covering the instant `at`, among events of the given types. */
export async function occurrencesCovering(
  deps: Deps,
  organizationId: string,
  at: number,
  eventTypes: readonly EventType[],
  serviceId?: string,
): Promise<ExpandedOccurrence[]> {
  const filter = and(
    inArray(calendarEvents.eventType, [...eventTypes]),
    serviceId === undefined ? undefined : eq(calendarEvents.serviceId, serviceId),
  );
  const events = await candidateEvents(deps, organizationId, at, at + 1, filter);
  if (events.length === 0) return [];
  const zones = await organizationZones(deps, organizationId);
  return events.flatMap((event) => {
    const timeZone = zoneOf(zones, event.locationId);
    return expandOccurrences(event, at, at + 1, timeZone).map((occurrence) => ({ event, occurrence, timeZone }));
  });
}
