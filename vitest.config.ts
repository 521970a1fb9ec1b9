import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { readdir, readFile } from "node:fs/promises";
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

// Every integration file gets a runtime of its own (storage per file). `QUEUE_SHARED_RUNTIMES=1
// npm test` makes them share runtimes instead (`isolate: false`, issue 37): a runtime's start
// and the Worker's module graph are then paid once per worker, not once per file (~4 s a file on
// the 2-core machine), and test/helpers/between-files.ts calls the pool's `reset()` after each
// file (every Durable Object deleted, D1 included: the next file starts from empty storage).
// It is off because it is slower: a shared file's own time grows with the number of files its
// runtime ran before it, even with the reset (session 15's CI, against the same files isolated:
// 1.2x for the first 15 files, 2.3-3x after), and the whole run took longer than isolated. The
// cost is in the runtime itself, not in storage (its memory grew by 200 MB in a minute): find
// what the isolate keeps between files before turning it on (docs/development.md).
const SHARED_RUNTIMES = process.env.QUEUE_SHARED_RUNTIMES === "1";

export default defineConfig(async () => {
  // The Worker serves embed.js minified (src/widget/embed.min.js): written from the current source before every run.
  await (await import("./scripts/build-embed.mjs")).buildEmbed();
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
      // (`isolate: false`); the integration files do when SHARED_RUNTIMES (above; docs/development.md).
      projects: [
        { extends: true as const, test: { name: "unit", include: ["test/unit/**/*.test.ts"], isolate: false } },
        {
          extends: true as const,
          test: {
            name: "integration",
            include: ["test/integration/**/*.test.ts"],
            isolate: !SHARED_RUNTIMES,
            setupFiles: SHARED_RUNTIMES ? ["./test/helpers/between-files.ts"] : [],
          },
        },
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
