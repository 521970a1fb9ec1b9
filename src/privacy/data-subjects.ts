import { recordAudit } from "../audit/audit";
import type { AuditOrigin } from "../domain/audit";
import type { Env } from "../env";
import { ApiError } from "../http/errors";
import { randomString } from "../lib/ids";
import { iso } from "../lib/time";
import type { SubjectMatch, SubjectTicket } from "../queue-room/contract";
import { roomOf } from "../tickets/queue-rooms";
import { openStoredEvent } from "../webhooks/stored-events";

// A person's data on request (GDPR articles 15 and 17, docs/personal-data.md): everything one
// organization holds about a customer it knows by their phone number and/or e-mail address, as
// one JSON document, and its erasure. Nothing outside the organization is read or changed but
// what is the person's only through this organization (a thread on a number it owns).
//
// Tickets live in two places: the queue's room (live tickets, and finished ones for a day) and
// the D1 projection (history). The room is their single writer, so erasure goes through each
// room first, then anonymises D1 in one batch. Analytics aggregates are never touched.

export const ANONYMISED = "(anonymised)";

export interface DataSubject {
  phone: string | null;
  email: string | null;
}

type Row = Record<string, unknown>;

/** What identifies the person inside the organization, found once for export and erasure. */
interface Subject {
  organizationId: string;
  phone: string | null;
  email: string | null;
  /** Customer accounts with the e-mail (a staff account is never a data subject here). */
  userIds: string[];
  appointments: Row[];
  roomTickets: (SubjectTicket & { queueId: string })[];
  /** Every ticket id of the person in this organization (rooms, D1, appointments' check-ins). */
  ticketIds: string[];
  d1Tickets: Row[];
}

const json = (values: string[]) => JSON.stringify(values);
const IN_JSON = "(SELECT value FROM json_each(?))";
/**
 * Deliveries to the person (?1 organization, ?2 their numbers and accounts, ?3 their tickets,
 * ?4 their accounts): texts, in-app, their visitor browser push endpoints, their devices' tokens.
 */
const DELIVERED_TO = `(recipient IN (SELECT value FROM json_each(?2))
  OR recipient IN (SELECT endpoint FROM visitor_push_subscriptions WHERE organization_id = ?1 AND ticket_id IN (SELECT value FROM json_each(?3)))
  OR recipient IN (SELECT token FROM push_devices WHERE user_id IN (SELECT value FROM json_each(?4))))`;

async function findSubject(env: Env, organizationId: string, who: DataSubject): Promise<Subject> {
  const db = env.DB;
  const phone = who.phone;
  const email = who.email;
  const users = email
    ? (await db.prepare("SELECT id FROM users WHERE email = ? AND account_type = 'customer'").bind(email).all<{ id: string }>()).results
    : [];
  const userIds = users.map((u) => u.id);
  const [appointments, queues] = await db.batch<Row>([
    db
      .prepare(
        `SELECT * FROM appointments WHERE organization_id = ?1
           AND ((?2 IS NOT NULL AND customer_phone = ?2) OR (?3 IS NOT NULL AND customer_email = ?3) OR customer_user_id IN ${IN_JSON.replace("?", "?4")})
         ORDER BY start_at`,
      )
      .bind(organizationId, phone, email, json(userIds)),
    db.prepare("SELECT id FROM queues WHERE organization_id = ?").bind(organizationId),
  ]);
  const appointmentRows = appointments!.results;
  const appointmentTickets = appointmentRows.map((a) => a.ticket_id).filter((id): id is string => typeof id === "string");
  const match: SubjectMatch = { phones: phone ? [phone] : [], userIds, ticketIds: appointmentTickets };
  const queueIds = (queues!.results as { id: string }[]).map((q) => q.id);
  const perRoom = await Promise.all(
    queueIds.map(async (queueId) =>
      (await roomOf(env, queueId).query({ question: "subjectTickets", match })).map((t) => ({ ...t, queueId })),
    ),
  );
  const roomTickets = perRoom.flat();
  const d1Tickets = (
    await db
      .prepare(
        `SELECT * FROM tickets WHERE organization_id = ?1
           AND ((?2 IS NOT NULL AND phone = ?2) OR user_id IN ${IN_JSON.replace("?", "?3")} OR id IN ${IN_JSON.replace("?", "?4")})
         ORDER BY created_at`,
      )
      .bind(organizationId, phone, json(userIds), json([...appointmentTickets, ...roomTickets.map((t) => t.id)]))
      .all<Row>()
  ).results;
  const ticketIds = [...new Set([...appointmentTickets, ...roomTickets.map((t) => t.id), ...d1Tickets.map((t) => t.id as string)])];
  return { organizationId, phone, email, userIds, appointments: appointmentRows, roomTickets, ticketIds, d1Tickets };
}

