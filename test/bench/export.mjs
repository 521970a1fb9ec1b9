// Memory of the CSV export (GET /v1/analytics/export.csv) while it streams up to 200,000
// tickets: starts `wrangler dev` on 127.0.0.1:8794 with a fresh local state, makes an
// organization on the pro plan with one queue through the API, writes 200,000 tickets into the
// local D1 projection (1,000 a day over 200 days), then downloads the export of 25, 50, 100 and
// 200 days (25,000 … 200,000 rows). During each download it samples, every 50 ms, the Worker
// isolate's own JS heap (V8's Runtime.getHeapUsage through wrangler's inspector: what the
// export's code holds, garbage included) and the resident memory (RSS) of the workerd process;
// each file is parsed as RFC 4180 CSV (every record has the header's 20 fields, one per ticket).
// Flat memory: the heap's peak over its level before the download does not grow with the rows.
//
//   node test/bench/export.mjs            (about a minute; not part of npm run bench)
import { spawn, spawnSync } from "node:child_process";
import WebSocket from "ws";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");
const wrangler = path.join(root, "node_modules", ".bin", "wrangler");
const env = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
const PORT = 8794;
const base = `http://127.0.0.1:${PORT}`;
const TICKETS = 200_000;
const INSPECTOR_PORT = 9235;
const SIZES_DAYS = [25, 50, 100, 200];
const PER_DAY = 1_000;
const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 1);

const dir = mkdtempSync(path.join(tmpdir(), "queue-export-bench-"));
const persist = path.join(dir, "state");

function wranglerSync(args, what) {
  const r = spawnSync(wrangler, [...args, "--local", "--persist-to", persist], { cwd: root, env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${what} failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

async function api(method, p, { token, body, headers = {} } = {}, attempt = 0) {
  let res;
  try {
    res = await fetchOnce(method, p, { token, body, headers });
  } catch (err) {
    // wrangler dev may restart its runtime once just after it first answers
    if (attempt >= 5) throw err;
    await new Promise((r) => setTimeout(r, 2000));
    return api(method, p, { token, body, headers }, attempt + 1);
  }
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

function fetchOnce(method, p, { token, body, headers }) {
  return fetch(`${base}${p}`, {
    method,
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...(body ? { "Content-Type": "application/json" } : {}),
      ...headers,
    },
    body: body ? JSON.stringify(body) : undefined,
  });
}

/** Every descendant of `pid` (ps reads /proc), with its RSS in KiB. */
function processTree(pid) {
  const ps = spawnSync("ps", ["-eo", "pid=,ppid=,rss=,comm="], { encoding: "utf8" }).stdout.trim().split("\n");
  const rows = ps.map((l) => l.trim().split(/\s+/)).map(([p, pp, rss, comm]) => ({ pid: +p, ppid: +pp, rss: +rss, comm }));
  const out = [];
  const walk = (parent) => {
    for (const r of rows.filter((x) => x.ppid === parent)) {
      out.push(r);
      walk(r.pid);
    }
  };
  walk(pid);
  return out;
}

function workerdRssKiB(wranglerPid) {
  const workerd = processTree(wranglerPid).filter((p) => p.comm.startsWith("workerd"));
  return workerd.length === 0 ? null : workerd.reduce((sum, p) => sum + p.rss, 0);
}

/** The Worker isolate's inspector (wrangler's proxy lists it at /json): Runtime.getHeapUsage on demand. */
async function openInspector() {
  const targets = await (await fetch(`http://127.0.0.1:${INSPECTOR_PORT}/json`)).json();
  const target = targets.find((t) => t.webSocketDebuggerUrl) ?? null;
  if (!target) throw new Error(`no inspector target: ${JSON.stringify(targets)}`);
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let id = 0;
  const pending = new Map();
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data));
    if (msg.id !== undefined && pending.has(msg.id)) {
      pending.get(msg.id)(msg);
      pending.delete(msg.id);
    }
  });
  // A method the runtime does not answer would hang the probe: each call gives up after 2 s.
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      const n = ++id;
      const timer = setTimeout(() => {
        pending.delete(n);
        resolve({ error: "timeout" });
      }, 2000);
      pending.set(n, (msg) => {
        clearTimeout(timer);
        resolve(msg);
      });
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  await send("Runtime.enable");
  const probe = await send("Runtime.getHeapUsage");
  console.error(`inspector ${target.webSocketDebuggerUrl}: Runtime.getHeapUsage answered ${JSON.stringify(probe).slice(0, 200)}`);
  return {
    /** Used heap, bytes (null when the runtime does not answer). */
    async heapUsed() {
      const r = await send("Runtime.getHeapUsage");
      return r.result?.usedSize ?? null;
    },
    async collectGarbage() {
      await send("HeapProfiler.collectGarbage");
    },
    close: () => ws.close(),
  };
}

