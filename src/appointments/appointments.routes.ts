import { pickLanguage } from "../domain/notification-templates";
import { createRoute, z } from "@hono/zod-openapi";
import { guarded } from "../access/guard";
import { requireCredential, requireUser } from "../http/auth";
import { errors, idParam, jsonBody, jsonResponse, listEnvelope, okEnvelope, SECURITY } from "../http/openapi";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { CustomerPhone, Email, Language, PublicLine, PublicParagraph } from "../http/schemas";
import { now } from "../lib/clock";
import { parseInstantInput } from "../lib/instant";
import { iso, isoOrNull } from "../lib/time";
import { announce } from "./announcements";
import { checkInCode } from "./check-in";
import { appointmentOfCaller, appointmentsOfUser, bookerOf, dayAtLocation, freeSlots, placeOf, slotsToMoveTo } from "./appointments";
import { bookAppointment, cancelBooking, holdSlot, HOLD_MINUTES, rescheduleAppointment } from "./bookings";
import { APPOINTMENT_TOKEN_HEADER } from "./manage-token";
import type { AppointmentRow } from "./appointment-rows";
import { deps } from "../http/deps";

// Booking settings of a service, its free slots, and appointments (docs/appointments.md).

const app = router();
const tags = ["Appointments"];

/** A service's booking settings: every field has a default, so `{"enabled": true}` is enough. */
export const BookingSettingsSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    durationMinutes: z.number().int().min(5).max(480).default(30),
    slotStepMinutes: z
      .number()
      .int()
      .min(5)
      .max(480)
      .default(30)
      .openapi({ description: "Slots start every this many minutes from the opening" }),
    capacityPerSlot: z.number().int().min(1).max(100).default(1).openapi({ description: "Appointments one slot takes" }),
    leadTimeMinutes: z
      .number()
      .int()
      .min(0)
      .max(10_080)
      .default(60)
      .openapi({ description: "A slot is bookable up to this long before it starts" }),
    horizonDays: z.number().int().min(1).max(365).default(30).openapi({ description: "…and at most this many days ahead" }),
    checkInOpensMinutes: z.number().int().min(0).max(240).default(30).openapi({ description: "Check-in opens this long before the start" }),
    lateGraceMinutes: z.number().int().min(0).max(120).default(10).openapi({ description: "Past start + this, the appointment is late" }),
    lateBecomes: z.enum(["walk_in", "no_show"]).default("walk_in").openapi({ description: "What a late check-in becomes" }),
    checkInRadiusMeters: z
      .number()
      .int()
      .min(20)
      .max(50_000)
      .nullable()
      .default(null)
      .openapi({
        description:
          "A customer checking in with the manage token (their phone) must send a position within this many metres of the " +
          "location (distance minus the fix's accuracy, like remote join's geofence); null: from anywhere. Staff and the kiosk are on site.",
      }),
  })
  .openapi("BookingSettings", {
    example: {
      enabled: true,
      durationMinutes: 30,
      slotStepMinutes: 30,
      capacityPerSlot: 1,
      leadTimeMinutes: 60,
      horizonDays: 30,
      checkInOpensMinutes: 30,
      lateGraceMinutes: 10,
      lateBecomes: "walk_in",
      checkInRadiusMeters: null,
    },
  });

/** An instant (ISO 8601 with Z or an offset) or a bare date (00:00 in the location's zone). */
const InstantText = z
  .string()
  .max(40)
  .refine((s) => parseInstantInput(s) !== null, "an ISO 8601 timestamp with Z or an offset, or a date YYYY-MM-DD");

const Slot = z
  .object({
    start: z.string().openapi({ example: "2026-03-20T11:00:00.000Z" }),
    end: z.string().openapi({ example: "2026-03-20T11:30:00.000Z" }),
    capacity: z.number().int(),
    remaining: z.number().int().openapi({ description: "Appointments this slot still takes (> 0: free)" }),
    staffIds: z.array(z.string()).openapi({ description: "Staff members free for all of it; empty when the calendar has no shifts" }),
  })
  .openapi("Slot");

