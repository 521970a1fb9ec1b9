import { and, asc, eq, inArray, isNull, lte, ne } from "drizzle-orm";
import { appointments, locations, queues, services } from "../db/schema";
import { checkInOpensAt, isLate } from "../domain/blend";
import { formatWhen, pickLanguage, render } from "../domain/notification-templates";
import { businessText } from "../notifications/message-templates";
import { DEFAULT_BOOKING, type BookingSettings } from "../domain/slots";
import type { EventType } from "../domain/events";
import type { TicketSource } from "../domain/tickets";
import { ApiError, invalidState, notFound } from "../http/errors";
import type { QueueRow } from "../http/credentials/queues";
import { sha256Hex } from "../lib/crypto";
import { newId } from "../lib/ids";
import { iso } from "../lib/time";
import { deliver } from "../notifications/notification-delivery";
import type { Delivery } from "../domain/deliveries";
import type { IntakeValue } from "../domain/intake";
import { distanceKm, type Point } from "../domain/geo";
import { geofenceStatus } from "../domain/remote-join";
import { joinQueue } from "../tickets/joins";
import { getTicket, type TicketView } from "../tickets/tickets";
import { publishEvent } from "../webhooks/domain-events";
import { type Deps } from "../http/deps";

// Check-in of a booked appointment (docs/blend.md): a ticket of kind `appointment` in the
// service's queue, placed by the queue's blend policy. Exactly one ticket per appointment
// under any concurrency: the row is claimed first with a conditional UPDATE (booked →
// checked_in), and the room admits an appointment at most once (it answers the ticket it
// already made for that appointment id), so twenty concurrent check-ins answer one ticket.

export type AppointmentRow = typeof appointments.$inferSelect;

/** Who checks the appointment in: the ticket's source follows the channel. */
export type CheckInChannel = "staff" | "customer" | "kiosk";

const SOURCE: Record<CheckInChannel, TicketSource> = { staff: "operator", customer: "app", kiosk: "widget" };

export interface CheckedIn {
  appointment: AppointmentRow;
  ticket: TicketView;
  /** This call made the ticket (201); false when it was already checked in (200). */
  created: boolean;
  /** The visitor's ticket token (docs/widget.md) of a ticket this call made for the customer or the kiosk; else null. */
  token: string | null;
}

const CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
export const CHECK_IN_CODE_LENGTH = 6;

/**
 * The appointment's kiosk code: 6 characters derived from its id (the first 30 bits of the
 * SHA-256 of the id, in Crockford's base 32), so nothing is stored and the booking can print it.
 * The kiosk finds an appointment by it among its location's appointments whose check-in is open.
 */
export async function checkInCode(appointmentId: string): Promise<string> {
  const hex = await sha256Hex(appointmentId);
  let bits = BigInt(`0x${hex.slice(0, 8)}`);
  let code = "";
  for (let i = 0; i < CHECK_IN_CODE_LENGTH; i++) {
    code = CODE_ALPHABET[Number(bits & 31n)] + code;
    bits >>= 5n;
  }
  return code;
}

/** A code as typed at a kiosk: upper case, without spaces or dashes, O read as 0, I and L as 1. */
export function normalizeCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, "").replace(/O/g, "0").replace(/[IL]/g, "1");
}

export async function findAppointment({ db }: Deps, id: string): Promise<AppointmentRow> {
  const row = await db.select().from(appointments).where(eq(appointments.id, id)).get();
  if (!row) throw notFound("Appointment");
  return row;
}

/** The location a kiosk checks appointments in at. */
export async function kioskLocation({ db }: Deps, locationId: string): Promise<{ id: string; organizationId: string }> {
  const row = await db
    .select({ id: locations.id, organizationId: locations.organizationId })
    .from(locations)
    .where(eq(locations.id, locationId))
    .get();
  if (!row) throw notFound("Location");
  return row;
}

/** The queue an appointment checks into: the one it names, else its service's first open queue. */
export async function queueForAppointment({ db }: Deps, appointment: AppointmentRow): Promise<QueueRow> {
  const named = appointment.queueId ? await db.select().from(queues).where(eq(queues.id, appointment.queueId)).get() : undefined;
  if (named) return named;
  const first = await db
    .select()
    .from(queues)
    .where(and(eq(queues.serviceId, appointment.serviceId), isNull(queues.archivedAt), ne(queues.status, "closed")))
    .orderBy(asc(queues.createdAt), asc(queues.id))
    .get();
  if (!first) {
    throw new ApiError("QUEUE_CLOSED", "This appointment's service has no open queue to check in to", {
      status: "closed",
      serviceId: appointment.serviceId,
    });
  }
  return first;
}

