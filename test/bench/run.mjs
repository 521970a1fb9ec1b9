// `npm run bench`: loads the Worker under `wrangler dev` and prints one markdown table of
// figures, each beside a baseline measured in the same run. It asserts nothing about speed
// (machines are noisy) but exits 1 when any request failed. Sizes and durations can be
// changed with the BENCH_* variables below, e.g. BENCH_DURATION=2 for a quick look.
// One part alone: `BENCH_ONLY=sockets npm run bench` (or `node test/bench/run.mjs --only sockets`)
// runs only the spec-flow sockets row; parts: throughput, growth, fanout, sockets, analytics.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import os from "node:os";
import { closeAll, grow, measureFanOut, openFileLimit } from "./fanout.mjs";
import { client, failures, load, summarize, timeSequential } from "./load.mjs";
import { startApiWorker, startBareWorker, startWorker } from "./server.mjs";
import { profileWhile } from "./profile.mjs";

const list = (name, fallback) => (process.env[name] !== undefined ? process.env[name].split(",").filter(Boolean).map(Number) : fallback);
const num = (name, fallback) => (process.env[name] ? Number(process.env[name]) : fallback);
const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const CONFIG = {
  /** Seconds per load run: short by default, so a whole run stays bounded on a shared machine. */
  duration: Number(arg("duration") ?? num("BENCH_DURATION", 3)),
  /** Measure the routes again on the Worker without the development asset router (BENCH_NO_ASSETS=0: skip). */
  noAssets: (arg("no-assets") ?? process.env.BENCH_NO_ASSETS ?? "1") !== "0",
  connections: list("BENCH_CONNECTIONS", [1, 16, 64]),
  /**
   * Tickets waiting when a call-next run starts: at least 1,500 per second of the run, so the
   * line does not run low while it is measured (a line called down to its last tickets measured
   * 0.22 of B at 16 connections where a longer one measured 0.26–0.28: docs/benchmarks.md).
   */
  callNextSeed: Math.max(num("BENCH_CALL_NEXT_SEED", 600), 1_500 * Number(arg("duration") ?? num("BENCH_DURATION", 3))),
  /**
   * Each hot route's ratio is taken against a B measured right after it (BENCH_B_EACH=0: the
   * section's first B only). Over a run the machine drifts: against a B measured minutes before,
   * the same code's ratios moved by ±0.05 between runs (docs/benchmarks.md, session 22).
   */
  bEach: process.env.BENCH_B_EACH !== "0",
  growthSizes: list("BENCH_GROWTH_SIZES", [10, 1_000, 10_000]),
  growthRequests: num("BENCH_GROWTH_REQUESTS", 200),
  seedBudgetSeconds: num("BENCH_SEED_BUDGET", 150),
  fanoutSockets: list("BENCH_FANOUT_SOCKETS", [100, 1_000, 2_000]),
  fanoutCalls: num("BENCH_FANOUT_CALLS", 10),
  locations: list("BENCH_LOCATIONS", [10_000, 100_000]),
  analyticsTickets: num("BENCH_ANALYTICS_TICKETS", 200_000),
  /** A year's summary is a report, not a hot path: one connection by default (more only queue up behind it). */
  analyticsConnections: list("BENCH_ANALYTICS_CONNECTIONS", [1]),
  specSockets: list("BENCH_SPEC_SOCKETS", [2_000]),
};
const onlyArg = process.argv.indexOf("--only");
const ONLY = (onlyArg >= 0 ? process.argv[onlyArg + 1] : process.env.BENCH_ONLY)?.split(",").map((s) => s.trim()) ?? null;
const runs = (part) => ONLY === null || ONLY.includes(part);
/** BENCH_ROUTES=join,call-next: only these throughput routes (credential, join, call-next, ticket, widget, nearby), for a quick look at one change. */
const ROUTES = process.env.BENCH_ROUTES?.split(",").map((s) => s.trim()) ?? null;
const measures = (route) => ROUTES === null || ROUTES.includes(route);
const NEARBY = { latitude: 45.76, longitude: 4.84, spreadKm: 50, radiusKm: 5 };
/** Seeding requests are sized to take about this long: long ones upset workerd's connections. */
const SEED_REQUEST_MS = 1_500;

const started = performance.now();
const notes = [];
const fmt = (n, digits = 1) =>
  Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "—";
const ratio = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}` : "—");
const log = (line) => process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0)}s] ${line}\n`);

