#!/usr/bin/env node
// `npm test`: the Workers half (scripts/vitest-run.mjs, test/unit and test/integration in workerd)
// and the Node half (vitest.node.config.ts, test/node) side by side. The Node half spends most of
// its minute waiting (npm pack and install into a scratch project, `npm run dev` starting, tsc), so
// it runs beside the Workers half instead of after it (issue 37). Its output is held and printed
// once the Workers half has finished, so the two logs do not interleave. The exit code is the
// first failure's, or 0 when both pass. With arguments it runs the Workers half only, on those files.
import { spawn } from "node:child_process";
import path from "node:path";

const args = process.argv.slice(2);
const started = Date.now();
const seconds = () => `${Math.round((Date.now() - started) / 1000)} s`;

const workers = spawn(process.execPath, [path.join("scripts", "vitest-run.mjs"), ...args], { stdio: ["inherit", "pipe", "pipe"] });
// vitest's account of the failures (on stderr) scrolls far above the end of the log (the timing
// report and the Node half's output come after it), and CI shows only the log's tail: keep it and
// repeat it last.
const failures = [];
let capturing = false;
function watch(stream, out) {
  let partial = "";
  stream.on("data", (chunk) => {
    out.write(chunk);
    partial += chunk.toString("utf8");
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
      // scripts/vitest-run.mjs runs again the files a crashed workerd left out: that run's failures are the ones to repeat.
      if (plain.startsWith("vitest-run: a workerd crashed")) {
        failures.length = 0;
        capturing = false;
        continue;
      }
      if (/⎯ (Failed Tests|Failed Suites|Unhandled Errors?) /.test(plain) || /^OVER BUDGET: /.test(plain)) capturing = true;
      if (/file\(s\) over their time budget/.test(plain) && !capturing) failures.push(plain);
      if (/^\s*(Test Files|Tests|Errors)\s/.test(plain)) {
        if (/failed|error/i.test(plain)) failures.push(plain);
        capturing = false;
      } else if (capturing) failures.push(plain);
    }
  });
}
watch(workers.stdout, process.stdout);
watch(workers.stderr, process.stderr);
const workersDone = new Promise((resolve) => workers.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))));

let nodeDone = Promise.resolve(0);
const held = [];
if (args.length === 0) {
  const node = spawn(process.execPath, [path.join("node_modules", "vitest", "vitest.mjs"), "run", "--config", "vitest.node.config.ts"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? (process.stdout.isTTY ? "1" : "0") },
  });
  node.stdout.on("data", (chunk) => held.push(chunk));
  node.stderr.on("data", (chunk) => held.push(chunk));
  nodeDone = new Promise((resolve) => node.on("exit", (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), at: seconds() })));
}

const workersCode = await workersDone;
console.log(`\nnpm test: the Workers half ended (exit ${workersCode}) after ${seconds()}`);
if (args.length === 0) {
  const { code: nodeCode, at } = await nodeDone;
  console.log(`npm test: the Node half (test/node, run beside it) ended (exit ${nodeCode}) after ${at}; its output:\n`);
  process.stdout.write(Buffer.concat(held));
  process.exitCode = workersCode || nodeCode;
} else process.exitCode = workersCode;
if (failures.length > 0) {
  const MAX_LINES = 300;
  console.log(
    `\nnpm test: the Workers half's failures, repeated from above${failures.length > MAX_LINES ? ` (first ${MAX_LINES} lines)` : ""}:\n`,
  );
  console.log(failures.slice(0, MAX_LINES).join("\n"));
}
