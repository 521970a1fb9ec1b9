import { and, asc, count, eq, exists, gt, gte, inArray, lt, lte, ne, notExists, sql, type SQL } from "drizzle-orm";
import type { SelectedFields } from "drizzle-orm/sqlite-core";
import { database } from "../db/client";
import { appointmentHolds, appointments, calendarEvents, members } from "../db/schema";
import { ACTIVE_STATUSES } from "./appointments-slots";
import type { Deps } from "../http/deps";

// The appointments area's D1 statements. Booking, holding and rescheduling are each ONE
// conditional statement (`INSERT … SELECT … WHERE`, `UPDATE … WHERE`) that D1 runs on its single
// SQLite writer: the slot's capacity (every active appointment and live hold OVERLAPPING the
// slot, as src/domain/slots.ts counts them) and the staff member's other bookings are checked
// inside the write, so no two concurrent requests can both pass the check. The statements
// batched with it (the calendar event, the hold converted or purged) follow what it did, in the
// same batch.

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

/**
 * The slot as a one-row table of its counts, kept only while it is free: capacity by overlap
 * (the active appointments and the live holds), and the staff member free of both. A write
 * selects its row from it (`INSERT … SELECT`) or needs it to exist (`UPDATE … WHERE EXISTS`).
 */
function freeSlot<Fields extends SelectedFields>({ db }: Deps, claim: SlotClaim, fields: Fields) {
  const a = appointments;
  const h = appointmentHolds;
  const otherAppointment = claim.excludeAppointmentId === null ? undefined : ne(a.id, claim.excludeAppointmentId);
  const otherHold = claim.excludeHoldId === null ? undefined : ne(h.id, claim.excludeHoldId);
  const activeOverlap = and(
    inArray(a.status, [...ACTIVE_STATUSES]),
    lt(a.startAt, claim.endAt),
    gt(a.endAt, claim.startAt),
    otherAppointment,
  );
  const liveOverlap = and(gt(h.expiresAt, claim.now), lt(h.startAt, claim.endAt), gt(h.endAt, claim.startAt), otherHold);
  const held = db
    .select({ n: count() })
    .from(h)
    .where(and(eq(h.serviceId, claim.serviceId), eq(h.locationId, claim.locationId), liveOverlap));
  const slot = db
    .select({ booked: count().as("booked"), held: sql<number>`${held}`.as("held") })
    .from(a)
    .where(and(eq(a.serviceId, claim.serviceId), eq(a.locationId, claim.locationId), activeOverlap))
    .as("slot");
  const staffFree =
    claim.staffId === null
      ? undefined
      : and(
          notExists(
            db
              .select({ one: sql`1` })
              .from(a)
              .where(and(eq(a.staffId, claim.staffId), activeOverlap)),
          ),
          notExists(
            db
              .select({ one: sql`1` })
              .from(h)
              .where(and(eq(h.staffId, claim.staffId), liveOverlap)),
          ),
        );
  return db
    .select(fields)
    .from(slot)
    .where(and(lt(sql`${slot.booked} + ${slot.held}`, claim.capacity), staffFree));
}

/** A value of the row a write selects, under its column's name. */
const value = (v: unknown, column: string) => sql`${v}`.as(column);

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
export async function insertAppointment(deps: Deps, claim: SlotClaim, a: NewAppointment): Promise<boolean> {
  const { db } = deps;
  const booked = db
    .select({ one: sql`1` })
    .from(appointments)
    .where(eq(appointments.id, a.id));
  const book = db.insert(appointments).select(
    freeSlot(deps, claim, {
      id: value(a.id, "id"),
      organizationId: value(claim.organizationId, "organization_id"),
      serviceId: value(claim.serviceId, "service_id"),
      locationId: value(claim.locationId, "location_id"),
      staffId: value(claim.staffId, "staff_id"),
      startAt: value(claim.startAt, "start_at"),
      endAt: value(claim.endAt, "end_at"),
      status: value("booked", "status"),
      customerName: value(a.customerName, "customer_name"),
      customerPhone: value(a.customerPhone, "customer_phone"),
      customerEmail: value(a.customerEmail, "customer_email"),
      language: value(a.language, "language"),
      notes: value(a.notes, "notes"),
      customerUserId: value(a.customerUserId, "customer_user_id"),
      calendarEventId: value(a.calendarEventId, "calendar_event_id"),
      tokenHash: value(a.tokenHash, "token_hash"),
      ticketId: value(null, "ticket_id"),
      queueId: value(null, "queue_id"),
      checkedInAt: value(null, "checked_in_at"),
      cancelledAt: value(null, "cancelled_at"),
      createdAt: value(claim.now, "created_at"),
      updatedAt: value(claim.now, "updated_at"),
    }),
  );
  // The calendar event is selected from the appointment this batch booked (none when refused).
  const event = db.insert(calendarEvents).select(
    db
      .select({
        id: value(a.calendarEventId, "id"),
        organizationId: value(claim.organizationId, "organization_id"),
        title: value(a.title, "title"),
        description: value(a.customerName, "description"),
        startAt: value(claim.startAt, "start_at"),
        endAt: value(claim.endAt, "end_at"),
        eventType: value("appointment", "event_type"),
        serviceId: value(claim.serviceId, "service_id"),
        locationId: value(claim.locationId, "location_id"),
        attendees: value(JSON.stringify(claim.staffId ? [claim.staffId] : []), "attendees"),
        color: value(null, "color"),
        recurrencePattern: value(null, "recurrence_pattern"),
        recurrenceEndAt: value(null, "recurrence_end_at"),
        createdById: value(null, "created_by_id"),
        createdAt: value(claim.now, "created_at"),
        updatedAt: value(claim.now, "updated_at"),
      })
      .from(appointments)
      .where(eq(appointments.id, a.id)),
  );
  const [first] = claim.excludeHoldId
    ? await db.batch([book, event, db.delete(appointmentHolds).where(and(eq(appointmentHolds.id, claim.excludeHoldId), exists(booked)))])
    : await db.batch([book, event]);
  return first.meta.changes === 1;
}

