// The catalog area: locations, services, service outcomes, the location scope of a member.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { default as locationRoutes } from "./locations.routes";
export { default as serviceOutcomeRoutes } from "./service-outcomes.routes";
export { default as serviceRoutes } from "./services.routes";
