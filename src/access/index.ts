// Access: the resource guard (issue 36). A guard per resource with an id in its path, mounted
// once by src/app.ts, decides who may reach the resource before any handler runs; routers read
// what it resolved with `guarded`, and ids sent in a body go through `authorizeResources`.
export { declareOpenOperations, guard, type ResourceKind } from "./guard";
