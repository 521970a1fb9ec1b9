#!/usr/bin/env node
// Refuses a real-time wait above 50 ms in the vitest suites (test/unit, test/integration,
// test/helpers, test/node): a test waits for the thing it expects (an alarm run through
// runDurableObjectAlarm, an eviction through abortAllDurableObjects, a socket's message), never
// for the clock. A `setTimeout`, `sleep` or `scheduler.wait` whose delay is a number above
// 50 ms, or a delay the script cannot read as a number, fails the check unless its line is on
// the allow-list below, each entry with its reason. test/browser, test/bench and test/smoke
// drive real processes and a real browser, where real time is what they measure: not checked.
//
//   node scripts/check-test-sleeps.mjs [root]     (exit 1 and one line per violation)
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const LIMIT_MS = 50;
const CHECKED = ["test/unit", "test/integration", "test/helpers", "test/node"];

/** file -> the text its allowed line contains -> why a wait is right there. Keep it short. */
const ALLOWED = {
  "test/helpers/outbound.ts": {
    "setTimeout(() => resolve(new Response(body)), ms)":
      "slowAnswer: a fake host that answers late; the service's own timeout aborts it, no test waits for it",
  },
  "test/integration/event-socket.test.ts": {
    "setTimeout(resolve, left)": "received(): a deadline for events that are expected; it returns as soon as they arrive",
  },
  "test/helpers/widget-socket.ts": {
    "setTimeout(resolve, left)": "next(): a deadline for a message that is expected; it returns as soon as the message arrives",
    // To replace: a positive control (a message known to be sent after the cause) instead of 300 ms.
    "setTimeout(r, ms)": "quiet(): 300 ms of silence after a change that must not be pushed (3 uses, issue 37 follow-up)",
  },
  // Hibernation is what these tests prove: a socket survives workerd evicting its idle object
  // (~10 s). The pool 0.15.1 has no evictDurableObject, and abortAllDurableObjects closes the
  // hibernatable sockets (tried: widget.test.ts "the room hibernates…" then finds 0 sockets).
  "test/integration/widget.test.ts": {
    "setTimeout(r, EVICTION_WAIT_MS)": "workerd's own idle eviction, with the room's sockets kept (see above)",
  },
  // The simulated day runs on its Durable Object's one-second alarms, in real time: issue 41 asks
  // for its real duration (a 10-minute day at 60x in under 30 s), so its test watches it run.
  "test/integration/test-simulations.test.ts": {
    "setTimeout(r, 250)": "settledEvents(): polls the events feed until the day's joins are there (15 s deadline)",
    "setTimeout(r, 500)": "polls the day's progress until it has finished (30 s deadline)",
    "setTimeout(r, 2500)": "lets a long day take a few steps before DELETE, then 2.5 s (two steps) of silence after it",
  },
  "test/integration/visitor-ticket.test.ts": {
    "setTimeout(r, 15_000)": "workerd's own idle eviction of a hub and a room, with their sockets kept (see above)",
    // To replace with a positive control, as quiet() above.
    "setTimeout(r, 300)": "300 ms of silence after a change that must not be pushed (2 uses, issue 37 follow-up)",
  },
};

const CALL = /\b(setTimeout|sleep|scheduler\.wait)\s*\(/g;

function files(dir) {
  let out = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out = out.concat(files(full));
    else if (/\.(ts|mts|js|mjs)$/.test(name)) out.push(full);
  }
  return out;
}

/** The text of the call's arguments (up to the matching parenthesis). */
function argumentsOf(text, open) {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") {
      depth--;
      if (depth === 0) return text.slice(open + 1, i);
    }
  }
  return text.slice(open + 1);
}

/** Splits on top-level commas. */
function splitArgs(args) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < args.length; i++) {
    const c = args[i];
    if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") depth--;
    else if (c === "," && depth === 0) {
      parts.push(args.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(args.slice(start).trim());
  return parts.filter((p) => p !== "");
}

/** The delay in ms when it is a number or a file-level `const NAME = number` (else null). */
function delayOf(expr, text) {
  const number = (s) => (/^[\d_]+(\.\d+)?$/.test(s) ? Number(s.replace(/_/g, "")) : null);
  const direct = number(expr);
  if (direct !== null) return direct;
  if (/^[A-Za-z_$][\w$]*$/.test(expr)) {
    const m = text.match(new RegExp(`const\\s+${expr}\\s*=\\s*([\\d_]+)\\s*;`));
    if (m) return number(m[1]);
  }
  return null;
}

export function check(root) {
  const problems = [];
  for (const dir of CHECKED) {
    let list = [];
    try {
      list = files(path.join(root, dir));
    } catch {
      continue;
    }
    for (const file of list) {
      const rel = path.relative(root, file).split(path.sep).join("/");
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(CALL)) {
        const before = text.slice(0, m.index);
        const lineNo = before.split("\n").length;
        const line = text.split("\n")[lineNo - 1];
        // A definition (`function sleep(`, `const sleep = (`) is not a wait; its calls are.
        if (/(function\s+|const\s+|let\s+)$/.test(before.slice(-12).trimEnd() + " ")) continue;
        const args = splitArgs(argumentsOf(text, m.index + m[0].length - 1));
        const delayExpr = m[1] === "setTimeout" ? args[1] : args[0];
        if (m[1] === "setTimeout" && delayExpr === undefined) continue; // next tick
        const delay = delayExpr === undefined ? null : delayOf(delayExpr, text);
        if (delay !== null && delay <= LIMIT_MS) continue;
        const allowed = Object.keys(ALLOWED[rel] ?? {}).some((snippet) => line.includes(snippet));
        if (allowed) continue;
        const what = delay === null ? `a delay of \`${delayExpr}\` (not a number of ms)` : `${delay} ms`;
        problems.push(`${rel}:${lineNo}: ${m[1]} with ${what}, above ${LIMIT_MS} ms: ${line.trim()}`);
      }
    }
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(process.argv[2] ?? path.join(path.dirname(new URL(import.meta.url).pathname), ".."));
  const problems = check(root);
  if (problems.length > 0) {
    console.error(
      `Real-time waits in the tests (wait for the cause: runDurableObjectAlarm, abortAllDurableObjects, a message; or allow-list the line with a reason in scripts/check-test-sleeps.mjs):\n${problems.join("\n")}`,
    );
    process.exit(1);
  }
  console.log(`No real-time wait above ${LIMIT_MS} ms in ${CHECKED.join(", ")}.`);
}
