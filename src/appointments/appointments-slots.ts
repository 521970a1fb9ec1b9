import { and, eq, gt, gte, inArray, lt, ne } from "drizzle-orm";
import { appointmentHolds, appointments, locations, serviceLocations, services } from "../db/schema";
import { openIntervals, type Interval } from "../domain/opening-hours";
import { isValidTimeZone, wallTimeAt, zonedWallTimeToUtc } from "../domain/recurrence";
import { allSlots, type BookingSettings, type Slot, type StaffTime } from "../domain/slots";
import { ApiError, notFound } from "../http/errors";
import { DAY } from "../lib/time";
import { occurrencesBetween, type ExpandedOccurrence } from "../calendar/calendar";
import type { Deps } from "../http/deps";

// The free slots of a service at a location (docs/appointments.md): the location's opening
// hours and closures, the staff's shifts, breaks and unavailability from the team calendar,
// the service's duration and what is already booked.

/** Appointments that hold their slot. */
export const ACTIVE_STATUSES = ["booked", "checked_in"] as const;
/** Widest range one slots request may ask for. */
export const MAX_SLOT_RANGE_MS = 31 * DAY;

export type ServiceRow = typeof services.$inferSelect;
export type LocationRow = typeof locations.$inferSelect;

export interface BookingPlace {
  service: ServiceRow;
  location: LocationRow;
  settings: BookingSettings;
  timeZone: string;
}

/** The service and one of its locations, bookable; refused SERVICE_NOT_BOOKABLE when the service takes no appointments. */
export async function bookingPlace({ db }: Deps, serviceId: string, locationId: string): Promise<BookingPlace> {
  const row = await db
    .select({ service: services, location: locations })
    .from(services)
    .innerJoin(serviceLocations, eq(serviceLocations.serviceId, services.id))
    .innerJoin(locations, eq(locations.id, serviceLocations.locationId))
    .where(and(eq(services.id, serviceId), eq(locations.id, locationId)))
    .get();
  if (!row) throw notFound("Service at this location");
  const settings = row.service.booking;
  if (!settings || !settings.enabled) {
    throw new ApiError("VALIDATION_ERROR", "This service takes no appointments", { field: "serviceId", reason: "not_bookable" });
  }
  const timeZone = isValidTimeZone(row.location.timezone) ? row.location.timezone : "UTC";
  return { service: row.service, location: row.location, settings, timeZone };
}

/** Local midnight of the day holding `at`: slots are stepped from the day's opening, whatever `from` is. */
function localDayStart(at: number, timeZone: string): number {
  const w = wallTimeAt(at, timeZone);
  return zonedWallTimeToUtc(w.year, w.month, w.day, 0, 0, 0, timeZone);
}

/** Does this occurrence concern the place (its location or none, this service or none)? */
function concernsPlace(o: ExpandedOccurrence, place: BookingPlace): boolean {
  const e = o.event;
  return (e.locationId === null || e.locationId === place.location.id) && (e.serviceId === null || e.serviceId === place.service.id);
}

/** What a slot computation leaves out: the appointment being moved, the hold being converted. */
export interface Excluding {
  appointmentId?: string;
  holdId?: string;
}

/**
 * Every slot in [from, to) with what remains of it, free or not. `excluding`: a reschedule does
 * not compete with the appointment it moves, nor a booking with the hold it converts.
 *
 * Where the location has no opening hours (null), slots run round the clock (as joins do):
 * a bookable service at such a location should have hours, or shifts in the team calendar.
 */
export async function slotsBetween(
  deps: Deps,
  place: BookingPlace,
  from: number,
  to: number,
  now: number,
  excluding: Excluding = {},
): Promise<Slot[]> {
  const { db } = deps;
  const rangeStart = localDayStart(from, place.timeZone);
  const [occurrences, booked, held] = await Promise.all([
    occurrencesBetween(deps, place.service.organizationId, rangeStart, to),
    db
      .select({
        id: appointments.id,
        serviceId: appointments.serviceId,
        locationId: appointments.locationId,
        staffId: appointments.staffId,
        startAt: appointments.startAt,
        endAt: appointments.endAt,
        calendarEventId: appointments.calendarEventId,
      })
      .from(appointments)
      .where(
        and(
          eq(appointments.organizationId, place.service.organizationId),
          inArray(appointments.status, [...ACTIVE_STATUSES]),
          lt(appointments.startAt, to),
          gte(appointments.endAt, rangeStart),
        ),
      )
      .all(),
    db
      .select({
        id: appointmentHolds.id,
        serviceId: appointmentHolds.serviceId,
        locationId: appointmentHolds.locationId,
        staffId: appointmentHolds.staffId,
        startAt: appointmentHolds.startAt,
        endAt: appointmentHolds.endAt,
      })
      .from(appointmentHolds)
      .where(
        and(
          eq(appointmentHolds.organizationId, place.service.organizationId),
          gt(appointmentHolds.expiresAt, now),
          lt(appointmentHolds.startAt, to),
          gte(appointmentHolds.endAt, rangeStart),
          ne(appointmentHolds.id, excluding.holdId ?? ""),
        ),
      )
      .all(),
  ]);
  const mine = booked.filter((a) => a.id !== excluding.appointmentId);
  const ownEvents = new Set(mine.map((a) => a.calendarEventId));

  const open = place.location.openingHours
    ? openIntervals(place.location.openingHours, place.timeZone, rangeStart, to)
    : [{ start: rangeStart, end: to }];
  const closed: Interval[] = [];
  const shifts = new Map<string, Interval[]>();
  const busy = new Map<string, Interval[]>();
  const add = (m: Map<string, Interval[]>, user: string, i: Interval) => m.set(user, [...(m.get(user) ?? []), i]);
  let anyShift = false;
  for (const o of occurrences) {
    const i = { start: o.occurrence.occurrenceStart, end: o.occurrence.occurrenceEnd };
    const type = o.event.eventType;
    if (type === "shift" && concernsPlace(o, place)) {
      anyShift = true;
      for (const user of o.event.attendees) add(shifts, user, i);
    } else if (type === "break" || type === "closure" || type === "unavailability") {
      // A closure of another service, or at another location, leaves this one open.
      if (!concernsPlace(o, place)) continue;
      if (o.event.attendees.length === 0) closed.push(i);
      else for (const user of o.event.attendees) add(busy, user, i);
    } else if (type === "appointment" && !ownEvents.has(o.event.id)) {
      // An appointment written in the calendar by hand keeps its attendees busy.
      for (const user of o.event.attendees) add(busy, user, i);
    }
  }
  for (const a of [...mine, ...held]) if (a.staffId) add(busy, a.staffId, { start: a.startAt, end: a.endAt });
  const staff: StaffTime[] | null = anyShift
    ? [...shifts.keys()].sort().map((userId) => ({ userId, shifts: shifts.get(userId)!, busy: busy.get(userId) ?? [] }))
    : null;
  const taking = [...mine, ...held]
    .filter((a) => a.serviceId === place.service.id && a.locationId === place.location.id)
    .map((a) => ({ start: a.startAt, end: a.endAt }));
  return allSlots({ settings: place.settings, from: rangeStart, to, now, open, closed, staff, booked: taking }).filter(
    (s) => s.start >= from,
  );
}