/** The statements reading what else the organization holds about the person, in one batch. */
function relatedReads(env: Env, s: Subject) {
  const db = env.DB;
  const tickets = json(s.ticketIds);
  const users = json(s.userIds);
  const appointmentIds = json(s.appointments.map((a) => a.id as string));
  return db.batch<Row>([
    db
      .prepare(
        `SELECT * FROM ticket_messages WHERE organization_id = ?1 AND ((?2 IS NOT NULL AND phone = ?2) OR ticket_id IN ${IN_JSON.replace("?", "?3")}) ORDER BY created_at`,
      )
      .bind(s.organizationId, s.phone, tickets),
    db
      .prepare(
        `SELECT key, id, event_id, type, channel, recipient, provider, status, attempts, payload, created_at, updated_at
           FROM notification_deliveries WHERE organization_id = ?1 AND ${DELIVERED_TO} ORDER BY created_at`,
      )
      .bind(s.organizationId, json(recipientsOf(s)), tickets, users),
    db.prepare("SELECT * FROM opt_outs WHERE organization_id = ?1 AND phone = ?2").bind(s.organizationId, s.phone ?? ""),
    db
      .prepare(
        `SELECT ticket_id, endpoint, language, created_at FROM visitor_push_subscriptions WHERE organization_id = ?1 AND ticket_id IN ${IN_JSON.replace("?", "?2")}`,
      )
      .bind(s.organizationId, tickets),
    db
      .prepare(
        `SELECT ticket_id, phone, language, verified_at, created_at FROM phone_verifications
           WHERE organization_id = ?1 AND ((?2 IS NOT NULL AND phone = ?2) OR ticket_id IN ${IN_JSON.replace("?", "?3")})`,
      )
      .bind(s.organizationId, s.phone, tickets),
    db
      .prepare(
        `SELECT * FROM inbound_threads WHERE phone = ?1
           AND (to_number IN (SELECT number FROM sms_senders WHERE organization_id = ?2) OR ticket_id IN ${IN_JSON.replace("?", "?3")})`,
      )
      .bind(s.phone ?? "", s.organizationId, tickets),
    db
      .prepare(
        `SELECT id, event_type, status, payload, created_at FROM webhook_deliveries WHERE organization_id = ?1
           AND ((?2 IS NOT NULL AND json_extract(payload, '$.data.phone') = ?2) OR json_extract(payload, '$.data.ticketId') IN ${IN_JSON.replace("?", "?3")})
         ORDER BY created_at`,
      )
      .bind(s.organizationId, s.phone, tickets),
    db
      .prepare(
        `SELECT id, type, payload, personal_sealed, recorded_at FROM organization_events WHERE organization_id = ?1
           AND ((?2 IS NOT NULL AND json_extract(payload, '$.data.phone') = ?2) OR json_extract(payload, '$.data.ticketId') IN ${IN_JSON.replace("?", "?3")})
         ORDER BY seq`,
      )
      .bind(s.organizationId, s.phone, tickets),
    db
      .prepare(
        `SELECT id, type, title, body, data, read_at, created_at FROM notifications WHERE organization_id = ?1 AND user_id IN ${IN_JSON.replace("?", "?2")}`,
      )
      .bind(s.organizationId, users),
    db
      .prepare(
        `SELECT id, channel, source_id, queue_id, phone_model, os_version, scanned_at FROM entry_scans WHERE organization_id = ?1 AND user_id IN ${IN_JSON.replace("?", "?2")}`,
      )
      .bind(s.organizationId, users),
    db
      .prepare(
        `SELECT ticket_id, queue_id, expired_at FROM remote_join_expiries
           WHERE organization_id = ?1 AND (user_id IN ${IN_JSON.replace("?", "?2")} OR ticket_id IN ${IN_JSON.replace("?", "?3")})`,
      )
      .bind(s.organizationId, users, tickets),
    db
      .prepare(`SELECT subject, day, used FROM sms_counters WHERE organization_id = ?1 AND scope = 'phone' AND subject = ?2`)
      .bind(s.organizationId, s.phone ?? ""),
    db
      .prepare(
        `SELECT id, seq, actor_type, actor_id, entity_type, entity_id, action, changes, created_at FROM audit_events
           WHERE organization_id = ?1 AND (entity_id IN ${IN_JSON.replace("?", "?2")}
             OR (?3 IS NOT NULL AND instr(changes, ?3) > 0) OR (?4 IS NOT NULL AND instr(changes, ?4) > 0))
         ORDER BY created_at`,
      )
      .bind(s.organizationId, json([...s.ticketIds, ...JSON.parse(appointmentIds), ...s.userIds]), s.phone, s.email),
  ]);
}

