import { createRoute, z } from "@hono/zod-openapi";
import { authorize, organizationOfRequest, requireUser, type Actor } from "../http/auth";
import { authorizeResources, guarded } from "../access/guard";
import { forbidden, notFound, validationError } from "../http/errors";
import { eventsWithin } from "../catalog/location-scope";
import { errors, idParam, jsonBody, jsonResponse, listEnvelope, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { parseInstantInput, utcInstant } from "../lib/instant";
import { DAY, iso, utcDayStart } from "../lib/time";
import { MAX_OCCURRENCES } from "../domain/recurrence";
import { membersAvailability } from "./availability";
import {
  assertMayChange,
  createEvent,
  deleteEvent,
  EVENT_TYPES,
  eventRecord,
  occurrenceRecord,
  occurrencesBetween,
  updateEvent,
} from "./calendar";
import { calendarChanged } from "../tickets/room-rules";
import { CustomerPhone, Email, Language, PublicLine, PublicParagraph, RoleSchema } from "../http/schemas";
import {
  appointmentOfEvent,
  bookFromCalendar,
  bookingEvent,
  cancelFromCalendar,
  moveFromCalendar,
} from "../appointments/calendar-bookings";
import type { InstantInput } from "../lib/instant";
import { deps } from "../http/deps";

const app = router();
const tags = ["Calendar"];

/** At most a year and a day of calendar per read. */
const MAX_RANGE = 366 * DAY;
const DEFAULT_RANGE = 7 * DAY;

const Instant = z
  .string()
  .max(40)
  .transform((value, ctx) => {
    const parsed = parseInstantInput(value);
    if (!parsed) {
      ctx.addIssue({ code: "custom", message: "expected an ISO 8601 timestamp with Z or an offset, or a date YYYY-MM-DD" });
      return z.NEVER;
    }
    return parsed;
  })
  .openapi({ example: "2026-03-20T09:00:00+01:00" });

const Color = z
  .string()
  .regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, "a hex color, #RGB or #RRGGBB")
  .openapi({ example: "#3366ff" });
const RefId = z.string().min(1).max(64);
const EventType = z.enum(EVENT_TYPES);
const Recurrence = z.enum(["daily", "weekly", "monthly"]);
const Title = PublicLine(200);
const Description = PublicParagraph(2000);
const Attendees = z.array(RefId).max(500);

const EventRecord = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    startDate: z.string(),
    endDate: z.string(),
    eventType: EventType,
    serviceId: z.string().nullable(),
    locationId: z.string().nullable(),
    attendees: z.array(z.string()),
    color: z.string().nullable(),
    recurrencePattern: Recurrence.nullable(),
    recurrenceEndDate: z.string().nullable().openapi({ description: "Last instant an occurrence may start" }),
    timezone: z.string().openapi({ description: "IANA zone whose wall-clock time the recurrence repeats" }),
    createdById: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("CalendarEvent");

/** The answer of a create or a change: the event, and the appointment it is (issue 38 (e)). */
const WrittenEventRecord = EventRecord.extend({
  appointmentId: z
    .string()
    .nullable()
    .openapi({ description: "The appointment this event is (an `appointment` event made with a `customer`), else null" }),
}).openapi("CalendarEventWritten");

const CalendarCustomer = z
  .strictObject({
    name: PublicLine(120).openapi({ example: "Awa Diallo" }),
    phone: CustomerPhone.nullish(),
    email: Email.nullish(),
    language: Language.openapi({ description: "The confirmation and reminders are in it" }),
    userId: z.string().min(1).max(64).nullish().openapi({
      description:
        "The customer's account (someone with a ticket or appointment of the organization): the appointment is in their own list",
    }),
  })
  .openapi("CalendarAppointmentCustomer");

/** A booking starts and ends at instants (a bare date would be midnight). */
function instantMs(input: InstantInput, field: string): number {
  if (input.kind !== "instant") throw validationError(field, "a booking starts and ends at an instant with Z or an offset");
  return input.ms;
}

const OccurrenceRecord = EventRecord.extend({ occurrenceStart: z.string(), occurrenceEnd: z.string() }).openapi("CalendarOccurrence");

const OrganizationParam = idParam("organizationId", "org");
const EventParam = idParam("eventId", "evt");

/**
 * A scoped manager (issue 31) plans for their locations only: an event they create or move names
 * one of them (by location or service); one for the whole organization is not theirs to make.
 */
