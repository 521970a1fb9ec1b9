import type { Language } from "../domain/languages";
import { wallTimeAt, zonedWallTimeToUtc } from "../domain/recurrence";
import { bookableWindow } from "../domain/slots";
import { ApiError, invalidState, validationError } from "../http/errors";
import { newId } from "../lib/ids";
import { iso, MINUTE } from "../lib/time";
import { bookingPlace, slotsBetween, type BookingPlace, type Excluding } from "./appointments-slots";
import { newManageToken } from "./manage-token";
import {
  bookingsPerStaff,
  cancelAppointment,
  findAppointment,
  findHold,
  insertAppointment,
  insertHold,
  isMember,
  moveAppointment,
  type AppointmentRow,
  type HoldRow,
  type SlotClaim,
} from "./appointment-rows";
import { type Deps } from "../http/deps";

// Booking, holding, rescheduling and cancelling appointments (docs/appointments.md). The slot
// is checked twice: first by the same computation as GET /v1/services/{serviceId}/slots (hours,
// closures, breaks, shifts, lead time, horizon), to answer why a slot cannot be taken; then by
// the one conditional write (./appointment-rows.ts), which alone decides under concurrency.

/** How long a hold keeps its slot while the customer types their details. */
export const HOLD_MINUTES = 5;

/** Why a slot cannot be taken: `details.reason` of 409 SLOT_UNAVAILABLE. */
export type SlotRefusal = "too_soon" | "beyond_horizon" | "no_slot" | "full" | "staff_busy";

const REFUSALS: Record<SlotRefusal, string> = {
  too_soon: "This slot starts sooner than the service's lead time allows",
  beyond_horizon: "This slot is beyond how far ahead the service takes bookings",
  no_slot:
    "No slot starts at this time: it is outside the opening hours, in a closure or a break, or between two slot starts (GET /v1/services/{serviceId}/slots lists them)",
  full: "This slot is taken: the bookings and holds overlapping it use its capacity, or no staff member is free for all of it",
  staff_busy: "This staff member is not free for all of this slot",
};

function slotUnavailable(reason: SlotRefusal, extra: Record<string, unknown> = {}): ApiError {
  const field = reason === "staff_busy" ? "staffId" : "start";
  return new ApiError("SLOT_UNAVAILABLE", REFUSALS[reason], { field, reason, ...extra });
}

/** Local midnight to the next of the day holding `at`, in the place's zone (the round-robin's day). */
function localDay(at: number, timeZone: string): { from: number; to: number } {
  const w = wallTimeAt(at, timeZone);
  const from = zonedWallTimeToUtc(w.year, w.month, w.day, 0, 0, 0, timeZone);
  const next = new Date(Date.UTC(w.year, w.month - 1, w.day + 1));
  return { from, to: zonedWallTimeToUtc(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), 0, 0, 0, timeZone) };
}

interface FreeSlot {
  startAt: number;
  endAt: number;
  /** The staff members to try, in round-robin order; [null] when the service books without staff. */
  candidates: (string | null)[];
}

/** The slot starting at `start` if it can be taken, with whom; else 409 SLOT_UNAVAILABLE saying why. */
async function slotAt(
  deps: Deps,
  place: BookingPlace,
  start: number,
  at: number,
  staffId: string | null,
  excluding: Excluding,
): Promise<FreeSlot> {
  const window = bookableWindow(place.settings, at);
  const bounds = { earliest: iso(window.start), latest: iso(window.end) };
  if (start < window.start) throw slotUnavailable("too_soon", bounds);
  if (start >= window.end) throw slotUnavailable("beyond_horizon", bounds);
  const endAt = start + place.settings.durationMinutes * MINUTE;
  const slot = (await slotsBetween(deps, place, start, endAt, at, excluding)).find((s) => s.start === start);
  if (!slot) throw slotUnavailable("no_slot");
  if (slot.remaining <= 0) throw slotUnavailable("full");
  if (staffId) {
    if (slot.staffIds.length > 0) {
      if (!slot.staffIds.includes(staffId)) throw slotUnavailable("staff_busy");
    } else if (!(await isMember(deps, place.service.organizationId, staffId))) {
      throw validationError("staffId", "not a member of the service's organization");
    }
    return { startAt: start, endAt, candidates: [staffId] };
  }
  if (slot.staffIds.length === 0) return { startAt: start, endAt, candidates: [null] };
  // Round-robin: the least booked that day first, then by id, so load spreads evenly.
  const day = localDay(start, place.timeZone);
  const load = await bookingsPerStaff(deps, slot.staffIds, day.from, day.to);
  const candidates = [...slot.staffIds].sort((a, b) => (load.get(a) ?? 0) - (load.get(b) ?? 0) || a.localeCompare(b));
  return { startAt: start, endAt, candidates };
}

function claimOf(place: BookingPlace, slot: FreeSlot, staffId: string | null, at: number, excluding: Excluding): SlotClaim {
  return {
    organizationId: place.service.organizationId,
    serviceId: place.service.id,
    locationId: place.location.id,
    staffId,
    startAt: slot.startAt,
    endAt: slot.endAt,
    capacity: place.settings.capacityPerSlot,
    now: at,
    excludeAppointmentId: excluding.appointmentId ?? null,
    excludeHoldId: excluding.holdId ?? null,
  };
}

