// Serves the API reference offline: the standalone Scalar script goes into the Worker's
// static assets (public/ is not committed; this runs on every install and before dev).
import { copyFileSync, mkdirSync } from "node:fs";
import path from "node:path";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const pkg = path.join(root, "node_modules", "@scalar", "api-reference");
const target = path.join(root, "public", "v1", "docs");
mkdirSync(target, { recursive: true });
copyFileSync(path.join(pkg, "dist", "browser", "standalone.js"), path.join(target, "scalar.js"));
