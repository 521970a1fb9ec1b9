// The audit area: the sealed audit log.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { sweepAuditLog } from "./audit";
export { sealAuditAfterWrites } from "./audit-sealing";
export { recordEveryChange } from "./audit-changes";
export { default as auditRoutes } from "./audit.routes";