/** A bookable place for a new booking or hold: the service must be active too. */
async function placeFor(deps: Deps, serviceId: string, locationId: string): Promise<BookingPlace> {
  const place = await bookingPlace(deps, serviceId, locationId);
  if (place.service.status !== "active") {
    throw new ApiError("VALIDATION_ERROR", "This service is not active", { field: "serviceId", reason: "not_bookable" });
  }
  return place;
}

export interface BookingInput {
  serviceId: string;
  locationId: string;
  start: number;
  staffId: string | null;
  holdId: string | null;
  /** As the API takes it: a missing phone or e-mail is stored as null. */
  customer: { name: string; phone?: string | null | undefined; email?: string | null | undefined; language: Language };
  notes: string | null;
  /** The customer's own account (a customer session), else null (staff, a key, the widget). */
  customerUserId: string | null;
}

/** Books a slot; answers the appointment and its manage token (the only time it is seen). */
export async function bookAppointment(
  deps: Deps,
  input: BookingInput,
  at: number,
): Promise<{ appointment: AppointmentRow; token: string }> {
  const place = await placeFor(deps, input.serviceId, input.locationId);
  let staffId = input.staffId;
  const excluding: Excluding = {};
  if (input.holdId) {
    const hold = await findHold(deps, input.holdId);
    if (!hold || hold.serviceId !== input.serviceId || hold.locationId !== input.locationId || hold.startAt !== input.start) {
      throw validationError("holdId", "no hold of this service, location and start");
    }
    if (staffId && hold.staffId && staffId !== hold.staffId) throw validationError("staffId", "the hold is for another staff member");
    // An expired hold counts no more: the booking then takes the slot only if it is still free.
    if (hold.expiresAt > at) {
      excluding.holdId = hold.id;
      staffId = staffId ?? hold.staffId;
    }
  }
  const slot = await slotAt(deps, place, input.start, at, staffId, excluding);
  const { token, tokenHash } = await newManageToken(deps);
  const id = newId("apt");
  for (const candidate of slot.candidates) {
    const booked = await insertAppointment(deps, claimOf(place, slot, candidate, at, excluding), {
      id,
      customerName: input.customer.name,
      customerPhone: input.customer.phone ?? null,
      customerEmail: input.customer.email ?? null,
      language: input.customer.language,
      notes: input.notes,
      customerUserId: input.customerUserId,
      calendarEventId: newId("evt"),
      tokenHash,
      title: place.service.name,
    });
    if (booked) return { appointment: (await findAppointment(deps, id))!, token };
  }
  throw slotUnavailable(staffId ? "staff_busy" : "full");
}

export interface HoldInput {
  serviceId: string;
  locationId: string;
  start: number;
  staffId: string | null;
}

/** Holds a slot for HOLD_MINUTES; it counts against the slot's capacity until it expires. */
export async function holdSlot(deps: Deps, input: HoldInput, at: number): Promise<HoldRow> {
  const place = await placeFor(deps, input.serviceId, input.locationId);
  const slot = await slotAt(deps, place, input.start, at, input.staffId, {});
  const id = newId("hld");
  const expiresAt = at + HOLD_MINUTES * MINUTE;
  for (const candidate of slot.candidates) {
    if (await insertHold(deps, claimOf(place, slot, candidate, at, {}), id, expiresAt)) return (await findHold(deps, id))!;
  }
  throw slotUnavailable(input.staffId ? "staff_busy" : "full");
}

/** Moves a booked appointment to another free slot of its service and location. */
export async function rescheduleAppointment(
  deps: Deps,
  current: AppointmentRow,
  change: { start: number; staffId?: string | null },
  at: number,
): Promise<AppointmentRow> {
  if (current.status !== "booked") throw invalidState(current.status, ["booked"], `This appointment is ${current.status}`);
  const place = await bookingPlace(deps, current.serviceId, current.locationId);
  const excluding: Excluding = { appointmentId: current.id };
  // Unless another is named, the same staff member keeps it if they are free at the new time.
  let staffId = change.staffId === undefined ? null : change.staffId;
  let slot = await slotAt(deps, place, change.start, at, staffId, excluding);
  if (change.staffId === undefined && current.staffId) {
    const withoutShifts = slot.candidates.length === 1 && slot.candidates[0] === null;
    if (withoutShifts || slot.candidates.includes(current.staffId)) {
      staffId = current.staffId;
      slot = { ...slot, candidates: [current.staffId, ...slot.candidates.filter((s) => s !== current.staffId && s !== null)] };
    }
  }
  for (const candidate of slot.candidates) {
    if (await moveAppointment(deps, current.id, claimOf(place, slot, candidate, at, excluding), current.calendarEventId)) {
      return (await findAppointment(deps, current.id))!;
    }
  }
  const now = await findAppointment(deps, current.id);
  if (now && now.status !== "booked") throw invalidState(now.status, ["booked"], `This appointment is ${now.status}`);
  throw slotUnavailable(staffId ? "staff_busy" : "full");
}

/** Cancels a booked appointment: its slot is free again and its calendar event is gone. */
export async function cancelBooking(deps: Deps, current: AppointmentRow, at: number): Promise<AppointmentRow> {
  if (current.status !== "booked") throw invalidState(current.status, ["booked"], `This appointment is ${current.status}`);
  const row = await cancelAppointment(deps, current.id, at);
  if (!row) {
    const now = await findAppointment(deps, current.id);
    throw invalidState(now?.status ?? "cancelled", ["booked"], `This appointment is ${now?.status ?? "cancelled"}`);
  }
  return row;
}
