import { blendOrder, DEFAULT_BLEND_COPY, type BlendCopy, type BlendPolicy, type BlendTicket } from "../domain/blend";
import type { EventType } from "../domain/events";
import { now } from "../lib/clock";
import { LANE, type Lane, type QueueStatus, type TicketSource, type TicketStatus } from "../domain/tickets";
import type { CallRecord } from "../domain/wait-estimate";
import { EVENT_COLUMNS, eventMessage, type EventTicket } from "./outbox";
import type { NewTicket } from "./types";

// The room's rows: the one `room` row (its queue and counters), the tickets with the order
// index, the call history and the outbox. Every read and write of them goes through here;
// the room decides when (inside its one change path, see QueueRoom.mutate).

export { configuredOf, readRoom, type Cell, type ConfigRow, type Configured, type TicketFields, type TicketRow } from "./rows";
import {
  configuredOf,
  readRoom,
  ROOM_TICKET_COLUMNS,
  type Cell,
  type ConfigRow,
  type Configured,
  type TicketFields,
  type TicketRow,
} from "./rows";

const EVENT_COLUMNS_SQL = EVENT_COLUMNS.join(", ");

/** A Durable Object's statement binds at most 100 values: two an event. */
const EVENTS_PER_INSERT = 50;

/** The calls the wait estimate reads its pace from. */
export const CALL_HISTORY = 100;
/** The table is trimmed back to CALL_HISTORY once every this many calls (issue 43: a DELETE was every call-next's). */
export const CALL_TRIM_EVERY = 20;

const INSERT_TICKET_SQL = `INSERT INTO tickets (${ROOM_TICKET_COLUMNS.join(", ")}) VALUES (${ROOM_TICKET_COLUMNS.map(() => "?").join(", ")})`;

export class RoomStore {
  constructor(
    readonly sql: SqlStorage,
    /** Told of every ticket write, in the same transaction (the remote-join journey follows it). */
    private readonly onTicketChange: (id: string, fields: TicketFields, at: number) => void,
  ) {}

  // ---- the room row ------------------------------------------------------------------------

  /**
   * The room row and the blend policy, kept between reads (issue 43: a join read the room row five
   * times, 0.8 ms of its room time). Every write of them goes through this store, which keeps the
   * copy in step; `forget` drops it, and the room calls it when a transaction rolls back (a copy
   * taken inside it may hold what was undone) and after a write made elsewhere (learnConfig, a
   * new copy of the rules). Each read answers a new object: a row handed out never changes.
   */
  private kept: { room?: ConfigRow; blend?: BlendCopy; appointmentWaiting?: boolean; calls?: readonly CallRecord[] } = {};

  room(): ConfigRow {
    return (this.kept.room ??= readRoom(this.sql));
  }

  forget(): void {
    this.kept = {};
  }

  /** The kept room row with `fields` as just written (nothing kept: nothing to change). */
  private keepRoom(fields: Partial<ConfigRow>): void {
    if (this.kept.room) this.kept.room = { ...this.kept.room, ...fields };
  }

  identity(): Configured | null {
    return configuredOf(this.room());
  }

  setRoom(fields: Partial<Record<keyof ConfigRow, Cell>>): void {
    const columns = Object.keys(fields);
    if (columns.length === 0) return;
    this.sql.exec(`UPDATE room SET ${columns.map((c) => `${c} = ?`).join(", ")} WHERE id = 1`, ...(Object.values(fields) as Cell[]));
    // Read again when next asked (SQLite's own types, not the values given).
    delete this.kept.room;
  }

  /** Every ticket write carries the next room version, so the D1 projection never goes back. */
  private bumpVersion(): number {
    const { version } = this.sql.exec<{ version: number }>("UPDATE room SET version = version + 1 WHERE id = 1 RETURNING version").one();
    this.keepRoom({ version });
    return version;
  }

