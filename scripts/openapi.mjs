// Writes the OpenAPI document the Worker serves at /v1/openapi.json to a file, without workerd:
// the app is bundled for Node (the workerd-only module is a shim; the widget script is text)
// and asked for the document with the same stand-in bindings as test/node/openapi.test.ts.
// Usage: node scripts/openapi.mjs [out]   (default clients/typescript/openapi.json)
import { build } from "esbuild";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const out = path.resolve(root, process.argv[2] ?? "clients/typescript/openapi.json");
const bundle = path.join(root, "node_modules", ".cache", "openapi-app.mjs");
mkdirSync(path.dirname(bundle), { recursive: true });

// The API's `language` enums are the catalogue's codes: its lists written from the language files present first.
(await import("./build-languages.mjs")).buildLanguages();

await build({
  entryPoints: [path.join(root, "src", "app.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  outfile: bundle,
  logLevel: "error",
  alias: { "cloudflare:workers": path.join(root, "test", "node", "cloudflare-workers-shim.ts") },
  loader: { ".js": "js" },
  plugins: [
    {
      name: "widget-script-as-text",
      setup(b) {
        b.onLoad({ filter: /widget[\\/](embed|embed\.min|board)\.js$/ }, async (args) => ({
          contents: (await import("node:fs")).readFileSync(args.path, "utf8"),
          loader: "text",
        }));
      },
    },
  ],
});

const { createApp } = await import(pathToFileURL(bundle).href);
const limiter = {
  hit: async () => ({ allowed: true, retryAfterSeconds: 0, windows: [{ name: "minute", limit: 120, remaining: 119, resetAt: 0 }] }),
};
// The D1 sessions middleware (src/http/d1-sessions.ts) opens a session on every request.
const DB = { withSession: () => ({ getBookmark: () => null }) };
const env = { RATE_LIMITER: { idFromName: () => "ip", get: () => limiter }, DB, ENVIRONMENT: "production" };
const res = await createApp().request("http://127.0.0.1:8787/v1/openapi.json", {}, env);
if (res.status !== 200) throw new Error(`openapi.json answered ${res.status}: ${await res.text()}`);
writeFileSync(out, JSON.stringify(await res.json(), null, 2) + "\n");
rmSync(bundle, { force: true });
console.log(`wrote ${path.relative(root, out)}`);