function machine() {
  const cpu = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.+)/)?.[1] ?? os.cpus()[0]?.model ?? "unknown CPU";
  return `${os.availableParallelism()} cores (nproc), ${cpu.trim()}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

let worker;
let bare = null;
/** The same Worker without the asset router in front (./no-assets.toml), its own state. */
let api = null;
try {
  worker = await startWorker();
  if (CONFIG.noAssets)
    api = await startApiWorker().catch((err) => {
      notes.push(`The Worker without the asset router did not start: ${String(err.message).split("\n")[0]}`);
      return null;
    });
  // The bare fetch-handler baseline runs in its own wrangler; without it the bench still runs.
  bare = await startBareWorker().catch((err) => {
    notes.push(`The bare fetch-handler Worker did not start, so the empty route has no baseline 0: ${String(err.message).split("\n")[0]}`);
    return null;
  });
} catch (err) {
  // Fail fast: a Worker that does not build or start ends the run with wrangler's own words.
  console.error(`npm run bench: the Worker did not start.\n${err.message ?? err}`);
  worker?.stop();
  api?.stop();
  process.exit(1);
}
const base = worker.direct ?? worker.base;
if (!worker.direct) notes.push("The Worker's own port was not found: requests went through wrangler's dev proxy.");
worker.label = "";
if (api) api.label = " (no asset router)";
const call = client(base);
/** Tickets each queue has had created, so the bench can wait for the outbox to project them. */
const created = new Map();
const sections = { throughput: [], growth: [], fanout: [], sockets: [], profiles: [] };
sections.desks = [];

async function register(call, accountType) {
  const email = `${accountType}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@bench.example`;
  const body = { email, password: "bench-password-123", firstName: "Bench", lastName: accountType, accountType };
  const { data } = await call("POST", "/v1/auth/register", { body });
  return { token: data.session.token, userId: data.user.id };
}

/** The bench's organization, users and catalog, made in `target`'s own state. */
async function setup(target = worker) {
  const call = client(target.direct ?? target.base);
  const customer = await register(call, "customer");
  const main = await organization(call, "enterprise");
  // A second organization on a plan with a monthly ticket quota (Pro, 50,000): its joins
  // take a unit from the organization's ledger on their path, where an unlimited plan's do not
  // (docs/room-rules.md, "Quota"), so the bench shows both.
  const limited = await organization(call, "pro");
  return { ...main, customer, call, target, limitedQueue: limited.newQueue };
}

/** An organization on `plan`, its owner, and a service whose queues `newQueue` makes. */
async function organization(call, plan) {
  const owner = await register(call, "business");
  const org = (
    await call("POST", "/v1/organizations", {
      token: owner.token,
      body: { name: "Bench", slug: `bench-${Date.now()}-${plan}`, type: "banking" },
    })
  ).data;
  await call("POST", `/__bench/organizations/${org.id}/plan`, { body: { plan } });
  const location = (
    await call("POST", "/v1/locations", {
      token: owner.token,
      body: { organizationId: org.id, name: "Bench", address: "1 bench street", latitude: NEARBY.latitude, longitude: NEARBY.longitude },
    })
  ).data;
  const service = (
    await call("POST", "/v1/services", {
      token: owner.token,
      body: { name: "Bench", locationIds: [location.id], serviceTypeId: "st_bank_teller" },
    })
  ).data;
  let count = 0;
  const newQueue = async (label) => {
    const { data } = await call("POST", "/v1/business/queues", {
      token: owner.token,
      body: { serviceId: service.id, name: `${label} ${++count}` },
    });
    created.set(data.id, 0);
    return data.id;
  };
  return { owner, org, newQueue };
}

/** Seeds through the room's own join, in requests of about SEED_REQUEST_MS; stops at the budget. */
async function seedTickets(ctx, queueId, count, deadline = Infinity) {
  let done = 0;
  let chunk = 50;
  while (done < count && performance.now() < deadline) {
    const n = Math.min(chunk, count - done);
    const t = performance.now();
    await ctx.call("POST", `/__bench/queues/${queueId}/tickets`, { body: { count: n, userId: ctx.customer.userId } });
    done += n;
    chunk = Math.max(5, Math.min(2_000, Math.floor(SEED_REQUEST_MS / ((performance.now() - t) / n))));
  }
  created.set(queueId, created.get(queueId) + done);
  await settle(queueId, ctx.call);
  return done;
}

/** Waits until the outbox has projected the queue's tickets to D1, so its drain does not run during a measure. */
async function settle(queueId, via = call) {
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    const { data } = await via("GET", `/__bench/queues/${queueId}/projected`);
    if (data.tickets >= created.get(queueId)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  notes.push(`The outbox of ${queueId} had not drained after 120 s; later figures ran beside its drain.`);
}

/**
 * Waits until the Worker's processes are idle (under a tenth of a core over 300 ms): the earlier
 * load runs leave work behind them (outbox drains, the EVENTS consumer's notifications and
 * webhooks), which would otherwise be counted in the next run's CPU per request (at one
 * connection it doubled join's and GET ticket's figures). Answers false after 30 s.
 */
async function backgroundQuiet(target, windowMs = 300, maxMs = 30_000) {
  const deadline = performance.now() + maxMs;
  let before = target.cpu();
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, windowMs));
    const after = target.cpu();
    if (after.workerd - before.workerd + (after.node - before.node) < windowMs / 10) return true;
    before = after;
  }
  return false;
}

/**
 * One load run, with the CPU time its processes spent per request: workerd (the Worker, its
 * Durable Objects, local D1) apart from wrangler's Node process, which relays every D1, Queue
 * and Durable Object subrequest under `wrangler dev` and would otherwise blur the comparison.
 */
async function measure(title, options, target = worker) {
  log(`${title}`);
  if (!(await backgroundQuiet(target))) notes.push(`${title}: the Worker was still busy with earlier work after 30 s; measured beside it.`);
  const before = target.cpu();
  const result = await load({ base: target.direct ?? target.base, title, duration: CONFIG.duration, ...options });
  const after = target.cpu();
  const n = Math.max(1, result.count);
  return { ...result, workerdCpu: (after.workerd - before.workerd) / n, nodeCpu: (after.node - before.node) / n };
}

/** Tickets seeded for call-next's profile per connection: its 2 s at one connection call fewer than this. */
const PROFILE_SEED = 300;
/** The connections a profile runs with (`BENCH_PROFILE_CONNECTIONS`, 1 by default): 16 shows the work batched (drains, consumers) as the 16-connection figures pay it. */
const PROFILE_CONNECTIONS = Number(process.env.BENCH_PROFILE_CONNECTIONS ?? 1);

/**
 * The top frames of a 2 s CPU profile of the Worker's isolate under one connection (issue 43),
 * on the Worker as deployed locally only (its inspector; the figures above are without the profiler).
 */
async function profileRoute(ctx, route, options) {
  const { target } = ctx;
  if (target.label || !target.inspectorPort || process.env.BENCH_PROFILE === "0") return;
  log(`profile: ${route}, ${PROFILE_CONNECTIONS} conn, 2 s`);
  try {
    const given = await options();
    // As before a measure: the work earlier runs left behind (a 16-connection run's consumer
    // backlog) would otherwise be most of what the profile samples.
    if (!(await backgroundQuiet(target))) notes.push(`The ${route} profile ran beside earlier work still going after 30 s.`);
    const dir = process.env.BENCH_PROFILE_DIR;
    if (dir) mkdirSync(dir, { recursive: true });
    const profile = await profileWhile(
      target.inspector ?? { port: target.inspectorPort },
      () =>
        load({ base: target.direct ?? target.base, title: `${route} (profiled)`, duration: 2, connections: PROFILE_CONNECTIONS, ...given }),
      12,
      dir ? join(dir, `${route.replaceAll(" ", "-")}.cpuprofile`) : null,
    );
    sections.profiles.push({ route, ...profile });
  } catch (err) {
    notes.push(`The ${route} profile failed: ${String(err).slice(0, 200)}`);
  }
}

function row(route, baseline, connections, result, reference) {
  sections.throughput.push({ route, baseline, connections, result, reference });
}

/**
 * Baseline A at each number of connections, measured once per Worker (by the first section that
 * needs it), each beside baseline 0: a bare fetch-handler Worker in its own wrangler (./bare.ts).
 */
const baselinesA = new Map();
async function measureBaselineA(target = worker) {
  if (baselinesA.has(target)) return baselinesA.get(target);
  const baselineA = new Map();
  baselinesA.set(target, baselineA);
  for (const c of CONFIG.connections) {
    const zero = bare ? await measure(`baseline 0: bare fetch Worker, ${c} conn`, { connections: c, path: "/" }, bare) : null;
    if (zero && target === worker) row("0: bare fetch-handler Worker", null, c, zero, null);
    baselineA.set(
      c,
      await measure(`baseline A${target.label}: empty route, ${c} conn`, { connections: c, path: "/__bench/empty" }, target),
    );
    row(`A: empty route${target.label}`, zero ? "0" : null, c, baselineA.get(c), zero);
  }
  return baselineA;
}

/**
 * The hot routes on one Worker (`ctx.target`): the deployed shape behind the asset router, then
 * (issue 43) the same Worker without it. Each route is compared with that Worker's own B.
 */
async function throughput(ctx, { nearby = true } = {}) {
  const { call, target } = ctx;
  const label = target.label;
  const pingQueue = await ctx.newQueue("ping");
  const baselines = { A: await measureBaselineA(target), B: new Map() };
  for (const c of CONFIG.connections) {
    baselines.B.set(
      c,
      await measure(`baseline B${label}: empty room RPC, ${c} conn`, { connections: c, path: `/__bench/queues/${pingQueue}/ping` }, target),
    );
    row(`B: empty room RPC${label}`, null, c, baselines.B.get(c), null);
  }
  /** The B a route is compared with: measured right after it (CONFIG.bEach), else the section's first. */
  const bAfter = async (c, route) => {
    if (!CONFIG.bEach) return baselines.B.get(c);
    const b = await measure(
      `baseline B${label} after ${route}, ${c} conn`,
      { connections: c, path: `/__bench/queues/${pingQueue}/ping` },
      target,
    );
    row(`B: empty room RPC, after ${route}${label}`, null, c, b, null);
    return b;
  };
  // The credential lookup alone (issue 43, docs/hot-path.md): the user's object and the queue row
  // (tokens carrying their user); one D1 batch for tokens of the previous format.
  for (const c of measures("credential") ? CONFIG.connections : []) {
    const result = await measure(
      `credential lookup${label}, ${c} conn`,
      { connections: c, path: `/__bench/queues/${pingQueue}/credential`, token: ctx.owner.token },
      target,
    );
    row(`credential lookup (session)${label}`, "A", c, result, baselines.A.get(c));
  }

  for (const c of measures("join") ? CONFIG.connections : []) {
    const queueId = await ctx.newQueue("join");
    const result = await measure(
      `join${label}, ${c} conn`,
      { connections: c, method: "POST", path: `/v1/queues/${queueId}/join`, token: ctx.customer.token },
      target,
    );
    created.set(queueId, created.get(queueId) + result.count);
    row(`join (from an empty queue)${label}`, "B", c, result, await bAfter(c, "join"));
    await settle(queueId, call);
  }
  for (const c of measures("join") ? CONFIG.connections : []) {
    const queueId = await ctx.limitedQueue("join-limited");
    const result = await measure(
      `join, limited plan${label}, ${c} conn`,
      { connections: c, method: "POST", path: `/v1/queues/${queueId}/join`, token: ctx.customer.token },
      target,
    );
    created.set(queueId, created.get(queueId) + result.count);
    row(`join, plan with a ticket quota (from an empty queue)${label}`, "B", c, result, await bAfter(c, "join (quota)"));
    await settle(queueId, call);
  }
  if (measures("join"))
    await profileRoute(ctx, "join", async () => ({
      method: "POST",
      path: `/v1/queues/${await ctx.newQueue("join-profile")}/join`,
      token: ctx.customer.token,
    }));

  for (const c of measures("call-next") ? CONFIG.connections : []) {
    const queueId = await ctx.newQueue("call-next");
    const seeded = await seedTickets(ctx, queueId, CONFIG.callNextSeed);
    const result = await measure(
      `call-next${label}, ${c} conn`,
      { connections: c, method: "POST", path: `/v1/queues/${queueId}/call-next`, token: ctx.owner.token, amount: seeded },
      target,
    );
    row(`call-next (from ${seeded.toLocaleString("en-US")} waiting)${label}`, "B", c, result, await bAfter(c, "call-next"));
    if (result.count > seeded / 2)
      notes.push(
        `call-next${label} at ${c} connections called ${result.count} of its ${seeded} waiting tickets: the line ran low while measured (raise BENCH_CALL_NEXT_SEED).`,
      );
    await settle(queueId, call);
  }
  if (measures("call-next"))
    await profileRoute(ctx, "call-next", async () => {
      const queueId = await ctx.newQueue("call-next-profile");
      const amount = await seedTickets(ctx, queueId, PROFILE_SEED * PROFILE_CONNECTIONS);
      return { method: "POST", path: `/v1/queues/${queueId}/call-next`, token: ctx.owner.token, amount };
    });

  const ticketQueue = await ctx.newQueue("ticket");
  await seedTickets(ctx, ticketQueue, 99);
  const ticket = (await call("POST", `/v1/queues/${ticketQueue}/join`, { token: ctx.customer.token })).data;
  created.set(ticketQueue, created.get(ticketQueue) + 1);
  await settle(ticketQueue, call);
  for (const c of measures("ticket") ? CONFIG.connections : []) {
    const result = await measure(
      `GET ticket${label}, ${c} conn`,
      { connections: c, path: `/v1/tickets/${ticket.id}`, token: ctx.customer.token },
      target,
    );
    row(`GET ticket (position ${ticket.position})${label}`, "B", c, result, await bAfter(c, "GET ticket"));
  }
  if (measures("ticket"))
    await profileRoute(ctx, "GET ticket", async () => ({ path: `/v1/tickets/${ticket.id}`, token: ctx.customer.token }));

  const statusPath = `/v1/widget/queue/${ticketQueue}/status`;
  const widget = await widgetRoutes(statusPath, call);
  for (const c of measures("widget") ? CONFIG.connections : []) {
    if (!widget) {
      row(`widget status${label}`, "B", c, null, null);
      continue;
    }
    row(
      `widget status (100 waiting)${label}`,
      "B",
      c,
      await measure(`widget status${label}, ${c} conn`, { connections: c, path: statusPath }, target),
      await bAfter(c, "widget status"),
    );
  }
  if (widget && measures("widget")) await profileRoute(ctx, "widget status", async () => ({ path: statusPath }));

  let inserted = 0;
  for (const total of nearby && measures("nearby") ? CONFIG.locations : []) {
    const count = total - inserted;
    if (count > 0) {
      log(`seeding ${count} locations`);
      await call("POST", "/__bench/locations", {
        body: { organizationId: ctx.org.id, count, latitude: NEARBY.latitude, longitude: NEARBY.longitude, spreadKm: NEARBY.spreadKm },
      });
      inserted = total;
    }
    const path = `/v1/locations/nearby?lat=${NEARBY.latitude}&lon=${NEARBY.longitude}&radiusKm=${NEARBY.radiusKm}&limit=20`;
    for (const c of CONFIG.connections) {
      row(
        `nearby, ${total.toLocaleString("en-US")} locations`,
        "A",
        c,
        await measure(`nearby ${total}, ${c} conn`, { connections: c, path }, target),
        baselines.A.get(c),
      );
    }
  }
  return widget;
}

/** The widget routes come from another branch: a 404 that names no route means they are not merged. */
async function widgetRoutes(statusPath, via = call) {
  const res = await via("GET", statusPath, { expect: [200, 404] });
  if (res.status === 200) return true;
  if (/^No route for/.test(res.body?.error?.message ?? "")) return false;
  throw new Error(`GET ${statusPath} answered 404: ${JSON.stringify(res.body)}`);
}

async function growth(ctx) {
  const deadline = performance.now() + CONFIG.seedBudgetSeconds * 1000;
  for (const size of CONFIG.growthSizes) {
    const queueId = await ctx.newQueue("growth");
    log(`growth: seeding ${size} waiting tickets`);
    const reached = await seedTickets(ctx, queueId, size, deadline);
    if (reached < size)
      notes.push(
        `Growth: only ${reached.toLocaleString("en-US")} of ${size.toLocaleString("en-US")} waiting tickets could be seeded within the ${CONFIG.seedBudgetSeconds} s seeding budget (each join costs more as the queue grows; see the README).`,
      );
    log(`growth: ${CONFIG.growthRequests} joins and call-nexts at ${reached} waiting`);
    const join = [];
    const next = [];
    // Alternating keeps the number waiting where it was seeded.
    for (let i = 0; i < CONFIG.growthRequests; i++) {
      join.push(
        ...(await timeSequential(call, 1, (c) =>
          c("POST", `/v1/queues/${queueId}/join`, { token: ctx.customer.token }).catch(fail("growth join")),
        )),
      );
      next.push(
        ...(await timeSequential(call, 1, (c) =>
          c("POST", `/v1/queues/${queueId}/call-next`, { token: ctx.owner.token }).catch(fail("growth call-next")),
        )),
      );
    }
    created.set(queueId, created.get(queueId) + CONFIG.growthRequests);
    sections.growth.push({ size, reached, join: summarize(join), next: summarize(next) });
    await settle(queueId);
  }
}

/**
 * Analytics: the summary of a year of one busy queue. The history is written straight into
 * the ticket projection (08:00–20:00 every day) and the aggregates rebuilt from it, as a
 * migration of existing data would; the summary then reads the queue's hourly rows.
 */
async function analytics(ctx) {
  const baselines = await measureBaselineA();
  const queueId = await ctx.newQueue("analytics");
  const total = CONFIG.analyticsTickets;
  const perDay = Math.ceil(total / 365);
  const start = Date.UTC(2025, 0, 1);
  log(`analytics: seeding ${total} tickets`);
  for (let from = 0; from < total; from += 50_000) {
    await call("POST", "/__bench/analytics/history", {
      body: { queueId, from, count: Math.min(50_000, total - from), perDay, start },
    });
  }
  log("analytics: rebuilding the aggregates");
  const t = performance.now();
  const { data } = await call("POST", `/__bench/analytics/rebuild/${queueId}`);
  notes.push(
    `Analytics: ${data.tickets.toLocaleString("en-US")} tickets rebuilt into ${data.hours.toLocaleString("en-US")} hourly rows in ${fmt((performance.now() - t) / 1000, 1)} s (one request).`,
  );
  const path = `/v1/analytics/summary?from=2025-01-01&to=2025-12-31&queueId=${queueId}&groupBy=day`;
  for (const c of CONFIG.analyticsConnections) {
    if (!baselines.has(c))
      baselines.set(c, await measure(`baseline A: empty route, ${c} conn`, { connections: c, path: "/__bench/empty" }));
    const result = await measure(`analytics summary, ${c} conn`, { connections: c, path, token: ctx.owner.token });
    row(`analytics summary, a year of ${total.toLocaleString("en-US")} tickets (by day)`, "A", c, result, baselines.get(c));
  }
}

function fail(what) {
  return (err) => failures.push(`${what}: ${err.message}`);
}

async function fanout(ctx, widget) {
  if (!widget) {
    for (const n of CONFIG.fanoutSockets) sections.fanout.push({ n, missing: true });
    return;
  }
  const limit = openFileLimit();
  const cap = Math.max(0, limit - 512);
  const queueId = await ctx.newQueue("fan-out");
  await seedTickets(ctx, queueId, CONFIG.fanoutCalls * CONFIG.fanoutSockets.length + 10);
  const wsBase = base.replace(/^http/, "ws");
  const sockets = [];
  try {
    for (const wanted of CONFIG.fanoutSockets) {
      const n = Math.min(wanted, cap);
      if (n < wanted) notes.push(`Fan-out: ${wanted} sockets asked, ${n} opened: \`ulimit -n\` is ${limit}.`);
      log(`fan-out: opening ${n} sockets`);
      const seconds = await grow(sockets, n, wsBase, queueId);
      if (sockets.length < n) break;
      const result = await measureFanOut(sockets, CONFIG.fanoutCalls, () =>
        call("POST", `/v1/queues/${queueId}/call-next`, { token: ctx.owner.token }).then((r) => r.data),
      );
      sections.fanout.push({ n, seconds, ...result });
    }
  } finally {
    closeAll(sockets);
  }
}

