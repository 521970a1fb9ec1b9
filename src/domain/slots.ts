// A service's bookable time (docs/appointments.md). Pure: intervals in, slots out.
//
// A slot is [start, start + duration) inside an open stretch of the location (its opening
// hours minus the closures that concern the whole team), starting at the stretch's start plus
// a whole number of steps, no earlier than now + lead time, before now + horizon. When the team
// calendar has shifts at the location, a slot also needs a staff member on shift for all of it,
// not on a break/unavailability, and with no other appointment overlapping it; without any
// shift, the slot is limited by its capacity alone.
//
// A slot's capacity is used by every active appointment or live hold that OVERLAPS it, not only
// by those starting at the same instant: with 15-minute steps and 30-minute appointments, the
// 09:15 slot is taken by the 09:00 booking. Booking (src/appointments/appointment-rows.ts) counts the
// same way, in SQL, so a slot shown free is a slot that books.

import { complement, type Interval } from "./opening-hours";

export interface BookingSettings {
  enabled: boolean;
  durationMinutes: number;
  slotStepMinutes: number;
  capacityPerSlot: number;
  leadTimeMinutes: number;
  horizonDays: number;
  checkInOpensMinutes: number;
  lateGraceMinutes: number;
  lateBecomes: "walk_in" | "no_show";
  /** A customer checking in with the manage token must be this close to the location (metres); null: anywhere. */
  checkInRadiusMeters: number | null;
}

export const DEFAULT_BOOKING: BookingSettings = {
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
};

const MINUTE = 60_000;
const DAY = 86_400_000;

export interface StaffTime {
  userId: string;
  /** When they are on shift. */
  shifts: Interval[];
  /** Their breaks, unavailability, personal closures and other appointments. */
  busy: Interval[];
}

export interface SlotInput {
  settings: BookingSettings;
  from: number;
  to: number;
  now: number;
  /** When the location takes visitors: opening hours already intersected with [from, to). */
  open: Interval[];
  /** Closures and breaks of everyone (no attendees) that concern this service. */
  closed: Interval[];
  /** null: no shift in the calendar, slots are limited by capacity alone. */
  staff: StaffTime[] | null;
  /** Active appointments and live holds of this service at this location. */
  booked: readonly Interval[];
}

export interface Slot {
  start: number;
  end: number;
  capacity: number;
  remaining: number;
  /** The staff members free for all of the slot (empty when the calendar has no shifts). */
  staffIds: string[];
}

const overlaps = (a: Interval, s: number, e: number) => a.start < e && a.end > s;
const covers = (a: Interval, s: number, e: number) => a.start <= s && a.end >= e;

/** The earliest and latest starts a booking may take at `now`. */
export function bookableWindow(settings: BookingSettings, now: number): Interval {
  return { start: now + settings.leadTimeMinutes * MINUTE, end: now + settings.horizonDays * DAY };
}

/** Every slot in [from, to) with its remaining capacity, free or not, in start order. */
export function allSlots(input: SlotInput): Slot[] {
  const { settings } = input;
  const duration = settings.durationMinutes * MINUTE;
  const step = settings.slotStepMinutes * MINUTE;
  const window = bookableWindow(settings, input.now);
  // Open stretches minus the closures of everyone.
  const closedEverywhere = [...complement(input.open, input.from, input.to), ...input.closed];
  const stretches = complement(closedEverywhere, input.from, input.to);
  const out: Slot[] = [];
  for (const stretch of stretches) {
    for (let start = stretch.start; start + duration <= stretch.end; start += step) {
      if (start < window.start || start >= window.end) continue;
      const end = start + duration;
      const staffIds =
        input.staff === null
          ? []
          : input.staff
              .filter((m) => m.shifts.some((s) => covers(s, start, end)) && !m.busy.some((b) => overlaps(b, start, end)))
              .map((m) => m.userId);
      const taken = input.booked.filter((b) => overlaps(b, start, end)).length;
      const room = settings.capacityPerSlot - taken;
      const remaining = Math.max(0, input.staff === null ? room : Math.min(room, staffIds.length));
      out.push({ start, end, capacity: settings.capacityPerSlot, remaining, staffIds });
    }
  }
  return out;
}
