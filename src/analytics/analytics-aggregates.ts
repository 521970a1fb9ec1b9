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

const INSERT_HOURLY = `
INSERT INTO analytics_hourly (organization_id, ${HOURLY_COLUMNS.join(", ")})
SELECT ?1, ${HOURLY_COLUMNS.map((_, i) => `json_extract(j.value, '$[${i}]')`).join(", ")}
FROM json_each(?2) AS j`;

const INSERT_FACTS = `
INSERT INTO analytics_ticket_facts (organization_id, queue_id, ${FACT_COLUMNS.join(", ")})
SELECT ?1, json_extract(j.value, '$[0]'), ${FACT_COLUMNS.map((_, i) => `json_extract(j.value, '$[${i + 1}]')`).join(", ")}
FROM json_each(?2) AS j`;

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
  db: D1Database,
  organizationId: string,
  queueIds?: readonly string[],
): Promise<{ tickets: number; hours: number }> {
  const only = queueIds ? new Set(queueIds) : null;
  const scope = only ? `AND queue_id IN (SELECT value FROM json_each(?2))` : "";
  const scopeBinds = only ? [JSON.stringify([...only])] : [];
  await db.batch([
    db.prepare(`DELETE FROM analytics_hourly WHERE organization_id = ?1 ${scope}`).bind(organizationId, ...scopeBinds),
    db.prepare(`DELETE FROM analytics_ticket_facts WHERE organization_id = ?1 ${scope}`).bind(organizationId, ...scopeBinds),
  ]);

  const rows = new Map<string, HourlyRow>();
  let after: [number, string] = [-1, ""];
  let count = 0;
  for (;;) {
    const page = await db
      .prepare(
        `SELECT id, queue_id, status, source, called_at, serving_at, served_at, transferred_to_id, first_estimate_minutes, created_at, version
         FROM tickets WHERE organization_id = ?1 AND (created_at, id) > (?2, ?3) ${only ? "AND queue_id IN (SELECT value FROM json_each(?4))" : ""}
         ORDER BY created_at, id LIMIT ${PAGE}`,
      )
      .bind(organizationId, after[0], after[1], ...scopeBinds)
      .all<ProjectionRow>();
    const tickets = page.results;
    if (tickets.length === 0) break;
    count += tickets.length;
    const facts: (string | number | null)[][] = [];
    for (const t of tickets) {
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
    const writes = [];
    for (let i = 0; i < facts.length; i += WRITE_CHUNK) {
      writes.push(db.prepare(INSERT_FACTS).bind(organizationId, JSON.stringify(facts.slice(i, i + WRITE_CHUNK))));
    }
    await db.batch(writes);
    const last = tickets[tickets.length - 1]!;
    after = [last.created_at, last.id];
    if (tickets.length < PAGE) break;
  }
  const all = [...rows.values()];
  const writes = [];
  for (let i = 0; i < all.length; i += WRITE_CHUNK) {
    writes.push(db.prepare(INSERT_HOURLY).bind(organizationId, JSON.stringify(all.slice(i, i + WRITE_CHUNK).map(hourlyTuple))));
  }
  if (writes.length > 0) await db.batch(writes);
  return { tickets: count, hours: all.length };
}
