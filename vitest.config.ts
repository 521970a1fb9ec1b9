import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { readdir, readFile } from "node:fs/promises";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

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

// Runtimes shared by a bounded group of integration files (issue 37). A runtime's start and the
// Worker's module graph cost ~3-4 s a file on the 2-core machine; sharing one runtime saves that,
// but a shared file's own time grows with the number of files its runtime ran before it (1.2x for
// the first ~8, 2.4-3x after 15: docs/development.md). So the files are cut into groups of
// RUNTIME_GROUP_SIZE, each group a vitest project with `isolate: false`, and the sequencer below
// runs a group's files back to back: vitest reuses a runtime only for the next file of the same
// project, so each of the two workers' runtimes sees about half a group and is then disposed.
// test/helpers/between-files.ts calls the pool's `reset()` after each file (every Durable Object
// deleted, D1 included): each file still starts from empty storage. The files with a budget of
// their own (test/budgets.json: the long ones, where a 1.2x growth costs more than a start)
// keep a runtime each. `QUEUE_RUNTIME_GROUP_SIZE=1` gives every file its own runtime.
const RUNTIME_GROUP_SIZE = Math.max(1, Number(process.env.QUEUE_RUNTIME_GROUP_SIZE ?? 16));

// Files that count every D1 call or statement at the shared binding (`meter()` of
// test/helpers/meter.ts, or a spy on env.DB that judges all it saw) keep a runtime of their own:
// in a shared one, an earlier file's background work (a webhook retry, a room's drain, the EVENTS
// consumer) lands in their count (seen in CI: 6 drains counted for a burst that made 3).
const COUNTS_AT_THE_BINDING = [
  "test/integration/hot-path-43.test.ts",
  "test/integration/previous-call.test.ts",
  "test/integration/query-plans.test.ts",
  "test/integration/queue-row-off-path.test.ts",
  "test/integration/write-path-cost.test.ts",
];

async function integrationProjects(root: string) {
  const budgets = JSON.parse(await readFile(path.join(root, "test/budgets.json"), "utf8")) as Record<string, unknown>;
  const files = (await readdir(path.join(root, "test/integration"), { recursive: true }))
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/integration/${f.split(path.sep).join("/")}`)
    .sort();
  const alone = files.filter((f) => f in budgets || COUNTS_AT_THE_BINDING.includes(f) || RUNTIME_GROUP_SIZE === 1);
  const grouped = files.filter((f) => !alone.includes(f));
  const projects = [];
  if (alone.length > 0) projects.push({ extends: true as const, test: { name: "integration-isolated", include: alone, isolate: true } });
  for (let i = 0; i < grouped.length; i += RUNTIME_GROUP_SIZE)
    projects.push({
      extends: true as const,
      test: {
        name: `integration-${i / RUNTIME_GROUP_SIZE + 1}`,
        include: grouped.slice(i, i + RUNTIME_GROUP_SIZE),
        isolate: false,
        setupFiles: ["./test/helpers/between-files.ts"],
      },
    });
  return projects;
}

/** A group's files back to back (see above), groups in their order, the longest file of a group first. */
class GroupedSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const order = (name: string) => (name === "integration-isolated" ? -1 : name === "unit" ? 1e6 : Number(name.split("-")[1] ?? 0));
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => order(a.spec.project.name) - order(b.spec.project.name) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}

export default defineConfig(async () => {
  // The Worker serves embed.js minified (src/widget/embed.min.js): written from the current source before every run.
  await (await import("./scripts/build-embed.mjs")).buildEmbed();
  // The catalogue's lists, from the language files present (scripts/build-languages.mjs): a language just added is tested.
  (await import("./scripts/build-languages.mjs")).buildLanguages();
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
      // A runtime's start is a workerd and the Worker's module graph loaded into it (2.5-4 s on the
      // 2-core machine). The unit files (pure functions) share runtimes and their loaded modules
      // (`isolate: false`); the integration files share them by groups (above).
      projects: [
        ...(await integrationProjects(import.meta.dirname)),
        { extends: true as const, test: { name: "unit", include: ["test/unit/**/*.test.ts"], isolate: false } },
      ],
      sequence: { sequencer: GroupedSequencer },
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
