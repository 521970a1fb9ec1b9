import type { DomainEventMessage } from "./domain/events";
import type { WebhookDeliveryMessage } from "./domain/webhooks";
import type { DeliveryMessage } from "./domain/deliveries";

// The Worker's bindings are typed by the platform: `npm run types` (wrangler types) writes
// worker-configuration.d.ts from wrangler.toml into the global `Cloudflare.Env`. This module
// is what the code imports (`import type { Env } from "./env"`): the generated bindings, with
// the queues' message types, which wrangler.toml cannot say.
//
// Secrets and optional vars (not in wrangler.toml) are declared below, as optional strings,
// in the global interface, so `env` from cloudflare:workers and cloudflare:test has them too.
// Each is listed in .dev.vars.example; none is needed locally (every provider has a stand-in).

declare global {
  namespace Cloudflare {
    interface Env {
      /**
       * Signs session tokens, API keys and ticket tokens (src/lib/credentials.ts). Required in
       * production (scripts/check-deploy.mjs); `npm run dev` and the tests use a public fixed value.
       */
      TOKEN_SECRET?: string;
      /** The secret before the last rotation: what it signed stays valid while this is set. */
      TOKEN_SECRET_PREVIOUS?: string;
      /**
       * AES-256-GCM key (32 bytes, base64) sealing the secrets D1 keeps, webhook signing secrets
       * (src/lib/secret-box.ts, docs/security.md). Required in production; SECRETS_KEY_ID names it
       * (default k1). After a rotation the old key stays readable as SECRETS_KEY_PREVIOUS(_ID).
       */
      SECRETS_KEY?: string;
      SECRETS_KEY_ID?: string;
      SECRETS_KEY_PREVIOUS?: string;
      SECRETS_KEY_PREVIOUS_ID?: string;
      /**
       * HMAC key of the audit chain and its checkpoints (src/lib/audit-key.ts, docs/security.md):
       * D1 never holds it. Required in production; AUDIT_KEY_ID names it (default k1); after a
       * rotation the old key stays usable for verification as AUDIT_KEY_PREVIOUS(_ID).
       */
      AUDIT_KEY?: string;
      AUDIT_KEY_ID?: string;
      AUDIT_KEY_PREVIOUS?: string;
      AUDIT_KEY_PREVIOUS_ID?: string;
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
      /** DNS-over-HTTPS JSON resolver for domain verification and the outbound guard. */
      DOH_RESOLVER_URL?: string;
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
      /**
       * WhatsApp Cloud API (docs/notifications.md): a system user's access token, Meta's origin
       * (a stand-in's in tests), the app secret signing inbound webhooks and the token of the
       * subscription challenge. Without the access token the outbox records WhatsApp messages.
       */
      WHATSAPP_TOKEN?: string;
      WHATSAPP_API_BASE_URL?: string;
      WHATSAPP_APP_SECRET?: string;
      WHATSAPP_VERIFY_TOKEN?: string;
      /**
       * Inbound limits per fixed 10-minute window (docs/conversations.md): texts, WhatsApp messages
       * and USSD screens per sending number (default 20) and per organization (default 1200).
       */
      INBOUND_LIMIT_PER_NUMBER?: string;
      INBOUND_LIMIT_PER_ORGANIZATION?: string;
      VAPID_PUBLIC_KEY?: string;
      VAPID_PRIVATE_KEY?: string;
      VAPID_SUBJECT?: string;
      /** The IPv6 prefix every per-address limit keys on (docs/limits.md); default 64. */
      IPV6_PREFIX_BITS?: string;
      /** Cloudflare Turnstile (docs/limits.md, the bot check); a stand-in's origin in tests. */
      TURNSTILE_SECRET_KEY?: string;
      TURNSTILE_BASE_URL?: string;
    }
  }
}

export interface Env extends Cloudflare.Env {
  EVENTS: Queue<DomainEventMessage>;
  /** Webhook deliveries, one message per delivery (src/jobs/webhook-deliveries.ts). */
  WEBHOOKS: Queue<WebhookDeliveryMessage>;
  /** Per-delivery retries of push/SMS/web push (src/jobs/notifications-delivery.ts). */
  NOTIFICATIONS: Queue<DeliveryMessage>;
}