  /**
   * The next key of the priority lane, past every key now in it (a new VIP, a restored ticket,
   * one marked VIP land behind the lane's back): a ticket returned "after" another may hold a key
   * beyond the counter, so the counter jumps past it rather than give two tickets one key.
   */
  nextPrioritySeq(): number {
    const back = this.sql
      .exec<{ k: number | null }>("SELECT MAX(order_key) AS k FROM tickets WHERE status = 'waiting' AND lane = ?", LANE.priority)
      .one().k;
    const { seq } = this.sql
      .exec<{ seq: number }>(
        "UPDATE room SET priority_seq = MAX(priority_seq + 1, ?) WHERE id = 1 RETURNING priority_seq AS seq",
        back === null ? 0 : Math.floor(back) + 1,
      )
      .one();
    this.keepRoom({ priority_seq: seq });
    return seq;
  }

  // ---- tickets -----------------------------------------------------------------------------

  /** Kept once, at a join the blend orders (otherwise written with the row); only the projection and analytics read it. */
  recordFirstEstimate(id: string, minutes: number | null): void {
    this.sql.exec("UPDATE tickets SET first_estimate_minutes = ? WHERE id = ? AND first_estimate_minutes IS NULL", minutes, id);
  }

  row(id: string): TicketRow {
    return this.sql.exec<TicketRow>("SELECT * FROM tickets WHERE id = ?", id).one();
  }

  find(id: string): TicketRow | null {
    return this.sql.exec<TicketRow>("SELECT * FROM tickets WHERE id = ?", id).toArray()[0] ?? null;
  }

  rowsWhere(condition: string, ...args: Cell[]): TicketRow[] {
    return this.sql.exec<TicketRow>(`SELECT * FROM tickets WHERE ${condition}`, ...args).toArray();
  }

  /**
   * The latest call among the tickets `condition` selects, with only what a report of it needs
   * (issue 43: every call-next asks, and a whole row is some sixty columns to hand to JavaScript).
   */
  latestCallWhere(condition: string, ...args: Cell[]): Pick<TicketRow, "id" | "number" | "visit_code" | "called_at" | "updated_at"> | null {
    return (
      this.sql
        .exec<Pick<TicketRow, "id" | "number" | "visit_code" | "called_at" | "updated_at">>(
          `SELECT id, number, visit_code, called_at, updated_at FROM tickets WHERE ${condition} ORDER BY called_at DESC, lane, order_key LIMIT 1`,
          ...args,
        )
        .toArray()[0] ?? null
    );
  }

  /**
   * A new waiting ticket at the back of its lane, numbered (the room's counters move) but not yet
   * written: the join settles its position, "told" flag and first estimate in memory, then
   * `insert` writes the row whole (issue 43: an `INSERT … RETURNING *` and two UPDATEs after it).
   */
  numberNew(id: string, draft: NewTicket, at: number, recoveredFromId: string | null): TicketRow {
    // The ticket's number and the room's next version in one statement (issue 43).
    const { n: number, version } = this.sql
      .exec<{
        n: number;
        version: number;
      }>("UPDATE room SET next_number = next_number + 1, version = version + 1 WHERE id = 1 RETURNING next_number - 1 AS n, version")
      .one();
    this.keepRoom({ next_number: number + 1, version });
    const lane: Lane = draft.isPriority ? LANE.priority : LANE.regular;
    return {
      id,
      number,
      lane,
      order_key: draft.isPriority ? this.nextPrioritySeq() : number,
      status: "waiting",
      user_id: draft.userId,
      party_size: draft.partySize,
      is_priority: draft.isPriority ? 1 : 0,
      is_ghost_mode: draft.isGhostMode ? 1 : 0,
      source: draft.source,
      visitor_name: draft.visitorName,
      phone: draft.phone,
      language: draft.language,
      assigned_to_id: null,
      called_at: null,
      serving_at: null,
      served_at: null,
      present_at: null,
      skip_reason: null,
      recovered_from_id: recoveredFromId,
      transferred_to_id: null,
      transferring_to: null,
      transferring_since: null,
      hand_off_id: null,
      first_estimate_minutes: null,
      desk_id: null,
      lined_up_at: at,
      recall_count: 0,
      recalled_at: null,
      counter: null,
      held_at: null,
      held_from: null,
      hold_reason: null,
      outcome: null,
      note: null,
      stepped_back_places: null,
      deferred_until: null,
      defer_count: 0,
      almost_called_sent: 0,
      intake: answersJson(draft.intake),
      intake_personal: answersJson(draft.intakePersonal),
      labels: null,
      kind: draft.kind ?? "walk_in",
      appointment_id: draft.appointmentId ?? null,
      appointment_at: draft.appointmentAt ?? null,
      appointment_late: draft.appointmentLate ? 1 : 0,
      // docs/visits.md: a visit of several services starts here, at its first leg.
      route: draft.route ? JSON.stringify(draft.route) : null,
      leg_index: draft.route ? 0 : null,
      visit_id: draft.route ? id : null,
      visit_started_at: draft.route ? at : null,
      visit_code: null,
      routed_from_id: null,
      routed_to_id: null,
      route_token_hash: null,
      created_at: at,
      updated_at: at,
      version,
    };
  }

