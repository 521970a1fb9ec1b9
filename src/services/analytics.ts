// The analytics reads. Summary, heatmap and estimates read the hourly aggregates (a year of
// one queue is at most 8,784 rows); operators read the ticket projection (an aggregate per
// operator would cost a row per operator per hour for one figure set). Every read takes the
// scope of analytics-scope.ts and rounds its range out to whole UTC hours, the aggregates'
// resolution.

import {
  addFigures,
  channelFigures,
  emptyFigures,
  estimateFigures,
  minutesOf,
  summaryFigures,
  type AggregateFigures,
} from "../domain/analytics";
import { wallTimeAt, zonedWallTimeToUtc, type WallTime } from "../domain/recurrence";
import { HOUR, iso } from "../lib/time";
import type { AnalyticsScope, ZoneScope } from "./analytics-scope";

export const GROUP_BY = ["hour", "day", "week"] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;

interface HourlyRecord {
  queue_id: string;
  hour_start: number;
  created: number;
  served: number;
  no_show: number;
  cancelled: number;
  transferred: number;
  waited: number;
  wait_ms: number;
  wait_hist: string;
  serviced: number;
  service_ms: number;
  service_hist: string;
  estimated: number;
  estimate_error_ms: number;
  estimate_bias_ms: number;
  estimate_error_hist: string;
  channels: string;
}

/** The zone's range rounded out to whole UTC hours. */
function hourRange(zone: { from: number; to: number }): { from: number; to: number } {
  return { from: Math.floor(zone.from / HOUR) * HOUR, to: Math.ceil(zone.to / HOUR) * HOUR };
}

/** The hot query: primary key (queue_id, hour_start) ranges, one per queue. */
export const HOURLY_QUERY = `SELECT * FROM analytics_hourly
  WHERE queue_id IN (SELECT value FROM json_each(?1)) AND hour_start >= ?2 AND hour_start < ?3`;

async function hourlyRows(db: D1Database, zone: ZoneScope): Promise<HourlyRecord[]> {
  const range = hourRange(zone);
  const rows = await db.prepare(HOURLY_QUERY).bind(JSON.stringify(zone.queueIds), range.from, range.to).all<HourlyRecord>();
  return rows.results;
}

