// Webhook rules with no I/O: which events a subscription may name, the delivery body, and
// when a failed delivery is tried again.
import { EVENT_TYPES, type DomainEventMessage } from "./events";
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