const slots = createRoute({
  method: "get",
  path: "/services/{serviceId}/slots",
  tags,
  summary: "The free slots of a service at one of its locations",
  description:
    "From the location's opening hours and closures, the staff's shifts, breaks and unavailability (the team calendar), the " +
    "service's duration and what is already booked; only slots from now + leadTimeMinutes to now + horizonDays. At most 31 days " +
    "per request. Any signed-in user (customers book too), or an API key of the service's organization.",
  security: SECURITY.any,
  "x-outside-callers": "customers (they book)",
  request: {
    params: idParam("serviceId", "svc"),
    query: z.object({
      locationId: z.string().min(1).max(64).openapi({ example: "loc_d3m0par1s00000000000" }),
      from: InstantText.openapi({ example: "2026-03-20" }),
      to: InstantText.openapi({ example: "2026-03-21" }),
    }),
  },
  responses: { 200: jsonResponse(okEnvelope(z.array(Slot)), "The free slots, in start order"), ...errors() },
});

app.openapi(slots, async (c) => {
  const principal = requireCredential(c);
  const { serviceId } = c.req.valid("param");
  const { locationId, from, to } = c.req.valid("query");
  const fromInput = parseInstantInput(from)!;
  const toInput = parseInstantInput(to)!;
  const found = await freeSlots(deps(c), principal, serviceId, locationId, fromInput, toInput, now());
  return c.json(ok(found.map((s) => ({ ...s, start: iso(s.start), end: iso(s.end) }))), 200);
});

// ── Booking (docs/appointments.md) ────────────────────────────────────────────────────────

const Instant = z
  .string()
  .max(40)
  .refine((s) => parseInstantInput(s)?.kind === "instant", "an ISO 8601 timestamp with Z or an offset")
  .transform((s) => (parseInstantInput(s) as { ms: number }).ms);

const Customer = z
  .strictObject({
    name: PublicLine(120).openapi({ example: "Awa Diallo" }),
    phone: CustomerPhone.nullish(),
    email: Email.nullish(),
    language: Language.openapi({ description: "The customer's language: confirmation and reminders are in it" }),
  })
  .openapi("AppointmentCustomer");

