import { batchWrites } from "../db/prepared";
import { codeOf } from "./rows";
import type { DomainEventMessage, EventType } from "../domain/events";
import type { Env } from "../env";
import { newId } from "../lib/ids";
import { iso } from "../lib/time";
import { drainStatements } from "./projection";
import { configuredOf, readRoom, type TicketRow } from "./rows";

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
/** The columns a ticket's event carries (a narrow read is enough to announce one: store.ts markAlmostCalled). */
export const EVENT_COLUMNS = [
  "id",
  "number",
  "visit_code",
  "user_id",
  "status",
  "is_ghost_mode",
  "assigned_to_id",
  "phone",
  "language",
  "source",
  "kind",
  "appointment_at",
  "intake",
  "labels",
] as const satisfies readonly (keyof TicketRow)[];

export type EventTicket = Pick<TicketRow, (typeof EVENT_COLUMNS)[number]>;

export function eventMessage(
  type: EventType,
  cfg: Identity,
  ticket: EventTicket | null,
  at: number,
  data: Record<string, unknown>,
): DomainEventMessage {
  const ticketData = ticket
    ? {
        userId: ticket.user_id,
        displayCode: codeOf(cfg.letter, ticket),
        status: ticket.status,
        isGhostMode: ticket.is_ghost_mode === 1,
        assignedToId: ticket.assigned_to_id,
        serviceId: cfg.service_id,
        phone: ticket.phone,
        language: ticket.language,
        source: ticket.source,
        // docs/blend.md: a walk-in or an appointment's check-in, with the appointment's start.
        kind: ticket.kind ?? "walk_in",
        appointmentAt: ticket.appointment_at == null ? null : iso(ticket.appointment_at),
        // Only the open intake answers (docs/visits.md): personal ones never travel in events,
        // so no webhook nor notification carries them. Absent when the ticket has none.
        ...(ticket.intake ? { intake: JSON.parse(ticket.intake) as unknown } : {}),
        ...(ticket.labels ? { labels: JSON.parse(ticket.labels) as unknown } : {}),
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
 * D1 batch a few statements (projection.ts: the tickets, their analytics, the queue, its deadline).
 */
export const DRAIN_BATCH = 100;

/**
 * How long after a change the drain runs: every change in that window rides in the same D1
 * batch and queue send. Short enough that the D1 projection follows within a second.
 */
export const DRAIN_DELAY_MS = 150;

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
  // One statement for the batch's tickets (issue 43: one a ticket, each a cursor of its own).
  const tickets =
    ids.length === 0
      ? []
      : sql.exec<TicketRow>("SELECT * FROM tickets WHERE id IN (SELECT value FROM json_each(?))", JSON.stringify(ids)).toArray();
  if (tickets.length !== ids.length) throw new Error(`outbox rows name tickets the room does not hold: ${ids.length - tickets.length}`);
  const deadline = nextDeadline();
  const lastSeq = rows[rows.length - 1]!.seq;

  const messages = rows.map((r) => JSON.parse(r.message) as DomainEventMessage);
  await batchWrites(env.DB, drainStatements(cfg, tickets, deadline, messages));
  await env.EVENTS.sendBatch(messages.map((body) => ({ body, contentType: "json" as const })));
  sql.exec("DELETE FROM outbox WHERE seq <= ?", lastSeq);
  return rows.length === DRAIN_BATCH && sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n > 0;
}