/**
 * Spec-flow sockets: `n` sockets from one address connect to /v1/widget/ws without a queue and
 * subscribe by message (each lands in a socket hub), then call-next: the time until every one
 * has the update. Target: p99 ≤ 300 ms at 2,000.
 */
async function specSockets(ctx) {
  const limit = openFileLimit();
  const cap = Math.max(0, limit - 512);
  const queueId = await ctx.newQueue("spec-flow");
  await seedTickets(ctx, queueId, CONFIG.fanoutCalls * CONFIG.specSockets.length + 10);
  const wsBase = base.replace(/^http/, "ws");
  const sockets = [];
  try {
    for (const wanted of CONFIG.specSockets) {
      const n = Math.min(wanted, cap);
      if (n < wanted) notes.push(`Spec-flow sockets: ${wanted} asked, ${n} opened: \`ulimit -n\` is ${limit}.`);
      log(`spec-flow sockets: opening ${n}`);
      const seconds = await grow(sockets, n, wsBase, queueId, true);
      if (sockets.length < n) break;
      const result = await measureFanOut(sockets, CONFIG.fanoutCalls, () =>
        call("POST", `/v1/queues/${queueId}/call-next`, { token: ctx.owner.token }).then((r) => r.data),
      );
      sections.sockets.push({ n, seconds, ...result });
    }
  } finally {
    closeAll(sockets);
  }
}

