// Starts the bench's Worker (test/bench/wrangler.toml: the production Worker wrapped with
// /__bench/*, an empty Durable Object baseline and no rate limits, see ./worker.ts) under
// `wrangler dev`: local D1 migrated into a fresh temporary directory, 127.0.0.1 on free
// ports, quiet logs. `startBareWorker` starts the bare fetch-handler baseline (./bare.toml)
// the same way, in its own wrangler. A wrangler that fails to build, exits or never answers
// fails the start within the timeout with the tail of its log (a build error does not end
// `wrangler dev`, and its proxy holds requests until a build succeeds: every probe is bounded).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { directInspector, directWorkerUrl, groupCpu } from "./direct.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");
const wrangler = path.join(root, "node_modules", ".bin", "wrangler");
const env = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
const config = path.join(root, "test", "bench", "wrangler.toml");

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** What wrangler prints when it cannot build or start the Worker (it then waits for a file change). */
const STARTUP_ERROR = /\[ERROR\]|Build failed|Could not resolve|No loader is configured|Error: /;

function logTail(logFile) {
  try {
    return readFileSync(logFile, "utf8").slice(-3000);
  } catch {
    return "(no log)";
  }
}

async function waitUntilUp(base, child, logFile, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`wrangler dev exited (${child.exitCode ?? child.signalCode}) before answering:\n${logTail(logFile)}`);
    }
    if (STARTUP_ERROR.test(logTail(logFile))) throw new Error(`wrangler dev failed to start the Worker:\n${logTail(logFile)}`);
    try {
      const res = await fetch(`${base}/__bench/empty`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return;
    } catch {
      // not listening yet, or the proxy is holding the request until a build succeeds
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`wrangler dev did not come up within ${timeoutMs / 1000} s:\n${logTail(logFile)}`);
}

/** True while the process group exists (signal 0 only checks). */
function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * The bindings a wrangler.toml declares: Durable Objects, queues produced and consumed, D1. The
 * bench's Worker must carry every one of the production Worker's, or its figures measure a
 * different program (without EVENT_HUB every EVENTS batch failed and logged its announcement).
 */
function bindingsOf(file) {
  const text = readFileSync(file, "utf8");
  const found = new Set();
  for (const m of text.matchAll(/^\[\[durable_objects\.bindings\]\]\s*\nname = "([^"]+)"\s*\nclass_name = "([^"]+)"/gm))
    found.add(`object ${m[1]}: ${m[2]}`);
  for (const m of text.matchAll(/^\[\[queues\.producers\]\]\s*\nbinding = "([^"]+)"\s*\nqueue = "([^"]+)"/gm))
    found.add(`queue ${m[1]}: ${m[2]}`);
  for (const m of text.matchAll(/^\[\[queues\.consumers\]\]\s*\nqueue = "([^"]+)"/gm)) found.add(`consumer ${m[1]}`);
  for (const m of text.matchAll(/^\[\[d1_databases\]\]\s*\nbinding = "([^"]+)"/gm)) found.add(`d1 ${m[1]}`);
  return found;
}

/** Resolves to { base, stop() }; stop() ends wrangler and removes the temporary state. */
export async function startWorker() {
  const bench = bindingsOf(config);
  const missing = [...bindingsOf(path.join(root, "wrangler.toml"))].filter((b) => !bench.has(b));
  if (missing.length > 0)
    throw new Error(`test/bench/wrangler.toml lacks the Worker's bindings: ${missing.join("; ")} (copy them from wrangler.toml)`);
  return start(config, true);
}

/**
 * The same Worker without the development asset router in front (./no-assets.toml, issue 43):
 * under `wrangler dev` an `[assets]` block puts workerd's asset router before every request,
 * even those `run_worker_first` sends straight on; in production Cloudflare does that routing
 * outside the Worker. Its own state (D1, objects): it is set up like the first.
 */
export async function startApiWorker() {
  const noAssets = path.join(root, "test", "bench", "no-assets.toml");
  const strip = (text) =>
    text
      .replace(/^#.*\n/gm, "")
      .replace(/\[assets\][\s\S]*?(?=\n\[vars\])/, "")
      .replace(/^name = .*$/m, "")
      .replace(/\n{2,}/g, "\n")
      .trim();
  if (strip(readFileSync(config, "utf8")) !== strip(readFileSync(noAssets, "utf8")))
    throw new Error("test/bench/no-assets.toml is not test/bench/wrangler.toml without [assets]: copy it again");
  return start(noAssets, true);
}

/** The bare fetch-handler Worker (./bare.ts): the floor of what any Worker's route costs here. */
export async function startBareWorker() {
  return start(path.join(root, "test", "bench", "bare.toml"), false);
}

async function start(config, migrations) {
  const dir = mkdtempSync(path.join(tmpdir(), "queue-bench-"));
  const persist = path.join(dir, "state");
  const logFile = path.join(dir, "wrangler.log");
  if (migrations) {
    const migrate = spawnSync(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persist, "--config", config], {
      cwd: root,
      env,
      encoding: "utf8",
      // On a loaded machine applying 30 migrations can take minutes; a killed apply leaves a
      // partial schema (and has exited 0 before), so a signal fails the start too.
      timeout: 600_000,
    });
    if (migrate.status !== 0 || migrate.signal !== null || migrate.error) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`applying the D1 migrations failed:\n${migrate.stdout}${migrate.stderr}${migrate.error ?? ""}`);
    }
  }

  const [port, inspectorPort] = [await freePort(), await freePort()];
  const log = openSync(logFile, "a");
  const args = [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspectorPort),
    "--log-level",
    process.env.BENCH_LOG_LEVEL ?? "error",
    "--show-interactive-dev-session=false",
    "--persist-to",
    persist,
    "--config",
    config,
  ];
  // Its own process group, so stopping it also stops the workerd processes it started.
  const child = spawn(wrangler, args, { cwd: root, env, stdio: ["ignore", log, log], detached: true });
  const base = `http://127.0.0.1:${port}`;

  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    signalGroup(child.pid, "SIGTERM");
    // Synchronous, so it also works from the "exit" handler: give it 5 s, then force it.
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    for (let i = 0; i < 50 && signalGroup(child.pid, 0); i++) Atomics.wait(sleeper, 0, 0, 100);
    signalGroup(child.pid, "SIGKILL");
    if (process.env.BENCH_KEEP_STATE) console.error(`wrangler state and log kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  };
  process.on("exit", stop);
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.on(signal, () => {
      stop();
      process.exit(130);
    });
  }
  try {
    await waitUntilUp(base, child, logFile, 90_000);
  } catch (err) {
    stop();
    throw err;
  }
  const direct = await directWorkerUrl(child.pid, port);
  const inspector = await directInspector(child.pid, [port, inspectorPort, Number(new URL(direct ?? base).port)]);
  return {
    base,
    direct,
    port,
    inspectorPort,
    inspector,
    logFile,
    stop,
    log: () => readFileSync(logFile, "utf8"),
    cpu: () => groupCpu(child.pid),
  };
}
