import { and, eq, inArray, isNotNull, lt, ne, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { alias, type SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";
import {
  notificationDeliveries,
  organizations,
  phoneVerifications,
  ticketMessages,
  tickets,
  visitorPushSubscriptions,
  webhookDeliveries,
} from "../db/schema";
import { DAY } from "../lib/time";
import { type Deps } from "../http/deps";

// The personal-data sweep (docs/retention.md): past each organization's `data_retention_days`,
// the records that still hold a visitor's personal data are anonymised in place. What is
// anonymised, per table:
//  - tickets (the D1 projection): `visitor_name` → NULL, `intake_personal` → NULL (docs/visits.md),
//    `phone` → NULL;
//  - ticket_messages: `phone` and `body` → "(anonymised)"; opt_outs stay (a STOP is the
//    customer's own order, kept so that they are never texted again);
//  - notification_deliveries (finished ones): the recipient (phone number, push token,
//    endpoint, user id) and the stored payload (its target and the text sent) are replaced; the
//    key, which embeds the recipient, becomes `<event>:<channel>:(anonymised):<id>`;
//  - webhook_deliveries (finished ones): `data.phone` and `data.visitorName` of the stored body
//    → null (a later redelivery sends the anonymised body);
//  - visitor_push_subscriptions: deleted (the endpoint and keys are the visitor's browser);
//  - phone_verifications: deleted (the number a one-time code went to, docs/limits.md).
// Ticket counts, times, statuses and the analytics aggregates are left as they are: only
// personal fields change, so every figure computed from them stays the same.
//
// Each statement walks organizations and, per organization, a partial index of the rows still
// holding personal data (0010_data_retention.sql), so a run reads only what is left to do and
// at most CHUNK rows per table; a backlog drains over the next minutes. The statements are
// Drizzle's; the index each one reads is named in its FROM (Drizzle has no index hint), so the
// plan cannot drift to the table's full (organization, time) index.

const CHUNK = 500;
export const ANONYMISED = "(anonymised)";
/** The marker written into the statements as the partial indexes' WHERE writes it: a bound value would not match them. */
const ANONYMISED_LITERAL = sql.raw(`'${ANONYMISED}'`);

const o = alias(organizations, "o");

/** The columns every swept table has: its organization and its creation time. */
interface Dated {
  organizationId: SQLiteColumn;
  createdAt: SQLiteColumn;
}

/**
 * The keys (`key`, a column of `d`) of the rows of `table` (alias d) in an organization past its
 * retention, CHUNK at most: `o` first (CROSS JOIN keeps that order), then the partial index
 * named, which lists only rows still to do. Drizzle has no index hint: the FROM names it.
 */
function due({ db }: Deps, table: SQLiteTable, index: string, d: Dated, key: SQLWrapper, personal: SQL | undefined, at: number) {
  return db
    .select({ key: sql`${key}` })
    .from(o)
    .crossJoin(sql`${table} AS ${sql.identifier("d")} INDEXED BY ${sql.identifier(index)}`)
    .where(and(eq(d.organizationId, o.id), personal, lt(d.createdAt, sql`${at} - ${o.dataRetentionDays} * ${sql.raw(String(DAY))}`)))
    .limit(CHUNK);
}

/** The rowid of a row of `d` (the swept tables are rowid tables). */
const rowidOf = (d: SQLiteTable) => sql`${d}.rowid`;
const rowid = sql`rowid`;

export function anonymiseTickets(deps: Deps, at: number) {
  const { db } = deps;
  const d = alias(tickets, "d");
  return db
    .update(tickets)
    .set({ visitorName: null })
    .where(inArray(rowid, due(deps, tickets, "tickets_named_org_created_idx", d, rowidOf(d), isNotNull(d.visitorName), at)));
}

/** Personal intake answers (docs/visits.md) go with the name; the open answers stay, like the ticket's other facts. */
export function anonymiseTicketIntake(deps: Deps, at: number) {
  const { db } = deps;
  const d = alias(tickets, "d");
  return db
    .update(tickets)
    .set({ intakePersonal: null })
    .where(inArray(rowid, due(deps, tickets, "tickets_intake_personal_org_created_idx", d, rowidOf(d), isNotNull(d.intakePersonal), at)));
}

/** The number a ticket keeps for conversations (docs/conversations.md). */
export function anonymiseTicketPhones(deps: Deps, at: number) {
  const { db } = deps;
  const d = alias(tickets, "d");
  return db
    .update(tickets)
    .set({ phone: null })
    .where(inArray(rowid, due(deps, tickets, "tickets_phone_org_created_idx", d, rowidOf(d), isNotNull(d.phone), at)));
}

/** Texts exchanged with a ticket: the number and the words go, the fact of a message stays. */
export function anonymiseTicketMessages(deps: Deps, at: number) {
  const { db } = deps;
  const d = alias(ticketMessages, "d");
  return db
    .update(ticketMessages)
    .set({ phone: ANONYMISED, body: ANONYMISED })
    .where(
      inArray(
        rowid,
        due(deps, ticketMessages, "ticket_messages_personal_idx", d, rowidOf(d), sql`${d.phone} <> ${ANONYMISED_LITERAL}`, at),
      ),
    );
}

export function anonymiseNotificationDeliveries(deps: Deps, at: number) {
  const { db } = deps;
  const n = notificationDeliveries;
  const d = alias(n, "d");
  const finished = and(sql`${d.recipient} <> ${ANONYMISED_LITERAL}`, inArray(d.status, ["sent", "failed", "dead_lettered"]));
  return db
    .update(n)
    .set({
      recipient: ANONYMISED,
      key: sql`${n.eventId} || ':' || ${n.channel} || ${`:${ANONYMISED}:`} || ${n.id}`,
      payload: '{"anonymised":true}',
      providerResponse: null,
    })
    .where(inArray(n.key, due(deps, n, "notification_deliveries_personal_idx", d, d.key, finished, at)));
}

export function anonymiseWebhookDeliveries(deps: Deps, at: number) {
  const { db } = deps;
  const w = webhookDeliveries;
  const d = alias(w, "d");
  // The path written as the partial index's WHERE writes it.
  const finished = and(sql`json_extract(${d.payload}, '$.data.phone') IS NOT NULL`, ne(d.status, "pending"));
  return db
    .update(w)
    .set({ payload: sql`json_replace(${w.payload}, '$.data.phone', NULL, '$.data.visitorName', NULL)` })
    .where(inArray(w.id, due(deps, w, "webhook_deliveries_personal_idx", d, d.id, finished, at)));
}

export function deleteVisitorPush(deps: Deps, at: number) {
  const { db } = deps;
  const d = alias(visitorPushSubscriptions, "d");
  return db
    .delete(visitorPushSubscriptions)
    .where(inArray(rowid, due(deps, visitorPushSubscriptions, "visitor_push_subscriptions_org_created_idx", d, rowidOf(d), undefined, at)));
}

export function deletePhoneVerifications(deps: Deps, at: number) {
  const { db } = deps;
  const d = alias(phoneVerifications, "d");
  return db
    .delete(phoneVerifications)
    .where(inArray(rowid, due(deps, phoneVerifications, "phone_verifications_org_created_idx", d, rowidOf(d), undefined, at)));
}

export type AnonymisationCounts = {
  tickets: number;
  ticketMessages: number;
  notificationDeliveries: number;
  webhookDeliveries: number;
  pushSubscriptions: number;
  phoneVerifications: number;
};

/** One bounded pass over every table; running it again changes nothing already done. */
export async function anonymisePersonalData(deps: Deps, at: number): Promise<AnonymisationCounts> {
  const { db } = deps;
  const [namedTickets, deliveries, hooks, pushes, ticketIntake, ticketPhones, messages, verifications] = await db.batch([
    anonymiseTickets(deps, at),
    anonymiseNotificationDeliveries(deps, at),
    anonymiseWebhookDeliveries(deps, at),
    deleteVisitorPush(deps, at),
    anonymiseTicketIntake(deps, at),
    anonymiseTicketPhones(deps, at),
    anonymiseTicketMessages(deps, at),
    deletePhoneVerifications(deps, at),
  ]);
  return {
    // A ticket counts once per statement that changed it (its name, its personal answers, its phone).
    tickets: namedTickets.meta.changes + ticketIntake.meta.changes + ticketPhones.meta.changes,
    ticketMessages: messages.meta.changes,
    notificationDeliveries: deliveries.meta.changes,
    webhookDeliveries: hooks.meta.changes,
    pushSubscriptions: pushes.meta.changes,
    phoneVerifications: verifications.meta.changes,
  };
}
