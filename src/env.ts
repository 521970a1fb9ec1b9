import type { QueueRoom } from "./queue-room/queue-room";
import type { RateLimiter } from "./rate-limiter/rate-limiter";
import type { DomainEventMessage } from "./domain/events";
import type { WebhookDeliveryMessage } from "./domain/webhooks";

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
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    }
  }
}

/** The benchmark mode: bench-only routes answer and rate limits step aside (see npm run bench). */
export function benchMode(env: Pick<Env, "BENCH">): boolean {
  return env.BENCH === "1";
}