  /** Writes a row `numberNew` made: every column, so the row in memory is the row stored. */
  insert(row: TicketRow): void {
    this.sql.exec(INSERT_TICKET_SQL, ...ROOM_TICKET_COLUMNS.map((c) => row[c]));
    if (row.kind === "appointment") this.kept.appointmentWaiting = true;
  }

  /**
   * The position a ticket `numberNew` made will take at the back of its lane, counted before it
   * is written; null while an appointment waits (the blend's order needs the row in the table:
   * `positionOf` after `insert`). Its order key (its number, or the priority lane's next
   * sequence) is past every key given before (placeFor, regularPlaceOf and nextPrioritySeq keep
   * every waiting key below them), so the line's counters alone answer it.
   */
  positionAtBack(row: TicketRow): number | null {
    if (row.kind === "appointment" || this.appointmentWaiting()) return null;
    let position = 1;
    for (const c of this.lineCounts()) if (c.status === "waiting" && c.lane <= row.lane) position += c.tickets;
    return position;
  }

  /** The one ticket-writing method: a new version, a new `updated_at`, and the remote join kept in step. */
  /** Writes `fields` of a ticket; answers the room version it now carries. */
  update(id: string, fields: TicketFields, at: number): number {
    const columns = Object.keys(fields);
    const values = Object.values(fields) as Cell[];
    const version = this.bumpVersion();
    this.sql.exec(
      `UPDATE tickets SET ${columns.map((c) => `${c} = ?`).join(", ")}, updated_at = ?, version = ? WHERE id = ?`,
      ...values,
      at,
      version,
      id,
    );
    // Whether an appointment waits changes only when a ticket's kind changes, one starts waiting,
    // or one leaves the line while some appointment waits.
    if ("kind" in fields || ("status" in fields && (fields.status === "waiting" || this.kept.appointmentWaiting !== false)))
      delete this.kept.appointmentWaiting;
    this.onTicketChange(id, fields, at);
    return version;
  }

  /**
   * A flag of the order's own bookkeeping (not part of the ticket as anyone sees it); answers
   * what the ticket's event needs, in the same statement (issue 43: a whole row was read for it).
   */
  markAlmostCalled(id: string): EventTicket {
    return this.sql.exec<EventTicket>(`UPDATE tickets SET almost_called_sent = 1 WHERE id = ? RETURNING ${EVENT_COLUMNS_SQL}`, id).one();
  }

