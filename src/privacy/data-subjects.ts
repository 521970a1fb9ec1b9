import { and, eq, inArray, isNotNull, or, sql, type SQLWrapper } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { recordAudit } from "../audit/audit";
import {
  appointments,
  auditEvents,
  calendarEvents,
  entryScans,
  inboundThreads,
  notificationDeliveries,
  notifications,
  optOuts,
  organizationEvents,
  phoneVerifications,
  pushDevices,
  queues,
  remoteJoinExpiries,
  smsCounters,
  smsSenders,
  ticketMessages,
  tickets as ticketsTable,
  users,
  visitorPushSubscriptions,
  webhookDeliveries,
} from "../db/schema";
import type { AuditOrigin } from "../domain/audit";
import { ApiError } from "../http/errors";
import { randomString } from "../lib/ids";
import { iso } from "../lib/time";
import type { SubjectMatch, SubjectTicket } from "../queue-room/contract";
import { roomOf } from "../tickets/queue-rooms";
import { openStoredEvent } from "../webhooks/stored-events";
import { type Deps } from "../http/deps";

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
type AppointmentRow = typeof appointments.$inferSelect;
type TicketRow = typeof ticketsTable.$inferSelect;
type RoomTicket = SubjectTicket & { queueId: string };

/** What identifies the person inside the organization, found once for export and erasure. */
interface Subject {
  organizationId: string;
  phone: string | null;
  email: string | null;
  /** Customer accounts with the e-mail (a staff account is never a data subject here). */
  userIds: string[];
  appointments: AppointmentRow[];
  roomTickets: RoomTicket[];
  /** Every ticket id of the person in this organization (rooms, D1, appointments' check-ins). */
  ticketIds: string[];
  d1Tickets: TicketRow[];
}

/**
 * `column IN` a list bound as one JSON parameter (json_each): a person may have more tickets than
 * the 100 parameters D1 binds a statement, and an empty list matches nothing.
 */
const inList = (column: SQLWrapper, values: readonly string[]) =>
  sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;

/** '(anonymised)' written into the statement as the partial indexes' WHERE writes it: a bound value would not match them. */
const ANONYMISED_LITERAL = sql.raw(`'${ANONYMISED}'`);

/** `column = value` when the person was given by that identifier; nothing otherwise (an `or` drops it). */
const sameIf = (column: SQLiteColumn, value: string | null) => (value === null ? undefined : eq(column, value));

async function findSubject(deps: Deps, organizationId: string, who: DataSubject): Promise<Subject> {
  const { db } = deps;
  const phone = who.phone;
  const email = who.email;
  const accounts = email
    ? await db
        .select({ id: users.id })
        .from(users)
        .where(and(eq(users.email, email), eq(users.accountType, "customer")))
    : [];
  const userIds = accounts.map((u) => u.id);
  const a = appointments;
  const [appointmentRows, queueRows] = await db.batch([
    db
      .select()
      .from(a)
      .where(
        and(
          eq(a.organizationId, organizationId),
          or(sameIf(a.customerPhone, phone), sameIf(a.customerEmail, email), inList(a.customerUserId, userIds)),
        ),
      )
      .orderBy(a.startAt),
    db.select({ id: queues.id }).from(queues).where(eq(queues.organizationId, organizationId)),
  ]);
  const appointmentTickets = appointmentRows.map((r) => r.ticketId).filter((id): id is string => id !== null);
  const match: SubjectMatch = { phones: phone ? [phone] : [], userIds, ticketIds: appointmentTickets };
  const perRoom = await Promise.all(
    queueRows.map(async ({ id: queueId }) =>
      (await roomOf(deps, queueId).query({ question: "subjectTickets", match })).map((t) => ({ ...t, queueId })),
    ),
  );
  const roomTickets = perRoom.flat();
  const t = ticketsTable;
  const d1Tickets = await db
    .select()
    .from(t)
    .where(
      and(
        eq(t.organizationId, organizationId),
        or(sameIf(t.phone, phone), inList(t.userId, userIds), inList(t.id, [...appointmentTickets, ...roomTickets.map((r) => r.id)])),
      ),
    )
    .orderBy(t.createdAt);
  const ticketIds = [...new Set([...appointmentTickets, ...roomTickets.map((r) => r.id), ...d1Tickets.map((r) => r.id)])];
  return { organizationId, phone, email, userIds, appointments: appointmentRows, roomTickets, ticketIds, d1Tickets };
}

