import path from "node:path";
import { defineConfig } from "vitest/config";

// Tests that need Node rather than workerd: the OpenAPI schema validator compiles JSON
// schemas with `new Function` and reads its schemas from disk, which workerd forbids.
export default defineConfig({
  resolve: {
    alias: { "cloudflare:workers": path.join(import.meta.dirname, "test/node/cloudflare-workers-shim.ts") },
  },
  test: {
    include: ["test/node/**/*.test.ts"],
    environment: "node",
  },
});
