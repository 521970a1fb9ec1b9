import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { readdir, readFile } from "node:fs/promises";
import type { Plugin } from "vite";
import { configDefaults, defineConfig } from "vitest/config";

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

// Every test file runs in a workerd of its own (storage is per file), so each file evaluates the
// Worker's whole module graph again: ~850 modules, 600 of them from node_modules (stripe 217,
// drizzle-orm 111, zod 95, libphonenumber-js 93, jose 46, hono 32). Pre-bundling the
// dependencies (Vite's dependency optimizer, run once per `vitest run` and cached in
// node_modules/.vite) loads each as a few modules instead. Every specifier of a runtime
// dependency that src/ or test/ imports is bundled, subpaths included: a subpath left out
// ("hono/http-exception") would load a second copy of the package beside the bundled one and
// its classes would fail `instanceof`.
// @block65/webcrypto-web-push imports node:crypto, which the optimizer cannot resolve.
const NOT_PREBUNDLED = ["@block65/webcrypto-web-push"];
// Packages that export subpaths only (no "."): their subpaths are bundled, the bare name cannot be.
const SUBPATHS_ONLY = ["@modelcontextprotocol/sdk"];

async function prebundledDependencies(root: string): Promise<string[]> {
  const pkg = JSON.parse(await readFile(path.join(root, "package.json"), "utf8"));
  const packages = Object.keys(pkg.dependencies ?? {}).filter((name) => !NOT_PREBUNDLED.includes(name));
  const specifiers = new Set<string>();
  for (const dir of ["src", "test"]) {
    for (const entry of await readdir(path.join(root, dir), { recursive: true, withFileTypes: true })) {
      // (The browser pages' folder is judged inside the repository: a checkout under a folder named "pages" is not skipped.)
      if (!entry.isFile() || !/\.tsx?$/.test(entry.name) || path.relative(root, entry.parentPath).split(path.sep).includes("pages"))
        continue;
      const text = await readFile(path.join(entry.parentPath, entry.name), "utf8");
      for (const [, spec] of text.matchAll(/(?:from|import)\s*\(?\s*"([^".][^"]*)"/g))
        if (packages.some((name) => spec === name || spec!.startsWith(`${name}/`))) specifiers.add(spec!);
    }
  }
  return [...packages.filter((name) => !SUBPATHS_ONLY.includes(name)), ...specifiers].filter((s, i, all) => all.indexOf(s) === i).sort();
}

// Sharing runtimes between integration files is OFF by default; `QUEUE_SHARED_RUNTIMES=1 npm test`
// turns it on. Session 14 ran it in two CI runs: the first passed (vitest 843 s -> 777 s), the
// second failed sms-pumping.test.ts, whose fake Twilio counts the messages it receives: work an
// earlier file left running (queued deliveries, retries, alarms) can reach a later file's fetch
// spy in the same runtime. It goes on once that background work is drained between files.
const SHARE_INTEGRATION_RUNTIMES = process.env.QUEUE_SHARED_RUNTIMES === "1";

// With it on, integration files share runtimes (`isolate: false`, issue 37): a runtime's start and
// the Worker's module graph are paid once per worker instead of once per file (~4 s a file on the
// 2-core machine, 731 s of setup in the 175-file CI run of session 13). Nothing is wiped between
// files: a shared file makes its own organizations, users and ids (fixtures.ts, `unique`) and
// asserts only on them. A file that could reach or be reached by another file's rows keeps a
// runtime of its own, listed here with what it does (found by scanning each file for cron sweeps,
// replaced bindings, counts across organizations, retention, every-object calls, ANALYZE, the
// queue consumer and a fixed address's limits). A new file would be shared unless added here.
export const ISOLATED_INTEGRATION_FILES: Record<string, string> = {
  "test/integration/analytics-backfill.test.ts": "runs a cron sweep (it walks every organization); counts rows beyond its own organization",
  "test/integration/analytics-export.test.ts":
    "runs a cron sweep (it walks every organization); retention purges or blanks every organization's old rows",
  "test/integration/analytics-kinds.test.ts": "runs a cron sweep (it walks every organization)",
  "test/integration/appointment-check-in.test.ts": "runs a cron sweep (it walks every organization)",
  "test/integration/appointment-reminders.test.ts": "runs a cron sweep (it walks every organization); replaces a binding of env",
  "test/integration/appointments-booking.test.ts": "counts rows beyond its own organization",
  "test/integration/audit-chain-keyed.test.ts": "runs a cron sweep (it walks every organization)",
  "test/integration/audit-log.test.ts":
    "runs a cron sweep (it walks every organization); counts a fixed address's limits; retention purges or blanks every organization's old rows",
  "test/integration/auth-me-data.test.ts":
    "counts rows beyond its own organization; retention purges or blanks every organization's old rows",
  "test/integration/billing-fedapay.test.ts": "runs a cron sweep (it walks every organization); replaces a binding of env",
  "test/integration/billing-lifecycle.test.ts": "runs a cron sweep (it walks every organization)",
  "test/integration/billing-stripe.test.ts": "replaces a binding of env",
  "test/integration/data-subjects.test.ts": "retention purges or blanks every organization's old rows",
  "test/integration/defer.test.ts": "replaces a binding of env",
  "test/integration/event-stream.test.ts": "counts rows beyond its own organization",
  "test/integration/eviction.test.ts": "aborts or lists every Durable Object; replaces a binding of env",
  "test/integration/feedback.test.ts": "counts a fixed address's limits; drives the queue consumer over every pending row",
  "test/integration/hot-path-43.test.ts": "replaces a binding of env",
  "test/integration/hot-path.test.ts": "counts rows beyond its own organization",
  "test/integration/idempotency.test.ts": "runs a cron sweep (it walks every organization); counts rows beyond its own organization",
  "test/integration/inbound-limits.test.ts": "counts rows beyond its own organization; counts a fixed address's limits",
  "test/integration/intake.test.ts":
    "runs a cron sweep (it walks every organization); retention purges or blanks every organization's old rows; drives the queue consumer over every pending row",
  "test/integration/integrator-frictions.test.ts": "replaces a binding of env",
  "test/integration/isolation.test.ts": "counts rows beyond its own organization",
  "test/integration/ledger-deleted-organization.test.ts": "counts rows beyond its own organization",
  "test/integration/line-counts.test.ts": "counts rows beyond its own organization",
  "test/integration/locations.test.ts": "counts rows beyond its own organization; runs ANALYZE (changes later query plans)",
  "test/integration/loopback-webhooks.test.ts": "drives the queue consumer over every pending row",
  "test/integration/notifications-consumer.test.ts": "replaces a binding of env; counts rows beyond its own organization",
  "test/integration/openapi-examples.test.ts": "replaces a binding of env",
  "test/integration/outbox-coalesce.test.ts": "aborts or lists every Durable Object; replaces a binding of env",
  "test/integration/outbox.test.ts":
    "runs a cron sweep (it walks every organization); replaces a binding of env; drives the queue consumer over every pending row",
  "test/integration/previous-call.test.ts": "runs a cron sweep (it walks every organization)",
  "test/integration/query-plans.test.ts":
    "runs a cron sweep (it walks every organization); replaces a binding of env; retention purges or blanks every organization's old rows",
  "test/integration/queue-row-off-path.test.ts": "replaces a binding of env",
  "test/integration/queues.test.ts": "runs a cron sweep (it walks every organization); replaces a binding of env",
  "test/integration/remote-join.test.ts": "runs a cron sweep (it walks every organization)",
  "test/integration/retention-anonymisation.test.ts":
    "runs a cron sweep (it walks every organization); retention purges or blanks every organization's old rows",
  "test/integration/retention-phone.test.ts":
    "runs a cron sweep (it walks every organization); retention purges or blanks every organization's old rows",
  "test/integration/retention-room.test.ts":
    "counts rows beyond its own organization; retention purges or blanks every organization's old rows; deletes rows of every organization",
  "test/integration/room-rules.test.ts": "runs a cron sweep (it walks every organization)",
  "test/integration/room-schema.test.ts": "counts rows beyond its own organization",
  "test/integration/sso.test.ts": "counts rows beyond its own organization",
  "test/integration/ticket-verbs.test.ts": "runs a cron sweep (it walks every organization); replaces a binding of env",
  "test/integration/transitions.test.ts": "runs a cron sweep (it walks every organization)",
  "test/integration/ussd.test.ts": "counts rows beyond its own organization; counts a fixed address's limits",
  "test/integration/verification.test.ts": "runs a cron sweep (it walks every organization)",
  "test/integration/visitor-push.test.ts": "counts rows beyond its own organization",
  "test/integration/webhooks.test.ts": "counts rows beyond its own organization; drives the queue consumer over every pending row",
  "test/integration/whatsapp.test.ts": "counts rows beyond its own organization; counts a fixed address's limits",
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
      setupFiles: ["./test/helpers/apply-migrations.ts"],
      // A file's fixed cost is a workerd of its own and the Worker's module graph loaded into it
      // (2.5-4 s a file on the 2-core machine). The unit files test pure functions and share
      // runtimes and their loaded modules (`isolate: false`). The integration files keep a runtime
      // each unless SHARE_INTEGRATION_RUNTIMES (above; docs/development.md, "A file's fixed cost").
      projects: [
        { extends: true as const, test: { name: "unit", include: ["test/unit/**/*.test.ts"], isolate: false } },
        ...(SHARE_INTEGRATION_RUNTIMES
          ? [
              {
                extends: true as const,
                test: {
                  name: "integration",
                  include: ["test/integration/**/*.test.ts"],
                  exclude: [...configDefaults.exclude, ...Object.keys(ISOLATED_INTEGRATION_FILES)],
                  isolate: false,
                },
              },
              { extends: true as const, test: { name: "integration-isolated", include: Object.keys(ISOLATED_INTEGRATION_FILES) } },
            ]
          : [{ extends: true as const, test: { name: "integration", include: ["test/integration/**/*.test.ts"] } }]),
      ],
      deps: { optimizer: { ssr: { enabled: true, include: await prebundledDependencies(import.meta.dirname) } } },
      // The outbox stand-in prints each message for `npm run dev`; tests read the delivery rows.
      onConsoleLog: (log: string) => !log.startsWith('{"notification":"outbox"'),
      // Each file's time, the ten slowest tests, and a budget per file (test/budgets.json).
      reporters: ["default", "./test/reporter/timing.ts"],
      // Two files at a time (vitest's default is cores - 1, one file on the 2-core CI machine):
      // a file's start is mostly waiting between Node and its workerd, so a second file fills it.
      // 12 small files: 294 s -> 190 s on the loaded machine (docs/development.md, "A file's fixed cost").
      maxWorkers: 2,
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  };
});
