// The analytics reads. Summary, heatmap and estimates read the hourly aggregates (a year of
// one queue is at most 8,784 rows); operators read the ticket projection (an aggregate per
// operator would cost a row per operator per hour for one figure set). Every read takes the
// scope of analytics-scope.ts and rounds its range out to whole UTC hours, the aggregates'
// resolution.

import {
  addFigures,
  CHANNEL_COLUMNS,
  channelFigures,
  emptyFigures,
  estimateFigures,
  BUCKET_EDGES_MS,
  minutesOf,
  summaryFigures,
  type AggregateFigures,
} from "../domain/analytics";
import { wallTimeAt, zonedWallTimeToUtc } from "../domain/recurrence";
import { DAY, HOUR, iso } from "../lib/time";
import type { AnalyticsScope, ZoneScope } from "./analytics-scope";
import type { Deps } from "../http/deps";

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
}

/** The zone's range rounded out to whole UTC hours. */
function hourRange(zone: { from: number; to: number }): { from: number; to: number } {
  return { from: Math.floor(zone.from / HOUR) * HOUR, to: Math.ceil(zone.to / HOUR) * HOUR };
}

/** The hot query: primary key (queue_id, hour_start) ranges, one per queue; each read takes only its columns. */
export function hourlyQuery(columns: readonly (keyof HourlyRecord)[] | "*"): string {
  return `SELECT ${columns === "*" ? "*" : columns.join(", ")} FROM analytics_hourly
  WHERE queue_id IN (SELECT value FROM json_each(?1)) AND hour_start >= ?2 AND hour_start < ?3`;
}

async function hourlyRows<K extends keyof HourlyRecord>(
  db: D1Database,
  zone: ZoneScope,
  columns: readonly K[] | "*",
): Promise<Pick<HourlyRecord, K>[]> {
  const range = hourRange(zone);
  const rows = await db
    .prepare(hourlyQuery(columns))
    .bind(JSON.stringify(zone.queueIds), range.from, range.to)
    .all<Pick<HourlyRecord, K>>();
  return rows.results;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");
const dateLabel = (w: { year: number; month: number; day: number }) => `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}`;

/**
 * Wall-clock readings of one zone, fast: Intl is asked for the offset at the two ends of each
 * UTC day (a year: ~730 calls, not one per hour row); only a day whose two ends differ (a DST
 * change) is read hour by hour.
 */
class ZoneClock {
  private readonly byDay = new Map<number, number | null>();

  constructor(readonly timeZone: string) {}

  private exactOffset(ms: number): number {
    const w = wallTimeAt(ms, this.timeZone);
    return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(ms / 1000) * 1000;
  }

  offset(ms: number): number {
    const day = Math.floor(ms / DAY);
    let known = this.byDay.get(day);
    if (known === undefined) {
      const start = this.exactOffset(day * DAY);
      known = start === this.exactOffset(day * DAY + DAY - 1000) ? start : null;
      this.byDay.set(day, known);
    }
    return known ?? this.exactOffset(ms);
  }

  /** 00:00 of a local date, as an instant (the offsets already read; Intl only when 00:00 is not on the clock that day). */
  startOfDay(year: number, month: number, day: number): number {
    const naive = Date.UTC(year, month - 1, day);
    const utc = naive - this.offset(naive - this.offset(naive));
    const check = this.read(utc);
    if (check.year === year && check.month === month && check.day === day && check.hour === 0 && check.minute === 0) return utc;
    return zonedWallTimeToUtc(year, month, day, 0, 0, 0, this.timeZone);
  }

  /** Local date and time at `ms`, and the offset in force. */
  read(ms: number) {
    const offset = this.offset(ms);
    const d = new Date(ms + offset);
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      /** 0 = Monday … 6 = Sunday */
      weekday: (d.getUTCDay() + 6) % 7,
      offset,
    };
  }
}

