// Bindings that only the test Worker has (vitest.config.ts `miniflare.bindings`).
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
  }
}
