#!/usr/bin/env node
// `npm test`'s Workers half: `vitest run`, guarded against two known faults of the pool's runtime.
//
// 1. A workerd that never exits. Each test file runs in a workerd (alone or in a group's shared
//    one). Once every file has reported, the pool disposes those runtimes, and now and then one
//    workerd never exits (it ignores SIGTERM; seen in session 11 after all 155 files had passed):
//    vitest then waits for it for ever and CI hits its limit. When every file of the run has
//    reported and vitest is still running a minute later, this kills the workerd processes it
//    started, so vitest closes and exits with the tests' own verdict. Nothing is killed while a
//    file may still be running.
// 2. A workerd that crashes. workerd 1.20260426 (the one @cloudflare/vitest-pool-workers 0.15.1
//    brings) segfaults now and then (cloudflare/workerd#6763; seen once in CI, stop 51, after 1,700
//    tests had passed). vitest then reports "Worker exited unexpectedly" as an unhandled error and
//    exits 1, and the file that runtime was running (or was about to run) never reports. The pool's
//    later releases tolerate the crash (workers-sdk#14793); ours cannot be upgraded on Node 20. So
//    when a run's only faults are such crashes (no test or file failed, no file over its budget,
//    every unhandled error a worker's exit), the files that did not report a pass run again, once,
//    in runtimes of their own, and that run's verdict is the verdict. The crash and the files run
//    again are printed. A test that fails is never run again.
//
// With arguments (a subset of files) it runs those files, with the same guards.
import { execFileSync, spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";

/** The files `vitest run` runs (vitest.config.ts: test/unit and test/integration). */
function testFiles() {
  const out = new Set();
  for (const dir of ["test/unit", "test/integration"])
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
      if (entry.isFile() && entry.name.endsWith(".test.ts")) out.add(path.join(entry.parentPath, entry.name).split(path.sep).join("/"));
  return out;
}

/** The workerd processes below a process (the pool's runtimes). */
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

/**
 * One `vitest run` of `files` (every file when null), its output passed through. Resolves with its
 * exit code and what its output says: the files that passed, the failures and the crashes.
 */
function run(files, extraEnv = {}) {
  const expected = files === null ? testFiles() : new Set(files);
  const vitest = spawn(process.execPath, [path.join("node_modules", "vitest", "vitest.mjs"), "run", ...(files ?? [])], {
    stdio: ["inherit", "pipe", "pipe"],
    env: { ...process.env, ...extraEnv },
  });
  const reported = new Set();
  const passed = new Set();
  const seen = { failed: false, overBudget: false, unhandled: 0, workerExits: 0 };
  let allReportedAt = null;
  const watch = (stream, out) => {
    let pending = "";
    stream.on("data", (chunk) => {
      out.write(chunk);
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
        // " ✓  unit  test/unit/ids.test.ts (2 tests)": the project's name (vitest.config.ts) comes first.
        const m = /^\s*([✓❯×↓])\s+(?:(?:unit|integration(?:-\w+)?)\s+)?(test\/\S+\.test\.ts)\s/.exec(plain);
        if (m && expected.has(m[2])) {
          reported.add(m[2]);
          if (m[1] === "✓") passed.add(m[2]);
        }
        if (/^\s*(Test Files|Tests)\s.*failed/.test(plain) || /⎯ Failed (Tests|Suites) /.test(plain)) seen.failed = true;
        if (/^OVER BUDGET: /.test(plain)) seen.overBudget = true;
        const errors = /^\s*Errors\s+(\d+) errors?/.exec(plain);
        if (errors) seen.unhandled = Number(errors[1]);
        if (/Caused by: Error: Worker exited unexpectedly/.test(plain)) seen.workerExits += 1;
      }
      if (allReportedAt === null && reported.size === expected.size) allReportedAt = Date.now();
    });
  };
  watch(vitest.stdout, process.stdout);
  watch(vitest.stderr, process.stderr);
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
  return new Promise((resolve) =>
    vitest.on("exit", (code, signal) => {
      clearInterval(watchdog);
      resolve({ code: code ?? (signal ? 1 : 0), expected, passed, ...seen });
    }),
  );
}

const args = process.argv.slice(2);
const first = await run(args.length === 0 ? null : args);
const onlyCrashes = (r) => r.code !== 0 && !r.failed && !r.overBudget && r.workerExits > 0 && r.unhandled === r.workerExits;
if (!onlyCrashes(first)) process.exitCode = first.code;
else {
  const again = [...first.expected].filter((f) => !first.passed.has(f)).sort();
  // The marker line below tells scripts/test.mjs to forget the failures it kept from the first run.
  console.log(
    `\nvitest-run: a workerd crashed (${first.workerExits}×, "Worker exited unexpectedly", cloudflare/workerd#6763); no test failed. ` +
      (again.length === 0
        ? "Every file had reported a pass before it: the run passes."
        : `Running again, once, each in a runtime of its own, the ${again.length} file(s) that did not report a pass:\n  ${again.join("\n  ")}`),
  );
  if (again.length === 0) process.exitCode = 0;
  else {
    const second = await run(again, { QUEUE_RUNTIME_GROUP_SIZE: "1" });
    process.exitCode = second.code;
    console.log(`\nvitest-run: the files run again after the crash ended with exit ${second.code}.`);
  }
}
