// Finds the address where the Worker itself listens under `wrangler dev`, behind wrangler's
// dev-only proxy: the loopback ports that the processes of wrangler's group listen on, each
// asked GET /__bench/empty; the one that answers and is not the public port is the Worker.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

function listeningPorts(pid) {
  const inodes = new Set();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      } catch {
        // fd closed meanwhile
      }
    }
  } catch {
    return [];
  }
  const ports = [];
  for (const file of ["tcp", "tcp6"]) {
    let text = "";
    try {
      text = readFileSync(`/proc/${pid}/net/${file}`, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // state 0A = LISTEN
      if (cols.length > 9 && cols[3] === "0A" && inodes.has(cols[9])) ports.push(parseInt(cols[1].split(":")[1], 16));
    }
  }
  return ports;
}

function groupPids(pgid) {
  const pids = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid) pids.push(Number(entry));
    } catch {
      // process ended meanwhile
    }
  }
  return pids;
}

export async function directWorkerUrl(pgid, publicPort) {
  const ports = new Set(groupPids(pgid).flatMap(listeningPorts));
  ports.delete(publicPort);
  for (const port of ports) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/__bench/empty`, { signal: AbortSignal.timeout(2000) });
      const body = await res.json();
      if (res.ok && body?.success === true && body.data === null) return `http://127.0.0.1:${port}`;
    } catch {
      // not the Worker
    }
  }
  return null;
}

/**
 * The Worker's own inspector under `wrangler dev` (workerd's `--inspector-addr`), not wrangler's
 * inspector proxy: a session through the proxy makes its proxy worker forward the Worker's
 * inspector events to wrangler one fetch each, and those connections were left open by the
 * thousand while a profile ran (docs/benchmarks.md). Answers `{ port, target }` (the user
 * Worker's target id), or null.
 */
export async function directInspector(pgid, exclude) {
  const ports = new Set(groupPids(pgid).flatMap(listeningPorts));
  for (const port of exclude) ports.delete(port);
  for (const port of ports) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/json`, { signal: AbortSignal.timeout(2000) });
      const targets = await res.json();
      const user = Array.isArray(targets) ? targets.find((t) => typeof t.id === "string" && t.id.startsWith("core:user:")) : undefined;
      if (user?.webSocketDebuggerUrl) return { port, url: user.webSocketDebuggerUrl };
    } catch {
      // not the inspector
    }
  }
  return null;
}

let ticksPerSecond = null;
function clockTicks() {
  if (ticksPerSecond === null) {
    const out = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
    ticksPerSecond = Number(out.stdout?.trim()) || 100;
  }
  return ticksPerSecond;
}

/**
 * CPU time (user + system, ms) used so far by the processes of wrangler's group, split into
 * workerd (the runtime that runs the Worker and its objects) and the rest (wrangler's Node
 * process, which relays every D1, Queue and Durable Object subrequest in `wrangler dev`).
 */
export function groupCpu(pgid) {
  const cpu = { workerd: 0, node: 0 };
  for (const pid of groupPids(pgid)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command.
      const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
      if (comm.startsWith("workerd")) cpu.workerd += ms;
      else cpu.node += ms;
    } catch {
      // process ended meanwhile
    }
  }
  return cpu;
}
