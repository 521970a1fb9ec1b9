import { createApp } from "./app";
import type { DomainEventMessage } from "./domain/events";
import type { Env } from "./env";
import { consumeEvents } from "./jobs/events-consumer";
import { runSweeps } from "./jobs/sweeps";

export { QueueRoom } from "./queue-room/queue-room";
export { RateLimiter } from "./rate-limiter/rate-limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: (batch, env, _ctx) => consumeEvents(batch, env),
  scheduled: (controller, env, _ctx) => runSweeps(env, controller.scheduledTime),
} satisfies ExportedHandler<Env, DomainEventMessage>;