/**
 * Desks (docs/desks.md): a desk's call-next over 2 queues against a plain call-next on 1 queue,
 * the same number waiting (CONFIG.callNextSeed, split evenly over the desk's two queues), at
 * each number of connections, all in this run. A desk call reads both queues' heads (2 room
 * RPCs) and then calls in one room; concurrent calls at one desk may have to read again.
 */
async function desksBench(ctx) {
  const { call, target } = ctx;
  const location = (await call("GET", `/v1/services/${await serviceOf(ctx)}`, { token: ctx.owner.token })).data.locationIds[0];
  let open = null;
  for (const c of CONFIG.connections) {
    const single = await ctx.newQueue("desk-single");
    const seeded = await seedTickets(ctx, single, CONFIG.callNextSeed);
    const plain = await measure(
      `desks${target.label}: call-next on 1 queue, ${c} conn`,
      { connections: c, method: "POST", path: `/v1/queues/${single}/call-next`, token: ctx.owner.token, amount: seeded },
      target,
    );
    await settle(single, call);

    const pair = [await ctx.newQueue("desk-a"), await ctx.newQueue("desk-b")];
    const split = (await seedTickets(ctx, pair[0], Math.ceil(seeded / 2))) + (await seedTickets(ctx, pair[1], Math.floor(seeded / 2)));
    // One desk per operator: the bench's owner closes the previous desk before opening the next.
    if (open) await call("POST", `/v1/desks/${open}/close`, { token: ctx.owner.token });
    open = (
      await call("POST", `/v1/locations/${location}/desks`, { token: ctx.owner.token, body: { name: `Bench desk ${c}`, queueIds: pair } })
    ).data.id;
    await call("POST", `/v1/desks/${open}/open`, { token: ctx.owner.token });
    const desk = await measure(
      `desks${target.label}: desk call-next over 2 queues, ${c} conn`,
      { connections: c, method: "POST", path: `/v1/desks/${open}/call-next`, token: ctx.owner.token, amount: split },
      target,
    );
    for (const q of pair) await settle(q, call);
    sections.desks.push({ label: target.label, connections: c, seeded, plain, desk });
  }
}