async function scopedEventTarget(
  c: Parameters<typeof authorize>[0],
  actor: Actor,
  input: { locationId?: string | null; serviceId?: string | null },
  creating = false,
): Promise<void> {
  if (actor.locationIds === null) return;
  if (input.locationId || input.serviceId) {
    const target = await authorizeResources(c, "CALENDAR_VIEW", { locationIds: [input.locationId], serviceIds: [input.serviceId] });
    if (target.organizationId !== actor.organizationId) throw notFound(input.locationId ? "Location" : "Service");
  }
  if (creating && !input.locationId && !input.serviceId) {
    throw forbidden("A member limited to some locations creates events for a location or a service of theirs");
  }
}

const TIME_NOTE =
  "Times: ISO 8601 with Z or an offset, or a date YYYY-MM-DD meaning 00:00 in the event's timezone " +
  "(its location's, else the organization's first location's, else UTC). A date as recurrenceEndDate " +
  "includes occurrences starting on that local day.";

const create = createRoute({
  method: "post",
  path: "/calendar/organization/{organizationId}",
  tags,
  summary: "Create a calendar event (CALENDAR_MANAGE)",
  description:
    "Any event type may be created; eventType defaults to event. An `appointment` event with a `customer` is a real booking " +
    "(docs/appointments.md): it needs `serviceId` and `locationId`, lasts the service's `durationMinutes`, has at most one " +
    "attendee (the staff member), and is made exactly as POST /v1/appointments makes one (the same free-slot check and " +
    "capacity: 409 SLOT_UNAVAILABLE when it cannot be taken); its title is the service's name; the customer is sent the " +
    "confirmation; `appointmentId` names it. Without `customer`, an `appointment` event only marks its attendees busy. " +
    `${TIME_NOTE}`,
  security: SECURITY.any,
  request: {
    params: OrganizationParam,
    body: jsonBody(
      z
        .strictObject({
          title: Title,
          description: Description.nullable().optional(),
          startDate: Instant,
          endDate: Instant,
          eventType: EventType.optional(),
          serviceId: RefId.nullable().optional(),
          locationId: RefId.nullable().optional(),
          attendees: Attendees.optional(),
          color: Color.nullable().optional(),
          recurrencePattern: Recurrence.nullable().optional(),
          recurrenceEndDate: Instant.nullable().optional(),
          customer: CalendarCustomer.optional().openapi({ description: "For an `appointment` event: the booking's customer" }),
        })
        .openapi("CreateCalendarEventRequest"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(WrittenEventRecord), "Created"), ...errors(409) },
});

app.openapi(create, async (c) => {
  const { organizationId } = c.req.valid("param");
  const actor = await authorize(c, organizationId, "CALENDAR_MANAGE");
  const input = c.req.valid("json");
  await scopedEventTarget(c, actor, input, true);
  const at = now();
  const { customer, ...fields } = input;
  if (customer) {
    if ((fields.eventType ?? "event") !== "appointment") throw validationError("customer", "only an `appointment` event has a customer");
    // A real booking (issue 38 (e)): the appointment, its slot and its event, made as POST /v1/appointments makes them.
    const { appointment } = await bookFromCalendar(
      deps(c),
      {
        organizationId,
        serviceId: fields.serviceId,
        locationId: fields.locationId,
        start: instantMs(fields.startDate, "startDate"),
        end: instantMs(fields.endDate, "endDate"),
        attendees: fields.attendees,
        recurrencePattern: fields.recurrencePattern,
        description: fields.description,
        customer,
      },
      at,
    );
    const { event, timeZone } = await bookingEvent(deps(c), appointment);
    await calendarChanged(deps(c), organizationId, [event], at);
    return c.json(ok({ ...eventRecord(event, timeZone), appointmentId: appointment.id }), 201);
  }
  const { event, timeZone } = await createEvent(deps(c), organizationId, actor.userId, fields, at);
  await calendarChanged(deps(c), organizationId, [event], at);
  return c.json(ok({ ...eventRecord(event, timeZone), appointmentId: null }), 201);
});

const createAvailability = createRoute({
  method: "post",
  path: "/calendar/organization/{organizationId}/availability",
  tags,
  summary: "Declare your own unavailability (CALENDAR_CREATE_OWN_AVAILABILITY, user session)",
  description: `Creates an unavailability event whose only attendee is the caller. ${TIME_NOTE}`,
  security: SECURITY.session,
  request: {
    params: OrganizationParam,
    body: jsonBody(
      z
        .strictObject({
          title: Title,
          startDate: Instant,
          endDate: Instant,
          description: Description.nullable().optional(),
          recurrencePattern: Recurrence.nullable().optional(),
          recurrenceEndDate: Instant.nullable().optional(),
        })
        .openapi("CreateAvailabilityRequest"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(EventRecord), "Created"), ...errors() },
});

app.openapi(createAvailability, async (c) => {
  const { user } = requireUser(c);
  const { organizationId } = c.req.valid("param");
  await authorize(c, organizationId, "CALENDAR_CREATE_OWN_AVAILABILITY");
  const input = { ...c.req.valid("json"), eventType: "unavailability" as const, attendees: [user.id] };
  const at = now();
  const { event, timeZone } = await createEvent(deps(c), organizationId, user.id, input, at);
  await calendarChanged(deps(c), organizationId, [event], at);
  return c.json(ok(eventRecord(event, timeZone)), 201);
});

const update = createRoute({
  method: "patch",
  path: "/calendar/{eventId}",
  tags,
  summary: "Change a calendar event",
  description:
    "null clears an optional field. CALENDAR_MANAGE changes any event; with only CALENDAR_CREATE_OWN_AVAILABILITY " +
    "a user changes their own unavailability events, and only title, description, startDate, endDate, " +
    "recurrencePattern and recurrenceEndDate. The event of a booking (`appointmentId`) moves with its appointment: startDate " +
    "(endDate, if sent, the start plus the service's duration) and attendees (one staff member at most) reschedule it by the " +
    "booking's rules (409 SLOT_UNAVAILABLE when the new slot cannot be taken; a booking no longer `booked` is 409 INVALID_STATE); " +
    `any other field is 400 naming it. ${TIME_NOTE}`,
  security: SECURITY.any,
  request: {
    params: EventParam,
    body: jsonBody(
      z
        .strictObject({
          title: Title.optional(),
          description: Description.nullable().optional(),
          startDate: Instant.optional(),
          endDate: Instant.optional(),
          eventType: EventType.optional(),
          serviceId: RefId.nullable().optional(),
          locationId: RefId.nullable().optional(),
          attendees: Attendees.nullable().optional(),
          color: Color.nullable().optional(),
          recurrencePattern: Recurrence.nullable().optional(),
          recurrenceEndDate: Instant.nullable().optional(),
        })
        .openapi("UpdateCalendarEventRequest"),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(WrittenEventRecord), "Updated"), ...errors(409) },
});

app.openapi(update, async (c) => {
  const d = deps(c);
  const patch = c.req.valid("json");
  const { row: current, actor } = guarded(c, "calendarEvent", "CALENDAR_VIEW");
  await scopedEventTarget(c, actor, patch);
  assertMayChange(actor, current, Object.keys(patch));
  const at = now();
  const booking = current.eventType === "appointment" ? await appointmentOfEvent(deps(c), current.id) : null;
  if (booking) {
    const moved = await moveFromCalendar(
      deps(c),
      booking,
      {
        fields: Object.keys(patch),
        start: patch.startDate ? instantMs(patch.startDate, "startDate") : undefined,
        end: patch.endDate ? instantMs(patch.endDate, "endDate") : undefined,
        attendees: patch.attendees,
      },
      at,
    );
    const { event, timeZone } = await bookingEvent(deps(c), moved);
    await calendarChanged(deps(c), current.organizationId, [current, event], at);
    return c.json(ok({ ...eventRecord(event, timeZone), appointmentId: moved.id }), 200);
  }
  const { event, timeZone } = await updateEvent(d, current, patch, at);
  await calendarChanged(deps(c), current.organizationId, [current, event], at);
  return c.json(ok({ ...eventRecord(event, timeZone), appointmentId: null }), 200);
});

const remove = createRoute({
  method: "delete",
  path: "/calendar/{eventId}",
  tags,
  summary: "Delete a calendar event (every occurrence)",
  description:
    "Same rule as PATCH: CALENDAR_MANAGE, or your own unavailability event. Deleting a booking's event cancels the appointment " +
    "(its slot is free again, the customer told); one no longer `booked` is 409 INVALID_STATE.",
  security: SECURITY.any,
  request: { params: EventParam },
  responses: {
    200: jsonResponse(okEnvelope(z.object({ id: z.string(), deleted: z.literal(true) })), "Deleted"),
    ...errors(409),
  },
});

app.openapi(remove, async (c) => {
  const d = deps(c);
  const { row: event, actor } = guarded(c, "calendarEvent", "CALENDAR_VIEW");
  assertMayChange(actor, event);
  const booking = event.eventType === "appointment" ? await appointmentOfEvent(deps(c), event.id) : null;
  // A booking's event goes with its appointment: cancelling deletes it.
  if (booking) await cancelFromCalendar(deps(c), booking, now());
  else await deleteEvent(d, event.id);
  await calendarChanged(deps(c), event.organizationId, [event], now());
  return c.json(ok({ id: event.id, deleted: true as const }), 200);
});

const list = createRoute({
  method: "get",
  path: "/business/calendar",
  tags,
  summary: "Occurrences in [startDate, endDate), recurring events expanded (CALENDAR_VIEW)",
  description:
    "startDate/endDate: ISO 8601 with Z or an offset, or a date (00:00 UTC). Defaults: today (UTC) to 7 days " +
    "later; one bound alone gives a 7-day range. At most 366 days and " +
    `${MAX_OCCURRENCES} occurrences (else 400 on endDate). Each item is the event plus occurrenceStart/occurrenceEnd, ` +
    "in start order; an occurrence cut by the range is included.",
  security: SECURITY.any,
  request: {
    query: z.object({ startDate: Instant.optional(), endDate: Instant.optional() }),
  },
  responses: { 200: jsonResponse(listEnvelope(OccurrenceRecord), "Occurrences"), ...errors() },
});

app.openapi(list, async (c) => {
  const organizationId = await organizationOfRequest(c);
  const actor = await authorize(c, organizationId, "CALENDAR_VIEW");
  const q = c.req.valid("query");
  const given = { start: q.startDate && utcInstant(q.startDate), end: q.endDate && utcInstant(q.endDate) };
  const start = given.start ?? (given.end !== undefined ? given.end - DEFAULT_RANGE : utcDayStart(now()));
  const end = given.end ?? start + DEFAULT_RANGE;
  if (end <= start) throw validationError("endDate", "must be after startDate");
  if (end - start > MAX_RANGE) throw validationError("endDate", "the range may span at most 366 days");
  const d = deps(c);
  const only = actor.locationIds === null ? undefined : eventsWithin(d, actor.locationIds);
  const items = await occurrencesBetween(d, organizationId, start, end, only);
  const data = items.map((i) => occurrenceRecord(i.event, i.occurrence, i.timeZone));
  return c.json(okList(data, { total: data.length, page: 1, limit: MAX_OCCURRENCES, hasMore: false }), 200);
});

const MemberAvailability = z
  .object({
    userId: z.string(),
    firstName: z.string(),
    lastName: z.string(),
    role: RoleSchema,
    available: z.boolean(),
    blockedBy: z.object({ eventId: z.string(), eventType: EventType, until: z.string() }).nullable(),
  })
  .openapi("MemberAvailability");

const availability = createRoute({
  method: "get",
  path: "/business/calendar/availability",
  tags,
  summary: "Which members are available at an instant (CALENDAR_VIEW)",
  description:
    "A member is unavailable while a break, closure or unavailability occurrence covers `at` (default now) and " +
    "lists them, or lists nobody. blockedBy names the covering event whose occurrence ends last.",
  security: SECURITY.any,
  request: {
    query: CursorQuery.extend({ at: Instant.optional() }),
  },
  responses: { 200: jsonResponse(cursorListEnvelope(MemberAvailability), "Members"), ...errors() },
});

app.openapi(availability, async (c) => {
  const organizationId = await organizationOfRequest(c);
  await authorize(c, organizationId, "CALENDAR_VIEW");
  const q = c.req.valid("query");
  const at = q.at ? utcInstant(q.at) : now();
  const window = listWindow(q);
  const { items, total, hasMore } = await membersAvailability(deps(c), organizationId, at, window);
  const data = items.map((m) => ({ ...m, blockedBy: m.blockedBy && { ...m.blockedBy, until: iso(m.blockedBy.until) } }));
  return c.json(
    okList(
      data,
      listMeta(
        items.map((m) => m.userId),
        total,
        window,
        hasMore,
      ),
    ),
    200,
  );
});

export default app;
