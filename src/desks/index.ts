// The desks area: desks and the floor view.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { default as deskRoutes } from "./desks.routes";
export { default as floorRoutes } from "./floor.routes";
export { default as deskConsoleRoutes } from "./desk-console.routes";
