// What the calendar area's routers take from D1: a router reaches the database only through its own
// area's repository (docs/architecture.md). Each name here is a debt: the route should call a service.
export { database } from "../db/client";
