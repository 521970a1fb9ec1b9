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

const workers = spawn(process.execPath, [path.join("scripts", "vitest-run.mjs"), ...args], { stdio: "inherit" });
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
