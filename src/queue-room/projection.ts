import { codeOf } from "./rows";
import type { DomainEventMessage } from "../domain/events";
import {
  ANALYTICS_CHANNELS,
  FACT_COLUMNS,
  factTuple,
  CHANNEL_METRICS,
  channelColumn,
  ticketFacts,
  type ChannelMetric,
  type TicketForAnalytics,
} from "../domain/analytics";
import type { Configured, TicketRow } from "./rows";

// The room's projection to D1: the SQL its outbox drain (outbox.ts) and its archive step
// (archive.ts) write. D1 is the history and what the Worker's reads see; the room writes it
// only through here.

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

// ---- the ticket projection -------------------------------------------------------------------

const UPSERT_TICKET = `
INSERT INTO tickets (id, queue_id, service_id, organization_id, user_id, number, display_code, status, party_size,
  is_priority, is_ghost_mode, source, visitor_name, assigned_to_id, called_at, serving_at, served_at, present_at,
  skip_reason, recovered_from_id, transferred_to_id, created_at, updated_at, version, first_estimate_minutes,
  outcome, note, held_at, stepped_back_places, counter, desk_id, recall_count, recalled_at, phone, intake, intake_personal, labels,
  kind, appointment_at, deferred_until, defer_count, visit_id, leg_index, leg_count)
SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
WHERE EXISTS (SELECT 1 FROM organizations WHERE id = ?)
ON CONFLICT (id) DO UPDATE SET
  status = excluded.status, assigned_to_id = excluded.assigned_to_id, called_at = excluded.called_at,
  serving_at = excluded.serving_at, served_at = excluded.served_at, present_at = excluded.present_at,
  skip_reason = excluded.skip_reason, transferred_to_id = excluded.transferred_to_id,
  is_priority = excluded.is_priority, updated_at = excluded.updated_at, version = excluded.version,
  first_estimate_minutes = coalesce(tickets.first_estimate_minutes, excluded.first_estimate_minutes),
  outcome = excluded.outcome, note = excluded.note, held_at = excluded.held_at, stepped_back_places = excluded.stepped_back_places,
  counter = excluded.counter, desk_id = excluded.desk_id, recall_count = excluded.recall_count,
  recalled_at = excluded.recalled_at, intake = excluded.intake,
  intake_personal = excluded.intake_personal, labels = excluded.labels,
  deferred_until = excluded.deferred_until, defer_count = excluded.defer_count
WHERE excluded.version > tickets.version`;

/** The number as providers write it (joins accept spaces, dots and brackets): an inbound SMS finds it (issue 30). */
function barePhoneOf(t: TicketRow): string | null {
  return t.phone === null ? null : t.phone.replace(/[\s().-]/g, "");
}

/**
 * The D1 projection of one ticket as the room holds it. Guarded by `version`: applied again
 * with an older row (an at-least-once replay) it changes nothing.
 */
export function ticketUpsert(db: D1Database, cfg: Configured, t: TicketRow): D1PreparedStatement {
  return db
    .prepare(UPSERT_TICKET)
    .bind(
      t.id,
      cfg.queue_id,
      cfg.service_id,
      cfg.organization_id,
      t.user_id,
      t.number,
      codeOf(cfg.letter, t),
      t.status,
      t.party_size,
      t.is_priority,
      t.is_ghost_mode,
      t.source,
      t.visitor_name,
      t.assigned_to_id,
      t.called_at,
      t.serving_at,
      t.served_at,
      t.present_at,
      t.skip_reason,
      t.recovered_from_id,
      t.transferred_to_id,
      t.created_at,
      t.updated_at,
      t.version,
      t.first_estimate_minutes ?? null,
      t.outcome ?? null,
      t.note ?? null,
      t.held_at ?? null,
      t.stepped_back_places ?? null,
      t.counter,
      t.desk_id,
      t.recall_count,
      t.recalled_at,
      barePhoneOf(t),
      t.intake ?? null,
      t.intake_personal ?? null,
      t.labels ?? null,
      t.kind ?? "walk_in",
      t.appointment_at ?? null,
      t.deferred_until ?? null,
      t.defer_count ?? 0,
      t.visit_id ?? null,
      t.leg_index ?? null,
      t.route ? (JSON.parse(t.route) as unknown[]).length : null,
      cfg.organization_id,
    );
}

/**
 * D1 statements that record the remote joins expired in this outbox batch, so the penalty
 * (counted per user across every queue) is read without asking each room. Replays insert nothing new.
 */
export function remoteExpiryProjection(db: D1Database, messages: readonly DomainEventMessage[]): D1PreparedStatement[] {
  return messages
    .filter((m) => m.type === "remote_join.expired" && m.ticketId !== null && m.queueId !== null)
    .map((m) =>
      db
        .prepare(
          `INSERT INTO remote_join_expiries (ticket_id, user_id, organization_id, queue_id, expired_at)
           SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM users WHERE id = ?) AND EXISTS (SELECT 1 FROM organizations WHERE id = ?)
           ON CONFLICT (ticket_id) DO NOTHING`,
        )
        .bind(m.ticketId, m.data.userId, m.organizationId, m.queueId, Date.parse(m.occurredAt), m.data.userId, m.organizationId),
    );
}

/**
 * One drain's D1 batch (outbox.ts): the tickets as the room holds them, the analytics
 * aggregates (once per ticket version), the queue's status, the room's next deadline for the
 * cron sweep, and the remote joins that expired.
 */
export function drainStatements(
  db: D1Database,
  cfg: Configured,
  tickets: readonly TicketRow[],
  deadline: number | null,
  messages: readonly DomainEventMessage[],
): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = tickets.map((t) => ticketUpsert(db, cfg, t));
  // The analytics aggregates move in the same transaction, once per ticket version.
  statements.push(...analyticsDrainStatements(db, cfg, tickets));
  statements.push(
    db
      .prepare("UPDATE queues SET status = ?, archived_at = ? WHERE id = ? AND (status IS NOT ? OR archived_at IS NOT ?)")
      .bind(cfg.status, cfg.archived_at, cfg.queue_id, cfg.status, cfg.archived_at),
  );
  statements.push(
    deadline === null || cfg.retired_at !== null
      ? db.prepare("DELETE FROM room_deadlines WHERE queue_id = ?").bind(cfg.queue_id)
      : db
          .prepare(
            `INSERT INTO room_deadlines (queue_id, organization_id, due_at) SELECT ?, ?, ?
             WHERE EXISTS (SELECT 1 FROM queues WHERE id = ?)
             ON CONFLICT (queue_id) DO UPDATE SET due_at = excluded.due_at`,
          )
          .bind(cfg.queue_id, cfg.organization_id, deadline, cfg.queue_id),
  );
  statements.push(...remoteExpiryProjection(db, messages));
  return statements;
}