/** Where deliveries to the person went: their number, their accounts (in-app), their devices (push). */
function recipientsOf(s: Subject): string[] {
  return [...(s.phone ? [s.phone] : []), ...s.userIds];
}

const time = (v: unknown) => (typeof v === "number" ? iso(v) : null);
const parsed = (v: unknown) => (typeof v === "string" ? (JSON.parse(v) as unknown) : null);

function ticketRecord(room: (SubjectTicket & { queueId: string }) | undefined, d1: Row | undefined) {
  return {
    id: (room?.id ?? d1?.id) as string,
    queueId: (room?.queueId ?? d1?.queue_id) as string,
    displayCode: (d1?.display_code as string | undefined) ?? null,
    status: (room?.status ?? d1?.status) as string,
    source: (room?.source ?? d1?.source) as string,
    visitorName: room ? room.visitorName : ((d1?.visitor_name as string | null) ?? null),
    phone: room ? room.phone : ((d1?.phone as string | null) ?? null),
    partySize: (room?.partySize ?? d1?.party_size) as number,
    intake: parsed(room ? room.intake : d1?.intake),
    intakePersonal: parsed(room ? room.intakePersonal : d1?.intake_personal),
    labels: parsed(room ? room.labels : d1?.labels) ?? [],
    outcome: room ? room.outcome : ((d1?.outcome as string | null) ?? null),
    note: room ? room.note : ((d1?.note as string | null) ?? null),
    remoteJoinLocation: room?.remoteJoin
      ? {
          latitude: room.remoteJoin.latitude,
          longitude: room.remoteJoin.longitude,
          accuracyM: room.remoteJoin.accuracyM,
          at: iso(room.remoteJoin.lastLocationAt),
        }
      : null,
    /** Where it was read: the queue's room (live, or finished in the last day) or the history. */
    heldIn: room ? ("room" as const) : ("history" as const),
    createdAt: time(room?.createdAt ?? d1?.created_at),
    updatedAt: time(room?.updatedAt ?? d1?.updated_at),
  };
}

/** Rows as stored, with epoch-ms columns (`*_at`) as ISO strings and JSON columns parsed. */
function plain(rows: Row[], jsonColumns: string[] = []): Row[] {
  return rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([k, v]) => {
        const key = k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
        if (k.endsWith("_at") && typeof v === "number") return [key, iso(v)];
        if (jsonColumns.includes(k) && typeof v === "string") return [key, JSON.parse(v) as unknown];
        return [key, v];
      }),
    ),
  );
}

function newRequestId(): string {
  return `dsr_${randomString(20)}`;
}

export async function exportDataSubject(env: Env, organizationId: string, who: DataSubject, origin: AuditOrigin, at: number) {
  const s = await findSubject(env, organizationId, who);
  const [messages, deliveries, optOuts, pushes, verifications, threads, webhooks, events, inApp, scans, expiries, counters, audit] =
    await relatedReads(env, s);
  const byId = new Map(s.d1Tickets.map((t) => [t.id as string, t]));
  const rooms = new Map(s.roomTickets.map((t) => [t.id, t]));
  const tickets = s.ticketIds
    .filter((id) => rooms.has(id) || byId.has(id))
    .map((id) => ticketRecord(rooms.get(id), byId.get(id)))
    .sort((a, b) => (a.createdAt ?? "").localeCompare(b.createdAt ?? ""));
  const document = {
    requestId: newRequestId(),
    organizationId,
    subject: { phone: s.phone, email: s.email },
    generatedAt: iso(at),
    accounts: s.userIds,
    tickets,
    appointments: plain(s.appointments.map(({ token_hash: _hidden, ...a }) => a)),
    ticketMessages: plain(messages!.results),
    notificationDeliveries: plain(deliveries!.results, ["payload"]),
    inAppNotifications: plain(inApp!.results, ["data"]),
    optOuts: plain(optOuts!.results),
    visitorPushSubscriptions: plain(pushes!.results),
    phoneVerifications: plain(verifications!.results),
    inboundThreads: plain(threads!.results, ["menu"]),
    webhookDeliveries: plain(webhooks!.results, ["payload"]),
    // The stored payload with its sealed personal fields opened (issue 40): the person gets their own number.
    events: plain(
      await Promise.all(
        events!.results.map(async ({ personal_sealed, payload, ...e }) => ({
          ...e,
          payload: await openStoredEvent(env, payload as string, (personal_sealed as string | null) ?? null),
        })),
      ),
    ),
    entryScans: plain(scans!.results),
    remoteJoinExpiries: plain(expiries!.results),
    smsCounters: plain(counters!.results),
    auditEvents: plain(audit!.results, ["changes"]),
  };
  await recordAudit(
    env.DB,
    origin,
    {
      organizationId,
      entityType: "data_subject",
      entityId: document.requestId,
      action: "export.data_subject",
      changes: {
        exported: { before: null, after: { matchedBy: matchedBy(who), tickets: tickets.length, appointments: s.appointments.length } },
      },
    },
    at,
  );
  return document;
}

