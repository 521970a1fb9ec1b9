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
 * Whether a reader receives personal data: from version 2026-11-28 on, only a reader that opted
 * in (a subscription's `includePersonalData`, a key's `read:personal_data`); a reader pinned to
 * an older version keeps the payload it always had.
 */
export function readsPersonalData(reader: PayloadReader): boolean {
  return reader.personalData || isBefore(reader.version, PERSONAL_DATA_VERSION);
}

/** The payload as one reader receives it (see `readsPersonalData`). */
export function payloadFor(payload: WebhookPayload, reader: PayloadReader): WebhookPayload {
  if (readsPersonalData(reader)) return payload;
  return { ...payload, data: withoutPersonalData(payload.data) };
}

/** The fields of an event that `withoutPersonalData` masks or leaves out, with their full values. */
export type PersonalFields = Record<string, unknown>;

/**
 * How the event store keeps an event (issue 40): the payload without personal data, which is
 * what every reader without the opt-in gets, and the personal fields apart (null when there are
 * none), to be sealed (lib/secret-box.ts) and opened only for a reader that receives them.
 */
export function splitPersonalData(payload: WebhookPayload): { masked: WebhookPayload; personal: PersonalFields | null } {
  const personal: PersonalFields = {};
  for (const [field, value] of Object.entries(payload.data)) {
    if (EMAIL_FIELD.test(field) || PHONE_FIELD.test(field)) personal[field] = value;
  }
  return {
    masked: { ...payload, data: withoutPersonalData(payload.data) },
    personal: Object.keys(personal).length > 0 ? personal : null,
  };
}

/** The full payload again from the stored one and its opened personal fields (`splitPersonalData`'s inverse). */
export function withPersonalData(masked: WebhookPayload, personal: PersonalFields | null): WebhookPayload {
  if (!personal) return masked;
  const data: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(masked.data)) {
    const original = field.endsWith("Masked") ? field.slice(0, -"Masked".length) : null;
    if (original !== null && original in personal) data[original] = personal[original];
    else data[field] = value;
  }
  for (const [field, value] of Object.entries(personal)) if (!(field in data)) data[field] = value;
  return { ...masked, data };
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
