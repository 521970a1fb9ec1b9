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
  ANALYTICS_CHANNELS,
  CHANNEL_COLUMNS,
  CHANNEL_METRICS,
  channelColumn,
  hourStartOf,
  ticketFacts,
  type ChannelMetric,
  type TicketFacts,
  type TicketForAnalytics,
} from "../domain/analytics";

interface Owner {
  organization_id: string;
  queue_id: string;
}

/** JSON path of a sparse histogram or channel key. */
const path = (key: string) => `'$."' || ${key} || '"'`;

/** A sparse histogram column with one count moved from bucket `from` to bucket `to` (either may be NULL). */
function moveCount(column: string, from: string, to: string): string {
  const removed = `CASE WHEN ${from} IS NULL THEN ${column} ELSE json_set(${column}, ${path(from)}, coalesce(json_extract(${column}, ${path(from)}), 0) - 1) END`;
  return `CASE WHEN ${to} IS NULL THEN ${removed} ELSE json_set(${removed}, ${path(to)}, coalesce(json_extract(${removed}, ${path(to)}), 0) + 1) END`;
}

/** The delta of each channel metric (CHANNEL_METRICS), in the APPLY_DELTA subquery `d`. */
const CHANNEL_DELTAS: Record<ChannelMetric, string> = { c: "d.dc", s: "d.ds", n: "d.dn", x: "d.dx", t: "d.dt", w: "d.dw", wm: "d.dwm" };

/** Each channel column moves by its metric's delta when it is the ticket's channel (a comparison is 0 or 1). */
function channelUpdate(): string {
  return ANALYTICS_CHANNELS.flatMap((channel) =>
    CHANNEL_METRICS.map((metric) => {
      const column = channelColumn(channel, metric);
      return `${column} = h.${column} + (d.channel = '${channel}') * ${CHANNEL_DELTAS[metric]}`;
    }),
  ).join(",\n  ");
}

// ?1 ticket id, ?2 version, ?3 channel, ?4 served, ?5 no_show, ?6 cancelled, ?7 transferred,
// ?8 wait_ms, ?9 wait_bucket, ?10 service_ms, ?11 service_bucket, ?12 estimate_error_ms,
// ?13 estimate_error_bucket, ?14 estimate_bias_ms, ?15 queue id, ?16 hour start. Numbers are
// cast: D1 binds a JS number as REAL, and a bucket must read "16", not "16.0", as a key.
const APPLY_DELTA = `
UPDATE analytics_hourly AS h SET
  created = h.created + d.dc, served = h.served + d.ds, no_show = h.no_show + d.dn,
  cancelled = h.cancelled + d.dx, transferred = h.transferred + d.dt,
  waited = h.waited + d.dw, wait_ms = h.wait_ms + d.dwm, wait_hist = ${moveCount("h.wait_hist", "d.owb", "d.nwb")},
  serviced = h.serviced + d.dsv, service_ms = h.service_ms + d.dsm, service_hist = ${moveCount("h.service_hist", "d.osb", "d.nsb")},
  estimated = h.estimated + d.de, estimate_error_ms = h.estimate_error_ms + d.dem, estimate_bias_ms = h.estimate_bias_ms + d.deb,
  estimate_error_hist = ${moveCount("h.estimate_error_hist", "d.oeb", "d.neb")},
  ${channelUpdate()}
FROM (
  SELECT ?3 AS channel,
    (o.ticket_id IS NULL) AS dc,
    CAST(?4 AS INTEGER) - coalesce(o.served, 0) AS ds, CAST(?5 AS INTEGER) - coalesce(o.no_show, 0) AS dn,
    CAST(?6 AS INTEGER) - coalesce(o.cancelled, 0) AS dx, CAST(?7 AS INTEGER) - coalesce(o.transferred, 0) AS dt,
    (CAST(?8 AS INTEGER) IS NOT NULL) - (o.wait_ms IS NOT NULL) AS dw, coalesce(CAST(?8 AS INTEGER), 0) - coalesce(o.wait_ms, 0) AS dwm,
    o.wait_bucket AS owb, CAST(?9 AS INTEGER) AS nwb,
    (CAST(?10 AS INTEGER) IS NOT NULL) - (o.service_ms IS NOT NULL) AS dsv, coalesce(CAST(?10 AS INTEGER), 0) - coalesce(o.service_ms, 0) AS dsm,
    o.service_bucket AS osb, CAST(?11 AS INTEGER) AS nsb,
    (CAST(?12 AS INTEGER) IS NOT NULL) - (o.estimate_error_ms IS NOT NULL) AS de, coalesce(CAST(?12 AS INTEGER), 0) - coalesce(o.estimate_error_ms, 0) AS dem,
    coalesce(CAST(?14 AS INTEGER), 0) - coalesce(o.estimate_bias_ms, 0) AS deb,
    o.estimate_error_bucket AS oeb, CAST(?13 AS INTEGER) AS neb
  FROM (SELECT ?1 AS ticket_id) AS n
  LEFT JOIN analytics_ticket_facts AS o ON o.ticket_id = n.ticket_id
  WHERE o.ticket_id IS NULL OR o.version < CAST(?2 AS INTEGER)
) AS d
WHERE h.queue_id = ?15 AND h.hour_start = CAST(?16 AS INTEGER)`;

