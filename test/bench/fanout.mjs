// Fan-out: N widget sockets subscribed to one queue, then call-next; the time until every
// socket has the queue_update that shows the called ticket.
import { spawnSync } from "node:child_process";
import WebSocket from "ws";
import { failures, percentile, summarize } from "./load.mjs";

const CONNECT_BATCH = 100;
const UPDATE_TIMEOUT_MS = 15_000;

/** The soft limit on open files: each socket takes one here and one in workerd. */
export function openFileLimit() {
  const out = spawnSync("sh", ["-c", "ulimit -n"], { encoding: "utf8" }).stdout.trim();
  return out === "unlimited" ? Infinity : Number(out) || 1024;
}

/**
 * One socket subscribed to the queue. The fast path names the queue in the URL; the spec's flow
 * (`spec`) connects to /v1/widget/ws alone and subscribes by message (a socket hub holds it).
 */
function subscribe(wsBase, queueId, spec = false) {
  return new Promise((resolve, reject) => {
    const url = spec ? `${wsBase}/v1/widget/ws` : `${wsBase}/v1/widget/ws?queueId=${encodeURIComponent(queueId)}`;
    const socket = new WebSocket(url, { perMessageDeflate: false });
    socket.updates = [];
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error("no queue_update within 15 s of subscribing"));
    }, UPDATE_TIMEOUT_MS);
    socket.on("open", () => socket.send(JSON.stringify({ action: "subscribe", queueId })));
    socket.on("message", (raw) => {
      let message;
      try {
        message = JSON.parse(String(raw));
      } catch {
        return;
      }
      if (message?.type !== "queue_update") return;
      socket.updates.push({ at: performance.now(), data: message.data });
      socket.onUpdate?.();
      if (socket.updates.length === 1) {
        clearTimeout(timer);
        resolve(socket);
      }
    });
    socket.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** Opens sockets until `sockets` has `target` of them; answers the seconds it took. */
export async function grow(sockets, target, wsBase, queueId, spec = false) {
  const started = performance.now();
  while (sockets.length < target) {
    const batch = Math.min(CONNECT_BATCH, target - sockets.length);
    const opened = await Promise.allSettled(Array.from({ length: batch }, () => subscribe(wsBase, queueId, spec)));
    for (const result of opened) {
      if (result.status === "fulfilled") sockets.push(result.value);
      else failures.push(`fan-out: a socket could not subscribe: ${result.reason?.message ?? result.reason}`);
    }
    if (opened.some((r) => r.status === "rejected")) break;
  }
  return (performance.now() - started) / 1000;
}

/** True once the socket has an update after `since` showing `code` (or, without one, any change). */
function arrival(socket, since, code) {
  const fresh = socket.updates.filter((u) => u.at >= since);
  const hit = code ? fresh.find((u) => Array.isArray(u.data?.nowServing) && u.data.nowServing.includes(code)) : fresh[0];
  return hit?.at ?? null;
}

/**
 * `calls` call-nexts, one at a time: for each, the time until the last socket had it, and
 * every socket's own delay. Sockets that never get it within 15 s count as failures.
 */
export async function measureFanOut(sockets, calls, callNext) {
  const lastArrivals = [];
  const each = [];
  for (let i = 0; i < calls; i++) {
    for (const s of sockets) s.updates = [];
    const since = performance.now();
    let code = null;
    const done = new Promise((resolve) => {
      // Each socket is checked when its own update lands (O(sockets) per call, not O(sockets²)),
      // so the client's bookkeeping does not inflate the figure at 2,000 sockets.
      const updated = new Set();
      const mark = (s) => {
        if (code === null || updated.has(s) || arrival(s, since, code) === null) return;
        updated.add(s);
        if (updated.size === sockets.length) resolve(true);
      };
      for (const s of sockets) s.onUpdate = () => mark(s);
      setTimeout(() => resolve(false), UPDATE_TIMEOUT_MS);
      callNext().then(
        (ticket) => {
          code = ticket.displayCode;
          for (const s of sockets) mark(s);
        },
        (err) => {
          failures.push(`fan-out call-next: ${err.message}`);
          resolve(false);
        },
      );
    });
    const complete = await done;
    const arrivals = sockets.map((s) => arrival(s, since, code));
    const missing = arrivals.filter((a) => a === null).length;
    if (!complete || missing > 0) failures.push(`fan-out to ${sockets.length} sockets: ${missing} never got ${code}`);
    const delays = arrivals.filter((a) => a !== null).map((a) => a - since);
    each.push(...delays);
    if (delays.length > 0) lastArrivals.push(Math.max(...delays));
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const s of sockets) s.onUpdate = undefined;
  const all = summarize(lastArrivals);
  const sorted = each.sort((a, b) => a - b);
  return { p50: all.p50, p99: all.p99, socketP50: percentile(sorted, 50), calls: lastArrivals.length };
}

export function closeAll(sockets) {
  for (const s of sockets) s.terminate();
  sockets.length = 0;
}
