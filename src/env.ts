import type { QueueRoom } from "./queue-room/queue-room";
import type { RateLimiter } from "./rate-limiter/rate-limiter";
import type { DomainEventMessage } from "./domain/events";
import type { WebhookDeliveryMessage } from "./domain/webhooks";
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
  /** Billing (docs/billing.md). Without a provider's secret key its currencies go through the sandbox. */
  STRIPE_SECRET_KEY?: string;
  STRIPE_WEBHOOK_SECRET?: string;
  STRIPE_API_BASE?: string;
  FEDAPAY_SECRET_KEY?: string;
  FEDAPAY_WEBHOOK_SECRET?: string;
  FEDAPAY_API_BASE?: string;
  /** Signs the sandbox provider's events; a fixed local default when unset. */
  SANDBOX_WEBHOOK_SECRET?: string;
  /** The service's public origin (https://api.example.com), for checkout and return pages; default: the request's. */
  PUBLIC_BASE_URL?: string;
  /** Webhook deliveries, one message per delivery (src/jobs/webhook-deliveries.ts). */
  WEBHOOKS: Queue<WebhookDeliveryMessage>;
  /** DNS-over-HTTPS JSON resolver for domain verification and the outbound guard. */
  DOH_RESOLVER_URL?: string;
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
      STRIPE_SECRET_KEY?: string;
      STRIPE_WEBHOOK_SECRET?: string;
      STRIPE_API_BASE?: string;
      FEDAPAY_SECRET_KEY?: string;
      FEDAPAY_WEBHOOK_SECRET?: string;
      FEDAPAY_API_BASE?: string;
      SANDBOX_WEBHOOK_SECRET?: string;
      PUBLIC_BASE_URL?: string;
      WEBHOOKS: Queue<WebhookDeliveryMessage>;
      DOH_RESOLVER_URL?: string;
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
