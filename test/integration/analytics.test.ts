import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { rebuildAnalytics } from "../../src/analytics/analytics-aggregates";
import { estimatesQuery, operatorsQuery, summaryQuery } from "../../src/analytics/analytics";
import { database } from "../../src/db/client";
import { sql } from "drizzle-orm";
import { call, expectError, expectOk } from "../helpers/api";
import { insertLocation, insertService } from "../helpers/catalog";
import { addMember, createApiKey, createOrganization, registerUser, setPlan, type TestUser } from "../helpers/fixtures";
import { depsOf } from "../../src/http/deps";

// Analytics over a generated history: thousands of tickets written straight into the D1
// projection (two time zones, both with a DST change inside the range, several operators and
// every channel), the aggregates rebuilt, and every figure the API answers compared with a
// computation made here, from the generated tickets, without the code under test.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const SOURCES = ["app", "widget", "qr", "nfc", "remote", "operator", "vip", "transfer", "recovery"] as const;

interface Gen {
  id: string;
  queue_id: string;
  status: string;
  source: string;
  assigned_to_id: string | null;
  called_at: number | null;
  serving_at: number | null;
  served_at: number | null;
  transferred_to_id: string | null;
  first_estimate_minutes: number | null;
  created_at: number;
}

/** A small deterministic PRNG (mulberry32), so a failure can be replayed. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The history: 2026-02-20 → 2026-04-15 (UTC), covering New York's DST change (March 8) and
// Paris's (March 29).
const HISTORY_FROM = Date.UTC(2026, 1, 20);
const HISTORY_TO = Date.UTC(2026, 3, 15);

function generate(queueId: string, n: number, operators: string[], random: () => number): Gen[] {
  const out: Gen[] = [];
  for (let i = 0; i < n; i++) {
    const created = HISTORY_FROM + Math.floor(random() * (HISTORY_TO - HISTORY_FROM));
    const source = SOURCES[Math.floor(random() * SOURCES.length)]!;
    const roll = random();
    const status =
      roll < 0.55
        ? "served"
        : roll < 0.63
          ? "expired"
          : roll < 0.68
            ? "skipped"
            : roll < 0.78
              ? "cancelled"
              : roll < 0.84
                ? "transfer"
                : roll < 0.92
                  ? "waiting"
                  : roll < 0.96
                    ? "called"
                    : "serving";
    // Waits from seconds to a few hours (a long tail reaching the coarse buckets).
    const wait = Math.floor((random() < 0.9 ? random() * 50 : 50 + random() * 400) * MINUTE);
    const called = !(status === "waiting" || (status === "cancelled" && random() < 0.5) || status === "transfer");
    const calledAt = called ? created + wait : null;
    const servingAt = status === "served" || status === "serving" ? calledAt! + Math.floor(random() * 2 * MINUTE) : null;
    const servedAt = status === "served" ? servingAt! + Math.floor((1 + random() * 40) * MINUTE) : null;
    const estimate = random() < 0.8 ? Math.round(random() * 60 * 2) / 2 : null;
    out.push({
      id: `tkt_gen_${queueId.slice(4, 12)}_${i}`,
      queue_id: queueId,
      status: status === "transfer" ? "cancelled" : status,
      source,
      assigned_to_id: called ? operators[Math.floor(random() * operators.length)]! : null,
      called_at: calledAt,
      serving_at: servingAt,
      served_at: servedAt,
      transferred_to_id: status === "transfer" ? `tkt_elsewhere_${i}` : null,
      first_estimate_minutes: estimate,
      created_at: created,
    });
  }
  return out;
}

async function insertTickets(organizationId: string, serviceId: string, tickets: Gen[]): Promise<void> {
  const statements = [];
  for (let i = 0; i < tickets.length; i += 400) {
    const rows = tickets
      .slice(i, i + 400)
      .map((t, k) => [
        t.id,
        t.queue_id,
        t.status,
        t.source,
        t.assigned_to_id,
        t.called_at,
        t.serving_at,
        t.served_at,
        t.transferred_to_id,
        t.first_estimate_minutes,
        t.created_at,
        i + k + 1,
      ]);
    statements.push(
      env.DB.prepare(
        `INSERT INTO tickets (id, queue_id, service_id, organization_id, user_id, number, display_code, status, party_size, is_priority,
           is_ghost_mode, source, assigned_to_id, called_at, serving_at, served_at, transferred_to_id, first_estimate_minutes,
           created_at, updated_at, version)
         SELECT j.value->>0, j.value->>1, ?1, ?2, 'usr_visitor', j.value->>11, 'A-001', j.value->>2, 1, 0, 0, j.value->>3, j.value->>4,
           j.value->>5, j.value->>6, j.value->>7, j.value->>8, j.value->>9, j.value->>10, j.value->>10, 3
         FROM json_each(?3) AS j`,
      ).bind(serviceId, organizationId, JSON.stringify(rows)),
    );
  }
  await env.DB.batch(statements);
}

// ---- the independent computation ----------------------------------------------------------

const wallFormat = new Map<string, Intl.DateTimeFormat>();
/** Local date, hour and weekday of an instant, through Intl directly. */
function local(ms: number, timeZone: string) {
  let f = wallFormat.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      hourCycle: "h23",
      weekday: "short",
    });
    wallFormat.set(timeZone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return {
    date: `${p.year}-${p.month}-${p.day}`,
    hour: Number(p.hour),
    weekday: ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(p.weekday!),
  };
}