/** The service's booking settings: when check-in opens, the grace, what a late check-in becomes. */
async function bookingOf({ db }: Deps, serviceId: string): Promise<BookingSettings> {
  const row = await db.select({ booking: services.booking }).from(services).where(eq(services.id, serviceId)).get();
  return { ...DEFAULT_BOOKING, ...(row?.booking ?? {}) };
}

/** The appointment, checked in: a new ticket, or the one it already has. */
export async function checkIn(
  deps: Deps,
  appointment: AppointmentRow,
  channel: CheckInChannel,
  at: number,
  answers?: Record<string, IntakeValue | null>,
  position?: CheckInPosition,
): Promise<CheckedIn> {
  const { db } = deps;
  const queue = await queueForAppointment(deps, appointment);
  if (appointment.status === "checked_in" && appointment.ticketId) {
    return {
      appointment,
      ticket: await ticketOf(deps, appointment.ticketId, appointment.queueId ?? queue.id, at),
      created: false,
      token: null,
    };
  }
  const booking = await bookingOf(deps, appointment.serviceId);
  if (appointment.status === "booked") assertOpen(appointment, booking, at);
  if (appointment.status !== "booked" && appointment.status !== "checked_in") {
    throw invalidState(appointment.status, ["booked", "checked_in"], `This appointment is ${appointment.status}`);
  }
  if (channel === "customer" && appointment.status === "booked") await assertNearby(deps, appointment, booking, position);
  const late = isLate(appointment.startAt, at, booking.lateGraceMinutes);
  if (appointment.status === "booked" && late && booking.lateBecomes === "no_show") {
    const missed = await markNoShow(deps, appointment.id, at);
    if (missed) await announceNoShow(deps, [missed], at, "late");
    throw new ApiError("INVALID_STATE", "Too late to check in: this appointment is now a no-show", {
      status: "no_show",
      allowed: ["booked", "checked_in"],
      reason: "late",
      closedAt: iso(appointment.startAt + booking.lateGraceMinutes * 60_000),
    });
  }
  const claimed = await db
    .update(appointments)
    .set({ status: "checked_in", checkedInAt: at, queueId: queue.id, updatedAt: at })
    .where(and(eq(appointments.id, appointment.id), eq(appointments.status, "booked")))
    .returning()
    .get();
  let current = claimed;
  if (!current) {
    // Another check-in won the claim (or the row moved on): answer what it is now.
    current = await findAppointment(deps, appointment.id);
    if (current.status !== "checked_in") {
      throw invalidState(current.status, ["booked", "checked_in"], `This appointment is ${current.status}`);
    }
    if (current.ticketId)
      return {
        appointment: current,
        ticket: await ticketOf(deps, current.ticketId, current.queueId ?? queue.id, at),
        created: false,
        token: null,
      };
  }
  const target = current.queueId && current.queueId !== queue.id ? await queueForAppointment(deps, current) : queue;
  let ticket: TicketView;
  let token: string | null = null;
  try {
    ({ ticket, token } = await joinQueue(
      deps,
      target,
      {
        ticket: {
          userId: current.customerUserId ?? current.id,
          partySize: 1,
          isPriority: false,
          isGhostMode: false,
          visitorName: current.customerName,
          phone: null,
          language: current.language,
          source: SOURCE[channel],
          kind: "appointment",
          appointmentId: current.id,
          appointmentAt: current.startAt,
          appointmentLate: isLate(current.startAt, current.checkedInAt ?? at, booking.lateGraceMinutes),
          // Checked against the service's intake questions like any join's: a missing or wrong answer is the 400 naming it.
          answers,
        },
        // The customer and the kiosk follow the ticket with its token (the status page, the receipt's QR code).
        withToken: channel !== "staff",
      },
      at,
    ));
  } catch (refusal) {
    // The queue refused (paused, closed, full): the appointment stays bookable-to-check-in.
    if (claimed) {
      await db
        .update(appointments)
        .set({ status: "booked", checkedInAt: null, queueId: appointment.queueId, updatedAt: at })
        .where(and(eq(appointments.id, appointment.id), eq(appointments.status, "checked_in"), isNull(appointments.ticketId)))
        .run();
    }
    // A missing or wrong answer names the queue and service whose questions to ask (the kiosk only has the code).
    if (refusal instanceof ApiError && typeof refusal.details.field === "string" && refusal.details.field.startsWith("intake.")) {
      throw new ApiError(
        refusal.code,
        refusal.message,
        { ...refusal.details, serviceId: target.serviceId, queueId: target.id },
        refusal.headers,
      );
    }
    throw refusal;
  }
  const done = await db
    .update(appointments)
    .set({ ticketId: ticket.id, updatedAt: at })
    .where(and(eq(appointments.id, appointment.id), isNull(appointments.ticketId)))
    .returning()
    .get();
  const row = done ?? (await findAppointment(deps, appointment.id));
  if (claimed) {
    await publish(deps, "appointment.checked_in", row, at, {
      ticketId: ticket.id,
      displayCode: ticket.displayCode,
      channel,
      late: ticket.placement?.rule === "late_appointment",
      placement: ticket.placement?.rule ?? null,
    });
  }
  return { appointment: row, ticket, created: claimed !== undefined, token: claimed !== undefined ? token : null };
}

