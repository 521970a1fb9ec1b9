// The customers' verdicts read back (docs/analytics.md, feedback): count, mean and the 1–5
// distribution, overall, by service, desk, operator and local hour of the join, and the score
// against the minutes waited (join → call) in fixed buckets. Read from ticket_feedback, which
// holds each verdict with its ticket's facts; a verdict counts in the hour its ticket was
// created (the cohort every analytics read uses), in the time zone of its queue's location.

import { wallTimeAt } from "../domain/recurrence";
import { HOUR, iso, MINUTE } from "../lib/time";
import { and, gte, lt, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { desks as deskTable, services as serviceTable, ticketFeedback, users } from "../db/schema";
import { inIds, type AnalyticsScope } from "./analytics-scope";
import type { Deps } from "../http/deps";

/**
 * The wait curve's bucket edges, in minutes: a bucket holds waits from its edge (included) to
 * the next (excluded); the last one, from 120, has no end.
 */
export const FEEDBACK_WAIT_EDGES_MINUTES = [0, 5, 10, 15, 20, 30, 45, 60, 90, 120] as const;

const QUARTER = 15 * MINUTE;

export type ScoreDistribution = Record<"1" | "2" | "3" | "4" | "5", number>;

export interface ScoreFigures {
  count: number;
  /** Mean score, two decimals; null when none. */
  mean: number | null;
  distribution: ScoreDistribution;
}

class Tally {
  private readonly counts = [0, 0, 0, 0, 0];

  add(score: number): void {
    this.counts[score - 1]! += 1;
  }

  figures(): ScoreFigures {
    const count = this.counts.reduce((a, b) => a + b, 0);
    const sum = this.counts.reduce((a, n, i) => a + n * (i + 1), 0);
    const [one, two, three, four, five] = this.counts as [number, number, number, number, number];
    return {
      count,
      mean: count === 0 ? null : Math.round((sum / count) * 100) / 100,
      distribution: { "1": one, "2": two, "3": three, "4": four, "5": five },
    };
  }
}

/** The wait bucket a wait falls in: the index of the last edge at or under it. */
export function waitBucketOf(waitMs: number): number {
  const minutes = waitMs / MINUTE;
  let index = 0;
  FEEDBACK_WAIT_EDGES_MINUTES.forEach((edge, i) => {
    if (minutes >= edge) index = i;
  });
  return index;
}

function tallyOf<K>(map: Map<K, Tally>, key: K): Tally {
  let t = map.get(key);
  if (!t) map.set(key, (t = new Tally()));
  return t;
}

/** The names of `ids`, read from the table whose `id` and `name` (a column or an expression of its columns) are given. */
async function namesOf({ db }: Deps, id: SQLiteColumn, name: SQLiteColumn | SQL, ids: string[]) {
  if (ids.length === 0) return new Map<string, string>();
  const rows = await db
    .select({ id: sql<string>`${id}`, name: sql<string>`${name}` })
    .from(id.table)
    .where(inIds(id, ids))
    .all();
  return new Map(rows.map((r) => [r.id, r.name]));
}

export async function analyticsFeedback(deps: Deps, scope: AnalyticsScope) {
  const { db } = deps;
  const totals = new Tally();
  const byWait = FEEDBACK_WAIT_EDGES_MINUTES.map(() => new Tally());
  const services = new Map<string, Tally>();
  const desks = new Map<string | null, Tally>();
  const operators = new Map<string | null, Tally>();
  const hours = Array.from({ length: 24 }, () => new Tally());
  let unmeasured = 0;

  for (const zone of scope.zones) {
    const from = Math.floor(zone.from / HOUR) * HOUR;
    const to = Math.ceil(zone.to / HOUR) * HOUR;
    const f = ticketFeedback;
    const rows = await db
      .select({
        score: f.score,
        wait_ms: f.waitMs,
        service_id: f.serviceId,
        desk_id: f.deskId,
        operator_id: f.operatorId,
        ticket_created_at: f.ticketCreatedAt,
      })
      .from(f)
      .where(and(inIds(f.queueId, zone.queueIds), gte(f.ticketCreatedAt, from), lt(f.ticketCreatedAt, to)))
      .all();
    // The local hour is read once per quarter of an hour (Intl is slow; offsets are whole quarters).
    const hourOf = new Map<number, number>();
    for (const r of rows) {
      totals.add(r.score);
      if (r.wait_ms === null) unmeasured += 1;
      else byWait[waitBucketOf(r.wait_ms)]!.add(r.score);
      tallyOf(services, r.service_id).add(r.score);
      tallyOf(desks, r.desk_id).add(r.score);
      tallyOf(operators, r.operator_id).add(r.score);
      const quarter = Math.floor(r.ticket_created_at / QUARTER);
      let local = hourOf.get(quarter);
      if (local === undefined) hourOf.set(quarter, (local = wallTimeAt(r.ticket_created_at, zone.timeZone).hour));
      hours[local]!.add(r.score);
    }
  }

  const known = <K>(m: Map<K | null, Tally>) => [...m.keys()].filter((k): k is K => k !== null);
  const [serviceNames, deskNames, operatorNames] = await Promise.all([
    namesOf(deps, serviceTable.id, serviceTable.name, [...services.keys()]),
    namesOf(deps, deskTable.id, deskTable.name, known(desks)),
    namesOf(deps, users.id, sql<string>`trim(${users.firstName} || ' ' || ${users.lastName})`, known(operators)),
  ]);
  const byCount = <T extends { count: number }>(a: T, b: T) => b.count - a.count;

  return {
    from: iso(scope.from),
    to: iso(scope.to),
    timeZones: scope.zones.map((z) => z.timeZone),
    totals: totals.figures(),
    waitEdgesMinutes: [...FEEDBACK_WAIT_EDGES_MINUTES],
    byWait: FEEDBACK_WAIT_EDGES_MINUTES.map((edge, i) => ({
      fromMinutes: edge,
      toMinutes: FEEDBACK_WAIT_EDGES_MINUTES[i + 1] ?? null,
      ...byWait[i]!.figures(),
    })),
    unmeasuredWaits: unmeasured,
    services: [...services].map(([id, t]) => ({ serviceId: id, name: serviceNames.get(id) ?? null, ...t.figures() })).sort(byCount),
    desks: [...desks]
      .map(([id, t]) => ({ deskId: id, name: id === null ? null : (deskNames.get(id) ?? null), ...t.figures() }))
      .sort(byCount),
    operators: [...operators]
      .map(([id, t]) => ({ operatorId: id, name: id === null ? null : (operatorNames.get(id) ?? null), ...t.figures() }))
      .sort(byCount),
    hours: hours.map((t, hour) => ({ hour, ...t.figures() })),
  };
}