function figuresOf(r: HourlyRecord): AggregateFigures {
  return {
    created: r.created,
    served: r.served,
    noShow: r.no_show,
    cancelled: r.cancelled,
    transferred: r.transferred,
    waited: r.waited,
    waitMs: r.wait_ms,
    waitHist: JSON.parse(r.wait_hist),
    serviced: r.serviced,
    serviceMs: r.service_ms,
    serviceHist: JSON.parse(r.service_hist),
    estimated: r.estimated,
    estimateErrorMs: r.estimate_error_ms,
    estimateBiasMs: r.estimate_bias_ms,
    estimateErrorHist: JSON.parse(r.estimate_error_hist),
    channels: JSON.parse(r.channels),
  };
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");
const dateLabel = (w: { year: number; month: number; day: number }) => `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}`;

/** "+01:00": the zone's offset at that instant (distinguishes the two 01:00s of a fall-back night). */
function offsetLabel(utcMs: number, w: WallTime): string {
  const minutes = Math.round((Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute) - Math.floor(utcMs / 60_000) * 60_000) / 60_000);
  const sign = minutes < 0 ? "-" : "+";
  return `${sign}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}

/** The bucket an hour row falls in, read in its zone: its label and the instant it starts. */
function bucketOf(hourStart: number, timeZone: string, groupBy: GroupBy): { label: string; startsAt: number } {
  const w = wallTimeAt(hourStart, timeZone);
  if (groupBy === "hour") return { label: `${dateLabel(w)}T${pad(w.hour)}:${pad(w.minute)}${offsetLabel(hourStart, w)}`, startsAt: hourStart };
  let day = { year: w.year, month: w.month, day: w.day };
  if (groupBy === "week") {
    const date = new Date(Date.UTC(w.year, w.month - 1, w.day));
    const back = (date.getUTCDay() + 6) % 7; // days since Monday
    date.setUTCDate(date.getUTCDate() - back);
    day = { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
  }
  return { label: dateLabel(day), startsAt: zonedWallTimeToUtc(day.year, day.month, day.day, 0, 0, 0, timeZone) };
}

function coveredRange(scope: AnalyticsScope): { from: string; to: string } {
  const zones = scope.zones.length > 0 ? scope.zones : [scope];
  return {
    from: iso(Math.min(...zones.map((z) => hourRange(z).from))),
    to: iso(Math.max(...zones.map((z) => hourRange(z).to))),
  };
}

export async function analyticsSummary(db: D1Database, scope: AnalyticsScope, groupBy: GroupBy) {
  const totals = emptyFigures();
  const buckets = new Map<string, { label: string; startsAt: number; figures: AggregateFigures }>();
  const zoneRows = await Promise.all(scope.zones.map(async (zone) => ({ zone, rows: await hourlyRows(db, zone) })));
  for (const { zone, rows } of zoneRows) {
    for (const row of rows) {
      const figures = figuresOf(row);
      addFigures(totals, figures);
      const { label, startsAt } = bucketOf(row.hour_start, zone.timeZone, groupBy);
      let bucket = buckets.get(label);
      if (!bucket) buckets.set(label, (bucket = { label, startsAt, figures: emptyFigures() }));
      bucket.startsAt = Math.min(bucket.startsAt, startsAt);
      addFigures(bucket.figures, figures);
    }
  }
  const singleZone = scope.zones.length <= 1;
  return {
    ...coveredRange(scope),
    groupBy,
    timeZones: scope.zones.map((z) => z.timeZone),
    queues: scope.queueIds.length,
    totals: summaryFigures(totals),
    channels: channelFigures(totals),
    buckets: [...buckets.values()]
      .sort((a, b) => a.startsAt - b.startsAt || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0))
      .map((b) => ({ label: b.label, startsAt: singleZone ? iso(b.startsAt) : null, ...summaryFigures(b.figures) })),
  };
}

export async function analyticsHeatmap(db: D1Database, scope: AnalyticsScope) {
  const arrivals = WEEKDAYS.map(() => Array.from({ length: 24 }, () => 0));
  let total = 0;
  const zoneRows = await Promise.all(scope.zones.map(async (zone) => ({ zone, rows: await hourlyRows(db, zone) })));
  for (const { zone, rows } of zoneRows) {
    for (const row of rows) {
      if (row.created === 0) continue;
      const w = wallTimeAt(row.hour_start, zone.timeZone);
      const weekday = (new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay() + 6) % 7;
      arrivals[weekday]![w.hour]! += row.created;
      total += row.created;
    }
  }
  return { ...coveredRange(scope), timeZones: scope.zones.map((z) => z.timeZone), weekdays: [...WEEKDAYS], total, arrivals };
}

export async function analyticsEstimates(db: D1Database, scope: AnalyticsScope) {
  const perQueue = new Map<string, AggregateFigures>(scope.queueIds.map((id) => [id, emptyFigures()]));
  const totals = emptyFigures();
  const zoneRows = await Promise.all(scope.zones.map((zone) => hourlyRows(db, zone)));
  for (const rows of zoneRows) {
    for (const row of rows) {
      const figures = figuresOf(row);
      addFigures(perQueue.get(row.queue_id)!, figures);
      addFigures(totals, figures);
    }
  }
  const names = await queueNames(db, scope.queueIds);
  return {
    ...coveredRange(scope),
    totals: estimateFigures(totals),
    queues: [...perQueue.entries()].map(([queueId, f]) => ({ queueId, name: names.get(queueId) ?? null, ...estimateFigures(f) })),
  };
}

async function queueNames(db: D1Database, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .prepare("SELECT id, name FROM queues WHERE id IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(ids))
    .all<{ id: string; name: string }>();
  return new Map(rows.results.map((r) => [r.id, r.name]));
}

/** Per final operator of each ticket created in the range (see docs/analytics.md). */
export const OPERATORS_QUERY = `SELECT t.assigned_to_id AS operator_id,
    count(*) AS calls,
    sum(t.status = 'served') AS served,
    sum(t.status IN ('expired', 'skipped')) AS no_shows,
    sum(CASE WHEN t.status = 'served' AND t.serving_at IS NOT NULL AND t.served_at IS NOT NULL THEN 1 ELSE 0 END) AS serviced,
    sum(CASE WHEN t.status = 'served' AND t.serving_at IS NOT NULL AND t.served_at IS NOT NULL THEN max(0, t.served_at - t.serving_at) ELSE 0 END) AS service_ms,
    count(DISTINCT t.called_at / 3600000) AS active_hours
  FROM tickets AS t
  WHERE t.organization_id = ?1 AND t.created_at >= ?2 AND t.created_at < ?3
    AND t.queue_id IN (SELECT value FROM json_each(?4))
    AND t.called_at IS NOT NULL AND t.assigned_to_id IS NOT NULL
  GROUP BY t.assigned_to_id`;

interface OperatorRecord {
  operator_id: string;
  calls: number;
  served: number;
  no_shows: number;
  serviced: number;
  service_ms: number;
  active_hours: number;
}

export async function analyticsOperators(db: D1Database, scope: AnalyticsScope) {
  const merged = new Map<string, OperatorRecord>();
  for (const zone of scope.zones) {
    const range = hourRange(zone);
    const rows = await db
      .prepare(OPERATORS_QUERY)
      .bind(scope.organizationId, range.from, range.to, JSON.stringify(zone.queueIds))
      .all<OperatorRecord>();
    for (const r of rows.results) {
      const into = merged.get(r.operator_id);
      if (!into) merged.set(r.operator_id, { ...r });
      else for (const k of ["calls", "served", "no_shows", "serviced", "service_ms", "active_hours"] as const) into[k] += r[k];
    }
  }
  const ids = [...merged.keys()];
  const names = new Map<string, string>();
  if (ids.length > 0) {
    const rows = await db
      .prepare("SELECT id, first_name, last_name FROM users WHERE id IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify(ids))
      .all<{ id: string; first_name: string; last_name: string }>();
    for (const r of rows.results) names.set(r.id, `${r.first_name} ${r.last_name}`.trim());
  }
  return {
    ...coveredRange(scope),
    operators: [...merged.values()]
      .sort((a, b) => b.served - a.served || (a.operator_id < b.operator_id ? -1 : 1))
      .map((r) => ({
        operatorId: r.operator_id,
        name: names.get(r.operator_id) ?? null,
        calls: r.calls,
        served: r.served,
        noShows: r.no_shows,
        meanServiceMinutes: r.serviced === 0 ? null : minutesOf(r.service_ms / r.serviced),
        activeHours: r.active_hours,
        servedPerActiveHour: r.active_hours === 0 ? null : Math.round((r.served / r.active_hours) * 100) / 100,
        // The operator's-day work (issue: recalls and desks) adds these; until then none are recorded.
        recalls: 0,
        desk: null,
      })),
  };
}
