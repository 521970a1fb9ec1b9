// `npm run dev`: apply the local D1 migrations, seed the demo data, start `wrangler dev` on the
// dev Worker (scripts/dev-worker.ts: the production Worker plus /__dev/demo-queue, with the
// bindings of wrangler.toml), create the demo queue under its documented id once it answers
// (by the API's own createQueue, room included), and print how to use it. Arguments after `--` go to wrangler (e.g. `npm run dev -- --port 9000`).
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DEMO, ensureDemoDesks, ensureDemoQueue, seedSql } from "./seed.mjs";
import { startCronTicker } from "./cron-ticker.mjs";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const wrangler = path.join(root, "node_modules", ".bin", "wrangler");
const env = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" };

function run(args, what) {
  const result = spawnSync(wrangler, args, { cwd: root, env, encoding: "utf8" });
  if (result.status !== 0) {
    process.stderr.write(result.stdout + result.stderr);
    console.error(`npm run dev: ${what} failed`);
    process.exit(result.status ?? 1);
  }
}

spawnSync(process.execPath, [path.join(root, "scripts", "copy-assets.mjs")], { stdio: "inherit" });
run(["d1", "migrations", "apply", "DB", "--local"], "applying the D1 migrations");
mkdirSync(path.join(root, ".wrangler"), { recursive: true });
const seedFile = path.join(root, ".wrangler", "seed.sql");
writeFileSync(seedFile, seedSql());
run(["d1", "execute", "DB", "--local", "--file", seedFile], "seeding the demo data");

const args = process.argv.slice(2);
const portIndex = args.indexOf("--port");
const port = portIndex >= 0 ? args[portIndex + 1] : "8787";
const ipIndex = args.indexOf("--ip");
const ip = ipIndex >= 0 ? args[ipIndex + 1] : "127.0.0.1";
const base = `http://${ip}:${port}`;

const devArgs = [
  "dev",
  path.join("scripts", "dev-worker.ts"),
  "--test-scheduled",
  "--var",
  "ENVIRONMENT:development",
  "--ip",
  ip,
  "--port",
  port,
  ...args.filter((_, i) => ![portIndex, portIndex + 1, ipIndex, ipIndex + 1].includes(i)),
];
const child = spawn(wrangler, devArgs, { cwd: root, env: { ...process.env, WRANGLER_SEND_METRICS: "false" }, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => process.exit(code ?? 0));

/** Waits for wrangler dev to answer, then creates the demo queue (once) and prints the demo. */
async function announce() {
  // A loaded machine starts wrangler slowly: the browser run passes its own wait (BROWSER_SERVICE_START_MS).
  const waitMs = Number(process.env.BROWSER_SERVICE_START_MS) || 120_000;
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (child.exitCode !== null) return;
    try {
      if ((await fetch(`${base}/v1/openapi.json`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      return console.error(`npm run dev: wrangler dev did not answer within ${waitMs / 1000} s; the demo queue was not created`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const queue = await ensureDemoQueue(base);
  console.log(`
Demo data is ready (local D1, .wrangler/state).
  Organization  ${DEMO.organization.name}  ${DEMO.organization.id}
  Plan          pro, paid through the sandbox provider (docs/billing.md)
  Owner         ${DEMO.owner.email} / ${DEMO.owner.password}
  Operator      ${DEMO.operator.email} / ${DEMO.operator.password}
  API key       ${DEMO.apiKey.value}  (permission: admin)
  Location      ${DEMO.location.name}  ${DEMO.location.id}
  Service       ${DEMO.service.name} (${DEMO.service.serviceTypeId})  ${DEMO.service.id}
  Queue         ${queue.name}, letter ${queue.letter}  ${queue.id}
API:  ${base}/v1   Reference: ${base}/v1/docs   OpenAPI: ${base}/v1/openapi.json
`);
  // The pages (docs/pages.md): the operator signs in at the console, a walk-in takes a ticket at the kiosk.
  const desks = await ensureDemoDesks(base);
  console.log(`Start here: ${base}/ lists the pages and the demo's sign-ins (development only).`);
  console.log(`Pages (${desks.map((d) => d.name).join(", ")} at ${DEMO.location.name}):
  Console  ${base}/console   (${DEMO.operator.email} / ${DEMO.operator.password})
  Floor    ${base}/console/floor   (${DEMO.owner.email})
  Kiosk    ${base}/kiosk?location=${DEMO.location.id}&key=${DEMO.widgetKey.value}
`);
  // The board is shown on a TV: it gets the widget key (publishable), never the admin key; one
  // board per branch (location=): its queues, its name and its desks only (docs/pages.md).
  const board = `${base}/v1/widget/board?organization=${DEMO.organization.id}&location=${DEMO.location.id}&key=${DEMO.widgetKey.value}`;
  console.log(`Display board of ${DEMO.location.name} (widget key ${DEMO.widgetKey.value}):
  ${board}&language=fr
  ${board}&language=en&layout=desks
`);
}

announce().catch((err) => console.error(`npm run dev: ${err.message}`));
// wrangler dev does not fire the cron trigger: fire the scheduled handler every minute ourselves.
const stopCron = startCronTicker(base);
child.on("exit", stopCron);