/** RFC 4180: the records of a CSV text (quoted fields with doubled quotes, CRLF ends). */
function parseCsv(text) {
  const records = [];
  let field = "";
  let record = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') ((field += '"'), i++);
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === "") quoted = true;
    else if (c === ",") (record.push(field), (field = ""));
    else if (c === "\r" && text[i + 1] === "\n") {
      record.push(field);
      records.push(record);
      ((field = ""), (record = []), i++);
    } else field += c;
  }
  if (field !== "" || record.length > 0) (record.push(field), records.push(record));
  return records;
}

async function measure(wranglerPid, token, organizationId, days, inspector) {
  const from = new Date(START).toISOString().slice(0, 10);
  const to = new Date(START + (days - 1) * DAY).toISOString().slice(0, 10);
  await inspector.collectGarbage();
  const heapBefore = (await inspector.heapUsed()) ?? NaN;
  let heapPeak = heapBefore;
  let heapSamples = 0;
  let heapSampling = true;
  const heapLoop = (async () => {
    while (heapSampling) {
      const used = await inspector.heapUsed();
      if (used !== null) ((heapPeak = Math.max(heapPeak, used)), (heapSamples += 1));
      else if (Number.isNaN(heapBefore)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const baseline = workerdRssKiB(wranglerPid);
  if (baseline === null) throw new Error("no workerd process under wrangler");
  let peak = baseline;
  let samples = 0;
  let missed = 0;
  let bytes = 0;
  /** The RSS seen at each tenth of the download: a plateau is flat memory, a ramp is not. */
  const timeline = [];
  const sample = () => {
    const rss = workerdRssKiB(wranglerPid);
    if (rss === null) missed += 1;
    else {
      samples += 1;
      peak = Math.max(peak, rss);
      timeline.push([bytes, rss]);
    }
  };
  const timer = setInterval(sample, 50);
  const started = Date.now();
  const res = await fetch(`${base}/v1/analytics/export.csv?from=${from}&to=${to}`, {
    headers: { Authorization: `Bearer ${token}`, "X-Organization-Id": organizationId },
  });
  if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`);
  const reader = res.body.getReader();
  const chunks = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    chunks.push(value);
  }
  clearInterval(timer);
  sample();
  heapSampling = false;
  await heapLoop;
  const heapAfter = await inspector.heapUsed();
  await inspector.collectGarbage();
  const heapAfterGc = await inspector.heapUsed();
  const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(Buffer.concat(chunks));
  if (!text.startsWith("\uFEFF")) throw new Error("no byte order mark");
  const parsed = parseCsv(text.slice(1));
  const width = parsed[0].length;
  const bad = parsed.filter((r) => r.length !== width).length;
  if (bad > 0) throw new Error(`${bad} records do not have the header's ${width} fields`);
  const ticketIds = new Set(parsed.slice(1).map((r) => r[0]));
  if (ticketIds.size !== parsed.length - 1) throw new Error("a ticket appears twice");
  const records = parsed.length;
  if (missed > 0) throw new Error(`workerd was not found in ${missed} of ${samples + missed} samples (restarted?)`);
  const tenths = Array.from({ length: 10 }, (_, i) => {
    const upTo = timeline.filter(([b]) => b <= (bytes * (i + 1)) / 10);
    return Math.round(Math.max(baseline, ...upTo.map(([, r]) => r)) / 1024);
  });
  return {
    heapBeforeMiB: heapBefore / 2 ** 20,
    heapPeakMiB: heapPeak / 2 ** 20,
    heapGrowthMiB: (heapPeak - heapBefore) / 2 ** 20,
    heapSamples,
    heapAfterMiB: heapAfter / 2 ** 20,
    heapAfterGcMiB: heapAfterGc / 2 ** 20,
    fields: width,
    tenths,
    samples,
    rows: parsed.length - 1,
    bytes,
    seconds: (Date.now() - started) / 1000,
    baselineMiB: baseline / 1024,
    peakMiB: peak / 1024,
    growthMiB: (peak - baseline) / 1024,
  };
}

/** `wrangler dev` on PORT over the state directory; resolves once it answers. */
async function startDev() {
  const log = openSync(path.join(dir, "wrangler.log"), "a");
  const child = spawn(
    wrangler,
    [
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(PORT),
      "--inspector-port",
      String(INSPECTOR_PORT),
      "--persist-to",
      persist,
      "--var",
      "ENVIRONMENT:development",
    ],
    {
      cwd: root,
      env,
      detached: true,
      stdio: ["ignore", log, log],
    },
  );
  running = child;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/v1/openapi.json`)).ok) return child;
    } catch {
      // not listening yet
    }
    if (i > 240) throw new Error("wrangler dev did not come up");
    await new Promise((r) => setTimeout(r, 500));
  }
}

let running = null;
async function stopDev() {
  if (running === null) return;
  try {
    process.kill(-running.pid, "SIGTERM");
  } catch {
    // already gone
  }
  for (let i = 0; i < 40 && running.exitCode === null && running.signalCode === null; i++) await new Promise((r) => setTimeout(r, 250));
  running = null;
}
process.on("exit", () => {
  if (running !== null) {
    try {
      process.kill(-running.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

wranglerSync(["d1", "migrations", "apply", "DB"], "applying migrations");
try {
  // 1. The organization, location, service and queue through the API.
  await startDev();
  const email = `bench${Date.now()}@example.com`;
  const password = "correct horse battery";
  const { session } = await api("POST", "/v1/auth/register", {
    body: { email, password, firstName: "Bench", lastName: "Export", accountType: "business" },
  });
  let token = session.token;
  const org = await api("POST", "/v1/organizations", {
    token,
    body: { name: "Export bench", slug: `export-bench-${Date.now()}`, type: "banking" },
  });
  const headers = { "X-Organization-Id": org.id };
  const location = await api("POST", "/v1/locations", {
    token,
    body: { organizationId: org.id, name: "Main", address: "1 rue de la Paix", latitude: 48.8566, longitude: 2.3522 },
  });
  const service = await api("POST", "/v1/services", {
    token,
    headers,
    body: { name: "Counter", locationIds: [location.id], serviceTypeId: "st_other_general" },
  });
  const queue = await api("POST", "/v1/business/queues", { token, headers, body: { serviceId: service.id, name: "Main queue" } });
  await stopDev();

  // 2. The pro plan and 100,000 tickets in the local D1 (with the server stopped: two
  // processes writing the same local database make the running one drop its connections).
  wranglerSync(["d1", "execute", "DB", "--command", `UPDATE subscriptions SET plan = 'pro' WHERE organization_id = '${org.id}'`], "plan");
  const body = queue.id.slice(4);
  wranglerSync(
    [
      "d1",
      "execute",
      "DB",
      "--command",
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${TICKETS - 1})
       INSERT INTO tickets (id, queue_id, service_id, organization_id, user_id, number, display_code, status, party_size, is_priority,
         is_ghost_mode, source, visitor_name, assigned_to_id, created_at, called_at, serving_at, served_at, updated_at, version)
       SELECT 'tkt_${body}b' || printf('%011d', i), '${queue.id}', '${service.id}', '${org.id}', 'usr_bench', i + 1, 'A-' || (i + 1),
         'served', 1, 0, 0, 'app', 'Visitor, "number" ' || i, 'usr_operator',
         ${START} + (i / ${PER_DAY}) * ${DAY} + (i % ${PER_DAY}) * 60000,
         ${START} + (i / ${PER_DAY}) * ${DAY} + (i % ${PER_DAY}) * 60000 + 600000,
         ${START} + (i / ${PER_DAY}) * ${DAY} + (i % ${PER_DAY}) * 60000 + 660000,
         ${START} + (i / ${PER_DAY}) * ${DAY} + (i % ${PER_DAY}) * 60000 + 960000,
         ${START} + (i / ${PER_DAY}) * ${DAY} + (i % ${PER_DAY}) * 60000 + 960000, 1 FROM n`,
    ],
    "writing the tickets",
  );

  // 3. The downloads, the isolate's heap and workerd's RSS sampled meanwhile.
  const child = await startDev();
  token = (await api("POST", "/v1/auth/login", { body: { email, password } })).session.token;
  const inspector = await openInspector();
  await measure(child.pid, token, org.id, 2, inspector); // warm-up
  const runs = [];
  for (const days of SIZES_DAYS) runs.push(await measure(child.pid, token, org.id, days, inspector));
  inspector.close();
  const fmt = (r) =>
    `| ${r.rows.toLocaleString("en-US")} | ${(r.bytes / 1e6).toFixed(1)} MB | ${r.seconds.toFixed(1)} s | ${r.heapBeforeMiB.toFixed(1)} → peak ${r.heapPeakMiB.toFixed(1)} (${r.heapSamples} samples) → end ${r.heapAfterMiB.toFixed(1)} → after GC ${r.heapAfterGcMiB.toFixed(1)} MiB | ${r.baselineMiB.toFixed(0)} → ${r.peakMiB.toFixed(0)} MiB (+${r.growthMiB.toFixed(1)}) | ${r.fields} fields, ${r.rows.toLocaleString("en-US")} distinct tickets |`;
  console.log(
    "| rows | bytes | time | isolate JS heap used (after GC before → peak while streaming → at the end → after GC) | workerd RSS (before → peak) | parsed as CSV |",
  );
  console.log("|---:|---:|---:|---|---|---|");
  for (const r of runs) console.log(fmt(r));
  for (const [i, days] of SIZES_DAYS.entries())
    if (runs[i].rows !== days * PER_DAY) throw new Error(`expected ${days * PER_DAY} rows, got ${runs[i].rows}`);
} catch (err) {
  console.error(readFileSync(path.join(dir, "wrangler.log"), "utf8").slice(-6000));
  console.error(err);
  console.error(`state kept in ${dir}`);
  process.exitCode = 1;
} finally {
  await stopDev();
  if (process.exitCode === undefined || process.exitCode === 0) rmSync(dir, { recursive: true, force: true });
}
