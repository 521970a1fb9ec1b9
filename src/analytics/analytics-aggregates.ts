// The analytics aggregates: one `analytics_hourly` row per queue per UTC hour of ticket
// creation, kept by the rooms' outbox drain in the same D1 batch as the ticket projection,
// and rebuilt from the projection on demand (tests, migrations of existing data).
//
// Why nothing is counted twice. Invariant: every hourly row equals the sum, over the tickets
// whose facts row names it, of those facts (`analytics_ticket_facts`, one row per ticket with
// the ticket version it reflects). For each ticket of a drain batch the batch
//   1. makes sure the hourly row exists (INSERT … ON CONFLICT DO NOTHING: no figure moves);
//   2. adds (new facts − stored facts) to that row, ONLY IF the stored facts are older than
//      the ticket version being drained (or absent);
//   3. stores the new facts under the same condition (upsert … WHERE excluded.version > version).
// Steps 2 and 3 read the same facts row inside one D1 batch (a transaction), so they apply
// together or not at all, and the invariant holds after each batch. Replaying a batch (the
// drain is at-least-once), or an older row arriving after a newer one, finds stored facts of
// the same or a newer version: steps 2 and 3 do nothing. A ticket's queue, creation hour and
// channel never change, so its old and new facts always belong to the same row and channel.

import {
  CHANNEL_COLUMNS,
  FACT_COLUMNS,
  channelColumn,
  factTuple,
  hourStartOf,
  ticketFacts,
  type ChannelMetric,
  type TicketFacts,
  type TicketForAnalytics,
} from "../domain/analytics";
import { and, eq, getTableColumns, sql, type SQL } from "drizzle-orm";
import { chunk, nonEmpty } from "../db/client";
import { analyticsHourly, analyticsTicketFacts, tickets } from "../db/schema";
import { inIds } from "./analytics-scope";
import type { Deps } from "../http/deps";

// The drain's statements live with the room (queue-room/projection.ts, analyticsDrainStatements).

// ---- rebuild from the projection -------------------------------------------------------------

interface HourlyRow {
  queueId: string;
  hourStart: number;
  created: number;
  served: number;
  noShow: number;
  cancelled: number;
  transferred: number;
  waited: number;
  waitMs: number;
  waitHist: Record<string, number>;
  serviced: number;
  serviceMs: number;
  serviceHist: Record<string, number>;
  estimated: number;
  estimateErrorMs: number;
  estimateBiasMs: number;
  estimateErrorHist: Record<string, number>;
  channels: Record<string, number>;
}

function bump(map: Record<string, number>, key: string | number, by = 1): void {
  map[key] = (map[key] ?? 0) + by;
}

function addToRow(row: HourlyRow, f: TicketFacts): void {
  row.created += 1;
  row.served += f.served;
  row.noShow += f.noShow;
  row.cancelled += f.cancelled;
  row.transferred += f.transferred;
  const ch = (metric: ChannelMetric) => channelColumn(f.channel, metric);
  bump(row.channels, ch("c"));
  bump(row.channels, ch("s"), f.served);
  bump(row.channels, ch("n"), f.noShow);
  bump(row.channels, ch("x"), f.cancelled);
  bump(row.channels, ch("t"), f.transferred);
  if (f.waitMs !== null) {
    row.waited += 1;
    row.waitMs += f.waitMs;
    bump(row.waitHist, f.waitBucket!);
    bump(row.channels, ch("w"));
    bump(row.channels, ch("wm"), f.waitMs);
  }
  if (f.serviceMs !== null) {
    row.serviced += 1;
    row.serviceMs += f.serviceMs;
    bump(row.serviceHist, f.serviceBucket!);
  }
  if (f.estimateErrorMs !== null) {
    row.estimated += 1;
    row.estimateErrorMs += f.estimateErrorMs;
    row.estimateBiasMs += f.estimateBiasMs!;
    bump(row.estimateErrorHist, f.estimateErrorBucket!);
  }
}

const HOURLY_COLUMNS = [
  "queue_id",
  "hour_start",
  "created",
  "served",
  "no_show",
  "cancelled",
  "transferred",
  "waited",
  "wait_ms",
  "wait_hist",
  "serviced",
  "service_ms",
  "service_hist",
  "estimated",
  "estimate_error_ms",
  "estimate_bias_ms",
  "estimate_error_hist",
  ...CHANNEL_COLUMNS,
];

function hourlyTuple(r: HourlyRow): (string | number)[] {
  return [
    r.queueId,
    r.hourStart,
    r.created,
    r.served,
    r.noShow,
    r.cancelled,
    r.transferred,
    r.waited,
    r.waitMs,
    JSON.stringify(r.waitHist),
    r.serviced,
    r.serviceMs,
    JSON.stringify(r.serviceHist),
    r.estimated,
    r.estimateErrorMs,
    r.estimateBiasMs,
    JSON.stringify(r.estimateErrorHist),
    ...CHANNEL_COLUMNS.map((column) => r.channels[column] ?? 0),
  ];
}

