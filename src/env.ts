import type { QueueRoom } from "./queue-room/queue-room";
import type { RateLimiter } from "./rate-limiter/rate-limiter";
import type { DomainEventMessage } from "./domain/events";

export interface Env {
  DB: D1Database;
  QUEUE_ROOM: DurableObjectNamespace<QueueRoom>;
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  EVENTS: Queue<DomainEventMessage>;
  ASSETS: Fetcher;
  ENVIRONMENT: string;
  /** "1" only under `npm run bench` (`wrangler dev --var BENCH:1`); never set in wrangler.toml. */
  BENCH?: string;
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
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    }
  }
}

/** The benchmark mode: bench-only routes answer and rate limits step aside (see npm run bench). */
export function benchMode(env: Pick<Env, "BENCH">): boolean {
  return env.BENCH === "1";
}
