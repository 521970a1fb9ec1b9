// The analytics area: dashboard, analytics and exports.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { default as analyticsExportRoutes } from "./analytics-export.routes";
export { default as analyticsRoutes } from "./analytics.routes";
export { default as dashboardRoutes } from "./dashboard.routes";