/** Nearest-rank quantile of exact values (minutes). */
function exactQuantile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]!;
}

/** The documented precision (docs/analytics.md): half the width of the bucket holding the value. */
function allowedError(minutes: number): number {
  const width = minutes < 10 ? 0.25 : minutes < 60 ? 1 : minutes < 180 ? 5 : minutes < 480 ? 15 : 60;
  return width / 2 + 0.01;
}

function mean(values: number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

function expected(tickets: Gen[]) {
  const waits = tickets.filter((t) => t.called_at !== null).map((t) => (t.called_at! - t.created_at) / MINUTE);
  const services = tickets.filter((t) => t.status === "served").map((t) => (t.served_at! - t.serving_at!) / MINUTE);
  const served = tickets.filter((t) => t.status === "served").length;
  const noShow = tickets.filter((t) => t.status === "expired" || t.status === "skipped").length;
  const transferred = tickets.filter((t) => t.status === "cancelled" && t.transferred_to_id !== null).length;
  const cancelled = tickets.filter((t) => t.status === "cancelled" && t.transferred_to_id === null).length;
  const ended = served + noShow + cancelled;
  return {
    created: tickets.length,
    served,
    noShow,
    cancelled,
    transferred,
    abandonment: ended === 0 ? null : (noShow + cancelled) / ended,
    waits,
    services,
  };
}

function expectDuration(actual: { count: number; mean: number | null; p50: number | null; p90: number | null }, values: number[]) {
  expect(actual.count).toBe(values.length);
  if (values.length === 0) {
    expect(actual).toEqual({ count: 0, mean: null, p50: null, p90: null });
    return;
  }
  expect(Math.abs(actual.mean! - mean(values)!)).toBeLessThanOrEqual(0.006);
  for (const [p, key] of [
    [0.5, "p50"],
    [0.9, "p90"],
  ] as const) {
    const exact = exactQuantile(values, p)!;
    expect(Math.abs(actual[key]! - exact), `${key}: ${actual[key]} vs exact ${exact}`).toBeLessThanOrEqual(allowedError(exact));
  }
}

function expectFigures(actual: any, tickets: Gen[]) {
  const e = expected(tickets);
  expect(actual).toMatchObject({
    created: e.created,
    served: e.served,
    noShow: e.noShow,
    cancelled: e.cancelled,
    transferred: e.transferred,
  });
  if (e.abandonment === null) expect(actual.abandonmentRate).toBeNull();
  else expect(Math.abs(actual.abandonmentRate - e.abandonment)).toBeLessThanOrEqual(0.00006);
  expectDuration(actual.waitMinutes, e.waits);
  expectDuration(actual.serviceMinutes, e.services);
}

// ---- the fixture ----------------------------------------------------------------------------

interface World {
  owner: TestUser;
  orgId: string;
  paris: { locationId: string; serviceId: string; queueIds: string[] };
  newYork: { locationId: string; serviceId: string; queueIds: string[] };
  operators: TestUser[];
  tickets: Gen[];
}

let world: World;

async function createQueue(owner: TestUser, orgId: string, serviceId: string): Promise<string> {
  return expectOk(
    await call("POST", "/v1/business/queues", {
      token: owner.token,
      body: { serviceId, name: `Q ${serviceId.slice(-4)}` },
      headers: { "X-Organization-Id": orgId },
    }),
    201,
  ).id;
}

beforeAll(async () => {
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "banking" });
  await setPlan(org.id, "pro");
  const parisLocation = await insertLocation(org.id, "Europe/Paris", Date.UTC(2025, 0, 1));
  const newYorkLocation = await insertLocation(org.id, "America/New_York", Date.UTC(2025, 0, 2));
  const parisService = await insertService(org.id, parisLocation);
  const newYorkService = await insertService(org.id, newYorkLocation);
  const operators: TestUser[] = [];
  for (const firstName of ["Ada", "Grace", "Linus"]) {
    const user = await registerUser({ firstName });
    await addMember(owner, org.id, "operator", user);
    operators.push(user);
  }
  const paris = {
    locationId: parisLocation,
    serviceId: parisService,
    queueIds: [await createQueue(owner, org.id, parisService), await createQueue(owner, org.id, parisService)],
  };
  const newYork = { locationId: newYorkLocation, serviceId: newYorkService, queueIds: [await createQueue(owner, org.id, newYorkService)] };
  const random = prng(20260323);
  const ids = operators.map((o) => o.id);
  const tickets = [
    ...generate(paris.queueIds[0]!, 1500, ids, random),
    ...generate(paris.queueIds[1]!, 700, ids.slice(0, 2), random),
    ...generate(newYork.queueIds[0]!, 1500, ids.slice(1), random),
  ];
  await insertTickets(org.id, parisService, tickets);
  const rebuilt = await rebuildAnalytics(depsOf(env), org.id);
  expect(rebuilt.tickets).toBe(tickets.length);
  world = { owner, orgId: org.id, paris, newYork, operators, tickets };
}, 120_000);

