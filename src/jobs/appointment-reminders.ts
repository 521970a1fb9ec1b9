import { formatWhen, pickLanguage, render } from "../domain/notification-templates";
import { expandOccurrences, isValidTimeZone } from "../domain/recurrence";
import { and, eq, gt, inArray, isNotNull, isNull, lte, notExists, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { chunk, nonEmpty, type Database } from "../db/client";
import { appointmentReminders, appointments, calendarEvents, locations, organizations, pushDevices, users } from "../db/schema";
import { DAY } from "../lib/time";
import { effectiveTemplate } from "../domain/message-templates";
import { deliver, templateOverrides, type Delivery } from "../notifications";
import { type Deps } from "../http/deps";

// appointment.reminder: each occurrence of an `appointment` calendar event (recurring ones
// included) reminds its attendees once, 24 h before it starts, from the minute sweep; an event
// that is a booked appointment (docs/appointments.md) reminds its customer too, in the
// appointment's language. A sweep that was missed catches up: any occurrence starting within
// the next 24 h that has no reminder row yet is reminded now. `appointment_reminders` is the
// once-per-occurrence record.
//
// Fair and lossless: events already reminded for the coming 24 h are left out by the query, the
// rest are read page by page in id order (ids are random, so no organization goes first), every
// attendee of every due occurrence is told, and the occurrence is recorded as reminded only
// AFTER its deliveries were handed over (deliveries are idempotent per event and recipient, so
// a run that fails half-way is simply done again by the next minute's sweep).

const PAGE = 200;
/** Pages per run (10,000 events); what is left waits for the next minute. */
const MAX_PAGES = 50;
/** Users read per statement (D1 binds at most 100 values). */
const USER_CHUNK = 90;

type AppointmentRow = Awaited<ReturnType<typeof candidates>>[number];

interface Due {
  row: AppointmentRow;
  start: number;
  zone: string;
}

/** An organization's first location, whose time zone an event without a location falls back to. */
const first = alias(locations, "first_location");

function candidates({ db }: Deps, at: number, after: string) {
  const horizon = at + DAY;
  const e = calendarEvents;
  const fallbackTimezone = db
    .select({ timezone: first.timezone })
    .from(first)
    .where(eq(first.organizationId, e.organizationId))
    .orderBy(first.createdAt, first.id)
    .limit(1);
  const reminded = db
    .select({ one: sql`1` })
    .from(appointmentReminders)
    .where(
      and(
        eq(appointmentReminders.eventId, e.id),
        gt(appointmentReminders.occurrenceStart, at),
        lte(appointmentReminders.occurrenceStart, horizon),
      ),
    );
  return db
    .select({
      id: e.id,
      organizationId: e.organizationId,
      title: e.title,
      startAt: e.startAt,
      endAt: e.endAt,
      recurrencePattern: e.recurrencePattern,
      recurrenceEndAt: e.recurrenceEndAt,
      attendees: e.attendees,
      timezone: locations.timezone,
      fallbackTimezone: sql<string | null>`${fallbackTimezone}`,
      defaultLanguage: organizations.defaultLanguage,
      customerUserId: appointments.customerUserId,
      customerLanguage: appointments.language,
      appointmentId: appointments.id,
    })
    .from(e)
    .innerJoin(organizations, eq(organizations.id, e.organizationId))
    .leftJoin(locations, eq(locations.id, e.locationId))
    .leftJoin(appointments, and(eq(appointments.calendarEventId, e.id), eq(appointments.status, "booked")))
    .where(
      and(
        eq(e.eventType, "appointment"),
        lte(e.startAt, horizon),
        gt(e.id, after),
        or(
          and(isNull(e.recurrencePattern), gt(e.startAt, at)),
          and(isNotNull(e.recurrencePattern), or(isNull(e.recurrenceEndAt), gt(e.recurrenceEndAt, at))),
        ),
        notExists(reminded),
      ),
    )
    .orderBy(e.id)
    .limit(PAGE);
}

function dueOccurrences(rows: AppointmentRow[], at: number): Due[] {
  const horizon = at + DAY;
  const due: Due[] = [];
  for (const row of rows) {
    const zone = [row.timezone, row.fallbackTimezone].find((z): z is string => !!z && isValidTimeZone(z)) ?? "UTC";
    for (const o of expandOccurrences(row, at, horizon + 1, zone, 10)) {
      if (o.occurrenceStart > at && o.occurrenceStart <= horizon) due.push({ row, start: o.occurrenceStart, zone });
    }
  }
  return due;
}

/** Who hears of an occurrence: its attendees, and the booked appointment's customer (in its language). */
function recipients(d: Due): { userId: string; language: string | null }[] {
  const out: { userId: string; language: string | null }[] = d.row.attendees.map((userId) => ({ userId, language: null }));
  const customer = d.row.customerUserId;
  if (customer && !out.some((r) => r.userId === customer)) out.push({ userId: customer, language: d.row.customerLanguage });
  return out;
}

async function remindPage(deps: Deps, db: Database, due: Due[], at: number): Promise<number> {
  const userIds = [...new Set(due.flatMap((d) => recipients(d).map((r) => r.userId)))];
  const chunks = chunk(userIds, USER_CHUNK);
  const userReads = nonEmpty(
    chunks.map((ids) =>
      db
        .select({ id: users.id, language: users.language, ticketReminders: users.ticketReminders })
        .from(users)
        .where(inArray(users.id, ids)),
    ),
  );
  const tokenReads = nonEmpty(
    chunks.map((ids) =>
      db.select({ userId: pushDevices.userId, token: pushDevices.token }).from(pushDevices).where(inArray(pushDevices.userId, ids)),
    ),
  );
  const [userRows, tokenRows] = await Promise.all([userReads ? db.batch(userReads) : [], tokenReads ? db.batch(tokenReads) : []]);
  const tokens = tokenRows.flat();
  const userById = new Map(userRows.flat().map((u) => [u.id, u]));
  const deliveries: Delivery[] = [];
  // The business's own text of the reminder, where it wrote one (docs/message-templates.md).
  const overrides = await templateOverrides(deps, [...new Set(due.map((d) => d.row.organizationId))]);
  for (const d of due) {
    for (const r of recipients(d)) {
      const user = userById.get(r.userId);
      if (!user || !user.ticketReminders) continue;
      const language = pickLanguage(r.language, user.language, d.row.defaultLanguage);
      const own = effectiveTemplate(overrides, d.row.organizationId, "appointment.reminder", language, null);
      const text = render("appointment.reminder", language, { title: d.row.title, time: formatWhen(d.start, language, d.zone) }, own);
      const data: Record<string, string> = {
        type: "appointment.reminder",
        calendarEventId: d.row.id,
        occurrenceStart: new Date(d.start).toISOString(),
      };
      if (d.row.appointmentId) data.appointmentId = d.row.appointmentId;
      const base = {
        eventId: `rem:${d.row.id}:${d.start}`,
        organizationId: d.row.organizationId,
        type: "appointment.reminder",
        ...text,
        data,
      };
      deliveries.push({ ...base, channel: "in_app", target: { kind: "user", userId: r.userId } });
      for (const t of tokens.filter((t) => t.userId === r.userId))
        deliveries.push({ ...base, channel: "push", target: { kind: "device", token: t.token } });
    }
  }
  const report = await deliver(deps, deliveries, at);
  // Recorded once handed over: a run that failed before this line is done again next minute.
  const records = nonEmpty(
    due.map((d) =>
      db.insert(appointmentReminders).values({ eventId: d.row.id, occurrenceStart: d.start, sentAt: at }).onConflictDoNothing(),
    ),
  );
  if (records) await db.batch(records);
  return report.inApp;
}

export async function remindAppointments(deps: Deps, at: number): Promise<number> {
  const { db } = deps;
  let after = "";
  let reminded = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const rows = await candidates(deps, at, after);
    const due = dueOccurrences(rows, at);
    if (due.length > 0) reminded += await remindPage(deps, db, due, at);
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1]!.id;
  }
  return reminded;
}