/** The bench organization's service (setup() keeps it in a closure): the first queue's service. */
async function serviceOf(ctx) {
  const probe = await ctx.newQueue("desk-probe");
  return (await ctx.call("GET", `/v1/queues/${probe}`, { token: ctx.owner.token })).data.serviceId;
}

function desksTable(lines) {
  if (sections.desks.length === 0) return;
  const [one, five, fifteen] = os.loadavg();
  lines.push(
    `Desks: a desk's call-next over 2 queues vs call-next on 1 queue, the same number waiting (split evenly over the desk's queues), same run. Load average at the end: ${fmt(one, 2)} / ${fmt(five, 2)} / ${fmt(fifteen, 2)}.`,
  );
  lines.push("");
  lines.push(
    "| Worker | Conns | waiting | 1 queue req/s | desk req/s | ÷ | 1 queue p50 ms | desk p50 ms | × | 1 queue p99 ms | desk p99 ms | × | workerd CPU ms/req 1 queue | desk |",
  );
  lines.push("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const { label, connections, seeded, plain, desk } of sections.desks) {
    lines.push(
      `| ${label.trim() || "as deployed locally"} | ${connections} | ${seeded.toLocaleString("en-US")} | ${fmt(plain.rps, 0)} | ${fmt(desk.rps, 0)} | ${ratio(desk.rps / plain.rps)} | ${fmt(plain.p50, 2)} | ${fmt(desk.p50, 2)} | ${ratio(desk.p50 / plain.p50)} | ${fmt(plain.p99, 2)} | ${fmt(desk.p99, 2)} | ${ratio(desk.p99 / plain.p99)} | ${fmt(plain.workerdCpu, 2)} | ${fmt(desk.workerdCpu, 2)} |`,
    );
  }
  lines.push("");
}

