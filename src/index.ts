import { createApp } from "./app";
import type { DomainEventMessage } from "./domain/events";
import type { WebhookDeliveryMessage } from "./domain/webhooks";
import type { Env } from "./env";
import { consumeEvents } from "./jobs/events-consumer";
import { runSweeps } from "./jobs/sweeps";
import { consumeWebhookDeliveries, WEBHOOKS_QUEUE } from "./jobs/webhook-deliveries";

export { QueueRoom } from "./queue-room/queue-room";
export { RateLimiter } from "./rate-limiter/rate-limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: (batch, env, _ctx) =>
    batch.queue === WEBHOOKS_QUEUE
      ? consumeWebhookDeliveries(batch as MessageBatch<WebhookDeliveryMessage>, env)
      : consumeEvents(batch as MessageBatch<DomainEventMessage>, env),
  scheduled: (controller, env, _ctx) => runSweeps(env, controller.scheduledTime),
} satisfies ExportedHandler<Env, DomainEventMessage | WebhookDeliveryMessage>;
