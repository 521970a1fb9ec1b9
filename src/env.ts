import type { QueueRoom } from "./queue-room/queue-room";
import type { RateLimiter } from "./rate-limiter/rate-limiter";
import type { DomainEventMessage } from "./domain/events";
import type { DeliveryMessage } from "./jobs/notifications-delivery";

export interface Env {
  DB: D1Database;
  QUEUE_ROOM: DurableObjectNamespace<QueueRoom>;
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  EVENTS: Queue<DomainEventMessage>;
  ASSETS: Fetcher;
  ENVIRONMENT: string;
  /** "1" only under `npm run bench` (`wrangler dev --var BENCH:1`); never set in wrangler.toml. */
  BENCH?: string;
  /** Per-delivery retries of push/SMS/web push (src/jobs/notifications-delivery.ts). */
  NOTIFICATIONS: Queue<DeliveryMessage>;
  /** Notification providers (docs/notifications.md); with none set, the outbox provider records sends. */
  FCM_SERVICE_ACCOUNT?: string;
  FCM_BASE_URL?: string;
  FCM_TOKEN_URL?: string;
  SMS_PROVIDER?: string;
  SMS_BASE_URL?: string;
  TWILIO_ACCOUNT_SID?: string;
  TWILIO_AUTH_TOKEN?: string;
  TWILIO_FROM?: string;
  ORANGE_CLIENT_ID?: string;
  ORANGE_CLIENT_SECRET?: string;
  ORANGE_SENDER?: string;
  VAPID_PUBLIC_KEY?: string;
  VAPID_PRIVATE_KEY?: string;
  VAPID_SUBJECT?: string;
}

declare global {
  namespace Cloudflare {
    interface Env {
      DB: D1Database;
      QUEUE_ROOM: DurableObjectNamespace<QueueRoom>;
      RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
      EVENTS: Queue<DomainEventMessage>;
      ASSETS: Fetcher;
      ENVIRONMENT: string;
      BENCH?: string;
      /** Per-delivery retries of push/SMS/web push (src/jobs/notifications-delivery.ts). */
      NOTIFICATIONS: Queue<DeliveryMessage>;
      /** Notification providers (docs/notifications.md); with none set, the outbox provider records sends. */
      FCM_SERVICE_ACCOUNT?: string;
      FCM_BASE_URL?: string;
      FCM_TOKEN_URL?: string;
      SMS_PROVIDER?: string;
      SMS_BASE_URL?: string;
      TWILIO_ACCOUNT_SID?: string;
      TWILIO_AUTH_TOKEN?: string;
      TWILIO_FROM?: string;
      ORANGE_CLIENT_ID?: string;
      ORANGE_CLIENT_SECRET?: string;
      ORANGE_SENDER?: string;
      VAPID_PUBLIC_KEY?: string;
      VAPID_PRIVATE_KEY?: string;
      VAPID_SUBJECT?: string;
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    }
  }
}

/** The benchmark mode: bench-only routes answer and rate limits step aside (see npm run bench). */
export function benchMode(env: Pick<Env, "BENCH">): boolean {
  return env.BENCH === "1";
}
