// The webhooks area: webhook subscriptions, the organization's event stream, publishing domain events.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { announceEvents, recordEvents } from "./event-stream";
export { EventHub, setStreamLogin } from "./event-hub";
export { default as eventRoutes } from "./events.routes";
export { type DeliveryRow, fanOutEvents, loopbackReceivers, type WebhookRow } from "./webhooks";
export { default as webhookRoutes } from "./webhooks.routes";