/**
 * Issue 43: the workerd CPU per request of the hot routes at the fewest connections, through the
 * asset router and without it, side by side (the same figures as the tables above).
 */
function cpuTable(lines) {
  const c = Math.min(...CONFIG.connections);
  const pick = (prefix, label) =>
    sections.throughput.find((r) => r.connections === c && r.route.startsWith(prefix) && r.route.endsWith(label) && r.result)?.result;
  const desk = (label) => sections.desks.find((d) => d.connections === c && d.label === label);
  const routes = [
    ["A: empty route", (l) => pick("A: empty route", l)],
    ["B: empty room RPC", (l) => pick("B: empty room RPC", l)],
    ["credential lookup (session)", (l) => pick("credential lookup", l)],
    ["join", (l) => pick("join", l)],
    ["call-next", (l) => pick("call-next", l)],
    ["GET ticket", (l) => pick("GET ticket", l)],
    ["widget status", (l) => pick("widget status", l)],
    ["desk call-next (2 queues)", (l) => desk(l)?.desk],
  ];
  const labels = ["", " (no asset router)"];
  if (!routes.some(([, get]) => labels.some((l) => get(l)))) return;
  lines.push(`workerd CPU ms per request at ${c} connection(s), through the asset router and without it (same run):`);
  lines.push("");
  lines.push("| Route | as deployed locally | without the asset router | req/s as deployed | req/s without |");
  lines.push("| --- | ---: | ---: | ---: | ---: |");
  for (const [name, get] of routes) {
    const [a, b] = labels.map((l) => get(l));
    lines.push(`| ${name} | ${fmt(a?.workerdCpu, 2)} | ${fmt(b?.workerdCpu, 2)} | ${fmt(a?.rps, 0)} | ${fmt(b?.rps, 0)} |`);
  }
  lines.push("");
}

