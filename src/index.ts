import { createApp } from "./app";
import type { DomainEventMessage } from "./domain/events";
import type { WebhookDeliveryMessage } from "./domain/webhooks";
import type { Env } from "./env";
import { consumeDeadEvents, consumeEvents, EVENTS_DLQ } from "./jobs/events-consumer";
import {
  consumeDeadDeliveries,
  consumeDeliveries,
  NOTIFICATIONS_DLQ,
  NOTIFICATIONS_QUEUE,
  type DeliveryMessage,
} from "./jobs/notifications-delivery";
import { runSweeps } from "./jobs/sweeps";
import { consumeWebhookDeliveries, WEBHOOKS_QUEUE } from "./jobs/webhook-deliveries";
import { setStreamLogin } from "./webhooks";
import { depsOf } from "./http/deps";

export { OrganizationLedger, QueueRoom, SocketHub } from "./room-host";
export { RateLimiter } from "./rate-limiter/rate-limiter";
export { EventHub } from "./webhooks";
export { Simulation } from "./test-mode";

const app = createApp();

// The event hub logs in a socket opened without a credential by asking the app itself (docs/event-socket.md).
setStreamLogin(async (request, env, waitUntil) =>
  app.fetch(request, env, { waitUntil, passThroughOnException() {}, props: {} } as unknown as ExecutionContext),
);

export default {
  fetch: app.fetch,
  queue: (batch, env, _ctx) => {
    if (batch.queue === WEBHOOKS_QUEUE) return consumeWebhookDeliveries(batch as MessageBatch<WebhookDeliveryMessage>, env);
    if (batch.queue === NOTIFICATIONS_QUEUE) return consumeDeliveries(batch as MessageBatch<DeliveryMessage>, env);
    if (batch.queue === NOTIFICATIONS_DLQ) return consumeDeadDeliveries(batch as MessageBatch<DeliveryMessage>, env);
    if (batch.queue === EVENTS_DLQ) return consumeDeadEvents(batch as MessageBatch<DomainEventMessage>, env);
    return consumeEvents(batch as MessageBatch<DomainEventMessage>, env);
  },
  scheduled: (controller, env, _ctx) => runSweeps(depsOf(env), controller.scheduledTime),
} satisfies ExportedHandler<Env, DomainEventMessage | DeliveryMessage | WebhookDeliveryMessage>;
