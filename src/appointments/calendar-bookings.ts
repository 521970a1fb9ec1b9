import { and, eq } from "drizzle-orm";
import { appointments, calendarEvents, locations, tickets } from "../db/schema";
import type { Language } from "../domain/languages";
import { notFound, validationError } from "../http/errors";
import { MINUTE } from "../lib/time";
import { announce } from "./announcements";
import { bookingPlace } from "./appointments-slots";
import { findAppointment, type AppointmentRow } from "./appointment-rows";
import { bookAppointment, cancelBooking, rescheduleAppointment } from "./bookings";
import { type Deps } from "../http/deps";

// Appointments made through the team calendar (docs/appointments.md, issue 38 (e)): an
// `appointment` event created with a `customer` is a real booking, made by the same code as
// POST /v1/appointments (the same row, slot check, capacity and conditional write), so it is in
// the customer's own list, checked in and called like any other. Its event is the booking's
// event: moving it reschedules the appointment, deleting it cancels it.

export interface CalendarCustomer {
  name: string;
  phone?: string | null | undefined;
  email?: string | null | undefined;
  language: Language;
  /** The customer's account: the appointment is then in their own list (GET /v1/me/appointments). */
  userId?: string | null | undefined;
}

export interface CalendarBooking {
  organizationId: string;
  serviceId?: string | null | undefined;
  locationId?: string | null | undefined;
  start: number;
  end: number;
  attendees?: string[] | null | undefined;
  recurrencePattern?: string | null | undefined;
  description?: string | null | undefined;
  customer: CalendarCustomer;
}

/** Books the slot the calendar event names; answers the appointment (its `calendarEventId` is the event) and its manage token. */
export async function bookFromCalendar(
  deps: Deps,
  input: CalendarBooking,
  at: number,
): Promise<{ appointment: AppointmentRow; token: string }> {
  if (!input.serviceId) throw validationError("serviceId", "an appointment with a customer is a booking: name its service");
  if (!input.locationId) throw validationError("locationId", "an appointment with a customer is a booking: name its location");
  if (input.recurrencePattern) throw validationError("recurrencePattern", "a booking happens once");
  const staff = [...new Set(input.attendees ?? [])];
  if (staff.length > 1) throw validationError("attendees", "a booking is with one staff member at most");
  const place = await bookingPlace(deps, input.serviceId, input.locationId);
  if (place.service.organizationId !== input.organizationId) throw notFound("Service");
  assertLength(input.start, input.end, place.settings.durationMinutes);
  const userId = input.customer.userId ?? null;
  if (userId !== null && !(await isCustomerOf(deps, input.organizationId, userId))) {
    throw validationError("customer.userId", "not a customer of the organization (no ticket or appointment with it)");
  }
  const booked = await bookAppointment(
    deps,
    {
      serviceId: input.serviceId,
      locationId: input.locationId,
      start: input.start,
      staffId: staff[0] ?? null,
      holdId: null,
      customer: input.customer,
      notes: input.description ?? null,
      customerUserId: userId,
    },
    at,
  );
  await announce(deps, "created", booked.appointment, at, booked.token).catch(logFailure);
  return booked;
}

/** The appointment whose calendar event this is, if any. */
export async function appointmentOfEvent(deps: Deps, eventId: string): Promise<AppointmentRow | null> {
  const { db } = deps;
  const row = await db.select({ id: appointments.id }).from(appointments).where(eq(appointments.calendarEventId, eventId)).get();
  return row ? findAppointment(deps, row.id) : null;
}

/** The booking's calendar event as the calendar answers it, with its location's zone. */
export async function bookingEvent({ db }: Deps, appointment: AppointmentRow) {
  const [event, place] = await Promise.all([
    db
      .select()
      .from(calendarEvents)
      .where(eq(calendarEvents.id, appointment.calendarEventId ?? ""))
      .get(),
    db.select({ timezone: locations.timezone }).from(locations).where(eq(locations.id, appointment.locationId)).get(),
  ]);
  if (!event) throw notFound("Calendar event");
  return { event, timeZone: place?.timezone ?? "UTC" };
}

/** What of a booking's event the calendar may change: its time and its staff member; the rest is the appointment's. */
const MOVABLE = new Set(["startDate", "endDate", "attendees"]);

/**
 * A PATCH of a booking's event: the appointment is rescheduled by the booking's own rules (a free
 * slot of its service and location, its duration), which moves the event with it.
 */
export async function moveFromCalendar(
  deps: Deps,
  appointment: AppointmentRow,
  patch: { fields: string[]; start?: number | undefined; end?: number | undefined; attendees?: string[] | null | undefined },
  at: number,
): Promise<AppointmentRow> {
  const fixed = patch.fields.find((f) => !MOVABLE.has(f));
  if (fixed) throw validationError(fixed, "this event is an appointment's: change its time or staff member, or cancel it");
  const place = await bookingPlace(deps, appointment.serviceId, appointment.locationId);
  const start = patch.start ?? appointment.startAt;
  assertLength(start, patch.end ?? start + (appointment.endAt - appointment.startAt), place.settings.durationMinutes);
  let staffId: string | null | undefined;
  if (patch.attendees !== undefined) {
    const staff = [...new Set(patch.attendees ?? [])];
    if (staff.length > 1) throw validationError("attendees", "a booking is with one staff member at most");
    staffId = staff[0] ?? null;
  }
  const moved = await rescheduleAppointment(deps, appointment, { start, ...(staffId !== undefined ? { staffId } : {}) }, at);
  await announce(deps, "rescheduled", moved, at).catch(logFailure);
  return moved;
}

/** A DELETE of a booking's event cancels the appointment (which deletes the event). */
export async function cancelFromCalendar(deps: Deps, appointment: AppointmentRow, at: number): Promise<AppointmentRow> {
  const cancelled = await cancelBooking(deps, appointment, at);
  await announce(deps, "cancelled", cancelled, at).catch(logFailure);
  return cancelled;
}

function assertLength(start: number, end: number, durationMinutes: number): void {
  if (end !== start + durationMinutes * MINUTE) {
    throw validationError("endDate", `a booking lasts the service's ${durationMinutes} minutes: endDate must be startDate plus that`);
  }
}

/** Someone the organization has served or booked: a ticket in one of its queues, or an appointment. */
async function isCustomerOf({ db }: Deps, organizationId: string, userId: string): Promise<boolean> {
  const [ticket, appointment] = await Promise.all([
    db
      .select({ id: tickets.id })
      .from(tickets)
      .where(and(eq(tickets.organizationId, organizationId), eq(tickets.userId, userId)))
      .limit(1)
      .get(),
    db
      .select({ id: appointments.id })
      .from(appointments)
      .where(and(eq(appointments.organizationId, organizationId), eq(appointments.customerUserId, userId)))
      .limit(1)
      .get(),
  ]);
  return ticket !== undefined || appointment !== undefined;
}

function logFailure(err: unknown): void {
  console.error(JSON.stringify({ appointments: "announce", error: String(err) }));
}
