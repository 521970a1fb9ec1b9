#!/usr/bin/env node
// `npm test`'s Workers half: `vitest run`, guarded against one known hang of the pool.
//
// Each test file runs in a workerd of its own. Once every file has reported, the pool disposes
// those runtimes, and now and then one workerd never exits (it ignores SIGTERM; seen in session 11
// after all 155 files had passed): vitest then waits for it for ever and CI hits its limit. When
// every file of the run has reported and vitest is still running a minute later, this kills the
// workerd processes it started, so vitest closes and exits with the tests' own verdict. Nothing
// is killed while a file may still be running. With arguments (a subset of files) it is a plain
// `vitest run`.
import { execFileSync, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";

const args = process.argv.slice(2);
const vitest = spawn(process.execPath, [path.join("node_modules", "vitest", "vitest.mjs"), "run", ...args], {
  stdio: ["inherit", "pipe", "inherit"],
});

/** The files `vitest run` runs (vitest.config.ts: test/unit and test/integration). */
function testFiles() {
  const out = new Set();
  for (const dir of ["test/unit", "test/integration"])
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
      if (entry.isFile() && entry.name.endsWith(".test.ts")) out.add(path.join(entry.parentPath, entry.name).split(path.sep).join("/"));
  return out;
}

const expected = args.length === 0 ? testFiles() : null;
const reported = new Set();
let allReportedAt = null;
let pending = "";
vitest.stdout.on("data", (chunk) => {
  process.stdout.write(chunk);
  if (!expected) return;
  pending += chunk.toString("utf8");
  const lines = pending.split("\n");
  pending = lines.pop() ?? "";
  for (const line of lines) {
    // " ✓  unit  test/unit/ids.test.ts (2 tests)": the project's name (vitest.config.ts) comes first.
    const m = /^\s*[✓❯×↓]\s+(?:(?:unit|integration(?:-\w+)?)\s+)?(test\/\S+\.test\.ts)\s/.exec(line.replace(/\x1b\[[0-9;]*m/g, ""));
    if (m && expected.has(m[1])) reported.add(m[1]);
  }
  if (allReportedAt === null && reported.size === expected.size) allReportedAt = Date.now();
});

/** The workerd processes below vitest (its pool's runtimes). */
function workerdsBelow(root) {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,comm="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .map(([pid, ppid, comm]) => ({ pid: Number(pid), ppid: Number(ppid), comm }));
  const below = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const r of rows) if (below.has(r.ppid) && !below.has(r.pid)) (below.add(r.pid), (grew = true));
  }
  return rows.filter((r) => below.has(r.pid) && r.comm === "workerd").map((r) => r.pid);
}

const GRACE_MS = 60_000;
const watchdog = setInterval(() => {
  if (allReportedAt === null || Date.now() - allReportedAt < GRACE_MS) return;
  const stuck = workerdsBelow(vitest.pid);
  if (stuck.length === 0) return;
  console.error(
    `vitest-run: every file reported ${Math.round((Date.now() - allReportedAt) / 1000)} s ago; stopping ${stuck.length} workerd that did not exit`,
  );
  for (const pid of stuck) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  allReportedAt = Date.now();
}, 5_000);

vitest.on("exit", (code, signal) => {
  clearInterval(watchdog);
  process.exitCode = code ?? (signal ? 1 : 0);
});