function get(path: string, token = world.owner.token) {
  return call("GET", path, { token, headers: { "X-Organization-Id": world.orgId } });
}

function inRange(t: Gen, queueIds: string[], from: number, to: number) {
  return queueIds.includes(t.queue_id) && t.created_at >= from && t.created_at < to;
}

describe("GET /v1/analytics/summary over a generated history", () => {
  it("Paris location, by day: totals, channels and every local day match an independent count (DST day included)", async () => {
    // March 1–31 in Paris: from 00:00 CET on the 1st to 00:00 CEST on April 1 (the DST change on the 29th).
    const from = Date.UTC(2026, 1, 28, 23);
    const to = Date.UTC(2026, 2, 31, 22);
    const data = expectOk(
      await get(`/v1/analytics/summary?from=2026-03-01&to=2026-03-31&locationId=${world.paris.locationId}&groupBy=day`),
    );
    expect(data.from).toBe(new Date(from).toISOString());
    expect(data.to).toBe(new Date(to).toISOString());
    expect(data.timeZones).toEqual(["Europe/Paris"]);
    expect(data.queues).toBe(2);
    const scoped = world.tickets.filter((t) => inRange(t, world.paris.queueIds, from, to));
    expect(scoped.length).toBeGreaterThan(1000);
    expectFigures(data.totals, scoped);
    for (const source of SOURCES) {
      const of = scoped.filter((t) => t.source === source);
      const e = expected(of);
      expect(data.channels[source]).toMatchObject({
        created: e.created,
        served: e.served,
        noShow: e.noShow,
        cancelled: e.cancelled,
        transferred: e.transferred,
      });
      expect(Math.abs(data.channels[source].meanWaitMinutes - mean(e.waits)!)).toBeLessThanOrEqual(0.006);
    }
    const byDay = new Map<string, Gen[]>();
    for (const t of scoped)
      byDay.set(local(t.created_at, "Europe/Paris").date, [...(byDay.get(local(t.created_at, "Europe/Paris").date) ?? []), t]);
    expect(data.buckets.map((b: any) => b.label)).toEqual([...byDay.keys()].sort());
    expect(data.buckets).toHaveLength(31);
    for (const bucket of data.buckets) expectFigures(bucket, byDay.get(bucket.label)!);
    // The DST day starts at 00:00 CET (23:00 UTC) and the next at 00:00 CEST (22:00 UTC): 23 hours.
    const dst = data.buckets.find((b: any) => b.label === "2026-03-29");
    const next = data.buckets.find((b: any) => b.label === "2026-03-30");
    expect(dst.startsAt).toBe("2026-03-28T23:00:00.000Z");
    expect(Date.parse(next.startsAt) - Date.parse(dst.startsAt)).toBe(23 * HOUR);
  });

  it("New York, by hour across the spring-forward night: local hours with their offsets, 02:00 missing", async () => {
    const data = expectOk(
      await get(`/v1/analytics/summary?from=2026-03-08&to=2026-03-08&locationId=${world.newYork.locationId}&groupBy=hour`),
    );
    // March 8 in New York: 00:00 EST (05:00 UTC) to 00:00 EDT (04:00 UTC the 9th), 23 hours.
    expect(data.from).toBe("2026-03-08T05:00:00.000Z");
    expect(data.to).toBe("2026-03-09T04:00:00.000Z");
    const scoped = world.tickets.filter((t) => inRange(t, world.newYork.queueIds, Date.parse(data.from), Date.parse(data.to)));
    const hours = new Map<number, Gen[]>();
    for (const t of scoped) {
      const h = Math.floor(t.created_at / HOUR) * HOUR;
      hours.set(h, [...(hours.get(h) ?? []), t]);
    }
    expect(data.buckets).toHaveLength(hours.size);
    for (const bucket of data.buckets) {
      const start = Date.parse(bucket.startsAt);
      const offset = start < Date.UTC(2026, 2, 8, 7) ? "-05:00" : "-04:00";
      const hour = local(start, "America/New_York").hour;
      expect(bucket.label).toBe(`2026-03-08T${String(hour).padStart(2, "0")}:00${offset}`);
      expectFigures(bucket, hours.get(start)!);
    }
    expect(data.buckets.some((b: any) => b.label.startsWith("2026-03-08T02:"))).toBe(false);
    expect(data.buckets.some((b: any) => b.label === "2026-03-08T03:00-04:00")).toBe(true);
  });

  it("the whole organization, by week: both zones, local weeks from Monday, no single start instant", async () => {
    const data = expectOk(await get("/v1/analytics/summary?from=2026-03-02&to=2026-04-05&groupBy=week"));
    expect(data.timeZones).toEqual(["America/New_York", "Europe/Paris"]);
    expect(data.queues).toBe(3);
    const paris = world.tickets.filter((t) => inRange(t, world.paris.queueIds, Date.UTC(2026, 2, 1, 23), Date.UTC(2026, 3, 5, 22)));
    const ny = world.tickets.filter((t) => inRange(t, world.newYork.queueIds, Date.UTC(2026, 2, 2, 5), Date.UTC(2026, 3, 6, 4)));
    expectFigures(data.totals, [...paris, ...ny]);
    const weekOf = (t: Gen, zone: string) => {
      const d = local(t.created_at, zone);
      const date = new Date(`${d.date}T00:00:00Z`);
      date.setUTCDate(date.getUTCDate() - d.weekday);
      return date.toISOString().slice(0, 10);
    };
    const weeks = new Map<string, Gen[]>();
    for (const t of paris) weeks.set(weekOf(t, "Europe/Paris"), [...(weeks.get(weekOf(t, "Europe/Paris")) ?? []), t]);
    for (const t of ny) weeks.set(weekOf(t, "America/New_York"), [...(weeks.get(weekOf(t, "America/New_York")) ?? []), t]);
    expect(data.buckets.map((b: any) => b.label)).toEqual(["2026-03-02", "2026-03-09", "2026-03-16", "2026-03-23", "2026-03-30"]);
    for (const bucket of data.buckets) {
      expect(bucket.startsAt).toBeNull();
      expectFigures(bucket, weeks.get(bucket.label)!);
    }
  });

  it("one queue, by instants: the range is rounded out to whole hours", async () => {
    const queueId = world.paris.queueIds[1]!;
    const data = expectOk(await get(`/v1/analytics/summary?from=2026-03-10T08:30:00Z&to=2026-03-12T17:10:00%2B01:00&queueId=${queueId}`));
    expect(data.from).toBe("2026-03-10T08:00:00.000Z");
    expect(data.to).toBe("2026-03-12T17:00:00.000Z");
    expect(data.queues).toBe(1);
    expectFigures(
      data.totals,
      world.tickets.filter((t) => inRange(t, [queueId], Date.UTC(2026, 2, 10, 8), Date.UTC(2026, 2, 12, 17))),
    );
  });
});