/** Where the customer's phone is when it checks in: degrees, and the fix's accuracy in metres. */
export interface CheckInPosition extends Point {
  accuracy?: number | undefined;
}

/**
 * The service's check-in radius (booking.checkInRadiusMeters): a customer checking in with the
 * manage token must send a position that may be within it, distance minus the fix's accuracy,
 * as remote join's geofence counts (domain/remote-join.ts). No radius: from anywhere.
 */
async function assertNearby({ db }: Deps, appointment: AppointmentRow, booking: BookingSettings, position: CheckInPosition | undefined) {
  const radiusM = booking.checkInRadiusMeters ?? null;
  if (radiusM === null) return;
  if (!position) {
    throw new ApiError("VALIDATION_ERROR", "This service checks appointments in on site: send the phone's position", {
      field: "position",
      reason: "required: the service checks in within its radius of the location",
    });
  }
  const place = await db
    .select({ latitude: locations.latitude, longitude: locations.longitude })
    .from(locations)
    .where(eq(locations.id, appointment.locationId))
    .get();
  if (!place) return;
  const km = distanceKm(position, { latitude: place.latitude, longitude: place.longitude });
  if (geofenceStatus(km * 1000, position.accuracy ?? 0, radiusM) !== "within_geofence") {
    throw new ApiError("OUT_OF_RANGE", "Too far from the location to check in: come closer, or check in at the kiosk", {
      distanceKm: Math.round(km * 1000) / 1000,
      maxKm: radiusM / 1000,
    });
  }
}

function assertOpen(appointment: AppointmentRow, booking: BookingSettings, at: number): void {
  const opensAt = checkInOpensAt(appointment.startAt, booking.checkInOpensMinutes);
  if (at < opensAt) {
    throw new ApiError("CHECK_IN_NOT_OPEN", `Check-in opens ${booking.checkInOpensMinutes} minutes before the appointment`, {
      opensAt: iso(opensAt),
      startAt: iso(appointment.startAt),
      checkInOpensMinutes: booking.checkInOpensMinutes,
    });
  }
}

async function ticketOf(deps: Deps, ticketId: string, queueId: string, at: number): Promise<TicketView> {
  const { db } = deps;
  const queue = await db.select().from(queues).where(eq(queues.id, queueId)).get();
  if (!queue) throw notFound("Queue");
  return getTicket(deps, queue, ticketId, at);
}

/** The kiosk's lookup: a booked or checked-in appointment of the location whose check-in window holds `at`. */
export async function appointmentByCode({ db }: Deps, locationId: string, code: string, at: number): Promise<AppointmentRow> {
  const wanted = normalizeCode(code);
  // Check-in opens at most 4 hours ahead (the booking settings' bound), and an appointment stays findable
  // for a day after its start so a late arrival is told what became of it.
  const rows = await db
    .select()
    .from(appointments)
    .where(
      and(
        eq(appointments.locationId, locationId),
        inArray(appointments.status, ["booked", "checked_in", "no_show"]),
        lte(appointments.startAt, at + MAX_CHECK_IN_OPENS_MINUTES * 60_000),
      ),
    )
    .orderBy(asc(appointments.startAt))
    .all();
  for (const row of rows.filter((r) => r.startAt >= at - DAY_MS)) {
    if ((await checkInCode(row.id)) === wanted) return row;
  }
  throw notFound("Appointment");
}

const DAY_MS = 86_400_000;
/** The largest `checkInOpensMinutes` a service may set (its booking settings allow 240). */
const MAX_CHECK_IN_OPENS_MINUTES = 240;