function table() {
  const lines = [];
  const total = (performance.now() - started) / 1000;
  lines.push(`### Benchmark, ${new Date().toISOString().slice(0, 10)}: ${fmt(total, 0)} s in all`);
  lines.push("");
  lines.push(
    `Machine: ${machine()}. Each load run: ${CONFIG.duration} s (autocannon, keep-alive connections), Worker under \`wrangler dev\` (local D1 and Durable Objects).`,
  );
  lines.push(
    "Ratios: req/s ÷ baseline req/s (1 = as fast as the baseline); latencies as × the baseline's (1 = as fast). Baseline 0: a bare fetch-handler Worker (its own `wrangler dev`, same run); A: an empty route of the Worker; B: an empty RPC into a queue's room (each hot route is compared with the B measured right after it, printed just above the route's row). CPU ms/req: user + system time of the workerd process (the Worker, its objects, local D1) and of wrangler's Node process (which relays D1, Queue and Durable Object subrequests in dev), per answered request.",
  );
  lines.push(
    `Load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(", ")}.`,
  );
  lines.push("");
  lines.push("| Route | Conns | req/s | ÷ base | p50 ms | × base | p99 ms | × base | workerd CPU ms/req | node CPU ms/req |");
  lines.push("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const { route, baseline, connections, result, reference } of sections.throughput) {
    const label = baseline ? `${route} vs ${baseline}` : `**${route}**`;
    if (!result) {
      lines.push(`| ${label} | ${connections} | n/a (widget routes missing) | | | | | | | |`);
      continue;
    }
    const r = reference;
    lines.push(
      `| ${label} | ${connections} | ${fmt(result.rps, 0)} | ${r ? ratio(result.rps / r.rps) : ""} | ${fmt(result.p50, 2)} | ${r ? ratio(result.p50 / r.p50) : ""} | ${fmt(result.p99, 2)} | ${r ? ratio(result.p99 / r.p99) : ""} | ${fmt(result.workerdCpu, 2)} | ${fmt(result.nodeCpu, 2)} |`,
    );
  }
  lines.push("");
  for (const p of sections.profiles) {
    lines.push(
      `CPU profile of the isolate (the Worker and its objects), ${p.route}, ${PROFILE_CONNECTIONS} connection${PROFILE_CONNECTIONS === 1 ? "" : "s"}, 2 s: ${p.requests} requests, ${fmt(p.totalMs, 2)} ms of isolate time per request. Top frames by self time:`,
    );
    lines.push("");
    lines.push("| Frame | ms/req | share |");
    lines.push("| --- | ---: | ---: |");
    for (const f of p.frames) lines.push(`| \`${f.frame}\` | ${fmt(f.msPerRequest, 3)} | ${fmt(f.share * 100, 1)} % |`);
    lines.push("");
    if (p.steps?.length) {
      lines.push(`Our functions by total time (self and callees, the outermost call on a stack), ${p.route}:`);
      lines.push("");
      lines.push("| Function | ms/req | share |");
      lines.push("| --- | ---: | ---: |");
      for (const f of p.steps) lines.push(`| \`${f.frame}\` | ${fmt(f.msPerRequest, 3)} | ${fmt(f.share * 100, 1)} % |`);
      lines.push("");
    }
  }
  const g = sections.growth;
  if (g.length > 0) {
    const first = g[0];
    const last = g[g.length - 1];
    const sizeLabel = (s) =>
      s.reached === s.size ? s.size.toLocaleString("en-US") : `${s.reached.toLocaleString("en-US")} (of ${s.size.toLocaleString("en-US")})`;
    lines.push(
      `Cost growth: ${CONFIG.growthRequests} joins and ${CONFIG.growthRequests} call-nexts, one at a time, alternating, at each number of waiting tickets (p50 / p99 ms).`,
    );
    lines.push("");
    lines.push(
      `| Operation | ${g.map((s) => `${sizeLabel(s)} waiting`).join(" | ")} | p50 ratio ${sizeLabel(last)} / ${sizeLabel(first)} |`,
    );
    lines.push(`| --- | ${g.map(() => "---:").join(" | ")} | ---: |`);
    for (const [name, key] of [
      ["join", "join"],
      ["call-next", "next"],
    ]) {
      lines.push(
        `| ${name} | ${g.map((s) => `${fmt(s[key].p50, 1)} / ${fmt(s[key].p99, 1)}`).join(" | ")} | ${ratio(last[key].p50 / first[key].p50)} |`,
      );
    }
    lines.push("");
  }
  if (sections.fanout.length > 0) {
    lines.push(
      `Fan-out: time from sending call-next until every subscribed socket had the queue_update showing the called ticket, over ${CONFIG.fanoutCalls} calls.`,
    );
    lines.push("");
    lines.push("| Sockets | subscribe all (s) | all updated p50 ms | all updated p99 ms | per socket p50 ms |");
    lines.push("| ---: | ---: | ---: | ---: | ---: |");
    for (const f of sections.fanout) {
      if (f.missing) lines.push(`| ${f.n.toLocaleString("en-US")} | n/a (widget routes missing) | | | |`);
      else
        lines.push(
          `| ${f.n.toLocaleString("en-US")} | ${fmt(f.seconds, 1)} | ${fmt(f.p50, 1)} | ${fmt(f.p99, 1)} | ${fmt(f.socketP50, 1)} |`,
        );
    }
    lines.push("");
  }
  if (sections.sockets.length > 0) {
    lines.push(
      `Spec-flow sockets (connect to /v1/widget/ws, then subscribe; all from one address, held by the socket hubs): time from sending call-next until every socket had the update, over ${CONFIG.fanoutCalls} calls. Target: p99 ≤ 300 ms at 2,000.`,
    );
    lines.push("");
    lines.push("| Sockets | connect and subscribe all (s) | all updated p50 ms | all updated p99 ms | per socket p50 ms |");
    lines.push("| ---: | ---: | ---: | ---: | ---: |");
    for (const f of sections.sockets) {
      lines.push(
        `| ${f.n.toLocaleString("en-US")} | ${fmt(f.seconds, 1)} | ${fmt(f.p50, 1)} | ${fmt(f.p99, 1)} | ${fmt(f.socketP50, 1)} |`,
      );
    }
    lines.push("");
  }
  desksTable(lines);
  cpuTable(lines);
  for (const note of notes) lines.push(`- ${note}`);
  return lines.join("\n");
}

let exitCode = 0;
try {
  const ctx = await setup();
  // The same routes on the Worker without the asset router (its own state, set up the same way).
  const apiCtx = api ? await setup(api) : null;
  const widget = runs("throughput") ? await throughput(ctx) : await widgetRoutes(`/v1/widget/queue/${await ctx.newQueue("probe")}/status`);
  if (apiCtx && runs("throughput")) await throughput(apiCtx, { nearby: false });
  if (runs("growth")) await growth(ctx);
  if (runs("fanout")) await fanout(ctx, widget);
  if (runs("sockets")) await specSockets(ctx);
  if (runs("analytics")) await analytics(ctx);
  if (runs("desks")) await desksBench(ctx);
  if (apiCtx && runs("desks")) await desksBench(apiCtx);
} catch (err) {
  failures.push(`the bench stopped: ${err.stack ?? err}`);
} finally {
  worker.stop();
  api?.stop();
  bare?.stop();
}
console.log(table());
if (failures.length > 0) {
  exitCode = 1;
  console.error(`\n${failures.length} failure(s):`);
  for (const f of failures) console.error(`- ${f}`);
}
process.exit(exitCode);