/** "+01:00": distinguishes the two 01:00s of a fall-back night. */
function offsetLabel(offsetMs: number): string {
  const minutes = Math.round(offsetMs / 60_000);
  const sign = minutes < 0 ? "-" : "+";
  return `${sign}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}

/** The bucket an hour row falls in, read in its zone: its label, and how to find the instant it starts. */
function bucketOf(hourStart: number, clock: ZoneClock, groupBy: GroupBy): { label: string; startsAt: () => number } {
  const w = clock.read(hourStart);
  if (groupBy === "hour")
    return { label: `${dateLabel(w)}T${pad(w.hour)}:${pad(w.minute)}${offsetLabel(w.offset)}`, startsAt: () => hourStart };
  let day = { year: w.year, month: w.month, day: w.day };
  if (groupBy === "week") {
    const date = new Date(Date.UTC(w.year, w.month - 1, w.day - w.weekday));
    day = { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
  }
  return { label: dateLabel(day), startsAt: () => clock.startOfDay(day.year, day.month, day.day) };
}

function coveredRange(scope: AnalyticsScope): { from: string; to: string } {
  const zones = scope.zones.length > 0 ? scope.zones : [scope];
  return {
    from: iso(Math.min(...zones.map((z) => hourRange(z).from))),
    to: iso(Math.max(...zones.map((z) => hourRange(z).to))),
  };
}

/**
 * The zone's offset at each hour start of [from, to) as a SQL expression of `hour_start`: a
 * constant, or a CASE over the few hours where it changes (DST). Read with the zone's clock,
 * hour by hour, so SQL buckets each row exactly as `clock.read(hour_start)` would.
 */
function offsetSql(clock: ZoneClock, from: number, to: number): string {
  const changes: [number, number][] = [];
  for (let hour = from; hour < to; hour += HOUR) {
    const offset = clock.offset(hour);
    if (changes.length === 0 || changes[changes.length - 1]![1] !== offset) changes.push([hour, offset]);
  }
  if (changes.length <= 1) return String(changes[0]?.[1] ?? 0);
  const whens = changes.slice(1).map(([startsAt], i) => `WHEN hour_start < ${startsAt} THEN ${changes[i]![1]}`);
  return `(CASE ${whens.join(" ")} ELSE ${changes[changes.length - 1]![1]} END)`;
}

/** The bucket of an hour row as SQL: its hour start, its local day number, or its local week's Monday as a day number. */
function bucketSql(groupBy: GroupBy, offset: string): string {
  if (groupBy === "hour") return "hour_start";
  const day = `((hour_start + ${offset}) / ${DAY})`;
  // Day 0 (1970-01-01) was a Thursday: (day + 3) % 7 is 0 on Mondays.
  return groupBy === "day" ? day : `(${day} - (${day} + 3) % 7)`;
}

const HOURLY_SCOPE = "queue_id IN (SELECT value FROM json_each(?1)) AND hour_start >= ?2 AND hour_start < ?3";

/**
 * The summary's read: one row per bucket, summed by SQL on the primary key range, the hours'
 * sparse histograms concatenated (parsed once per bucket, not once per hour row).
 */
export function summaryQuery(groupBy: GroupBy, offset: string): string {
  return `SELECT ${bucketSql(groupBy, offset)} AS bucket, sum(created) AS created, sum(served) AS served, sum(no_show) AS no_show,
    sum(cancelled) AS cancelled, sum(transferred) AS transferred, sum(waited) AS waited, sum(wait_ms) AS wait_ms,
    sum(serviced) AS serviced, sum(service_ms) AS service_ms,
    group_concat(wait_hist) AS wait_hists, group_concat(service_hist) AS service_hists
  FROM analytics_hourly WHERE ${HOURLY_SCOPE} GROUP BY bucket`;
}

/** The range's per-channel totals (the summary shows channels for the whole range only). */
const CHANNELS_QUERY = `SELECT ${CHANNEL_COLUMNS.map((c) => `sum(${c}) AS ${c}`).join(", ")} FROM analytics_hourly WHERE ${HOURLY_SCOPE}`;

interface SummaryRecord {
  bucket: number;
  created: number;
  served: number;
  no_show: number;
  cancelled: number;
  transferred: number;
  waited: number;
  wait_ms: number;
  serviced: number;
  service_ms: number;
  wait_hists: string;
  service_hists: string;
}

/**
 * Adds a bucket's hour histograms, as SQL joined them (`{"12":3,"40":1},{"7":2}`: sparse JSON
 * objects, bucket index → count), into a dense array by one scan of the characters: no object
 * is built per hour row. Keys and counts are non-negative integers (the drain casts them).
 */
export function addHistogramText(into: Float64Array, text: string | null): void {
  if (text === null) return;
  let key = 0;
  let value = 0;
  let state = 0; // 0 between entries, 1 in a key, 2 after the key, 3 in a count
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (state === 1) key = key * 10 + (c - 48);
      else if (state === 3) value = value * 10 + (c - 48);
    } else if (c === 34 /* " */) {
      if (state === 0) {
        state = 1;
        key = 0;
      } else if (state === 1) state = 2;
    } else if (c === 58 /* : */ && state === 2) {
      state = 3;
      value = 0;
    } else if ((c === 44 /* , */ || c === 125) /* } */ && state === 3) {
      if (key < into.length) into[key] = into[key]! + value;
      state = 0;
    }
  }
}

/** The dense array as the sparse histogram the figures read. */
function sparse(dense: Float64Array): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < dense.length; i++) if (dense[i]! !== 0) out[i] = dense[i]!;
  return out;
}

const dayOf = (dayNumber: number) => {
  const d = new Date(dayNumber * DAY);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
};

export async function analyticsSummary({ env: { DB: db } }: Deps, scope: AnalyticsScope, groupBy: GroupBy) {
  const totals = emptyFigures();
  const buckets = new Map<
    string,
    { label: string; startsAt: number; figures: AggregateFigures; wait: Float64Array; service: Float64Array }
  >();
  const zoneReads = await Promise.all(
    scope.zones.map(async (zone) => {
      const clock = new ZoneClock(zone.timeZone);
      const range = hourRange(zone);
      const binds = [JSON.stringify(zone.queueIds), range.from, range.to];
      const [rows, channels] = await db.batch<unknown>([
        db.prepare(summaryQuery(groupBy, offsetSql(clock, range.from, range.to))).bind(...binds),
        db.prepare(CHANNELS_QUERY).bind(...binds),
      ]);
      return { clock, rows: rows!.results as SummaryRecord[], channels: (channels!.results[0] ?? {}) as Record<string, number | null> };
    }),
  );
  for (const { clock, rows, channels } of zoneReads) {
    for (const column of CHANNEL_COLUMNS) totals.channels[column] = (totals.channels[column] ?? 0) + (channels[column] ?? 0);
    for (const row of rows) {
      let label: string;
      let startsAt: () => number;
      if (groupBy === "hour") ({ label, startsAt } = bucketOf(row.bucket, clock, groupBy));
      else {
        const day = dayOf(row.bucket);
        label = dateLabel(day);
        startsAt = () => clock.startOfDay(day.year, day.month, day.day);
      }
      let bucket = buckets.get(label);
      if (!bucket)
        buckets.set(
          label,
          (bucket = {
            label,
            startsAt: startsAt(),
            figures: emptyFigures(),
            wait: new Float64Array(BUCKET_EDGES_MS.length),
            service: new Float64Array(BUCKET_EDGES_MS.length),
          }),
        );
      const f = bucket.figures;
      f.created += row.created;
      f.served += row.served;
      f.noShow += row.no_show;
      f.cancelled += row.cancelled;
      f.transferred += row.transferred;
      f.waited += row.waited;
      f.waitMs += row.wait_ms;
      f.serviced += row.serviced;
      f.serviceMs += row.service_ms;
      addHistogramText(bucket.wait, row.wait_hists);
      addHistogramText(bucket.service, row.service_hists);
    }
  }
  // Totals from the buckets: one merge per bucket rather than one more per hour row.
  for (const bucket of buckets.values()) {
    bucket.figures.waitHist = sparse(bucket.wait);
    bucket.figures.serviceHist = sparse(bucket.service);
    addFigures(totals, bucket.figures);
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
      .sort((a, b) => (singleZone ? a.startsAt - b.startsAt : 0) || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0))
      .map((b) => ({ label: b.label, startsAt: singleZone ? iso(b.startsAt) : null, ...summaryFigures(b.figures) })),
  };
}

/** Arrivals by local weekday (0 = Monday) and hour, summed by SQL. */
export function heatmapQuery(offset: string): string {
  const local = `(hour_start + ${offset})`;
  return `SELECT ((${local} / ${DAY}) + 3) % 7 AS weekday, (${local} / ${HOUR}) % 24 AS hour, sum(created) AS created
  FROM analytics_hourly WHERE ${HOURLY_SCOPE} GROUP BY weekday, hour`;
}

export async function analyticsHeatmap({ env: { DB: db } }: Deps, scope: AnalyticsScope) {
  const arrivals = WEEKDAYS.map(() => Array.from({ length: 24 }, () => 0));
  let total = 0;
  const zoneRows = await Promise.all(
    scope.zones.map(async (zone) => {
      const range = hourRange(zone);
      const rows = await db
        .prepare(heatmapQuery(offsetSql(new ZoneClock(zone.timeZone), range.from, range.to)))
        .bind(JSON.stringify(zone.queueIds), range.from, range.to)
        .all<{ weekday: number; hour: number; created: number }>();
      return rows.results;
    }),
  );
  for (const rows of zoneRows) {
    for (const row of rows) {
      arrivals[row.weekday]![row.hour]! += row.created;
      total += row.created;
    }
  }
  return { ...coveredRange(scope), timeZones: scope.zones.map((z) => z.timeZone), weekdays: [...WEEKDAYS], total, arrivals };
}

export async function analyticsEstimates({ env: { DB: db } }: Deps, scope: AnalyticsScope) {
  const perQueue = new Map<string, AggregateFigures>(scope.queueIds.map((id) => [id, emptyFigures()]));
  const totals = emptyFigures();
  const columns = ["queue_id", "estimated", "estimate_error_ms", "estimate_bias_ms", "estimate_error_hist"] as const;
  const zoneRows = await Promise.all(scope.zones.map((zone) => hourlyRows(db, zone, columns)));
  for (const rows of zoneRows) {
    for (const row of rows) {
      const figures = {
        ...emptyFigures(),
        estimated: row.estimated,
        estimateErrorMs: row.estimate_error_ms,
        estimateBiasMs: row.estimate_bias_ms,
        estimateErrorHist: JSON.parse(row.estimate_error_hist) as Record<string, number>,
      };
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
    count(DISTINCT t.called_at / 3600000) AS active_hours,
    coalesce(sum(t.recall_count), 0) AS recalls
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
  recalls: number;
}

/** Per operator, the desk they called most of the range's tickets from (ties: the desk's id). */
export const OPERATOR_DESKS_QUERY = `SELECT t.assigned_to_id AS operator_id, t.desk_id, count(*) AS calls
  FROM tickets AS t
  WHERE t.organization_id = ?1 AND t.created_at >= ?2 AND t.created_at < ?3
    AND t.queue_id IN (SELECT value FROM json_each(?4))
    AND t.called_at IS NOT NULL AND t.assigned_to_id IS NOT NULL AND t.desk_id IS NOT NULL
  GROUP BY t.assigned_to_id, t.desk_id`;

export async function analyticsOperators({ env: { DB: db } }: Deps, scope: AnalyticsScope) {
  const merged = new Map<string, OperatorRecord>();
  const deskCalls = new Map<string, Map<string, number>>();
  for (const zone of scope.zones) {
    const range = hourRange(zone);
    const args = [scope.organizationId, range.from, range.to, JSON.stringify(zone.queueIds)];
    const [rows, desks] = await db.batch([db.prepare(OPERATORS_QUERY).bind(...args), db.prepare(OPERATOR_DESKS_QUERY).bind(...args)]);
    for (const r of rows!.results as OperatorRecord[]) {
      const into = merged.get(r.operator_id);
      if (!into) merged.set(r.operator_id, { ...r });
      else for (const k of ["calls", "served", "no_shows", "serviced", "service_ms", "active_hours", "recalls"] as const) into[k] += r[k];
    }
    for (const r of desks!.results as { operator_id: string; desk_id: string; calls: number }[]) {
      const perDesk = deskCalls.get(r.operator_id) ?? new Map<string, number>();
      perDesk.set(r.desk_id, (perDesk.get(r.desk_id) ?? 0) + r.calls);
      deskCalls.set(r.operator_id, perDesk);
    }
  }
  const mainDesk = new Map<string, string>();
  for (const [operatorId, perDesk] of deskCalls) {
    const [deskId] = [...perDesk].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]!;
    mainDesk.set(operatorId, deskId);
  }
  const deskNames = new Map<string, string>();
  if (mainDesk.size > 0) {
    const rows = await db
      .prepare("SELECT id, name FROM desks WHERE id IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify([...new Set(mainDesk.values())]))
      .all<{ id: string; name: string }>();
    for (const r of rows.results) deskNames.set(r.id, r.name);
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
        recalls: r.recalls,
        desk: deskNames.get(mainDesk.get(r.operator_id) ?? "") ?? null,
      })),
  };
}

// ── By kind (docs/analytics.md): walk-ins and appointments, punctuality, no-show rate ──────

const KINDS_QUERY = `SELECT kind, COUNT(*) AS created,
    SUM(status = 'served') AS served,
    SUM(status IN ('expired', 'skipped')) AS no_show,
    SUM(status = 'cancelled' AND transferred_to_id IS NULL) AS cancelled,
    SUM(called_at IS NOT NULL) AS waited,
    SUM(CASE WHEN called_at IS NOT NULL THEN called_at - created_at ELSE 0 END) AS wait_ms,
    SUM(appointment_at IS NOT NULL AND created_at <= appointment_at) AS before_start,
    SUM(appointment_at IS NOT NULL AND created_at > appointment_at) AS after_start,
    SUM(CASE WHEN appointment_at IS NOT NULL THEN created_at - appointment_at ELSE 0 END) AS from_start_ms
  FROM tickets
  WHERE organization_id = ?1 AND created_at >= ?2 AND created_at < ?3 AND queue_id IN (SELECT value FROM json_each(?4))
  GROUP BY kind`;

/** Appointments of the scope's services starting in the range, by status. */
const APPOINTMENTS_QUERY = `SELECT status, COUNT(*) AS n FROM appointments
  WHERE organization_id = ?1 AND start_at >= ?2 AND start_at < ?3
    AND service_id IN (SELECT service_id FROM queues WHERE id IN (SELECT value FROM json_each(?4)))
  GROUP BY status`;

interface KindRecord {
  kind: "walk_in" | "appointment";
  created: number;
  served: number;
  no_show: number;
  cancelled: number;
  waited: number;
  wait_ms: number;
  before_start: number;
  after_start: number;
  from_start_ms: number;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export async function analyticsKinds({ env: { DB: db } }: Deps, scope: AnalyticsScope) {
  const sums = { walk_in: emptyKind("walk_in"), appointment: emptyKind("appointment") };
  for (const zone of scope.zones) {
    const range = hourRange(zone);
    const rows = await db
      .prepare(KINDS_QUERY)
      .bind(scope.organizationId, range.from, range.to, JSON.stringify(zone.queueIds))
      .all<KindRecord>();
    for (const r of rows.results) {
      const into = sums[r.kind] ?? sums.walk_in;
      for (const k of [
        "created",
        "served",
        "no_show",
        "cancelled",
        "waited",
        "wait_ms",
        "before_start",
        "after_start",
        "from_start_ms",
      ] as const)
        into[k] += r[k] ?? 0;
    }
  }
  const range = hourRange(scope);
  const statuses = await db
    .prepare(APPOINTMENTS_QUERY)
    .bind(scope.organizationId, range.from, range.to, JSON.stringify(scope.queueIds))
    .all<{ status: string; n: number }>();
  const count = (status: string) => statuses.results.find((r) => r.status === status)?.n ?? 0;
  const figures = (r: KindRecord) => ({
    created: r.created,
    served: r.served,
    noShow: r.no_show,
    cancelled: r.cancelled,
    meanWaitMinutes: r.waited === 0 ? null : round2(r.wait_ms / r.waited / 60_000),
  });
  const a = sums.appointment;
  const checkedIn = a.before_start + a.after_start;
  const [checkedInRows, noShow] = [count("checked_in"), count("no_show")];
  return {
    from: iso(range.from),
    to: iso(range.to),
    walkIn: figures(sums.walk_in),
    appointment: figures(a),
    punctuality: {
      checkedIn,
      beforeStart: a.before_start,
      afterStart: a.after_start,
      meanMinutesFromStart: checkedIn === 0 ? null : round2(a.from_start_ms / checkedIn / 60_000),
    },
    appointments: {
      booked: count("booked"),
      checkedIn: checkedInRows,
      noShow,
      cancelled: count("cancelled"),
      noShowRate: checkedInRows + noShow === 0 ? null : round2(noShow / (checkedInRows + noShow)),
    },
  };
}

function emptyKind(kind: KindRecord["kind"]): KindRecord {
  return {
    kind,
    created: 0,
    served: 0,
    no_show: 0,
    cancelled: 0,
    waited: 0,
    wait_ms: 0,
    before_start: 0,
    after_start: 0,
    from_start_ms: 0,
  };
}

/**
 * Multi-service visits (docs/visits.md) whose first leg was created in the range in a queue of
 * the scope: each visit's legs (the projection's rows carrying its `visit_id`), read through the
 * visit index. One row per visit.
 */
const VISITS_QUERY = `SELECT f.leg_count AS leg_count, f.created_at AS started_at,
    COUNT(l.id) AS legs_seen,
    MAX(CASE WHEN l.leg_index = f.leg_count - 1 AND l.status = 'served' THEN l.served_at END) AS finished_at,
    SUM(CASE WHEN l.called_at IS NOT NULL THEN l.called_at - l.created_at ELSE 0 END) AS wait_ms,
    SUM(CASE WHEN l.served_at IS NOT NULL AND l.serving_at IS NOT NULL THEN l.served_at - l.serving_at ELSE 0 END) AS service_ms
  FROM tickets f JOIN tickets l ON l.visit_id = f.id AND l.organization_id = f.organization_id
  WHERE f.organization_id = ?1 AND f.created_at >= ?2 AND f.created_at < ?3
    AND f.queue_id IN (SELECT value FROM json_each(?4)) AND f.visit_id = f.id AND f.leg_index = 0
  GROUP BY f.id`;

interface VisitRecord {
  leg_count: number;
  started_at: number;
  legs_seen: number;
  finished_at: number | null;
  wait_ms: number;
  service_ms: number;
}

/** The nearest-rank percentile of sorted values (exact: a visit list is read whole). */
function nearestRank(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

interface VisitFigures {
  visits: number;
  completed: number;
  totalMinutes: { count: number; mean: number | null; p50: number | null; p90: number | null };
  meanWaitMinutes: number | null;
  meanServiceMinutes: number | null;
}

function visitFigures(rows: VisitRecord[]): VisitFigures {
  const done = rows.filter((r) => r.finished_at !== null);
  const totals = done.map((r) => (r.finished_at! - r.started_at) / 60_000).sort((a, b) => a - b);
  const mean = (values: number[]) => (values.length === 0 ? null : round2(values.reduce((s, v) => s + v, 0) / values.length));
  const at = (p: number) => {
    const v = nearestRank(totals, p);
    return v === null ? null : round2(v);
  };
  return {
    visits: rows.length,
    completed: done.length,
    totalMinutes: { count: totals.length, mean: mean(totals), p50: at(0.5), p90: at(0.9) },
    meanWaitMinutes: mean(done.map((r) => r.wait_ms / 60_000)),
    meanServiceMinutes: mean(done.map((r) => r.service_ms / 60_000)),
  };
}

/**
 * The visits of several services: how many started, how many went through every leg, and the
 * visit's total time (first join → last leg's completion) with its waits and service times
 * summed over the legs; in total and by number of legs.
 */
export async function analyticsVisits({ env: { DB: db } }: Deps, scope: AnalyticsScope) {
  const rows: VisitRecord[] = [];
  for (const zone of scope.zones) {
    const range = hourRange(zone);
    const read = await db
      .prepare(VISITS_QUERY)
      .bind(scope.organizationId, range.from, range.to, JSON.stringify(zone.queueIds))
      .all<VisitRecord>();
    rows.push(...read.results);
  }
  const range = hourRange(scope);
  const legCounts = [...new Set(rows.map((r) => r.leg_count))].sort((a, b) => a - b);
  return {
    from: iso(range.from),
    to: iso(range.to),
    ...visitFigures(rows),
    byLegs: legCounts.map((legs) => ({ legs, ...visitFigures(rows.filter((r) => r.leg_count === legs)) })),
  };
}