describe("heatmap, estimates and operators over the same history", () => {
  it("heatmap: arrivals by local weekday × hour in New York", async () => {
    const data = expectOk(await get(`/v1/analytics/heatmap?from=2026-02-23&to=2026-04-12&locationId=${world.newYork.locationId}`));
    const scoped = world.tickets.filter((t) => inRange(t, world.newYork.queueIds, Date.parse(data.from), Date.parse(data.to)));
    const cells = Array.from({ length: 7 }, () => Array.from({ length: 24 }, () => 0));
    for (const t of scoped) {
      const l = local(t.created_at, "America/New_York");
      cells[l.weekday]![l.hour]! += 1;
    }
    expect(data.weekdays[0]).toBe("monday");
    expect(data.total).toBe(scoped.length);
    expect(data.arrivals).toEqual(cells);
  });

  it("estimates: absolute error and bias per queue, against the first estimate each ticket kept", async () => {
    const data = expectOk(await get(`/v1/analytics/estimates?from=2026-03-01&to=2026-03-31&serviceId=${world.paris.serviceId}`));
    const from = Date.parse(data.from);
    const to = Date.parse(data.to);
    expect(data.queues.map((q: any) => q.queueId).sort()).toEqual([...world.paris.queueIds].sort());
    const check = (actual: any, tickets: Gen[]) => {
      const measured = tickets.filter((t) => t.called_at !== null && t.first_estimate_minutes !== null);
      const bias = measured.map((t) => (t.called_at! - t.created_at) / MINUTE - t.first_estimate_minutes!);
      const errors = bias.map(Math.abs);
      expect(actual.estimated).toBe(measured.length);
      expect(Math.abs(actual.meanAbsoluteErrorMinutes - mean(errors)!)).toBeLessThanOrEqual(0.006);
      expect(Math.abs(actual.meanBiasMinutes - mean(bias)!)).toBeLessThanOrEqual(0.006);
      expect(Math.abs(actual.p50AbsoluteErrorMinutes - exactQuantile(errors, 0.5)!)).toBeLessThanOrEqual(
        allowedError(exactQuantile(errors, 0.5)!),
      );
      expect(Math.abs(actual.p90AbsoluteErrorMinutes - exactQuantile(errors, 0.9)!)).toBeLessThanOrEqual(
        allowedError(exactQuantile(errors, 0.9)!),
      );
    };
    for (const q of data.queues)
      check(
        q,
        world.tickets.filter((t) => inRange(t, [q.queueId], from, to)),
      );
    check(
      data.totals,
      world.tickets.filter((t) => inRange(t, world.paris.queueIds, from, to)),
    );
  });

  it("operators: calls, served, no-shows, mean service time and active hours per operator", async () => {
    const data = expectOk(await get("/v1/analytics/operators?from=2026-03-01&to=2026-03-31"));
    const paris = world.tickets.filter((t) => inRange(t, world.paris.queueIds, Date.UTC(2026, 1, 28, 23), Date.UTC(2026, 2, 31, 22)));
    const ny = world.tickets.filter((t) => inRange(t, world.newYork.queueIds, Date.UTC(2026, 2, 1, 5), Date.UTC(2026, 3, 1, 4)));
    expect(data.operators).toHaveLength(3);
    for (const op of world.operators) {
      const row = data.operators.find((o: any) => o.operatorId === op.id);
      const mine = (ts: Gen[]) => ts.filter((t) => t.assigned_to_id === op.id && t.called_at !== null);
      const all = [...mine(paris), ...mine(ny)];
      const served = all.filter((t) => t.status === "served");
      const hours = (ts: Gen[]) => new Set(ts.map((t) => Math.floor(t.called_at! / HOUR))).size;
      expect(row).toMatchObject({
        calls: all.length,
        served: served.length,
        noShows: all.filter((t) => t.status === "expired" || t.status === "skipped").length,
        activeHours: hours(mine(paris)) + hours(mine(ny)),
        recalls: 0,
        desk: null,
      });
      expect(row.name).toMatch(/^(Ada|Grace|Linus) User$/);
      expect(Math.abs(row.meanServiceMinutes - mean(served.map((t) => (t.served_at! - t.serving_at!) / MINUTE))!)).toBeLessThanOrEqual(
        0.006,
      );
    }
  });

  it("the hot queries use their indexes (EXPLAIN QUERY PLAN through D1)", async () => {
    const plan = async (query: { toSQL(): { sql: string; params: unknown[] } }) => {
      const { sql: text, params } = query.toSQL();
      return (
        await env.DB.prepare(`EXPLAIN QUERY PLAN ${text}`)
          .bind(...params)
          .all<{ detail: string }>()
      ).results
        .map((r) => r.detail)
        .join(" | ");
    };
    const db = database(env.DB);
    const zone = { timeZone: "Europe/Paris", queueIds: world.paris.queueIds, from: 0, to: Date.UTC(2027, 0, 1) };
    const hourly = await plan(estimatesQuery(depsOf(env), zone));
    expect(hourly).toMatch(
      /SEARCH h?\s*analytics_hourly USING (PRIMARY KEY|INDEX sqlite_autoindex_analytics_hourly_1) \(queue_id=\? AND hour_start>\? AND hour_start<\?\)/,
    );
    expect(hourly).not.toMatch(/SCAN analytics_hourly/);
    // The summary's grouped read (a DST change inside the range: the offset is a CASE) reads the same key range.
    const summary = await plan(
      summaryQuery(depsOf(env), zone, "day", sql.raw("(CASE WHEN hour_start < 1774746000000 THEN 3600000 ELSE 7200000 END)")),
    );
    expect(summary).toMatch(
      /SEARCH analytics_hourly USING (PRIMARY KEY|INDEX sqlite_autoindex_analytics_hourly_1) \(queue_id=\? AND hour_start>\? AND hour_start<\?\)/,
    );
    expect(summary).not.toMatch(/SCAN analytics_hourly/);
    const operators = await plan(operatorsQuery(depsOf(env), world.orgId, zone));
    expect(operators).toMatch(/SEARCH t USING INDEX tickets_org_created_idx \(organization_id=\? AND created_at>\? AND created_at<\?\)/);
  });
});