  liveRowOf(userId: string): TicketRow | null {
    return (
      this.sql
        .exec<TicketRow>("SELECT * FROM tickets WHERE user_id = ? AND status IN ('waiting', 'called') ORDER BY number LIMIT 1", userId)
        .toArray()[0] ?? null
    );
  }

  recoveredTo(id: string): string | null {
    return this.sql.exec<{ id: string }>("SELECT id FROM tickets WHERE recovered_from_id = ?", id).toArray()[0]?.id ?? null;
  }

  // The order index (status, lane, order_key) answers these without reading the whole line,
  // so joining and calling stay cheap in a long queue.

  /**
   * The first callable ticket in queue order (priority lane, then by order key): waiting, not
   * leaving for another queue, if joined remotely arrived, and not deferred past `at` (a deferred
   * ticket keeps its place and is passed over until its time, docs/visits.md).
   */
  firstCallable(at: number = now()): TicketRow | null {
    const blended = this.blendedWaiting(at);
    if (blended !== null) return blended.find((row) => callable(row, at)) ?? null;
    return (
      this.sql
        .exec<TicketRow>(
          `SELECT * FROM tickets WHERE status = 'waiting' AND transferring_to IS NULL AND (source <> 'remote' OR present_at IS NOT NULL)
             AND (deferred_until IS NULL OR deferred_until <= ?)
           ORDER BY lane, order_key LIMIT 1`,
          at,
        )
        .toArray()[0] ?? null
    );
  }

  /** The first `limit` waiting tickets in queue order, from `offset`. */
  /**
   * The front of the line as far as "almost your turn" needs it: ids and whether each was told.
   * After most changes (a join at the back) everyone there was told already, and no whole row
   * is read (issue 43).
   */
  waitingFront(limit: number, at: number = now()): { id: string; almost_called_sent: number }[] {
    const blended = this.blendedWaiting(at);
    if (blended !== null) return blended.slice(0, limit);
    return this.sql
      .exec<{ id: string; almost_called_sent: number }>(
        "SELECT id, almost_called_sent FROM tickets WHERE status = 'waiting' ORDER BY lane, order_key LIMIT ?",
        limit,
      )
      .toArray();
  }

  waitingLine(limit: number, offset = 0, at: number = now()): TicketRow[] {
    const blended = this.blendedWaiting(at);
    if (blended !== null) return blended.slice(offset, offset + limit);
    return this.sql
      .exec<TicketRow>("SELECT * FROM tickets WHERE status = 'waiting' ORDER BY lane, order_key LIMIT ? OFFSET ?", limit, offset)
      .toArray();
  }

