// The conversations area: inbound SMS and ticket messages.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { default as inboundRoutes } from "./inbound.routes";
export { default as ticketMessageRoutes } from "./ticket-messages.routes";
export { purgeInboundThreads } from "./inbound-threads";
