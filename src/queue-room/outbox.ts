import { displayCode } from "../domain/display-code";
import type { DomainEventMessage, EventType } from "../domain/events";
import type { Env } from "../env";
import { newId } from "../lib/ids";
import { iso } from "../lib/time";
import { analyticsDrainStatements } from "../services/analytics-aggregates";
import { remoteExpiryProjection } from "./remote";
import { readRoom, configuredOf, type Configured, type TicketRow } from "./store";

// The room's transactional outbox. Every change writes its events in the same storage
// transaction; the alarm drains them, at least once, and once for a burst of changes (the
// alarm is set DRAIN_DELAY_MS after the first change not yet drained, and every change until
// it fires rides along: one D1 batch and one queue send per drain, see QueueRoom.armAlarm), to:
//  - the D1 `tickets` projection (upserts guarded by `version`, so a replay never goes back),
//  - the D1 `queues.status`/`archived_at` projection,
//  - `room_deadlines` (the room's next no-show deadline, for the cron sweep),
//  - the EVENTS queue (consumers de-duplicate by event id).
// Rows leave the outbox only after all of that succeeded.

type Identity = { organization_id: string; queue_id: string; service_id: string; letter: string };

/** Events carry what a notifier needs without reading anything back (ghost flag, owner, code). */
export function eventMessage(
  type: EventType,
  cfg: Identity,
  ticket: TicketRow | null,
  at: number,
  data: Record<string, unknown>,
): DomainEventMessage {
  const ticketData = ticket
    ? {
        userId: ticket.user_id,
        displayCode: displayCode(cfg.letter, ticket.number),
        status: ticket.status,
        isGhostMode: ticket.is_ghost_mode === 1,
        assignedToId: ticket.assigned_to_id,
        serviceId: cfg.service_id,
        phone: ticket.phone,
        language: ticket.language,
        source: ticket.source,
      }
    : { serviceId: cfg.service_id };
  return {
    id: newId("evt"),
    type,
    organizationId: cfg.organization_id,
    queueId: cfg.queue_id,
    ticketId: ticket?.id ?? null,
    occurredAt: iso(at),
    data: { ...ticketData, ...data },
  };
}

/**
 * Outbox rows delivered per drain: one queue `sendBatch` takes at most 100 messages, and the
 * D1 batch stays a few hundred statements (about two per ticket).
 */
export const DRAIN_BATCH = 100;

/**
 * How long after a change the drain runs: every change in that window rides in the same D1
 * batch and queue send. Short enough that the D1 projection follows within a second.
 */
export const DRAIN_DELAY_MS = 150;

const UPSERT_TICKET = `
INSERT INTO tickets (id, queue_id, service_id, organization_id, user_id, number, display_code, status, party_size,
  is_priority, is_ghost_mode, source, visitor_name, assigned_to_id, called_at, serving_at, served_at, present_at,
  skip_reason, recovered_from_id, transferred_to_id, created_at, updated_at, version, first_estimate_minutes,
  outcome, note, held_at, stepped_back_places, counter, desk_id, recall_count, recalled_at)
SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
WHERE EXISTS (SELECT 1 FROM organizations WHERE id = ?)
ON CONFLICT (id) DO UPDATE SET
  status = excluded.status, assigned_to_id = excluded.assigned_to_id, called_at = excluded.called_at,
  serving_at = excluded.serving_at, served_at = excluded.served_at, present_at = excluded.present_at,
  skip_reason = excluded.skip_reason, transferred_to_id = excluded.transferred_to_id,
  is_priority = excluded.is_priority, updated_at = excluded.updated_at, version = excluded.version,
  first_estimate_minutes = coalesce(tickets.first_estimate_minutes, excluded.first_estimate_minutes),
  outcome = excluded.outcome, note = excluded.note, held_at = excluded.held_at, stepped_back_places = excluded.stepped_back_places,
  counter = excluded.counter, desk_id = excluded.desk_id, recall_count = excluded.recall_count,
  recalled_at = excluded.recalled_at
WHERE excluded.version > tickets.version`;

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
      displayCode(cfg.letter, t.number),
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
      cfg.organization_id,
    );
}

/**
 * Delivers the oldest outbox rows. Returns true when rows that were already waiting are left
 * (a backlog longer than one drain: drain again at once); rows written while this drain was
 * delivering have armed their own alarm. The room state read here is the latest, and each
 * upsert carries its version, so an older replay cannot undo a newer one.
 */
export async function drainOutbox(sql: SqlStorage, env: Env, nextDeadline: () => number | null): Promise<boolean> {
  const rows = sql
    .exec<{ seq: number; ticket_id: string | null; message: string }>(
      "SELECT seq, ticket_id, message FROM outbox ORDER BY seq LIMIT ?",
      DRAIN_BATCH,
    )
    .toArray();
  if (rows.length === 0) return false;
  const cfg = configuredOf(readRoom(sql));
  if (cfg === null) throw new Error("outbox rows in a room that has no configuration");
  const ids = [...new Set(rows.map((r) => r.ticket_id).filter((id): id is string => id !== null))];
  const tickets = ids.map((id) => sql.exec<TicketRow>("SELECT * FROM tickets WHERE id = ?", id).one());
  const deadline = nextDeadline();
  const lastSeq = rows[rows.length - 1]!.seq;

  const db = env.DB;
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
  const messages = rows.map((r) => JSON.parse(r.message) as DomainEventMessage);
  statements.push(...remoteExpiryProjection(db, messages));
  await db.batch(statements);
  await env.EVENTS.sendBatch(messages.map((body) => ({ body, contentType: "json" as const })));
  sql.exec("DELETE FROM outbox WHERE seq <= ?", lastSeq);
  return rows.length === DRAIN_BATCH && sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n > 0;
}