const FACT_COLUMNS = [
  "ticket_id",
  "hour_start",
  "channel",
  "served",
  "no_show",
  "cancelled",
  "transferred",
  "wait_ms",
  "wait_bucket",
  "service_ms",
  "service_bucket",
  "estimate_error_ms",
  "estimate_error_bucket",
  "estimate_bias_ms",
  "version",
] as const;

function factTuple(f: TicketFacts): (string | number | null)[] {
  return [
    f.ticketId,
    f.hourStart,
    f.channel,
    f.served,
    f.noShow,
    f.cancelled,
    f.transferred,
    f.waitMs,
    f.waitBucket,
    f.serviceMs,
    f.serviceBucket,
    f.estimateErrorMs,
    f.estimateErrorBucket,
    f.estimateBiasMs,
    f.version,
  ];
}

/** ?1 queue id, ?2 organization id, ?3 JSON array of fact tuples (FACT_COLUMNS order). */
const UPSERT_FACTS = `
INSERT INTO analytics_ticket_facts (queue_id, organization_id, ${FACT_COLUMNS.join(", ")})
SELECT ?1, ?2, ${FACT_COLUMNS.map((_, i) => `json_extract(j.value, '$[${i}]')`).join(", ")}
FROM json_each(?3) AS j
WHERE EXISTS (SELECT 1 FROM organizations WHERE id = ?2)
ON CONFLICT (ticket_id) DO UPDATE SET
  ${FACT_COLUMNS.filter((c) => c !== "ticket_id")
    .map((c) => `${c} = excluded.${c}`)
    .join(", ")}
WHERE excluded.version > analytics_ticket_facts.version`;

/** ?1 queue id, ?2 organization id, ?3 JSON array of hour starts. */
const ENSURE_ROWS = `
INSERT INTO analytics_hourly (queue_id, hour_start, organization_id)
SELECT ?1, j.value, ?2 FROM json_each(?3) AS j
WHERE EXISTS (SELECT 1 FROM organizations WHERE id = ?2)
ON CONFLICT (queue_id, hour_start) DO NOTHING`;

/**
 * The statements that bring the aggregates up to date with these tickets (the room's current
 * rows), for the drain's batch. Safe to run any number of times (see the header).
 */
export function analyticsDrainStatements(db: D1Database, owner: Owner, tickets: readonly TicketForAnalytics[]): D1PreparedStatement[] {
  if (tickets.length === 0) return [];
  const facts = tickets.map(ticketFacts);
  const hours = [...new Set(facts.map((f) => f.hourStart))];
  const statements = [db.prepare(ENSURE_ROWS).bind(owner.queue_id, owner.organization_id, JSON.stringify(hours))];
  for (const f of facts) {
    statements.push(
      db
        .prepare(APPLY_DELTA)
        .bind(
          f.ticketId,
          f.version,
          f.channel,
          f.served,
          f.noShow,
          f.cancelled,
          f.transferred,
          f.waitMs,
          f.waitBucket,
          f.serviceMs,
          f.serviceBucket,
          f.estimateErrorMs,
          f.estimateErrorBucket,
          f.estimateBiasMs,
          owner.queue_id,
          f.hourStart,
        ),
    );
  }
  statements.push(db.prepare(UPSERT_FACTS).bind(owner.queue_id, owner.organization_id, JSON.stringify(facts.map(factTuple))));
  return statements;
}

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
