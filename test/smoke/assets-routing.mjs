// Proof that API requests skip the static-assets router while the reference script is still
// served as a file (`run_worker_first` in wrangler.toml; the vitest pool has no assets router):
//   node test/smoke/assets-routing.mjs
// Runs the bench's Worker (test/bench/wrangler.toml mirrors the production [assets] section).
import { readFileSync } from "node:fs";
import path from "node:path";
import { startWorker } from "../bench/server.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");
for (const file of ["wrangler.toml", "test/bench/wrangler.toml"]) {
  const toml = readFileSync(path.join(root, file), "utf8");
  if (!/run_worker_first = \["\/v1\/\*", "!\/v1\/docs\/\*"/.test(toml))
    throw new Error(`${file}: run_worker_first is not ["/v1/*", "!/v1/docs/*", …]`);
}

const worker = await startWorker();
const failures = [];
const expect = (what, ok) => (ok ? console.log(`ok  ${what}`) : failures.push(what));
try {
  const script = await fetch(`${worker.base}/v1/docs/scalar.js`);
  const text = await script.text();
  expect(
    "GET /v1/docs/scalar.js is the static file",
    script.status === 200 && /javascript/.test(script.headers.get("content-type") ?? "") && text.length > 1000,
  );
  const docs = await fetch(`${worker.base}/v1/docs`);
  expect("GET /v1/docs is the Worker's page naming the script", docs.status === 200 && (await docs.text()).includes("/v1/docs/scalar.js"));
  const missing = await fetch(`${worker.base}/v1/no-such-route`);
  const body = await missing.json();
  expect("GET /v1/no-such-route is the Worker's JSON 404", missing.status === 404 && body.error?.code === "NOT_FOUND");
  const empty = await fetch(`${worker.base}/__bench/empty`);
  expect("GET /__bench/empty is the Worker's", empty.status === 200);
} finally {
  worker.stop();
}
if (failures.length > 0) {
  console.error(`FAILED:\n${failures.join("\n")}`);
  process.exit(1);
}
