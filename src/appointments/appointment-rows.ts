import { and, asc, eq, gte, inArray, lt } from "drizzle-orm";
import { database, type Database } from "../db/client";
import { appointmentHolds, appointments, calendarEvents, members } from "../db/schema";
import { ACTIVE_STATUSES } from "./appointments-slots";

// The appointments area's D1 statements. Booking, holding and rescheduling are each ONE
// conditional statement (`INSERT … SELECT … WHERE`, `UPDATE … WHERE`) that D1 runs on its single
// SQLite writer: the slot's capacity (every active appointment and live hold OVERLAPPING the
// slot, as src/domain/slots.ts counts them) and the staff member's other bookings are checked
// inside the write, so no two concurrent requests can both pass the check.
// Those writes stay prepared SQL on the binding (allow-listed): an `INSERT … SELECT <values> WHERE`
// has no table to select from, which Drizzle's insert().select() needs, and Drizzle 0.45's D1
// batch cannot carry bound `sql` items, so the statements batched with them (the calendar event,
// the hold converted or purged) stay prepared too. Everything else here is Drizzle.

export type AppointmentRow = typeof appointments.$inferSelect;
export type HoldRow = typeof appointmentHolds.$inferSelect;

/** What a write must find free. */
export interface SlotClaim {
  organizationId: string;
  serviceId: string;
  locationId: string;
  staffId: string | null;
  startAt: number;
  endAt: number;
  capacity: number;
  now: number;
  /** The appointment being moved and the hold being converted do not compete with themselves. */
  excludeAppointmentId: string | null;
  excludeHoldId: string | null;
}

const ACTIVE = ACTIVE_STATUSES.map((s) => `'${s}'`).join(", ");

/** `WHERE` of a write that takes the slot: capacity by overlap, the staff member free. */
function slotIsFree(claim: SlotClaim): { sql: string; binds: unknown[] } {
  const excludeAppointment = claim.excludeAppointmentId ?? "";
  const excludeHold = claim.excludeHoldId ?? "";
  return {
    sql: `(SELECT COUNT(*) FROM appointments WHERE service_id = ? AND location_id = ? AND status IN (${ACTIVE})
            AND start_at < ? AND end_at > ? AND id <> ?)
        + (SELECT COUNT(*) FROM appointment_holds WHERE service_id = ? AND location_id = ? AND expires_at > ?
            AND start_at < ? AND end_at > ? AND id <> ?) < ?
      AND (? IS NULL OR (
        NOT EXISTS (SELECT 1 FROM appointments WHERE staff_id = ? AND status IN (${ACTIVE}) AND start_at < ? AND end_at > ? AND id <> ?)
        AND NOT EXISTS (SELECT 1 FROM appointment_holds WHERE staff_id = ? AND expires_at > ? AND start_at < ? AND end_at > ? AND id <> ?)))`,
    binds: [
      claim.serviceId,
      claim.locationId,
      claim.endAt,
      claim.startAt,
      excludeAppointment,
      claim.serviceId,
      claim.locationId,
      claim.now,
      claim.endAt,
      claim.startAt,
      excludeHold,
      claim.capacity,
      claim.staffId,
      claim.staffId,
      claim.endAt,
      claim.startAt,
      excludeAppointment,
      claim.staffId,
      claim.now,
      claim.endAt,
      claim.startAt,
      excludeHold,
    ],
  };
}

export interface NewAppointment {
  id: string;
  customerName: string;
  customerPhone: string | null;
  customerEmail: string | null;
  language: string;
  notes: string | null;
  customerUserId: string | null;
  calendarEventId: string;
  tokenHash: string;
  /** The calendar event's title (the service's name). */
  title: string;
}

/**
 * Books the slot if it is still free: the appointment, its calendar `appointment` event and the
 * conversion of a hold, in one atomic batch whose first statement decides. True when booked.
 */
export async function insertAppointment(d1: D1Database, claim: SlotClaim, a: NewAppointment): Promise<boolean> {
  const free = slotIsFree(claim);
  const booked = `EXISTS (SELECT 1 FROM appointments WHERE id = ?)`;
  const statements = [
    d1
      .prepare(
        `INSERT INTO appointments (id, organization_id, service_id, location_id, staff_id, start_at, end_at, status, customer_name,
           customer_phone, customer_email, language, notes, customer_user_id, calendar_event_id, token_hash, created_at, updated_at)
         SELECT ?, ?, ?, ?, ?, ?, ?, 'booked', ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE ${free.sql}`,
      )
      .bind(
        a.id,
        claim.organizationId,
        claim.serviceId,
        claim.locationId,
        claim.staffId,
        claim.startAt,
        claim.endAt,
        a.customerName,
        a.customerPhone,
        a.customerEmail,
        a.language,
        a.notes,
        a.customerUserId,
        a.calendarEventId,
        a.tokenHash,
        claim.now,
        claim.now,
        ...free.binds,
      ),
    d1
      .prepare(
        `INSERT INTO calendar_events (id, organization_id, title, description, start_at, end_at, event_type, service_id, location_id,
           attendees, created_at, updated_at)
         SELECT ?, ?, ?, ?, ?, ?, 'appointment', ?, ?, ?, ?, ? WHERE ${booked}`,
      )
      .bind(
        a.calendarEventId,
        claim.organizationId,
        a.title,
        a.customerName,
        claim.startAt,
        claim.endAt,
        claim.serviceId,
        claim.locationId,
        JSON.stringify(claim.staffId ? [claim.staffId] : []),
        claim.now,
        claim.now,
        a.id,
      ),
  ];
  if (claim.excludeHoldId) {
    statements.push(d1.prepare(`DELETE FROM appointment_holds WHERE id = ? AND ${booked}`).bind(claim.excludeHoldId, a.id));
  }
  const [first] = await d1.batch(statements);
  return (first?.meta.changes ?? 0) === 1;
}

