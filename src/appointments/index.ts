// The appointments area: bookable slots.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { default as appointmentRoutes } from "./appointments.routes";
export { default as checkInRoutes } from "./check-in.routes";
export { sweepMissedAppointments } from "./check-in";