/** Deliveries to the person: texts and in-app to their numbers and accounts, their visitor browser push endpoints, their devices' tokens. */
function deliveredTo({ db }: Deps, s: Subject) {
  const d = notificationDeliveries;
  const v = visitorPushSubscriptions;
  return or(
    inList(d.recipient, recipientsOf(s)),
    inArray(
      d.recipient,
      db
        .select({ endpoint: v.endpoint })
        .from(v)
        .where(and(eq(v.organizationId, s.organizationId), inList(v.ticketId, s.ticketIds))),
    ),
    inArray(d.recipient, db.select({ token: pushDevices.token }).from(pushDevices).where(inList(pushDevices.userId, s.userIds))),
  );
}

/** A stored event or webhook body about the person: their number, or one of their tickets. */
function aboutThePerson(payload: SQLiteColumn, s: Subject) {
  return or(
    s.phone === null ? undefined : sql`json_extract(${payload}, '$.data.phone') = ${s.phone}`,
    inList(sql`json_extract(${payload}, '$.data.ticketId')`, s.ticketIds),
  );
}

/** The texts sent to an organization's own numbers (a thread on a number it owns is the person's through it). */
function toNumbersOf({ db }: Deps, organizationId: string) {
  return db.select({ number: smsSenders.number }).from(smsSenders).where(eq(smsSenders.organizationId, organizationId));
}

/** The statements reading what else the organization holds about the person, in one batch. */
function relatedReads(deps: Deps, s: Subject) {
  const { db } = deps;
  const org = s.organizationId;
  const messages = ticketMessages;
  const deliveries = notificationDeliveries;
  const pushes = visitorPushSubscriptions;
  const verifications = phoneVerifications;
  const threads = inboundThreads;
  const hooks = webhookDeliveries;
  const events = organizationEvents;
  const scans = entryScans;
  const expiries = remoteJoinExpiries;
  const audit = auditEvents;
  return db.batch([
    db
      .select()
      .from(messages)
      .where(and(eq(messages.organizationId, org), or(sameIf(messages.phone, s.phone), inList(messages.ticketId, s.ticketIds))))
      .orderBy(messages.createdAt),
    db
      .select({
        key: deliveries.key,
        id: deliveries.id,
        eventId: deliveries.eventId,
        type: deliveries.type,
        channel: deliveries.channel,
        recipient: deliveries.recipient,
        provider: deliveries.provider,
        status: deliveries.status,
        attempts: deliveries.attempts,
        payload: deliveries.payload,
        createdAt: deliveries.createdAt,
        updatedAt: deliveries.updatedAt,
      })
      .from(deliveries)
      .where(and(eq(deliveries.organizationId, org), deliveredTo(deps, s)))
      .orderBy(deliveries.createdAt),
    db
      .select()
      .from(optOuts)
      .where(and(eq(optOuts.organizationId, org), eq(optOuts.phone, s.phone ?? ""))),
    db
      .select({ ticketId: pushes.ticketId, endpoint: pushes.endpoint, language: pushes.language, createdAt: pushes.createdAt })
      .from(pushes)
      .where(and(eq(pushes.organizationId, org), inList(pushes.ticketId, s.ticketIds))),
    db
      .select({
        ticketId: verifications.ticketId,
        phone: verifications.phone,
        language: verifications.language,
        verifiedAt: verifications.verifiedAt,
        createdAt: verifications.createdAt,
      })
      .from(verifications)
      .where(
        and(eq(verifications.organizationId, org), or(sameIf(verifications.phone, s.phone), inList(verifications.ticketId, s.ticketIds))),
      ),
    db
      .select()
      .from(threads)
      .where(
        and(eq(threads.phone, s.phone ?? ""), or(inArray(threads.toNumber, toNumbersOf(deps, org)), inList(threads.ticketId, s.ticketIds))),
      ),
    db
      .select({ id: hooks.id, eventType: hooks.eventType, status: hooks.status, payload: hooks.payload, createdAt: hooks.createdAt })
      .from(hooks)
      .where(and(eq(hooks.organizationId, org), aboutThePerson(hooks.payload, s)))
      .orderBy(hooks.createdAt),
    db
      .select({
        id: events.id,
        type: events.type,
        payload: events.payload,
        personalSealed: events.personalSealed,
        recordedAt: events.recordedAt,
      })
      .from(events)
      .where(and(eq(events.organizationId, org), aboutThePerson(events.payload, s)))
      .orderBy(events.seq),
    db
      .select({
        id: notifications.id,
        type: notifications.type,
        title: notifications.title,
        body: notifications.body,
        data: notifications.data,
        readAt: notifications.readAt,
        createdAt: notifications.createdAt,
      })
      .from(notifications)
      .where(and(eq(notifications.organizationId, org), inList(notifications.userId, s.userIds))),
    db
      .select({
        id: scans.id,
        channel: scans.channel,
        sourceId: scans.sourceId,
        queueId: scans.queueId,
        phoneModel: scans.phoneModel,
        osVersion: scans.osVersion,
        scannedAt: scans.scannedAt,
      })
      .from(scans)
      .where(and(eq(scans.organizationId, org), inList(scans.userId, s.userIds))),
    db
      .select({ ticketId: expiries.ticketId, queueId: expiries.queueId, expiredAt: expiries.expiredAt })
      .from(expiries)
      .where(and(eq(expiries.organizationId, org), or(inList(expiries.userId, s.userIds), inList(expiries.ticketId, s.ticketIds)))),
    db
      .select({ subject: smsCounters.subject, day: smsCounters.day, used: smsCounters.used })
      .from(smsCounters)
      .where(and(eq(smsCounters.organizationId, org), eq(smsCounters.scope, "phone"), eq(smsCounters.subject, s.phone ?? ""))),
    db
      .select({
        id: audit.id,
        seq: audit.seq,
        actorType: audit.actorType,
        actorId: audit.actorId,
        entityType: audit.entityType,
        entityId: audit.entityId,
        action: audit.action,
        changes: audit.changes,
        createdAt: audit.createdAt,
      })
      .from(audit)
      .where(
        and(
          eq(audit.organizationId, org),
          or(
            inList(audit.entityId, [...s.ticketIds, ...s.appointments.map((x) => x.id), ...s.userIds]),
            s.phone === null ? undefined : sql`instr(${audit.changes}, ${s.phone}) > 0`,
            s.email === null ? undefined : sql`instr(${audit.changes}, ${s.email}) > 0`,
          ),
        ),
      )
      .orderBy(audit.createdAt),
  ]);
}

