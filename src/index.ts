import { createApp } from "./app";
import type { Env } from "./env";

export { QueueRoom } from "./queue-room/queue-room";
export { RateLimiter } from "./rate-limiter/rate-limiter";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