/** Moves a booked appointment (and its calendar event) if the new slot is free. True when moved. */
export async function moveAppointment(deps: Deps, id: string, claim: SlotClaim, calendarEventId: string | null): Promise<boolean> {
  const { db } = deps;
  const move = db
    .update(appointments)
    .set({ startAt: claim.startAt, endAt: claim.endAt, staffId: claim.staffId, updatedAt: claim.now })
    .where(
      and(
        eq(appointments.id, id),
        eq(appointments.status, "booked"),
        exists(freeSlot(deps, { ...claim, excludeAppointmentId: id }, { one: sql`1` })),
      ),
    );
  if (!calendarEventId) return (await move.run()).meta.changes === 1;
  const [first] = await db.batch([
    move,
    // The event follows only the move this batch made (its new start and time of change).
    db
      .update(calendarEvents)
      .set({ startAt: claim.startAt, endAt: claim.endAt, attendees: claim.staffId ? [claim.staffId] : [], updatedAt: claim.now })
      .where(
        and(
          eq(calendarEvents.id, calendarEventId),
          exists(
            db
              .select({ one: sql`1` })
              .from(appointments)
              .where(and(eq(appointments.id, id), eq(appointments.startAt, claim.startAt), eq(appointments.updatedAt, claim.now))),
          ),
        ),
      ),
  ]);
  return first.meta.changes === 1;
}

/** Cancels a booked appointment and deletes its calendar event. The row after, or null if it was not booked. */
export async function cancelAppointment(deps: Deps, id: string, at: number): Promise<AppointmentRow | null> {
  const d1 = deps.env.DB;
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
  return updated.length > 0 ? findAppointment(deps, id) : null;
}

/** Holds the slot if it is still free (and forgets expired holds). True when held. */
export async function insertHold(deps: Deps, claim: SlotClaim, id: string, expiresAt: number): Promise<boolean> {
  const { db } = deps;
  const [, inserted] = await db.batch([
    db.delete(appointmentHolds).where(lte(appointmentHolds.expiresAt, claim.now)),
    db.insert(appointmentHolds).select(
      freeSlot(deps, claim, {
        id: value(id, "id"),
        organizationId: value(claim.organizationId, "organization_id"),
        serviceId: value(claim.serviceId, "service_id"),
        locationId: value(claim.locationId, "location_id"),
        staffId: value(claim.staffId, "staff_id"),
        startAt: value(claim.startAt, "start_at"),
        endAt: value(claim.endAt, "end_at"),
        expiresAt: value(expiresAt, "expires_at"),
        createdAt: value(claim.now, "created_at"),
      }),
    ),
  ]);
  return inserted.meta.changes === 1;
}

export async function findAppointment({ db }: Deps, id: string): Promise<AppointmentRow | null> {
  return (await db.select().from(appointments).where(eq(appointments.id, id)).get()) ?? null;
}

export async function findHold({ db }: Deps, id: string): Promise<HoldRow | undefined> {
  return db.select().from(appointmentHolds).where(eq(appointmentHolds.id, id)).get();
}

/** Each staff member's active appointments over [from, to): the round-robin's measure. */
export async function bookingsPerStaff({ db }: Deps, staffIds: readonly string[], from: number, to: number): Promise<Map<string, number>> {
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

export async function isMember({ db }: Deps, organizationId: string, userId: string): Promise<boolean> {
  const row = await db
    .select({ userId: members.userId })
    .from(members)
    .where(and(eq(members.organizationId, organizationId), eq(members.userId, userId)))
    .get();
  return !!row;
}

/** A location's appointments starting in [from, to), in start order (cancelled ones included). */
export async function appointmentsAt({ db }: Deps, locationId: string, from: number, to: number): Promise<AppointmentRow[]> {
  return db
    .select()
    .from(appointments)
    .where(and(eq(appointments.locationId, locationId), gte(appointments.startAt, from), lt(appointments.startAt, to)))
    .orderBy(asc(appointments.startAt), asc(appointments.id))
    .all();
}

/** A customer's own appointments from `from` on (and the last day's), in start order. */
export async function appointmentsOfCustomer({ db }: Deps, userId: string, from: number, limit: number): Promise<AppointmentRow[]> {
  return db
    .select()
    .from(appointments)
    .where(and(eq(appointments.customerUserId, userId), gte(appointments.endAt, from)))
    .orderBy(asc(appointments.startAt), asc(appointments.id))
    .limit(limit)
    .all();
}