describe("who may read analytics, on which plan, over which range", () => {
  it("starter: 402 PLAN_REQUIRED on every analytics route, with the shared 402 details", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    for (const route of ["summary", "operators", "heatmap", "estimates"]) {
      const res = await call("GET", `/v1/analytics/${route}?from=2026-01-01&to=2026-01-31`, { token: owner.token });
      expectError(res, 402, "PLAN_REQUIRED");
      expect(res.body.error.details).toMatchObject({ currentPlan: "starter", requiredPlan: "pro", feature: "analytics", limit: null });
    }
    await setPlan(org.id, "enterprise");
    expectOk(await call("GET", "/v1/analytics/summary?from=2026-01-01&to=2026-01-31", { token: owner.token }));
  });

  it("operators get 403; managers and read:analytics keys read; a key without the scope gets 403", async () => {
    const manager = await registerUser();
    await addMember(world.owner, world.orgId, "manager", manager);
    const path = `/v1/analytics/summary?from=2026-03-01&to=2026-03-02&queueId=${world.paris.queueIds[0]}`;
    expectError(await get(path, world.operators[0]!.token), 403, "AUTHORIZATION_ERROR");
    const viaManager = expectOk(await get(path, manager.token));
    const analyticsKey = await createApiKey(world.owner, world.orgId, ["read:analytics"]);
    const queuesKey = await createApiKey(world.owner, world.orgId, ["read:queues"]);
    const viaKey = expectOk(await call("GET", path, { headers: { "X-API-Key": analyticsKey.key } }));
    expect(viaKey.totals).toEqual(viaManager.totals);
    expectError(await call("GET", path, { headers: { "X-API-Key": queuesKey.key } }), 403, "AUTHORIZATION_ERROR");
  });

  it("refuses a range over a year, an empty or reversed one and malformed dates, naming the field", async () => {
    expectError(await get("/v1/analytics/summary?from=2025-01-01&to=2026-01-02"), 400, "VALIDATION_ERROR", "to");
    const over = await get("/v1/analytics/heatmap?from=2025-01-01T00:00:00Z&to=2026-01-02T00:00:01Z");
    expectError(over, 400, "VALIDATION_ERROR", "to");
    expect(over.body.error.details.maxDays).toBe(366);
    // A leap year, whole, is not over a year.
    expectOk(await get("/v1/analytics/summary?from=2024-01-01&to=2024-12-31"));
    expectError(await get("/v1/analytics/summary?from=2026-03-10&to=2026-03-09"), 400, "VALIDATION_ERROR", "to");
    expectError(await get("/v1/analytics/summary?from=2026-03-10T10:00:00Z&to=2026-03-10T10:00:00Z"), 400, "VALIDATION_ERROR", "to");
    expectError(await get("/v1/analytics/summary?from=yesterday&to=2026-03-09"), 400, "VALIDATION_ERROR", "from");
    // Without `to` the range ends with today (issue #32): from two years back it is over a year.
    expectError(await get("/v1/analytics/summary?from=2024-03-01"), 400, "VALIDATION_ERROR", "to");
    expectError(await get("/v1/analytics/summary?from=2026-03-01&to=2026-03-02&groupBy=month"), 400, "VALIDATION_ERROR", "groupBy");
  });

  it("a filter id of another organization, or unknown, is 404 naming the field; a queue outside the service is an empty scope", async () => {
    const other = await registerUser();
    const otherOrg = await createOrganization(other);
    const otherLocation = await insertLocation(otherOrg.id, "UTC");
    const otherService = await insertService(otherOrg.id, otherLocation);
    const range = "from=2026-03-01&to=2026-03-02";
    expectError(await get(`/v1/analytics/summary?${range}&locationId=${otherLocation}`), 404, "NOT_FOUND", "locationId");
    expectError(await get(`/v1/analytics/operators?${range}&serviceId=${otherService}`), 404, "NOT_FOUND", "serviceId");
    expectError(await get(`/v1/analytics/estimates?${range}&queueId=que_00000000000000000000`), 404, "NOT_FOUND", "queueId");
    const empty = expectOk(
      await get(`/v1/analytics/summary?${range}&serviceId=${world.newYork.serviceId}&queueId=${world.paris.queueIds[0]}`),
    );
    expect(empty).toMatchObject({ queues: 0, timeZones: [], buckets: [], totals: { created: 0, abandonmentRate: null } });
  });
});
