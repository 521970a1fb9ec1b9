// The conversations area: inbound SMS and USSD, and ticket messages.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { default as inboundRoutes } from "./inbound.routes";
export { default as ticketMessageRoutes } from "./ticket-messages.routes";
export { default as ussdRoutes } from "./ussd.routes";
export { purgeInboundThreads } from "./inbound-threads";
export { default as whatsappInboundRoutes } from "./whatsapp.routes";