function matchedBy(who: DataSubject): ("phone" | "email")[] {
  return [...(who.phone ? (["phone"] as const) : []), ...(who.email ? (["email"] as const) : [])];
}

function refuseLive(tickets: { id: string; status: string }[], appointments: { id: string; status: string }[]): never {
  throw new ApiError(
    "INVALID_STATE",
    "The person has tickets still in the line or appointments still ahead: cancel them first, then erase",
    {
      tickets,
      appointments,
      allowed: ["served", "cancelled", "expired", "skipped"],
    },
  );
}

export async function eraseDataSubject(env: Env, organizationId: string, who: DataSubject, origin: AuditOrigin, at: number) {
  const s = await findSubject(env, organizationId, who);
  const liveTickets = s.roomTickets
    .filter((t) => ["waiting", "called", "serving", "held"].includes(t.status))
    .map((t) => ({ id: t.id, status: t.status }));
  const liveAppointments = s.appointments
    .filter((a) => (a.status === "booked" || a.status === "checked_in") && (a.start_at as number) > at)
    .map((a) => ({ id: a.id as string, status: a.status as string }));
  if (liveTickets.length > 0 || liveAppointments.length > 0) refuseLive(liveTickets, liveAppointments);

  // The rooms first (the single writer of their tickets): a ticket that joined meanwhile refuses.
  const match: SubjectMatch = { phones: s.phone ? [s.phone] : [], userIds: s.userIds, ticketIds: s.ticketIds };
  const queues = [...new Set(s.roomTickets.map((t) => t.queueId))];
  const erasures = await Promise.all(queues.map((q) => roomOf(env, q).command({ verb: "eraseSubject", match, at })));
  const late = erasures.flatMap((e) => e.live);
  if (late.length > 0) refuseLive(late, []);

  const db = env.DB;
  const tickets = json(s.ticketIds);
  const users = json(s.userIds);
  const appointmentIds = json(s.appointments.map((a) => a.id as string));
  const calendarIds = json(s.appointments.map((a) => a.calendar_event_id).filter((id): id is string => typeof id === "string"));
  const scrubPayload = `json_replace(payload, '$.data.phone', NULL, '$.data.visitorName', NULL, '$.data.email', NULL,
    '$.data.customerName', NULL, '$.data.customerPhone', NULL, '$.data.customerEmail', NULL,
    '$.data.phoneMasked', NULL, '$.data.customerPhoneMasked', NULL)`;
  const personalPayload = `((?2 IS NOT NULL AND json_extract(payload, '$.data.phone') = ?2) OR json_extract(payload, '$.data.ticketId') IN ${IN_JSON.replace("?", "?3")})`;
  const results = await db.batch([
    db
      .prepare(
        `UPDATE tickets SET visitor_name = NULL, phone = NULL, intake_personal = NULL, note = NULL, user_id = '${ANONYMISED}'
         WHERE organization_id = ?1 AND id IN ${IN_JSON.replace("?", "?2")}
           AND (visitor_name IS NOT NULL OR phone IS NOT NULL OR intake_personal IS NOT NULL OR note IS NOT NULL OR user_id <> '${ANONYMISED}')`,
      )
      .bind(organizationId, tickets),
    db
      .prepare(
        `UPDATE ticket_messages SET phone = '${ANONYMISED}', body = '${ANONYMISED}'
         WHERE organization_id = ?1 AND phone <> '${ANONYMISED}' AND ((?2 IS NOT NULL AND phone = ?2) OR ticket_id IN ${IN_JSON.replace("?", "?3")})`,
      )
      .bind(organizationId, s.phone, tickets),
    db
      .prepare(
        `UPDATE notification_deliveries
           SET recipient = '${ANONYMISED}', key = event_id || ':' || channel || ':${ANONYMISED}:' || id,
               payload = '{"anonymised":true}', provider_response = NULL,
               status = CASE WHEN status IN ('pending', 'retrying') THEN 'failed' ELSE status END
         WHERE organization_id = ?1 AND ${DELIVERED_TO}`,
      )
      .bind(organizationId, json(recipientsOf(s)), tickets, users),
    db
      .prepare(`UPDATE webhook_deliveries SET payload = ${scrubPayload} WHERE organization_id = ?1 AND ${personalPayload}`)
      .bind(organizationId, s.phone, tickets),
    db
      // The sealed personal fields (full phone, e-mail) go with the masked ones (issue 40).
      .prepare(
        `UPDATE organization_events SET payload = ${scrubPayload}, personal_sealed = NULL WHERE organization_id = ?1 AND ${personalPayload}`,
      )
      .bind(organizationId, s.phone, tickets),
    db.prepare("DELETE FROM opt_outs WHERE organization_id = ?1 AND phone = ?2").bind(organizationId, s.phone ?? ""),
    db
      .prepare(`DELETE FROM visitor_push_subscriptions WHERE organization_id = ?1 AND ticket_id IN ${IN_JSON.replace("?", "?2")}`)
      .bind(organizationId, tickets),
    db
      .prepare(
        `DELETE FROM phone_verifications WHERE organization_id = ?1 AND ((?2 IS NOT NULL AND phone = ?2) OR ticket_id IN ${IN_JSON.replace("?", "?3")})`,
      )
      .bind(organizationId, s.phone, tickets),
    db
      .prepare(
        `DELETE FROM inbound_threads WHERE phone = ?1
           AND (to_number IN (SELECT number FROM sms_senders WHERE organization_id = ?2) OR ticket_id IN ${IN_JSON.replace("?", "?3")})`,
      )
      .bind(s.phone ?? "", organizationId, tickets),
    db
      .prepare("DELETE FROM sms_counters WHERE organization_id = ?1 AND scope = 'phone' AND subject = ?2")
      .bind(organizationId, s.phone ?? ""),
    db
      .prepare(`DELETE FROM notifications WHERE organization_id = ?1 AND user_id IN ${IN_JSON.replace("?", "?2")}`)
      .bind(organizationId, users),
    db
      .prepare(`DELETE FROM entry_scans WHERE organization_id = ?1 AND user_id IN ${IN_JSON.replace("?", "?2")}`)
      .bind(organizationId, users),
    db
      .prepare(
        `DELETE FROM remote_join_expiries WHERE organization_id = ?1 AND (user_id IN ${IN_JSON.replace("?", "?2")} OR ticket_id IN ${IN_JSON.replace("?", "?3")})`,
      )
      .bind(organizationId, users, tickets),
    db
      .prepare(
        `UPDATE appointments SET customer_name = '${ANONYMISED}', customer_phone = NULL, customer_email = NULL, notes = NULL, customer_user_id = NULL
         WHERE organization_id = ?1 AND id IN ${IN_JSON.replace("?", "?2")} AND customer_name <> '${ANONYMISED}'`,
      )
      .bind(organizationId, appointmentIds),
    db
      .prepare(`UPDATE calendar_events SET description = NULL WHERE organization_id = ?1 AND id IN ${IN_JSON.replace("?", "?2")}`)
      .bind(organizationId, calendarIds),
  ]);
  const changed = (i: number) => results[i]!.meta.changes;
  const erased = {
    matchedBy: matchedBy(who),
    tickets: s.ticketIds.length,
    ticketsAnonymised: Math.max(
      changed(0),
      erasures.reduce((n, e) => n + e.erased, 0),
    ),
    ticketMessages: changed(1),
    notificationDeliveries: changed(2),
    webhookDeliveries: changed(3),
    events: changed(4),
    optOuts: changed(5),
    visitorPushSubscriptions: changed(6),
    phoneVerifications: changed(7),
    inboundThreads: changed(8),
    smsCounters: changed(9),
    inAppNotifications: changed(10),
    entryScans: changed(11),
    remoteJoinExpiries: changed(12),
    appointments: changed(13),
  };
  const requestId = newRequestId();
  await recordAudit(
    env.DB,
    origin,
    {
      organizationId,
      entityType: "data_subject",
      entityId: requestId,
      action: "data_subject.erased",
      changes: { erased: { before: null, after: erased } },
    },
    at,
  );
  return { requestId, erasedAt: iso(at), ...erased };
}
