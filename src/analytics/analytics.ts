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
import { and, eq, gte, inArray, isNotNull, lt, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { analyticsHourly as h, appointments, desks, queues, tickets, users } from "../db/schema";
import { inIds, type AnalyticsScope, type ZoneScope } from "./analytics-scope";
import type { Deps } from "../http/deps";

export const GROUP_BY = ["hour", "day", "week"] as const;
export type GroupBy = (typeof GROUP_BY)[number];

export const WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;

/** The zone's range rounded out to whole UTC hours. */
function hourRange(zone: { from: number; to: number }): { from: number; to: number } {
  return { from: Math.floor(zone.from / HOUR) * HOUR, to: Math.ceil(zone.to / HOUR) * HOUR };
}

/** The hot read: one primary key (queue_id, hour_start) range per queue of the zone, over its whole hours. */
function hourlyScope(zone: ZoneScope): SQL | undefined {
  const range = hourRange(zone);
  return and(inIds(h.queueId, zone.queueIds), gte(h.hourStart, range.from), lt(h.hourStart, range.to));
}

/** A number written into the statement (not bound): the bucket arithmetic stays integer, as SQLite folds it. */
const literal = (n: number) => sql.raw(String(n));

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
function offsetSql(clock: ZoneClock, from: number, to: number): SQL {
  const changes: [number, number][] = [];
  for (let hour = from; hour < to; hour += HOUR) {
    const offset = clock.offset(hour);
    if (changes.length === 0 || changes[changes.length - 1]![1] !== offset) changes.push([hour, offset]);
  }
  if (changes.length <= 1) return literal(changes[0]?.[1] ?? 0);
  const whens = changes.slice(1).map(([startsAt], i) => sql`WHEN ${h.hourStart} < ${literal(startsAt)} THEN ${literal(changes[i]![1])}`);
  return sql`(CASE ${sql.join(whens, sql` `)} ELSE ${literal(changes[changes.length - 1]![1])} END)`;
}

/** The bucket of an hour row as SQL: its hour start, its local day number, or its local week's Monday as a day number. */
function bucketSql(groupBy: GroupBy, offset: SQL): SQL {
  if (groupBy === "hour") return sql`${h.hourStart}`;
  const day = sql`((${h.hourStart} + ${offset}) / ${literal(DAY)})`;
  // Day 0 (1970-01-01) was a Thursday: (day + 3) % 7 is 0 on Mondays.
  return groupBy === "day" ? day : sql`(${day} - (${day} + 3) % 7)`;
}

/**
 * The summary's read: one row per bucket, summed by SQL on the primary key range, the hours'
 * sparse histograms concatenated (parsed once per bucket, not once per hour row). `offset` is
 * the zone's offset as SQL (offsetSql).
 */
export function summaryQuery({ db }: Deps, zone: ZoneScope, groupBy: GroupBy, offset: SQL) {
  return db
    .select({
      bucket: sql<number>`${bucketSql(groupBy, offset)}`.as("bucket"),
      created: sql<number>`sum(${h.created})`,
      served: sql<number>`sum(${h.served})`,
      no_show: sql<number>`sum(${h.noShow})`,
      cancelled: sql<number>`sum(${h.cancelled})`,
      transferred: sql<number>`sum(${h.transferred})`,
      waited: sql<number>`sum(${h.waited})`,
      wait_ms: sql<number>`sum(${h.waitMs})`,
      serviced: sql<number>`sum(${h.serviced})`,
      service_ms: sql<number>`sum(${h.serviceMs})`,
      wait_hists: sql<string | null>`group_concat(${h.waitHist})`,
      service_hists: sql<string | null>`group_concat(${h.serviceHist})`,
    })
    .from(h)
    .where(hourlyScope(zone))
    .groupBy(sql`bucket`);
}

/** The range's per-channel totals (the summary shows channels for the whole range only). */
function channelsQuery({ db }: Deps, zone: ZoneScope) {
  const sums: Record<string, SQL<number | null>> = {};
  for (const column of CHANNEL_COLUMNS) sums[column] = sql<number | null>`sum(${sql.identifier(column)})`;
  return db.select(sums).from(h).where(hourlyScope(zone));
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

export async function analyticsSummary(deps: Deps, scope: AnalyticsScope, groupBy: GroupBy) {
  const { db } = deps;
  const totals = emptyFigures();
  const buckets = new Map<
    string,
    { label: string; startsAt: number; figures: AggregateFigures; wait: Float64Array; service: Float64Array }
  >();
  const zoneReads = await Promise.all(
    scope.zones.map(async (zone) => {
      const clock = new ZoneClock(zone.timeZone);
      const range = hourRange(zone);
      const [rows, channels] = await db.batch([
        summaryQuery(deps, zone, groupBy, offsetSql(clock, range.from, range.to)),
        channelsQuery(deps, zone),
      ]);
      const none: Record<string, number | null> = {};
      return { clock, rows, channels: channels[0] ?? none };
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
function heatmapQuery({ db }: Deps, zone: ZoneScope, offset: SQL) {
  const local = sql`(${h.hourStart} + ${offset})`;
  return db
    .select({
      weekday: sql<number>`((${local} / ${literal(DAY)}) + 3) % 7`.as("weekday"),
      hour: sql<number>`(${local} / ${literal(HOUR)}) % 24`.as("hour"),
      created: sql<number>`sum(${h.created})`,
    })
    .from(h)
    .where(hourlyScope(zone))
    .groupBy(sql`weekday`, sql`hour`);
}

export async function analyticsHeatmap(deps: Deps, scope: AnalyticsScope) {
  const arrivals = WEEKDAYS.map(() => Array.from({ length: 24 }, () => 0));
  let total = 0;
  const zoneRows = await Promise.all(
    scope.zones.map((zone) => {
      const range = hourRange(zone);
      return heatmapQuery(deps, zone, offsetSql(new ZoneClock(zone.timeZone), range.from, range.to)).all();
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

/** The estimates' read: the zone's hour rows, only their estimate columns. */
export function estimatesQuery({ db }: Deps, zone: ZoneScope) {
  return db
    .select({
      queue_id: h.queueId,
      estimated: h.estimated,
      estimate_error_ms: h.estimateErrorMs,
      estimate_bias_ms: h.estimateBiasMs,
      estimate_error_hist: h.estimateErrorHist,
    })
    .from(h)
    .where(hourlyScope(zone));
}

export async function analyticsEstimates(deps: Deps, scope: AnalyticsScope) {
  const perQueue = new Map<string, AggregateFigures>(scope.queueIds.map((id) => [id, emptyFigures()]));
  const totals = emptyFigures();
  const zoneRows = await Promise.all(scope.zones.map((zone) => estimatesQuery(deps, zone).all()));
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
  const names = await queueNames(deps, scope.queueIds);
  return {
    ...coveredRange(scope),
    totals: estimateFigures(totals),
    queues: [...perQueue.entries()].map(([queueId, f]) => ({ queueId, name: names.get(queueId) ?? null, ...estimateFigures(f) })),
  };
}

async function queueNames({ db }: Deps, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.select({ id: queues.id, name: queues.name }).from(queues).where(inIds(queues.id, ids)).all();
  return new Map(rows.map((r) => [r.id, r.name]));
}

const t = alias(tickets, "t");

/** The range's tickets of the zone's queues that an operator called (on tickets_org_created_idx). */
function calledInRange(organizationId: string, zone: ZoneScope): SQL | undefined {
  const range = hourRange(zone);
  return and(
    eq(t.organizationId, organizationId),
    gte(t.createdAt, range.from),
    lt(t.createdAt, range.to),
    inIds(t.queueId, zone.queueIds),
    isNotNull(t.calledAt),
    isNotNull(t.assignedToId),
  );
}

/** The ticket's operator: never null in these reads (calledInRange keeps assigned tickets only). */
const operatorOf = sql<string>`${t.assignedToId}`;

/** Per final operator of each ticket created in the range (see docs/analytics.md). */
export function operatorsQuery({ db }: Deps, organizationId: string, zone: ZoneScope) {
  const servedWithTimes = sql`${t.status} = 'served' AND ${t.servingAt} IS NOT NULL AND ${t.servedAt} IS NOT NULL`;
  return db
    .select({
      operator_id: operatorOf,
      calls: sql<number>`count(*)`,
      served: sql<number>`sum(${t.status} = 'served')`,
      no_shows: sql<number>`sum(${t.status} IN ('expired', 'skipped'))`,
      serviced: sql<number>`sum(CASE WHEN ${servedWithTimes} THEN 1 ELSE 0 END)`,
      service_ms: sql<number>`sum(CASE WHEN ${servedWithTimes} THEN max(0, ${t.servedAt} - ${t.servingAt}) ELSE 0 END)`,
      active_hours: sql<number>`count(DISTINCT ${t.calledAt} / ${literal(HOUR)})`,
      recalls: sql<number>`coalesce(sum(${t.recallCount}), 0)`,
    })
    .from(t)
    .where(calledInRange(organizationId, zone))
    .groupBy(t.assignedToId);
}

type OperatorRecord = Awaited<ReturnType<ReturnType<typeof operatorsQuery>["all"]>>[number];

/** Per operator, the desk they called most of the range's tickets from (ties: the desk's id). */
function operatorDesksQuery({ db }: Deps, organizationId: string, zone: ZoneScope) {
  return db
    .select({ operator_id: operatorOf, desk_id: sql<string>`${t.deskId}`, calls: sql<number>`count(*)` })
    .from(t)
    .where(and(calledInRange(organizationId, zone), isNotNull(t.deskId)))
    .groupBy(t.assignedToId, t.deskId);
}

export async function analyticsOperators(deps: Deps, scope: AnalyticsScope) {
  const { db } = deps;
  const merged = new Map<string, OperatorRecord>();
  const deskCalls = new Map<string, Map<string, number>>();
  for (const zone of scope.zones) {
    const [rows, desksOfOperators] = await db.batch([
      operatorsQuery(deps, scope.organizationId, zone),
      operatorDesksQuery(deps, scope.organizationId, zone),
    ]);
    for (const r of rows) {
      const into = merged.get(r.operator_id);
      if (!into) merged.set(r.operator_id, { ...r });
      else for (const k of ["calls", "served", "no_shows", "serviced", "service_ms", "active_hours", "recalls"] as const) into[k] += r[k];
    }
    for (const r of desksOfOperators) {
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
      .select({ id: desks.id, name: desks.name })
      .from(desks)
      .where(inIds(desks.id, [...new Set(mainDesk.values())]))
      .all();
    for (const r of rows) deskNames.set(r.id, r.name);
  }
  const ids = [...merged.keys()];
  const names = new Map<string, string>();
  if (ids.length > 0) {
    const rows = await db
      .select({ id: users.id, firstName: users.firstName, lastName: users.lastName })
      .from(users)
      .where(inIds(users.id, ids))
      .all();
    for (const r of rows) names.set(r.id, `${r.firstName} ${r.lastName}`.trim());
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

/** The range's tickets of the zone's queues, by kind. */
function kindsQuery({ db }: Deps, organizationId: string, zone: ZoneScope) {
  const range = hourRange(zone);
  const k = tickets;
  return db
    .select({
      kind: k.kind,
      created: sql<number>`COUNT(*)`,
      served: sql<number>`SUM(${k.status} = 'served')`,
      no_show: sql<number>`SUM(${k.status} IN ('expired', 'skipped'))`,
      cancelled: sql<number>`SUM(${k.status} = 'cancelled' AND ${k.transferredToId} IS NULL)`,
      waited: sql<number>`SUM(${k.calledAt} IS NOT NULL)`,
      wait_ms: sql<number>`SUM(CASE WHEN ${k.calledAt} IS NOT NULL THEN ${k.calledAt} - ${k.createdAt} ELSE 0 END)`,
      before_start: sql<number>`SUM(${k.appointmentAt} IS NOT NULL AND ${k.createdAt} <= ${k.appointmentAt})`,
      after_start: sql<number>`SUM(${k.appointmentAt} IS NOT NULL AND ${k.createdAt} > ${k.appointmentAt})`,
      from_start_ms: sql<number>`SUM(CASE WHEN ${k.appointmentAt} IS NOT NULL THEN ${k.createdAt} - ${k.appointmentAt} ELSE 0 END)`,
    })
    .from(k)
    .where(
      and(eq(k.organizationId, organizationId), gte(k.createdAt, range.from), lt(k.createdAt, range.to), inIds(k.queueId, zone.queueIds)),
    )
    .groupBy(k.kind);
}

/** Appointments of the scope's services starting in the range, by status. */
function appointmentsQuery({ db }: Deps, scope: AnalyticsScope) {
  const range = hourRange(scope);
  const a = appointments;
  return db
    .select({ status: a.status, n: sql<number>`COUNT(*)` })
    .from(a)
    .where(
      and(
        eq(a.organizationId, scope.organizationId),
        gte(a.startAt, range.from),
        lt(a.startAt, range.to),
        inArray(a.serviceId, db.select({ serviceId: queues.serviceId }).from(queues).where(inIds(queues.id, scope.queueIds))),
      ),
    )
    .groupBy(a.status);
}

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

export async function analyticsKinds(deps: Deps, scope: AnalyticsScope) {
  const sums = { walk_in: emptyKind("walk_in"), appointment: emptyKind("appointment") };
  for (const zone of scope.zones) {
    const rows = await kindsQuery(deps, scope.organizationId, zone).all();
    for (const r of rows) {
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
  const statuses = await appointmentsQuery(deps, scope).all();
  const count = (status: string) => statuses.find((r) => r.status === status)?.n ?? 0;
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
function visitsQuery({ db }: Deps, organizationId: string, zone: ZoneScope) {
  const range = hourRange(zone);
  const f = alias(tickets, "f");
  const l = alias(tickets, "l");
  return db
    .select({
      // Not null on a visit's first leg (visit_id = id, leg_index = 0).
      leg_count: sql<number>`${f.legCount}`,
      started_at: f.createdAt,
      legs_seen: sql<number>`COUNT(${l.id})`,
      finished_at: sql<number | null>`MAX(CASE WHEN ${l.legIndex} = ${f.legCount} - 1 AND ${l.status} = 'served' THEN ${l.servedAt} END)`,
      wait_ms: sql<number>`SUM(CASE WHEN ${l.calledAt} IS NOT NULL THEN ${l.calledAt} - ${l.createdAt} ELSE 0 END)`,
      service_ms: sql<number>`SUM(CASE WHEN ${l.servedAt} IS NOT NULL AND ${l.servingAt} IS NOT NULL THEN ${l.servedAt} - ${l.servingAt} ELSE 0 END)`,
    })
    .from(f)
    .innerJoin(l, and(eq(l.visitId, f.id), eq(l.organizationId, f.organizationId)))
    .where(
      and(
        eq(f.organizationId, organizationId),
        gte(f.createdAt, range.from),
        lt(f.createdAt, range.to),
        inIds(f.queueId, zone.queueIds),
        eq(f.visitId, f.id),
        sql`${f.legIndex} = 0`,
      ),
    )
    .groupBy(f.id);
}

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
export async function analyticsVisits(deps: Deps, scope: AnalyticsScope) {
  const rows: VisitRecord[] = [];
  for (const zone of scope.zones) rows.push(...(await visitsQuery(deps, scope.organizationId, zone).all()));
  const range = hourRange(scope);
  const legCounts = [...new Set(rows.map((r) => r.leg_count))].sort((a, b) => a - b);
  return {
    from: iso(range.from),
    to: iso(range.to),
    ...visitFigures(rows),
    byLegs: legCounts.map((legs) => ({ legs, ...visitFigures(rows.filter((r) => r.leg_count === legs)) })),
  };
}
