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
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    }
  }
}