/** Where deliveries to the person went: their number, their accounts (in-app), their devices (push). */
function recipientsOf(s: Subject): string[] {
  return [...(s.phone ? [s.phone] : []), ...s.userIds];
}

const parsed = (v: string | null): unknown => (v === null ? null : JSON.parse(v));

/** One of the person's tickets: as its room holds it (live, or finished in the last day), else as the history holds it. */
function ticketRecord(t: { room: RoomTicket; history?: TicketRow } | { room?: undefined; history: TicketRow }) {
  const held = t.room ?? t.history;
  return {
    id: held.id,
    queueId: held.queueId,
    displayCode: t.history?.displayCode ?? null,
    status: held.status,
    source: held.source,
    visitorName: held.visitorName,
    phone: held.phone,
    partySize: held.partySize,
    intake: parsed(held.intake),
    intakePersonal: parsed(held.intakePersonal),
    labels: parsed(held.labels) ?? [],
    outcome: held.outcome,
    note: held.note,
    remoteJoinLocation: t.room?.remoteJoin
      ? {
          latitude: t.room.remoteJoin.latitude,
          longitude: t.room.remoteJoin.longitude,
          accuracyM: t.room.remoteJoin.accuracyM,
          at: iso(t.room.remoteJoin.lastLocationAt),
        }
      : null,
    /** Where it was read: the queue's room (live, or finished in the last day) or the history. */
    heldIn: t.room ? ("room" as const) : ("history" as const),
    createdAt: iso(held.createdAt),
    updatedAt: iso(held.updatedAt),
  };
}

/** Rows as stored (keys in camelCase, as the API writes them), with epoch-ms columns (`…At`) as ISO strings and JSON columns parsed. */
function plain<R extends object>(rows: R[], jsonColumns: readonly (keyof R & string)[] = []): Row[] {
  return rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([k, v]): [string, unknown] => {
        if (k.endsWith("At") && typeof v === "number") return [k, iso(v)];
        if (jsonColumns.some((c) => c === k) && typeof v === "string") return [k, JSON.parse(v)];
        return [k, v];
      }),
    ),
  );
}

