import { formatWhen, pickLanguage, render } from "../domain/notification-templates";
import { expandOccurrences, isValidTimeZone, type RecurrencePattern } from "../domain/recurrence";
import type { Env } from "../env";
import { DAY } from "../lib/time";
import { deliver, type Delivery } from "../notifications";

// appointment.reminder: each occurrence of an `appointment` calendar event (recurring ones
// included) reminds its attendees once, 24 h before it starts, from the minute sweep. A sweep
// that was missed catches up: any occurrence starting within the next 24 h that has no
// reminder row yet is reminded now. `appointment_reminders` is the once-per-occurrence record.

const LIMIT = 200;

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
}

export async function remindAppointments(env: Env, at: number): Promise<number> {
  const horizon = at + DAY;
  const rows = await env.DB.prepare(
    `SELECT e.id, e.organization_id, e.title, e.start_at, e.end_at, e.recurrence_pattern, e.recurrence_end_at, e.attendees,
       l.timezone,
       (SELECT timezone FROM locations WHERE organization_id = e.organization_id ORDER BY created_at, id LIMIT 1) AS fallback_timezone,
       o.default_language
     FROM calendar_events e JOIN organizations o ON o.id = e.organization_id LEFT JOIN locations l ON l.id = e.location_id
     WHERE e.event_type = 'appointment' AND e.start_at <= ?
       AND ((e.recurrence_pattern IS NULL AND e.start_at > ?) OR (e.recurrence_pattern IS NOT NULL AND (e.recurrence_end_at IS NULL OR e.recurrence_end_at > ?)))
     LIMIT ?`,
  )
    .bind(horizon, at, at, LIMIT)
    .all<AppointmentRow>();
  const due: { row: AppointmentRow; start: number; zone: string }[] = [];
  for (const row of rows.results) {
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
  if (due.length === 0) return 0;
  // Claim each occurrence once; only the claims this run won are reminded.
  const claims = await env.DB.batch(
    due.map((d) =>
      env.DB.prepare(
        "INSERT INTO appointment_reminders (event_id, occurrence_start, sent_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING event_id",
      ).bind(d.row.id, d.start, at),
    ),
  );
  const won = due.filter((_d, i) => (claims[i]?.results?.length ?? 0) > 0);
  const attendeeIds = [...new Set(won.flatMap((d) => JSON.parse(d.row.attendees) as string[]))].slice(0, 100);
  if (attendeeIds.length === 0) return 0;
  const marks = attendeeIds.map(() => "?").join(", ");
  const [users, devices] = await env.DB.batch<any>([
    env.DB.prepare(`SELECT id, language, ticket_reminders FROM users WHERE id IN (${marks})`).bind(...attendeeIds),
    env.DB.prepare(`SELECT user_id, token FROM push_devices WHERE user_id IN (${marks})`).bind(...attendeeIds),
  ]);
  const userById = new Map(((users?.results ?? []) as { id: string; language: string; ticket_reminders: number }[]).map((u) => [u.id, u]));
  const tokens = (devices?.results ?? []) as { user_id: string; token: string }[];
  const deliveries: Delivery[] = [];
  for (const d of won) {
    for (const userId of JSON.parse(d.row.attendees) as string[]) {
      const user = userById.get(userId);
      if (!user || user.ticket_reminders === 0) continue;
      const language = pickLanguage(user.language, d.row.default_language);
      const text = render("appointment.reminder", language, { title: d.row.title, time: formatWhen(d.start, language, d.zone) });
      const base = {
        eventId: `rem:${d.row.id}:${d.start}`,
        organizationId: d.row.organization_id,
        type: "appointment.reminder",
        ...text,
        data: { type: "appointment.reminder", calendarEventId: d.row.id, occurrenceStart: new Date(d.start).toISOString() },
      };
      deliveries.push({ ...base, channel: "in_app", target: { kind: "user", userId } });
      for (const t of tokens.filter((t) => t.user_id === userId))
        deliveries.push({ ...base, channel: "push", target: { kind: "device", token: t.token } });
    }
  }
  const report = await deliver(env, deliveries, at);
  return report.inApp;
}
