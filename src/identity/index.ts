// The identity area: accounts, sessions, organizations, members, invitations, API keys, domain verification.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { default as apiKeyRoutes } from "./api-keys.routes";
export { default as authRoutes } from "./auth.routes";
export { default as invitationRoutes } from "./invitations.routes";
export { trackApiKeyUse } from "./key-usage";
export { default as memberRoutes } from "./members.routes";
export { default as organizationRoutes } from "./organizations.routes";
export { default as ssoRoutes } from "./sso.routes";
export { purgeExpiredSignIns } from "./sso";
export { recheckDomains } from "./verification";
export { default as verificationRoutes } from "./verification.routes";
