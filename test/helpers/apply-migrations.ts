import { applyD1Migrations, env } from "cloudflare:test";
import { afterEach, vi } from "vitest";
import { testClock } from "./clock";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

afterEach(() => {
  testClock.reset();
  // A spy left in place outlives its test: a fake Internet installed by one test answered (or
  // refused) every later test's outbound calls, and deliveries to its unanswerable hosts kept
  // retrying behind them. A test that wants a spy for a whole file installs it in beforeEach.
  vi.restoreAllMocks();
});