  /**
   * 1 = next; null when not waiting. The waiting tickets of the lanes before come from the
   * line's counters; within its own lane the shorter side is counted in the order index (the
   * tickets behind when it is in the back half, as a new ticket is), so a join at the back of
   * a long line counts nothing.
   */
  positionOf(row: TicketRow, at: number = now()): number | null {
    if (row.status !== "waiting") return null;
    const blended = this.blendedWaiting(at);
    if (blended !== null) {
      const index = blended.findIndex((r) => r.id === row.id);
      return index < 0 ? null : index + 1;
    }
    let before = 0;
    let inLane = 0;
    for (const c of this.lineCounts()) {
      if (c.status !== "waiting") continue;
      if (c.lane < row.lane) before += c.tickets;
      else if (c.lane === row.lane) inLane = c.tickets;
    }
    const half = Math.floor(inLane / 2);
    const behind = this.sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM (SELECT 1 FROM tickets WHERE status = 'waiting' AND lane = ? AND order_key > ? LIMIT ?)",
        row.lane,
        row.order_key,
        half + 1,
      )
      .one().n;
    if (behind <= half) return before + inLane - behind;
    const ahead = this.sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM tickets WHERE status = 'waiting' AND lane = ? AND order_key < ?",
        row.lane,
        row.order_key,
      )
      .one().n;
    return before + ahead + 1;
  }

  // ---- the blend (docs/blend.md) -------------------------------------------------------------

  /** The queue's blend policy as the room's copy of the rules holds it; the defaults without one. */
  blendCopy(): BlendCopy {
    if (this.kept.blend) return this.kept.blend;
    const row = this.sql.exec<{ blend: string | null }>("SELECT blend FROM room_rules").toArray()[0];
    return (this.kept.blend = row?.blend ? (JSON.parse(row.blend) as BlendCopy) : DEFAULT_BLEND_COPY);
  }

  /**
   * The waiting line in the blend's order at `at`, or null while no appointment waits (then the
   * order index is the order, and nothing is read whole). With appointments waiting the order
   * moves with time (an appointment's window opens, a walk-in reaches the cap), so it is worked
   * out here from the whole line: a queue holding appointments is a desk's line, tens of tickets.
   */
  blendedWaiting(at: number): TicketRow[] | null {
    if (!this.appointmentWaiting()) return null;
    const rows = this.sql.exec<TicketRow>("SELECT * FROM tickets WHERE status = 'waiting' ORDER BY lane, order_key").toArray();
    return blendOrder(rows.map(blendTicketOf), this.blendCopy().policy, at).map((b) => b.ticket.row);
  }

  /** Whether any appointment waits, kept between reads (issue 43: asked several times by every change). */
  private appointmentWaiting(): boolean {
    return (this.kept.appointmentWaiting ??=
      this.sql.exec("SELECT 1 FROM tickets WHERE status = 'waiting' AND kind = 'appointment' LIMIT 1").toArray().length > 0);
  }

  /** When each appointment now waiting early (its window not open yet) goes ahead of walk-ins, soonest first. */
  appointmentsOpening(policy: BlendPolicy, at: number): number[] {
    if (!this.appointmentWaiting()) return [];
    return this.sql
      .exec<{ at: number }>(
        "SELECT appointment_at - ? AS at FROM tickets WHERE status = 'waiting' AND kind = 'appointment' AND appointment_late = 0 AND lane <> 0 AND appointment_at IS NOT NULL",
        policy.appointmentsFirstFromMinutes * 60_000,
      )
      .toArray()
      .map((r) => r.at)
      .filter((o) => o > at)
      .sort((a, b) => a - b);
  }

  /** Tickets and people per live status and lane, kept by triggers (schema.ts). */
  lineCounts(): { status: string; lane: number; tickets: number; people: number }[] {
    return this.sql
      .exec<{ status: string; lane: number; tickets: number; people: number }>("SELECT status, lane, tickets, people FROM line_counts")
      .toArray();
  }

  /** Tickets waiting, in every lane. */
  waitingCount(): number {
    return this.countByStatus(["waiting"]).get("waiting") ?? 0;
  }

  capacityUsed(): number {
    let used = 0;
    for (const c of this.lineCounts()) if (c.status === "waiting" || c.status === "called") used += c.people;
    return used;
  }

  countByStatus(statuses: readonly string[]): Map<string, number> {
    const counts = new Map<string, number>();
    for (const c of this.lineCounts()) {
      if (statuses.includes(c.status) && c.tickets > 0) counts.set(c.status, (counts.get(c.status) ?? 0) + c.tickets);
    }
    return counts;
  }

  /** Asked by every drain: one probe of the index of called tickets (named: the planner would walk the status prefix). */
  firstCalledAt(): number | null {
    return this.sql
      .exec<{ first: number | null }>("SELECT MIN(called_at) AS first FROM tickets INDEXED BY tickets_called_at WHERE status = 'called'")
      .one().first;
  }

  // ---- call history and outbox -------------------------------------------------------------

  recordCall(at: number, operatorId: string): void {
    const { seq } = this.sql.exec<{ seq: number }>("INSERT INTO calls (at, operator_id) VALUES (?, ?) RETURNING seq", at, operatorId).one();
    if (seq % CALL_TRIM_EVERY === 0) this.sql.exec("DELETE FROM calls WHERE seq <= ?", seq - CALL_HISTORY);
    // The kept copy moves as the reads do: the new call last, the last CALL_HISTORY calls left.
    if (this.kept.calls) this.kept.calls = [...this.kept.calls, { at, operatorId }].slice(-CALL_HISTORY);
  }

  /** The last CALL_HISTORY calls (the wait estimate's pace), oldest first, kept between reads: written only by recordCall. Not to be changed by the caller. */
  calls(): readonly CallRecord[] {
    return (this.kept.calls ??= this.sql
      .exec<{ at: number; operator_id: string }>(
        "SELECT at, operator_id FROM (SELECT seq, at, operator_id FROM calls ORDER BY seq DESC LIMIT ?) ORDER BY seq",
        CALL_HISTORY,
      )
      .toArray()
      .map((c) => ({ at: c.at, operatorId: c.operator_id })));
  }

  /** A domain event, written in the same transaction as the change it describes. */
  emit(cfg: Configured, type: EventType, ticket: EventTicket | null, at: number, data: Record<string, unknown>): void {
    const message = JSON.stringify(eventMessage(type, cfg, ticket, at, data));
    if (this.pendingEvents !== null) this.pendingEvents.push(ticket?.id ?? null, message);
    else this.writeEvents([ticket?.id ?? null, message]);
    this.emitted += 1;
  }

  /** The events of the transaction under way, ticket id and message in turn (`withEventsTogether`). */
  private pendingEvents: (string | null)[] | null = null;

  /**
   * Runs `fn` with the events it emits written together when it ends, in emission order (issue
   * 43: one INSERT each, and a call-next emits two). The room's transaction runs every change
   * through it; nested, the outermost writes.
   */
  withEventsTogether<T>(fn: () => T): T {
    if (this.pendingEvents !== null) return fn();
    this.pendingEvents = [];
    try {
      const value = fn();
      this.writeEvents(this.pendingEvents);
      return value;
    } finally {
      this.pendingEvents = null;
    }
  }

  /** Outbox rows from pairs of (ticket id, message), as few statements as the bound-parameter limit allows. */
  private writeEvents(pairs: readonly (string | null)[]): void {
    for (let start = 0; start < pairs.length; start += EVENTS_PER_INSERT * 2) {
      const chunk = pairs.slice(start, start + EVENTS_PER_INSERT * 2);
      this.sql.exec(
        `INSERT INTO outbox (ticket_id, message) VALUES ${Array.from({ length: chunk.length / 2 }, () => "(?, ?)").join(", ")}`,
        ...chunk,
      );
    }
  }

  /** Events written since this store began (a change that moved it left the outbox non-empty, or rolled back). */
  emitted = 0;

  outboxSize(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n;
  }
}

/** Callable: waiting, not leaving for another queue, if joined remotely arrived, and not deferred past `at`. */
function callable(row: TicketRow, at: number): boolean {
  return (
    row.status === "waiting" &&
    row.transferring_to === null &&
    (row.source !== "remote" || row.present_at !== null) &&
    (row.deferred_until === null || row.deferred_until <= at)
  );
}

/** A row as the blend sees it (domain/blend.ts), carrying the row along. */
export function blendTicketOf(row: TicketRow): BlendTicket & { row: TicketRow } {
  return {
    id: row.id,
    lane: row.lane,
    orderKey: row.order_key,
    kind: row.kind,
    appointmentAt: row.appointment_at,
    late: row.appointment_late === 1,
    joinedAt: row.lined_up_at ?? row.created_at,
    row,
  };
}

/** Intake answers as a ticket row keeps them: a JSON object, or null when there are none. */
export function answersJson(answers: Record<string, unknown> | null | undefined): string | null {
  return answers && Object.keys(answers).length > 0 ? JSON.stringify(answers) : null;
}
