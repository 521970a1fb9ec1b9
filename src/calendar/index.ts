// The calendar area: opening hours, closures, operator availability.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { default as calendarRoutes } from "./calendar.routes";