function newRequestId(): string {
  return `dsr_${randomString(20)}`;
}

export async function exportDataSubject(deps: Deps, organizationId: string, who: DataSubject, origin: AuditOrigin, at: number) {
  const { env } = deps;
  const s = await findSubject(deps, organizationId, who);
  const [messages, deliveries, optOutRows, pushes, verifications, threads, webhooks, events, inApp, scans, expiries, counters, audit] =
    await relatedReads(deps, s);
  const history = new Map(s.d1Tickets.map((t) => [t.id, t]));
  const rooms = new Map(s.roomTickets.map((t) => [t.id, t]));
  const tickets = s.ticketIds
    .flatMap((id) => {
      const room = rooms.get(id);
      const stored = history.get(id);
      if (room) return [ticketRecord({ room, history: stored })];
      return stored ? [ticketRecord({ history: stored })] : [];
    })
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  const document = {
    requestId: newRequestId(),
    organizationId,
    subject: { phone: s.phone, email: s.email },
    generatedAt: iso(at),
    accounts: s.userIds,
    tickets,
    appointments: plain(s.appointments.map(({ tokenHash: _hidden, ...a }) => a)),
    ticketMessages: plain(messages),
    notificationDeliveries: plain(deliveries, ["payload"]),
    // `data` is read as JSON already (the schema's json column).
    inAppNotifications: plain(inApp),
    optOuts: plain(optOutRows),
    visitorPushSubscriptions: plain(pushes),
    phoneVerifications: plain(verifications),
    inboundThreads: plain(threads, ["menu"]),
    webhookDeliveries: plain(webhooks, ["payload"]),
    // The stored payload with its sealed personal fields opened (issue 40): the person gets their own number.
    events: plain(
      await Promise.all(
        events.map(async ({ personalSealed, payload, ...e }) => ({
          ...e,
          payload: await openStoredEvent(env, payload, personalSealed),
        })),
      ),
    ),
    entryScans: plain(scans),
    remoteJoinExpiries: plain(expiries),
    smsCounters: plain(counters),
    auditEvents: plain(audit, ["changes"]),
  };
  await recordAudit(
    deps,
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

export async function eraseDataSubject(deps: Deps, organizationId: string, who: DataSubject, origin: AuditOrigin, at: number) {
  const { db } = deps;
  const s = await findSubject(deps, organizationId, who);
  const liveTickets = s.roomTickets
    .filter((t) => ["waiting", "called", "serving", "held"].includes(t.status))
    .map((t) => ({ id: t.id, status: t.status }));
  const liveAppointments = s.appointments
    .filter((a) => (a.status === "booked" || a.status === "checked_in") && a.startAt > at)
    .map((a) => ({ id: a.id, status: a.status }));
  if (liveTickets.length > 0 || liveAppointments.length > 0) refuseLive(liveTickets, liveAppointments);

  // The rooms first (the single writer of their tickets): a ticket that joined meanwhile refuses.
  const match: SubjectMatch = { phones: s.phone ? [s.phone] : [], userIds: s.userIds, ticketIds: s.ticketIds };
  const roomsHolding = [...new Set(s.roomTickets.map((t) => t.queueId))];
  const erasures = await Promise.all(roomsHolding.map((q) => roomOf(deps, q).command({ verb: "eraseSubject", match, at })));
  const late = erasures.flatMap((e) => e.live);
  if (late.length > 0) refuseLive(late, []);
  const scrubbed = (
    payload: SQLiteColumn,
  ) => sql`json_replace(${payload}, '$.data.phone', NULL, '$.data.visitorName', NULL, '$.data.email', NULL,
    '$.data.customerName', NULL, '$.data.customerPhone', NULL, '$.data.customerEmail', NULL,
    '$.data.phoneMasked', NULL, '$.data.customerPhoneMasked', NULL)`;
  const t = ticketsTable;
  const messages = ticketMessages;
  const deliveries = notificationDeliveries;
  const verifications = phoneVerifications;
  const expiries = remoteJoinExpiries;
  const a = appointments;
  const results = await db.batch([
    db
      .update(t)
      .set({ visitorName: null, phone: null, intakePersonal: null, note: null, userId: ANONYMISED })
      .where(
        and(
          eq(t.organizationId, organizationId),
          inList(t.id, s.ticketIds),
          or(
            isNotNull(t.visitorName),
            isNotNull(t.phone),
            isNotNull(t.intakePersonal),
            isNotNull(t.note),
            sql`${t.userId} <> ${ANONYMISED_LITERAL}`,
          ),
        ),
      ),
    db
      .update(messages)
      .set({ phone: ANONYMISED, body: ANONYMISED })
      .where(
        and(
          eq(messages.organizationId, organizationId),
          sql`${messages.phone} <> ${ANONYMISED_LITERAL}`,
          or(sameIf(messages.phone, s.phone), inList(messages.ticketId, s.ticketIds)),
        ),
      ),
    db
      .update(deliveries)
      .set({
        recipient: ANONYMISED,
        key: sql`${deliveries.eventId} || ':' || ${deliveries.channel} || ${`:${ANONYMISED}:`} || ${deliveries.id}`,
        payload: '{"anonymised":true}',
        providerResponse: null,
        status: sql`CASE WHEN ${deliveries.status} IN ('pending', 'retrying') THEN 'failed' ELSE ${deliveries.status} END`,
      })
      .where(and(eq(deliveries.organizationId, organizationId), deliveredTo(deps, s))),
    db
      .update(webhookDeliveries)
      .set({ payload: scrubbed(webhookDeliveries.payload) })
      .where(and(eq(webhookDeliveries.organizationId, organizationId), aboutThePerson(webhookDeliveries.payload, s))),
    // The sealed personal fields (full phone, e-mail) go with the masked ones (issue 40).
    db
      .update(organizationEvents)
      .set({ payload: scrubbed(organizationEvents.payload), personalSealed: null })
      .where(and(eq(organizationEvents.organizationId, organizationId), aboutThePerson(organizationEvents.payload, s))),
    db.delete(optOuts).where(and(eq(optOuts.organizationId, organizationId), eq(optOuts.phone, s.phone ?? ""))),
    db
      .delete(visitorPushSubscriptions)
      .where(and(eq(visitorPushSubscriptions.organizationId, organizationId), inList(visitorPushSubscriptions.ticketId, s.ticketIds))),
    db
      .delete(verifications)
      .where(
        and(
          eq(verifications.organizationId, organizationId),
          or(sameIf(verifications.phone, s.phone), inList(verifications.ticketId, s.ticketIds)),
        ),
      ),
    db
      .delete(inboundThreads)
      .where(
        and(
          eq(inboundThreads.phone, s.phone ?? ""),
          or(inArray(inboundThreads.toNumber, toNumbersOf(deps, organizationId)), inList(inboundThreads.ticketId, s.ticketIds)),
        ),
      ),
    db
      .delete(smsCounters)
      .where(and(eq(smsCounters.organizationId, organizationId), eq(smsCounters.scope, "phone"), eq(smsCounters.subject, s.phone ?? ""))),
    db.delete(notifications).where(and(eq(notifications.organizationId, organizationId), inList(notifications.userId, s.userIds))),
    db.delete(entryScans).where(and(eq(entryScans.organizationId, organizationId), inList(entryScans.userId, s.userIds))),
    db
      .delete(expiries)
      .where(
        and(eq(expiries.organizationId, organizationId), or(inList(expiries.userId, s.userIds), inList(expiries.ticketId, s.ticketIds))),
      ),
    db
      .update(a)
      .set({ customerName: ANONYMISED, customerPhone: null, customerEmail: null, notes: null, customerUserId: null })
      .where(
        and(
          eq(a.organizationId, organizationId),
          inList(
            a.id,
            s.appointments.map((x) => x.id),
          ),
          sql`${a.customerName} <> ${ANONYMISED_LITERAL}`,
        ),
      ),
    db
      .update(calendarEvents)
      .set({ description: null })
      .where(
        and(
          eq(calendarEvents.organizationId, organizationId),
          inList(
            calendarEvents.id,
            s.appointments.map((x) => x.calendarEventId).filter((id): id is string => id !== null),
          ),
        ),
      ),
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
    deps,
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
