// The privacy area: a person's data on request, export and erasure (docs/personal-data.md).
// The only file of the area that app.ts imports (docs/architecture.md).
export { default as dataSubjectRoutes } from "./data-subjects.routes";