const AppointmentRecord = z
  .object({
    id: z.string().openapi({ example: "apt_d3m0rdv0000000000000" }),
    organizationId: z.string(),
    serviceId: z.string(),
    locationId: z.string(),
    staffId: z
      .string()
      .nullable()
      .openapi({ description: "The staff member it is with (round-robin when not chosen); null without shifts", example: null }),
    start: z.string().openapi({ example: "2026-03-20T11:00:00.000Z" }),
    end: z.string().openapi({ example: "2026-03-20T11:30:00.000Z" }),
    status: z.enum(["booked", "checked_in", "cancelled", "no_show"]),
    customer: z.object({
      name: z.string(),
      phone: z.string().nullable(),
      email: z.string().nullable(),
      language: Language,
    }),
    notes: z.string().nullable(),
    customerUserId: z.string().nullable().openapi({ description: "The customer's account when they booked with it" }),
    calendarEventId: z.string().nullable().openapi({ description: "Its `appointment` event in the team calendar" }),
    ticketId: z.string().nullable(),
    queueId: z.string().nullable(),
    checkInCode: z.string().openapi({ description: "The 6-character code the kiosk checks it in with (docs/blend.md)", example: "7KQ2MX" }),
    checkedInAt: z.string().nullable(),
    cancelledAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Appointment");

const AppointmentDetail = AppointmentRecord.extend({
  place: z
    .object({
      serviceName: z.string(),
      locationName: z.string(),
      timezone: z.string().openapi({ description: "IANA zone of the location: show the times in it", example: "Europe/Paris" }),
      checkInOpensAt: z.string().openapi({ description: "From then on it may be checked in (the service's checkInOpensMinutes)" }),
    })
    .openapi({ description: "What the manage page shows (the one read of an appointment carries it, not the lists)" }),
}).openapi("AppointmentDetail");

const BookedAppointment = AppointmentRecord.extend({
  manageToken: z.string().openapi({
    description:
      "The customer's capability for this appointment (see, reschedule, cancel, check in), sent back in the X-Appointment-Token header. Returned once.",
  }),
}).openapi("BookedAppointment");

const HoldRecord = z
  .object({
    id: z.string().openapi({ example: "hld_d3m0h0ld000000000000" }),
    serviceId: z.string(),
    locationId: z.string(),
    staffId: z.string().nullable().openapi({ example: null }),
    start: z.string().openapi({ example: "2026-03-20T11:00:00.000Z" }),
    end: z.string().openapi({ example: "2026-03-20T11:30:00.000Z" }),
    expiresAt: z.string().openapi({ description: `The hold keeps the slot until then (${HOLD_MINUTES} minutes)` }),
  })
  .openapi("AppointmentHold");

async function record(a: AppointmentRow) {
  return {
    id: a.id,
    organizationId: a.organizationId,
    serviceId: a.serviceId,
    locationId: a.locationId,
    staffId: a.staffId,
    start: iso(a.startAt),
    end: iso(a.endAt),
    status: a.status,
    customer: {
      name: a.customerName,
      phone: a.customerPhone,
      email: a.customerEmail,
      language: pickLanguage(a.language, "fr"),
    },
    notes: a.notes,
    customerUserId: a.customerUserId,
    calendarEventId: a.calendarEventId,
    ticketId: a.ticketId,
    queueId: a.queueId,
    checkInCode: await checkInCode(a.id),
    checkedInAt: isoOrNull(a.checkedInAt),
    cancelledAt: isoOrNull(a.cancelledAt),
    createdAt: iso(a.createdAt),
    updatedAt: iso(a.updatedAt),
  };
}

const ServiceAndSlot = {
  serviceId: z.string().min(1).max(64).openapi({ example: "svc_d3m0s3rv1c3000000000" }),
  locationId: z.string().min(1).max(64).openapi({ example: "loc_d3m0par1s00000000000" }),
  start: Instant.openapi({
    type: "string",
    example: "2026-03-20T12:00:00+01:00",
    description: "A slot's start, as the slots list gives it",
  }),
  staffId: z
    .string()
    .min(1)
    .max(64)
    .nullish()
    .openapi({ description: "A staff member free for the slot; absent: the least booked that day" }),
};

const TOKEN_HEADER = z.object({
  [APPOINTMENT_TOKEN_HEADER]: z
    .string()
    .max(128)
    .optional()
    .openapi({ param: { name: APPOINTMENT_TOKEN_HEADER, in: "header" }, description: "The manage token (the customer's capability)" }),
});

const WHO_BOOKS =
  "A customer's session (the appointment is theirs), staff of the organization who reach the location (QUEUE_OPERATE), an API key " +
  "with `write:queues`, or a `widget` key (the widget and the kiosk book). ";
const SLOT_REFUSALS =
  "A slot that cannot be taken is 409 SLOT_UNAVAILABLE with `details {field, reason}`: `too_soon` (lead time), `beyond_horizon`, " +
  "`no_slot` (outside the hours, in a closure or break, off the grid), `full` (the bookings and holds overlapping it use its " +
  "capacity, or no staff member is free) or `staff_busy` (field `staffId`). A service that takes no appointments is 400 " +
  "VALIDATION_ERROR on `serviceId`.";

const book = createRoute({
  method: "post",
  path: "/appointments",
  tags,
  summary: "Book a slot",
  description:
    WHO_BOOKS +
    "Exact under concurrency: the slot's capacity and the staff member's other bookings are checked inside the one write. " +
    "`holdId` converts a hold of the same slot. Answers the appointment and its `manageToken` (once); the customer is sent a " +
    "confirmation in their language with a manage link. " +
    SLOT_REFUSALS,
  security: SECURITY.any,
  "x-outside-callers": "customers (they book)",
  request: {
    body: jsonBody(
      z
        .strictObject({
          ...ServiceAndSlot,
          holdId: z.string().min(1).max(64).nullish().openapi({ description: "A hold of this slot (POST /v1/appointments/holds)" }),
          customer: Customer,
          notes: PublicParagraph(1000).nullish(),
        })
        .openapi("BookAppointment"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(BookedAppointment), "Booked"), ...errors(409) },
});

app.openapi(book, async (c) => {
  const body = c.req.valid("json");
  const customerUserId = await bookerOf(c, body.serviceId, body.locationId);
  const at = now();
  const { appointment, token } = await bookAppointment(
    deps(c),
    {
      serviceId: body.serviceId,
      locationId: body.locationId,
      start: body.start,
      staffId: body.staffId ?? null,
      holdId: body.holdId ?? null,
      customer: body.customer,
      notes: body.notes ?? null,
      customerUserId,
    },
    at,
  );
  c.executionCtx.waitUntil(announce(deps(c), "created", appointment, at, token).catch(logFailure));
  return c.json(ok({ ...(await record(appointment)), manageToken: token }), 201);
});

const hold = createRoute({
  method: "post",
  path: "/appointments/holds",
  tags,
  summary: "Hold a slot for a few minutes",
  description:
    `While the customer types their details: the hold counts against the slot's capacity for ${HOLD_MINUTES} minutes, then simply ` +
    "stops counting. Book with its `holdId` to convert it. " +
    WHO_BOOKS +
    SLOT_REFUSALS,
  security: SECURITY.any,
  "x-outside-callers": "customers (they book)",
  request: { body: jsonBody(z.strictObject(ServiceAndSlot).openapi("HoldAppointmentSlot")) },
  responses: { 201: jsonResponse(okEnvelope(HoldRecord), "Held"), ...errors(409) },
});

app.openapi(hold, async (c) => {
  const body = c.req.valid("json");
  await bookerOf(c, body.serviceId, body.locationId);
  const row = await holdSlot(
    deps(c),
    { serviceId: body.serviceId, locationId: body.locationId, start: body.start, staffId: body.staffId ?? null },
    now(),
  );
  return c.json(
    ok({
      id: row.id,
      serviceId: row.serviceId,
      locationId: row.locationId,
      staffId: row.staffId,
      start: iso(row.startAt),
      end: iso(row.endAt),
      expiresAt: iso(row.expiresAt),
    }),
    201,
  );
});

const WHO_MANAGES =
  "Staff of the organization who reach the appointment's location, an API key of the organization, the customer's own session, " +
  `or anyone with the manage token in \`${APPOINTMENT_TOKEN_HEADER}\` (a wrong token is 404). `;

const getOne = createRoute({
  method: "get",
  path: "/appointments/{appointmentId}",
  tags,
  summary: "An appointment",
  description: WHO_MANAGES + "Staff need QUEUE_VIEW (an API key `read:queues`).",
  security: SECURITY.any,
  "x-outside-callers": "the customer (their session or the manage token)",
  request: { params: idParam("appointmentId", "apt"), headers: TOKEN_HEADER },
  responses: { 200: jsonResponse(okEnvelope(AppointmentDetail), "The appointment"), ...errors() },
});

app.openapi(getOne, async (c) => {
  const { row } = await appointmentOfCaller(c, "QUEUE_VIEW");
  return c.json(ok({ ...(await record(row)), place: await placeOf(deps(c), row) }), 200);
});

const slotsToMove = createRoute({
  method: "get",
  path: "/appointments/{appointmentId}/slots",
  tags,
  summary: "The free slots a booked appointment may be moved to",
  description:
    WHO_MANAGES +
    "Staff need QUEUE_VIEW (an API key `read:queues`). The slots of its service and location exactly as " +
    "`GET /v1/services/{serviceId}/slots` lists them, except that the appointment does not compete with itself: its own slot " +
    "is listed, marked `current`. This is how the manage page (the manage token alone) offers a reschedule; PATCH moves it. At " +
    "most 31 days per request. Not booked: 409 INVALID_STATE.",
  security: SECURITY.any,
  "x-outside-callers": "the customer (their session or the manage token)",
  request: {
    params: idParam("appointmentId", "apt"),
    headers: TOKEN_HEADER,
    query: z.object({
      from: InstantText.openapi({ example: "2026-03-20" }),
      to: InstantText.openapi({ example: "2026-03-21" }),
    }),
  },
  responses: {
    200: jsonResponse(
      okEnvelope(
        z.array(Slot.extend({ current: z.boolean().openapi({ description: "The appointment's own slot" }) }).openapi("RescheduleSlot")),
      ),
      "The free slots, in start order",
    ),
    ...errors(409),
  },
});

app.openapi(slotsToMove, async (c) => {
  const { row } = await appointmentOfCaller(c, "QUEUE_VIEW");
  const { from, to } = c.req.valid("query");
  const found = await slotsToMoveTo(deps(c), row, parseInstantInput(from)!, parseInstantInput(to)!, now());
  return c.json(ok(found.map((s) => ({ ...s, start: iso(s.start), end: iso(s.end) }))), 200);
});

const reschedule = createRoute({
  method: "patch",
  path: "/appointments/{appointmentId}",
  tags,
  summary: "Reschedule an appointment",
  description:
    WHO_MANAGES +
    "Staff need QUEUE_OPERATE (an API key `write:queues`). Moves a booked appointment to another free slot of its service and " +
    "location, exactly as booking does (the appointment does not compete with itself); the staff member stays if free, unless " +
    "`staffId` names another. Not booked (cancelled, checked in, no-show): 409 INVALID_STATE. " +
    SLOT_REFUSALS,
  security: SECURITY.any,
  "x-outside-callers": "the customer (their session or the manage token)",
  request: {
    params: idParam("appointmentId", "apt"),
    headers: TOKEN_HEADER,
    body: jsonBody(z.strictObject({ start: ServiceAndSlot.start, staffId: ServiceAndSlot.staffId }).openapi("RescheduleAppointment")),
  },
  responses: { 200: jsonResponse(okEnvelope(AppointmentRecord), "Moved"), ...errors(409) },
});

app.openapi(reschedule, async (c) => {
  const { row } = await appointmentOfCaller(c, "QUEUE_OPERATE");
  const body = c.req.valid("json");
  const at = now();
  const moved = await rescheduleAppointment(
    deps(c),
    row,
    body.staffId === undefined ? { start: body.start } : { start: body.start, staffId: body.staffId },
    at,
  );
  c.executionCtx.waitUntil(announce(deps(c), "rescheduled", moved, at).catch(logFailure));
  return c.json(ok(await record(moved)), 200);
});

const cancel = createRoute({
  method: "post",
  path: "/appointments/{appointmentId}/cancel",
  tags,
  summary: "Cancel an appointment",
  description:
    WHO_MANAGES +
    "Staff need QUEUE_OPERATE (an API key `write:queues`). The slot is free again at once and the calendar event is removed. " +
    "Not booked: 409 INVALID_STATE.",
  security: SECURITY.any,
  "x-outside-callers": "the customer (their session or the manage token)",
  request: { params: idParam("appointmentId", "apt"), headers: TOKEN_HEADER },
  responses: { 200: jsonResponse(okEnvelope(AppointmentRecord), "Cancelled"), ...errors(409) },
});

app.openapi(cancel, async (c) => {
  const { row } = await appointmentOfCaller(c, "QUEUE_OPERATE");
  const at = now();
  const cancelled = await cancelBooking(deps(c), row, at);
  c.executionCtx.waitUntil(announce(deps(c), "cancelled", cancelled, at).catch(logFailure));
  return c.json(ok(await record(cancelled)), 200);
});

const DateText = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a date YYYY-MM-DD");

const locationDay = createRoute({
  method: "get",
  path: "/locations/{locationId}/appointments",
  tags,
  summary: "A location's appointments of one day",
  description:
    "Every appointment starting that day (the location's local day), cancelled ones included, in start order. Staff who reach " +
    "the location with QUEUE_VIEW (an API key `read:queues`).",
  security: SECURITY.any,
  request: {
    params: idParam("locationId", "loc"),
    query: z.object({ date: DateText.optional().openapi({ example: "2026-03-20", description: "Default: today, where the location is" }) }),
  },
  responses: { 200: jsonResponse(listEnvelope(AppointmentRecord), "The day's appointments"), ...errors() },
});

app.openapi(locationDay, async (c) => {
  const { row } = guarded(c, "location", "QUEUE_VIEW");
  const { date } = c.req.valid("query");
  const list = await dayAtLocation(deps(c), row.id, row.timezone, date ?? null, now());
  return c.json(okList(await Promise.all(list.map(record)), { total: list.length, page: 1, limit: list.length, hasMore: false }), 200);
});

const mine = createRoute({
  method: "get",
  path: "/me/appointments",
  tags,
  summary: "The caller's own appointments",
  description: "A customer's appointments booked with their account, from yesterday on, in start order (at most 100).",
  security: SECURITY.session,
  responses: { 200: jsonResponse(listEnvelope(AppointmentRecord), "Their appointments"), ...errors() },
});

app.openapi(mine, async (c) => {
  const user = requireUser(c);
  const list = await appointmentsOfUser(deps(c), user.user.id, now());
  return c.json(okList(await Promise.all(list.map(record)), { total: list.length, page: 1, limit: 100, hasMore: false }), 200);
});

function logFailure(err: unknown): void {
  console.error(JSON.stringify({ appointments: "announce", error: String(err) }));
}
export default app;