/** Moves a booked appointment (and its calendar event) if the new slot is free. True when moved. */
export async function moveAppointment(d1: D1Database, id: string, claim: SlotClaim, calendarEventId: string | null): Promise<boolean> {
  const free = slotIsFree({ ...claim, excludeAppointmentId: id });
  const statements = [
    d1
      .prepare(
        `UPDATE appointments SET start_at = ?, end_at = ?, staff_id = ?, updated_at = ? WHERE id = ? AND status = 'booked' AND ${free.sql}`,
      )
      .bind(claim.startAt, claim.endAt, claim.staffId, claim.now, id, ...free.binds),
  ];
  if (calendarEventId) {
    statements.push(
      d1
        .prepare(
          `UPDATE calendar_events SET start_at = ?, end_at = ?, attendees = ?, updated_at = ?
           WHERE id = ? AND EXISTS (SELECT 1 FROM appointments WHERE id = ? AND start_at = ? AND updated_at = ?)`,
        )
        .bind(
          claim.startAt,
          claim.endAt,
          JSON.stringify(claim.staffId ? [claim.staffId] : []),
          claim.now,
          calendarEventId,
          id,
          claim.startAt,
          claim.now,
        ),
    );
  }
  const [first] = await d1.batch(statements);
  return (first?.meta.changes ?? 0) === 1;
}

/** Cancels a booked appointment and deletes its calendar event. The row after, or null if it was not booked. */
export async function cancelAppointment(d1: D1Database, id: string, at: number): Promise<AppointmentRow | null> {
  const db = database(d1);
  const [updated] = await db.batch([
    db
      .update(appointments)
      .set({ status: "cancelled", cancelledAt: at, updatedAt: at })
      .where(and(eq(appointments.id, id), eq(appointments.status, "booked")))
      .returning({ id: appointments.id }),
    // The event of the appointment this batch cancelled (none when the update above found it not booked).
    db.delete(calendarEvents).where(
      eq(
        calendarEvents.id,
        db
          .select({ id: appointments.calendarEventId })
          .from(appointments)
          .where(and(eq(appointments.id, id), eq(appointments.status, "cancelled"), eq(appointments.cancelledAt, at))),
      ),
    ),
  ]);
  return updated.length > 0 ? findAppointment(d1, id) : null;
}

/** Holds the slot if it is still free (and forgets expired holds). True when held. */
export async function insertHold(d1: D1Database, claim: SlotClaim, id: string, expiresAt: number): Promise<boolean> {
  const free = slotIsFree(claim);
  const [, inserted] = await d1.batch([
    d1.prepare(`DELETE FROM appointment_holds WHERE expires_at <= ?`).bind(claim.now),
    d1
      .prepare(
        `INSERT INTO appointment_holds (id, organization_id, service_id, location_id, staff_id, start_at, end_at, expires_at, created_at)
         SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE ${free.sql}`,
      )
      .bind(
        id,
        claim.organizationId,
        claim.serviceId,
        claim.locationId,
        claim.staffId,
        claim.startAt,
        claim.endAt,
        expiresAt,
        claim.now,
        ...free.binds,
      ),
  ]);
  return (inserted?.meta.changes ?? 0) === 1;
}

export async function findAppointment(d1: D1Database, id: string): Promise<AppointmentRow | null> {
  return (await database(d1).select().from(appointments).where(eq(appointments.id, id)).get()) ?? null;
}

export async function findHold(db: Database, id: string): Promise<HoldRow | undefined> {
  return db.select().from(appointmentHolds).where(eq(appointmentHolds.id, id)).get();
}

/** Each staff member's active appointments over [from, to): the round-robin's measure. */
export async function bookingsPerStaff(db: Database, staffIds: readonly string[], from: number, to: number): Promise<Map<string, number>> {
  if (staffIds.length === 0) return new Map();
  const rows = await db
    .select({ staffId: appointments.staffId, startAt: appointments.startAt })
    .from(appointments)
    .where(
      and(
        inArray(appointments.staffId, [...staffIds]),
        inArray(appointments.status, [...ACTIVE_STATUSES]),
        gte(appointments.startAt, from),
        lt(appointments.startAt, to),
      ),
    )
    .all();
  const out = new Map<string, number>();
  for (const r of rows) if (r.staffId) out.set(r.staffId, (out.get(r.staffId) ?? 0) + 1);
  return out;
}

export async function isMember(db: Database, organizationId: string, userId: string): Promise<boolean> {
  const row = await db
    .select({ userId: members.userId })
    .from(members)
    .where(and(eq(members.organizationId, organizationId), eq(members.userId, userId)))
    .get();
  return !!row;
}

/** A location's appointments starting in [from, to), in start order (cancelled ones included). */
export async function appointmentsAt(db: Database, locationId: string, from: number, to: number): Promise<AppointmentRow[]> {
  return db
    .select()
    .from(appointments)
    .where(and(eq(appointments.locationId, locationId), gte(appointments.startAt, from), lt(appointments.startAt, to)))
    .orderBy(asc(appointments.startAt), asc(appointments.id))
    .all();
}

/** A customer's own appointments from `from` on (and the last day's), in start order. */
export async function appointmentsOfCustomer(db: Database, userId: string, from: number, limit: number): Promise<AppointmentRow[]> {
  return db
    .select()
    .from(appointments)
    .where(and(eq(appointments.customerUserId, userId), gte(appointments.endAt, from)))
    .orderBy(asc(appointments.startAt), asc(appointments.id))
    .limit(limit)
    .all();
}
