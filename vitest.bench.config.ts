import { defineConfig } from "vitest/config";
import base from "./vitest.config";

// Measurements that print figures for docs/benchmarks.md (test/bench/*.test.ts), run inside
// workerd like the integration tests but outside `npm test`: `npm run bench:write-path`.
export default defineConfig(async (configEnv) => {
  const config = await base(configEnv);
  return { ...config, test: { ...config.test, include: ["test/bench/**/*.test.ts"] } };
});