/**
 * Inserts the rows of `table` given as JSON tuples (one statement whatever their number: D1 binds
 * at most 100 values a statement), each tuple holding `tupleColumns` in that order; every row
 * gets the organization.
 */
function insertTuples(
  { db }: Deps,
  table: typeof analyticsHourly | typeof analyticsTicketFacts,
  tupleColumns: readonly string[],
  organizationId: string,
  tuples: unknown[][],
) {
  // Insert … select takes the table's columns in their declared order.
  const fields: Record<string, SQL> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const at = tupleColumns.indexOf(column.name);
    if (column.name === "organization_id") fields[key] = sql`${organizationId}`;
    else if (at >= 0) fields[key] = sql`json_extract(j.value, ${sql.raw(`'$[${at}]'`)})`;
    else throw new Error(`${column.name}: not in the tuples`);
  }
  return db.insert(table).select(
    db
      .select(fields)
      .from(sql`json_each(${JSON.stringify(tuples)}) AS j`)
      .getSQL(),
  );
}

/** A facts tuple: the ticket's queue, then its facts (factTuple). */
const FACT_TUPLE = ["queue_id", ...FACT_COLUMNS];

const PAGE = 5_000;
const WRITE_CHUNK = 1_000;

type ProjectionRow = TicketForAnalytics & { queue_id: string };

/**
 * Recomputes an organization's aggregates (all its queues, or only `queueIds`) from the D1
 * ticket projection: the rows are deleted and written again. For tests that insert history
 * straight into D1 and for a migration of existing data; run it while those queues' rooms are
 * quiet (a drain between the delete and the rewrite would be overwritten by the rewrite, which
 * already reflects it only if it read the projection after that drain).
 */
export async function rebuildAnalytics(
  deps: Deps,
  organizationId: string,
  queueIds?: readonly string[],
): Promise<{ tickets: number; hours: number }> {
  const { db } = deps;
  const only = queueIds ? [...new Set(queueIds)] : null;
  await db.batch([
    db
      .delete(analyticsHourly)
      .where(and(eq(analyticsHourly.organizationId, organizationId), only ? inIds(analyticsHourly.queueId, only) : undefined)),
    db
      .delete(analyticsTicketFacts)
      .where(and(eq(analyticsTicketFacts.organizationId, organizationId), only ? inIds(analyticsTicketFacts.queueId, only) : undefined)),
  ]);

  const rows = new Map<string, HourlyRow>();
  let after: [number, string] = [-1, ""];
  let count = 0;
  for (;;) {
    const tk = tickets;
    const page: ProjectionRow[] = await db
      .select({
        id: tk.id,
        queue_id: tk.queueId,
        status: tk.status,
        source: tk.source,
        called_at: tk.calledAt,
        serving_at: tk.servingAt,
        served_at: tk.servedAt,
        transferred_to_id: tk.transferredToId,
        first_estimate_minutes: tk.firstEstimateMinutes,
        created_at: tk.createdAt,
        version: tk.version,
      })
      .from(tk)
      .where(
        and(
          eq(tk.organizationId, organizationId),
          sql`(${tk.createdAt}, ${tk.id}) > (${after[0]}, ${after[1]})`,
          only ? inIds(tk.queueId, only) : undefined,
        ),
      )
      .orderBy(tk.createdAt, tk.id)
      .limit(PAGE)
      .all();
    if (page.length === 0) break;
    count += page.length;
    const facts: (string | number | null)[][] = [];
    for (const t of page) {
      const f = ticketFacts(t);
      facts.push([t.queue_id, ...factTuple(f)]);
      const key = `${t.queue_id}|${f.hourStart}`;
      let row = rows.get(key);
      if (!row) {
        row = {
          queueId: t.queue_id,
          hourStart: hourStartOf(t.created_at),
          created: 0,
          served: 0,
          noShow: 0,
          cancelled: 0,
          transferred: 0,
          waited: 0,
          waitMs: 0,
          waitHist: {},
          serviced: 0,
          serviceMs: 0,
          serviceHist: {},
          estimated: 0,
          estimateErrorMs: 0,
          estimateBiasMs: 0,
          estimateErrorHist: {},
          channels: {},
        };
        rows.set(key, row);
      }
      addToRow(row, f);
    }
    const factWrites = nonEmpty(
      chunk(facts, WRITE_CHUNK).map((tuples) => insertTuples(deps, analyticsTicketFacts, FACT_TUPLE, organizationId, tuples)),
    );
    if (factWrites) await db.batch(factWrites);
    const last = page[page.length - 1]!;
    after = [last.created_at, last.id];
    if (page.length < PAGE) break;
  }
  const all = [...rows.values()];
  const hourWrites = nonEmpty(
    chunk(all, WRITE_CHUNK).map((slice) => insertTuples(deps, analyticsHourly, HOURLY_COLUMNS, organizationId, slice.map(hourlyTuple))),
  );
  if (hourWrites) await db.batch(hourWrites);
  return { tickets: count, hours: all.length };
}
