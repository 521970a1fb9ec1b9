import type { Env } from "../env";
import { DAY } from "../lib/time";

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
// at most CHUNK rows per table; a backlog drains over the next minutes.

const CHUNK = 500;
export const ANONYMISED = "(anonymised)";

/**
 * The rows of `table` (alias d) in an organization past its retention: `o` first (CROSS JOIN
 * keeps that order), then the partial index named, which lists only rows still to do.
 */
function due(table: string, index: string, key: string, personal: string, extra = ""): string {
  return `SELECT d.${key} FROM organizations o CROSS JOIN ${table} AS d INDEXED BY ${index}
    ON d.organization_id = o.id AND ${personal} AND d.created_at < ?1 - o.data_retention_days * ${DAY}${extra}
    LIMIT ?2`;
}

export const ANONYMISE_TICKETS = `UPDATE tickets SET visitor_name = NULL
  WHERE rowid IN (${due("tickets", "tickets_named_org_created_idx", "rowid", "d.visitor_name IS NOT NULL")})`;

/** Personal intake answers (docs/visits.md) go with the name; the open answers stay, like the ticket's other facts. */
export const ANONYMISE_TICKET_INTAKE = `UPDATE tickets SET intake_personal = NULL
  WHERE rowid IN (${due("tickets", "tickets_intake_personal_org_created_idx", "rowid", "d.intake_personal IS NOT NULL")})`;

/** The number a ticket keeps for conversations (docs/conversations.md). */
export const ANONYMISE_TICKET_PHONES = `UPDATE tickets SET phone = NULL
  WHERE rowid IN (${due("tickets", "tickets_phone_org_created_idx", "rowid", "d.phone IS NOT NULL")})`;

/** Texts exchanged with a ticket: the number and the words go, the fact of a message stays. */
export const ANONYMISE_TICKET_MESSAGES = `UPDATE ticket_messages SET phone = '${ANONYMISED}', body = '${ANONYMISED}'
  WHERE rowid IN (${due("ticket_messages", "ticket_messages_personal_idx", "rowid", `d.phone <> '${ANONYMISED}'`)})`;

export const ANONYMISE_NOTIFICATION_DELIVERIES = `UPDATE notification_deliveries
  SET recipient = '${ANONYMISED}', key = event_id || ':' || channel || ':${ANONYMISED}:' || id,
      payload = '{"anonymised":true}', provider_response = NULL
  WHERE key IN (${due(
    "notification_deliveries",
    "notification_deliveries_personal_idx",
    "key",
    `d.recipient <> '${ANONYMISED}'`,
    " AND d.status IN ('sent', 'failed', 'dead_lettered')",
  )})`;

export const ANONYMISE_WEBHOOK_DELIVERIES = `UPDATE webhook_deliveries
  SET payload = json_replace(payload, '$.data.phone', NULL, '$.data.visitorName', NULL)
  WHERE id IN (${due("webhook_deliveries", "webhook_deliveries_personal_idx", "id", "json_extract(d.payload, '$.data.phone') IS NOT NULL", " AND d.status <> 'pending'")})`;

export const DELETE_VISITOR_PUSH = `DELETE FROM visitor_push_subscriptions
  WHERE rowid IN (${due("visitor_push_subscriptions", "visitor_push_subscriptions_org_created_idx", "rowid", "1 = 1")})`;

export const DELETE_PHONE_VERIFICATIONS = `DELETE FROM phone_verifications
  WHERE rowid IN (${due("phone_verifications", "phone_verifications_org_created_idx", "rowid", "1 = 1")})`;

export type AnonymisationCounts = {
  tickets: number;
  ticketMessages: number;
  notificationDeliveries: number;
  webhookDeliveries: number;
  pushSubscriptions: number;
  phoneVerifications: number;
};

/** One bounded pass over every table; running it again changes nothing already done. */
export async function anonymisePersonalData(env: Env, at: number): Promise<AnonymisationCounts> {
  const [
    tickets,
    notificationDeliveries,
    webhookDeliveries,
    pushSubscriptions,
    ticketIntake,
    ticketPhones,
    ticketMessages,
    phoneVerifications,
  ] = await env.DB.batch(
    [
      ANONYMISE_TICKETS,
      ANONYMISE_NOTIFICATION_DELIVERIES,
      ANONYMISE_WEBHOOK_DELIVERIES,
      DELETE_VISITOR_PUSH,
      ANONYMISE_TICKET_INTAKE,
      ANONYMISE_TICKET_PHONES,
      ANONYMISE_TICKET_MESSAGES,
      DELETE_PHONE_VERIFICATIONS,
    ].map((q) => env.DB.prepare(q).bind(at, CHUNK)),
  );
  return {
    // A ticket counts once per statement that changed it (its name, its personal answers, its phone).
    tickets: tickets!.meta.changes + ticketIntake!.meta.changes + ticketPhones!.meta.changes,
    ticketMessages: ticketMessages!.meta.changes,
    notificationDeliveries: notificationDeliveries!.meta.changes,
    webhookDeliveries: webhookDeliveries!.meta.changes,
    pushSubscriptions: pushSubscriptions!.meta.changes,
    phoneVerifications: phoneVerifications!.meta.changes,
  };
}
