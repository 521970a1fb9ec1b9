import { formatWhen, pickLanguage, render } from "../domain/notification-templates";
import { expandOccurrences, isValidTimeZone, type RecurrencePattern } from "../domain/recurrence";
import type { Env } from "../env";
import { DAY } from "../lib/time";
import { effectiveTemplate } from "../domain/message-templates";
import { deliver, templateOverrides, type Delivery } from "../notifications";

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

interface AppointmentRow {
  id: string;
  organization_id: string;
  title: string;
  start_at: number;
  end_at: number;
  recurrence_pattern: RecurrencePattern | null;
  recurrence_end_at: number | null;
  attendees: string;
  timezone: string | null;
  fallback_timezone: string | null;
  default_language: string;
  customer_user_id: string | null;
  customer_language: string | null;
  appointment_id: string | null;
}

interface Due {
  row: AppointmentRow;
  start: number;
  zone: string;
}

function candidates(env: Env, at: number, after: string) {
  const horizon = at + DAY;
  return env.DB.prepare(
    `SELECT e.id, e.organization_id, e.title, e.start_at, e.end_at, e.recurrence_pattern, e.recurrence_end_at, e.attendees,
       l.timezone,
       (SELECT timezone FROM locations WHERE organization_id = e.organization_id ORDER BY created_at, id LIMIT 1) AS fallback_timezone,
       o.default_language,
       a.customer_user_id, a.language AS customer_language, a.id AS appointment_id
     FROM calendar_events e JOIN organizations o ON o.id = e.organization_id LEFT JOIN locations l ON l.id = e.location_id
       LEFT JOIN appointments a ON a.calendar_event_id = e.id AND a.status = 'booked'
     WHERE e.event_type = 'appointment' AND e.start_at <= ? AND e.id > ?
       AND ((e.recurrence_pattern IS NULL AND e.start_at > ?) OR (e.recurrence_pattern IS NOT NULL AND (e.recurrence_end_at IS NULL OR e.recurrence_end_at > ?)))
       AND NOT EXISTS (SELECT 1 FROM appointment_reminders r WHERE r.event_id = e.id AND r.occurrence_start > ? AND r.occurrence_start <= ?)
     ORDER BY e.id
     LIMIT ?`,
  )
    .bind(horizon, after, at, at, at, horizon, PAGE)
    .all<AppointmentRow>();
}

function dueOccurrences(rows: AppointmentRow[], at: number): Due[] {
  const horizon = at + DAY;
  const due: Due[] = [];
  for (const row of rows) {
    const zone = [row.timezone, row.fallback_timezone].find((z): z is string => !!z && isValidTimeZone(z)) ?? "UTC";
    const event = {
      id: row.id,
      startAt: row.start_at,
      endAt: row.end_at,
      recurrencePattern: row.recurrence_pattern,
      recurrenceEndAt: row.recurrence_end_at,
    };
    for (const o of expandOccurrences(event, at, horizon + 1, zone, 10)) {
      if (o.occurrenceStart > at && o.occurrenceStart <= horizon) due.push({ row, start: o.occurrenceStart, zone });
    }
  }
  return due;
}

/** Who hears of an occurrence: its attendees, and the booked appointment's customer (in its language). */
function recipients(d: Due): { userId: string; language: string | null }[] {
  const out = (JSON.parse(d.row.attendees) as string[]).map((userId) => ({ userId, language: null as string | null }));
  if (d.row.customer_user_id && !out.some((r) => r.userId === d.row.customer_user_id)) {
    out.push({ userId: d.row.customer_user_id, language: d.row.customer_language });
  }
  return out;
}

async function remindPage(env: Env, due: Due[], at: number): Promise<number> {
  const userIds = [...new Set(due.flatMap((d) => recipients(d).map((r) => r.userId)))];
  const chunks: string[][] = [];
  for (let i = 0; i < userIds.length; i += USER_CHUNK) chunks.push(userIds.slice(i, i + USER_CHUNK));
  const read = chunks.length
    ? await env.DB.batch<any>(
        chunks.flatMap((chunk) => {
          const marks = chunk.map(() => "?").join(", ");
          return [
            env.DB.prepare(`SELECT id, language, ticket_reminders FROM users WHERE id IN (${marks})`).bind(...chunk),
            env.DB.prepare(`SELECT user_id, token FROM push_devices WHERE user_id IN (${marks})`).bind(...chunk),
          ];
        }),
      )
    : [];
  const users = read
    .filter((_r, i) => i % 2 === 0)
    .flatMap((r) => (r.results ?? []) as { id: string; language: string; ticket_reminders: number }[]);
  const tokens = read.filter((_r, i) => i % 2 === 1).flatMap((r) => (r.results ?? []) as { user_id: string; token: string }[]);
  const userById = new Map(users.map((u) => [u.id, u]));
  const deliveries: Delivery[] = [];
  // The business's own text of the reminder, where it wrote one (docs/message-templates.md).
  const overrides = await templateOverrides(env, [...new Set(due.map((d) => d.row.organization_id))]);
  for (const d of due) {
    for (const r of recipients(d)) {
      const user = userById.get(r.userId);
      if (!user || user.ticket_reminders === 0) continue;
      const language = pickLanguage(r.language, user.language, d.row.default_language);
      const own = effectiveTemplate(overrides, d.row.organization_id, "appointment.reminder", language, null);
      const text = render("appointment.reminder", language, { title: d.row.title, time: formatWhen(d.start, language, d.zone) }, own);
      const data: Record<string, string> = {
        type: "appointment.reminder",
        calendarEventId: d.row.id,
        occurrenceStart: new Date(d.start).toISOString(),
      };
      if (d.row.appointment_id) data.appointmentId = d.row.appointment_id;
      const base = {
        eventId: `rem:${d.row.id}:${d.start}`,
        organizationId: d.row.organization_id,
        type: "appointment.reminder",
        ...text,
        data,
      };
      deliveries.push({ ...base, channel: "in_app", target: { kind: "user", userId: r.userId } });
      for (const t of tokens.filter((t) => t.user_id === r.userId))
        deliveries.push({ ...base, channel: "push", target: { kind: "device", token: t.token } });
    }
  }
  const report = await deliver(env, deliveries, at);
  // Recorded once handed over: a run that failed before this line is done again next minute.
  await env.DB.batch(
    due.map((d) =>
      env.DB.prepare(
        "INSERT INTO appointment_reminders (event_id, occurrence_start, sent_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      ).bind(d.row.id, d.start, at),
    ),
  );
  return report.inApp;
}

export async function remindAppointments(env: Env, at: number): Promise<number> {
  let after = "";
  let reminded = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const rows = (await candidates(env, at, after)).results;
    const due = dueOccurrences(rows, at);
    if (due.length > 0) reminded += await remindPage(env, due, at);
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1]!.id;
  }
  return reminded;
}
