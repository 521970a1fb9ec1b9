// The billing area: plans, subscriptions, checkouts, usage and the API-call quota.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { apiCallQuota } from "./api-quota";
export { fallToStarter, type SubscriptionRow } from "./billing";
export { receiveProviderEvent } from "./billing-events";
export { default as billingWebhookRoutes } from "./billing-webhooks.routes";
export { default as billingRoutes } from "./billing.routes";
