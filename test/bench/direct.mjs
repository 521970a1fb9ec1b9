// Finds the address where the Worker itself listens under `wrangler dev`, behind wrangler's
// dev-only proxy: the loopback ports that the processes of wrangler's group listen on, each
// asked GET /__bench/empty; the one that answers and is not the public port is the Worker.
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
