// The api-reference area: the API document, its reference page and the error-code catalogue.
// The only file of the area that app.ts, index.ts and jobs/ import (docs/architecture.md).
export { apiDocument, mountDocs } from "./docs.routes";
export { default as errorCodeRoutes } from "./errors.routes";
