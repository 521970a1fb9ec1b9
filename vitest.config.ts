import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { readFile } from "node:fs/promises";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";

// stripe and standardwebhooks publish source maps that name files they do not publish, and
// Vite warns once per file (~200 lines a run) when it reads them. Loading those packages as
// plain code skips their source maps; nothing of ours is affected.
const BROKEN_SOURCE_MAPS = ["/node_modules/stripe/", "/node_modules/standardwebhooks/"];
const withoutBrokenSourceMaps: Plugin = {
  name: "without-broken-source-maps",
  enforce: "pre",
  load(id) {
    return BROKEN_SOURCE_MAPS.some((dir) => id.includes(dir)) ? readFile(id.split("?")[0]!, "utf8") : null;
  },
};

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  return {
    plugins: [
      withoutBrokenSourceMaps,
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // TOKEN_SECRET: the public development value (the demo key of scripts/seed.mjs is signed
          // with it); TOKEN_SECRET_PREVIOUS lets a test prove that a rotated-out secret still verifies.
          bindings: {
            TEST_MIGRATIONS: migrations,
            ENVIRONMENT: "test",
            TOKEN_SECRET: "development-token-secret-not-for-production",
            TOKEN_SECRET_PREVIOUS: "test-token-secret-before-rotation",
          },
        },
      }),
    ],
    test: {
      include: ["test/unit/**/*.test.ts", "test/integration/**/*.test.ts"],
      setupFiles: ["./test/helpers/apply-migrations.ts"],
      // The outbox stand-in prints each message for `npm run dev`; tests read the delivery rows.
      onConsoleLog: (log: string) => !log.startsWith('{"notification":"outbox"'),
      // Each file's time, the ten slowest tests, and a budget per file (test/budgets.json).
      reporters: ["default", "./test/reporter/timing.ts"],
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  };
});
