import { env } from "cloudflare:test";
import { afterEach, vi } from "vitest";
import { testClock } from "./clock";

// Each test file starts with an empty D1 (storage is per file): the whole schema goes in as one
// batch, a single round trip and transaction, rather than applyD1Migrations' table check, read
// and one batch per migration (30 round trips: 0.6-1.9 s a file on the loaded 2-core machine,
// 0.3 s as one batch). The d1_migrations rows are written as wrangler would.
//
// The unit files share one runtime (vitest.config.ts, `isolate: false`): the first of them writes
// the schema and the next find it there. They test pure functions and write nothing. (The pool's
// `reset()` did not reliably empty D1 between files: twice in 16 files a table outlived it.)
const schema = await env.DB.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'd1_migrations'").first();
if (schema === null)
  await env.DB.batch([
    env.DB.prepare(
      "CREATE TABLE d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)",
    ),
    ...env.TEST_MIGRATIONS.flatMap((m) => m.queries.map((q) => env.DB.prepare(q))),
    ...env.TEST_MIGRATIONS.map((m) => env.DB.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(m.name)),
  ]);

afterEach(() => {
  testClock.reset();
  // A spy left in place outlives its test: a fake Internet installed by one test answered (or
  // refused) every later test's outbound calls, and deliveries to its unanswerable hosts kept
  // retrying behind them. A test that wants a spy for a whole file installs it in beforeEach.
  vi.restoreAllMocks();
});
