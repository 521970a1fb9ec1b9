// The visits area: what hangs on one visitor's ticket: labels, receipts, phone verification, visitor push.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { default as feedbackRoutes } from "./feedback.routes";
export { default as labelRoutes } from "./labels.routes";
export { default as phoneVerificationRoutes } from "./phone-verification.routes";
export { default as receiptRoutes } from "./receipts.routes";
export { default as visitorPushRoutes } from "./visitor-push.routes";
