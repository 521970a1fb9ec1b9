// The top frames of a short CPU profile of the Worker's isolate (issue 43): V8's Profiler through
// the inspector wrangler dev exposes (`--inspector-port`, its proxy lists the Worker at /json).
// Self time per function (name, file:line), summed over the profile's nodes, over the load run
// `during` makes while the profiler samples.
import { writeFileSync } from "node:fs";
import WebSocket from "ws";

/** `inspector`: the Worker's own ({ url }, ./direct.mjs directInspector), else wrangler's proxy port. */
async function connect(inspector) {
  let url = inspector?.url ?? null;
  if (url === null) {
    const targets = await (await fetch(`http://127.0.0.1:${inspector.port}/json`)).json();
    url = targets.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl ?? null;
    if (!url) throw new Error(`no inspector target: ${JSON.stringify(targets)}`);
  }
  const ws = new WebSocket(url);
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
  const send = (method, params = {}, timeoutMs = 30_000) =>
    new Promise((resolve) => {
      const n = ++id;
      const timer = setTimeout(() => {
        pending.delete(n);
        resolve({ error: "timeout" });
      }, timeoutMs);
      pending.set(n, (msg) => {
        clearTimeout(timer);
        resolve(msg);
      });
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  return { send, close: () => ws.close() };
}

/**
 * Profiles the isolate while `during()` runs; answers the top `top` frames by self time and the
 * requests it made. With `saveAs`, the whole profile is written there too (a .cpuprofile: open it
 * in Chromium's DevTools, or list a function's callers with test/bench/profile-callers.mjs).
 */
export async function profileWhile(target, during, top = 12, saveAs = null) {
  // workerd's own inspector leaves a new session's first command unanswered now and then: the
  // session is opened again (a few times) until it answers.
  let inspector = await connect(target);
  for (let attempt = 1; attempt < 4 && (await inspector.send("Profiler.enable", {}, 5_000)).error === "timeout"; attempt++) {
    inspector.close();
    inspector = await connect(target);
  }
  try {
    await inspector.send("Profiler.enable");
    // 1 ms, V8's default: at 0.1 ms the isolate spent most of its time sampling and the run stalled.
    await inspector.send("Profiler.setSamplingInterval", { interval: 1000 });
    await inspector.send("Profiler.start");
    const result = await during();
    const stopped = await inspector.send("Profiler.stop");
    const profile = stopped.result?.profile;
    if (!profile) return { frames: [], totalMs: 0, requests: result.count, error: JSON.stringify(stopped).slice(0, 200) };
    if (saveAs) writeFileSync(saveAs, JSON.stringify({ ...profile, requests: result.count }));
    const interval = new Map();
    // Self time of each node: the time deltas of the samples that landed on it.
    profile.samples.forEach((node, i) => interval.set(node, (interval.get(node) ?? 0) + (profile.timeDeltas[i + 1] ?? 0)));
    const byFrame = new Map();
    let totalUs = 0;
    for (const node of profile.nodes) {
      const us = interval.get(node.id) ?? 0;
      const f = node.callFrame;
      if (f.functionName === "(idle)" || f.functionName === "(program)") continue;
      totalUs += us;
      const file = f.url ? f.url.split("/").pop() : "";
      const key = `${f.functionName || "(anonymous)"} ${file}${f.url ? `:${f.lineNumber + 1}` : ""}`;
      byFrame.set(key, (byFrame.get(key) ?? 0) + us);
    }
    const n = Math.max(1, result.count);
    const frames = [...byFrame.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([frame, us]) => ({ frame, msPerRequest: us / 1000 / n, share: totalUs ? us / totalUs : 0 }));
    // Total time (self and callees) of each named function, its outermost call on a stack counted
    // once: where a request's time goes by step (the room's join, the EVENTS consumer, the drain),
    // which self time spreads thin. (The bundle names no source file: named functions are kept.)
    const keyOf = (f) => {
      const file = f.url ? f.url.split("/").pop() : "";
      return `${f.functionName} ${file}${f.url ? `:${f.lineNumber + 1}` : ""}`;
    };
    const ours = (f) => f.functionName && !f.functionName.startsWith("(") && f.url;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    const totals = new Map();
    const walk = (node, open) => {
      const key = ours(node.callFrame) ? keyOf(node.callFrame) : null;
      const counted = key !== null && !open.has(key);
      if (counted) open.add(key);
      let us = interval.get(node.id) ?? 0;
      for (const child of node.children ?? []) us += walk(byId.get(child), open);
      if (counted) {
        totals.set(key, (totals.get(key) ?? 0) + us);
        open.delete(key);
      }
      return us;
    };
    const root = profile.nodes.find((node) => node.callFrame.functionName === "(root)") ?? profile.nodes[0];
    walk(root, new Set());
    const steps = [...totals.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top * 2)
      .map(([frame, us]) => ({ frame, msPerRequest: us / 1000 / n, share: totalUs ? us / totalUs : 0 }));
    return { frames, steps, totalMs: totalUs / 1000 / n, requests: result.count };
  } finally {
    inspector.close();
  }
}
