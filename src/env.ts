import type { DomainEventMessage } from "./domain/events";

// The Worker's bindings are typed by the platform: `npm run types` (wrangler types) writes
// worker-configuration.d.ts from wrangler.toml into the global `Cloudflare.Env`. This module
// is what the code imports (`import type { Env } from "./env"`): the generated bindings, with
// the events queue's message type, which wrangler.toml cannot say.
//
// Secrets and optional vars (not in wrangler.toml) are declared below, as optional strings,
// in the global interface, so `env` from cloudflare:workers and cloudflare:test has them too.

declare global {
  namespace Cloudflare {
    interface Env {
      // Secrets go here, e.g. `STRIPE_SECRET_KEY?: string;` (and in .dev.vars.example).
    }
  }
}

export interface Env extends Cloudflare.Env {
  EVENTS: Queue<DomainEventMessage>;
}
