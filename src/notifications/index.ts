// The notifications area: in-app, push, SMS and web-push notifications; the SMS allowance and opt-outs.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export {
  type Channel,
  deliver,
  type Delivery,
  fellBack,
  smsFallbackOf,
  WHATSAPP_FALLBACK,
  type DeliveryMessage,
  type DeliveryReport,
  outcomeStatements,
  retryDelaySeconds,
  sendOne,
  type Target,
} from "./notification-delivery";
export { default as notificationRoutes } from "./notifications.routes";
export { barePhone, optedOutAmong } from "./opt-outs";
export { default as smsPolicyRoutes } from "./sms-policy.routes";
export {
  listMessageTemplates,
  previewMessageTemplate,
  resetMessageTemplate,
  saveMessageTemplate,
  templateOverrides,
  businessText,
} from "./message-templates";
export { default as messageTemplateRoutes } from "./message-templates.routes";
export { whatsappData, type WhatsappTemplateKind } from "./whatsapp";
export { default as whatsappRoutes } from "./whatsapp.routes";
