// Webhook rules with no I/O: which events a subscription may name, the delivery body, and
// when a failed delivery is tried again.
import { isBefore, PERSONAL_DATA_VERSION, type ApiVersion } from "./api-versions";
import { EVENT_TYPES, type DomainEventMessage } from "./events";
import { maskPhone } from "./phone-mask";
import { DAY, HOUR } from "../lib/time";

/** Sent only by POST …/webhooks/{id}/test, whatever the subscription's events. */
export const TEST_EVENT = "webhook.test";

/** What `events[]` may contain: every domain event type, or `*` for all of them. */
export const WEBHOOK_EVENT_NAMES = ["*", ...EVENT_TYPES] as const;

export function subscribes(events: readonly string[], type: string): boolean {
  return events.includes("*") || events.includes(type);
}

/** One message on the WEBHOOKS queue: a delivery row to send (its payload is in D1). */
export interface WebhookDeliveryMessage {
  deliveryId: string;
}

/** The body every receiver gets; `id` is also the `webhook-id` header, for de-duplication. */
export interface WebhookPayload {
  id: string;
  type: string;
  createdAt: string;
  organizationId: string;
  data: Record<string, unknown>;
}

export function eventPayload(event: DomainEventMessage): WebhookPayload {
  return {
    id: event.id,
    type: event.type,
    createdAt: event.occurredAt,
    organizationId: event.organizationId,
    data: { ...event.data, queueId: event.queueId, ticketId: event.ticketId },
  };
}

/** Who reads a payload: the API version it follows, and whether it opted in to personal data. */
export interface PayloadReader {
  version: ApiVersion;
  personalData: boolean;
}

const EMAIL_FIELD = /e-?mail/i;
const PHONE_FIELD = /^phone$|Phone$/;

/**
 * An event's fields without personal data (issue 40): a phone field becomes its masked form
 * (`phone` → `phoneMasked`, "+33 6 •• •• •• 78", as the console shows it) and an e-mail field is
 * left out. Names and open intake answers stay: they are what the staff and the receiver act on.
 */
export function withoutPersonalData(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(data)) {
    if (EMAIL_FIELD.test(field)) continue;
    if (PHONE_FIELD.test(field)) out[`${field}Masked`] = typeof value === "string" ? maskPhone(value) : null;
    else out[field] = value;
  }
  return out;
}

/**
 * The payload as one reader receives it: from version 2026-11-28 on, personal data only for a
 * reader that opted in (a subscription's `includePersonalData`, a key's `read:personal_data`);
 * a reader pinned to an older version keeps the payload it always had.
 */
export function payloadFor(payload: WebhookPayload, reader: PayloadReader): WebhookPayload {
  if (reader.personalData || isBefore(reader.version, PERSONAL_DATA_VERSION)) return payload;
  return { ...payload, data: withoutPersonalData(payload.data) };
}

/** A delivery is retried for 24 h after its first attempt, then it is `failed`. */
export const RETRY_WINDOW_MS = DAY;
/** A subscription whose every attempt failed for 3 days is disabled. */
export const FAILING_DISABLE_MS = 3 * DAY;

const FIRST_DELAY_S = 30;
const MAX_DELAY_S = HOUR / 1000;

/**
 * Seconds before attempt `attempts + 1`: 30 s doubled after each failure, at most an hour,
 * spread by ±20 % (`jitter` in [0, 1)) so that a receiver coming back is not hit by every
 * delivery at the same second.
 */
export function retryDelaySeconds(attempts: number, jitter: number): number {
  const base = Math.min(FIRST_DELAY_S * 2 ** Math.max(0, attempts - 1), MAX_DELAY_S);
  return Math.round(base * (0.8 + 0.4 * jitter));
}