// ---- no-shows --------------------------------------------------------------------------------

async function markNoShow({ db }: Deps, id: string, at: number): Promise<AppointmentRow | null> {
  return (
    (await db
      .update(appointments)
      .set({ status: "no_show", updatedAt: at })
      .where(and(eq(appointments.id, id), eq(appointments.status, "booked")))
      .returning()
      .get()) ?? null
  );
}

/** Appointments the sweep looks at per run, the longest overdue first. */
const SWEEP_BATCH = 100;

/**
 * The cron's step (jobs/sweeps.ts): a booked appointment not checked in by its start plus its
 * service's `lateGraceMinutes` becomes `no_show` (which frees its slot: the slots count only
 * booked and checked-in rows), `appointment.no_show` is published and the customer is told.
 */
export async function sweepMissedAppointments(deps: Deps, at: number): Promise<number> {
  const { db } = deps;
  const due = await db
    .select()
    .from(appointments)
    .where(and(eq(appointments.status, "booked"), lte(appointments.startAt, at)))
    .orderBy(asc(appointments.startAt))
    .limit(SWEEP_BATCH)
    .all();
  if (due.length === 0) return 0;
  const serviceIds = [...new Set(due.map((a) => a.serviceId))].slice(0, 90);
  const rows = await db.select({ id: services.id, booking: services.booking }).from(services).where(inArray(services.id, serviceIds)).all();
  const graceOf = new Map(rows.map((r) => [r.id, { ...DEFAULT_BOOKING, ...(r.booking ?? {}) }.lateGraceMinutes]));
  const missed: AppointmentRow[] = [];
  for (const a of due) {
    if (!isLate(a.startAt, at, graceOf.get(a.serviceId) ?? DEFAULT_BOOKING.lateGraceMinutes)) continue;
    const row = await markNoShow(deps, a.id, at);
    if (row) missed.push(row);
  }
  if (missed.length > 0) await announceNoShow(deps, missed, at, "not_checked_in");
  return missed.length;
}

/** `appointment.no_show` for each, and the customer told in their language (in the app, and by SMS when they gave a phone). */
async function announceNoShow(deps: Deps, rows: AppointmentRow[], at: number, reason: "late" | "not_checked_in"): Promise<void> {
  const zones = await locationZones(deps, rows);
  const deliveries: Delivery[] = [];
  for (const row of rows) {
    await publish(deps, "appointment.no_show", row, at, { reason });
    // The catalogue's text (docs/languages.md), or the business's own words for it (docs/message-templates.md).
    const language = pickLanguage(row.language);
    const own = await businessText(deps, row.organizationId, null, "appointment.no_show", language);
    const text = render(
      "appointment.no_show",
      language,
      { time: formatWhen(row.startAt, language, zones.get(row.locationId) ?? "UTC") },
      own,
    );
    const base = {
      eventId: `apt_no_show:${row.id}`,
      organizationId: row.organizationId,
      type: "appointment.no_show",
      title: text.title,
      body: text.body,
      data: { type: "appointment.no_show", appointmentId: row.id, startAt: iso(row.startAt) },
    };
    if (row.customerUserId) deliveries.push({ ...base, channel: "in_app", target: { kind: "user", userId: row.customerUserId } });
    if (row.customerPhone) deliveries.push({ ...base, channel: "sms", target: { kind: "phone", phone: row.customerPhone } });
  }
  if (deliveries.length > 0) await deliver(deps, deliveries, at);
}

async function locationZones({ db }: Deps, rows: AppointmentRow[]): Promise<Map<string, string>> {
  const ids = [...new Set(rows.map((r) => r.locationId))].slice(0, 90);
  const found = await db.select({ id: locations.id, timezone: locations.timezone }).from(locations).where(inArray(locations.id, ids)).all();
  return new Map(found.map((r) => [r.id, r.timezone]));
}

async function publish(deps: Deps, type: EventType, row: AppointmentRow, at: number, data: Record<string, unknown>): Promise<void> {
  await publishEvent(deps, {
    id: newId("evt"),
    type,
    organizationId: row.organizationId,
    queueId: row.queueId,
    ticketId: row.ticketId,
    occurredAt: iso(at),
    data: {
      appointmentId: row.id,
      serviceId: row.serviceId,
      locationId: row.locationId,
      startAt: iso(row.startAt),
      status: row.status,
      language: row.language,
      ...data,
    },
  });
}
