import { DurableObject } from "cloudflare:workers";
import { displayCode } from "../domain/display-code";
import type { EventType } from "../domain/events";
import {
  ALMOST_CALLED_AHEAD,
  LANE,
  allowedFrom,
  allows,
  crossesCapacityWarning,
  type Lane,
  type QueueStatus,
  type RecoveryOption,
  type TicketOperation,
} from "../domain/tickets";
import { estimatedWaitMinutes, longWaitChange, minutesPerTicket, type CallRecord } from "../domain/wait-estimate";
import type { Env } from "../env";
import { now } from "../lib/clock";
import { newTicketId } from "../lib/ids";
import { roomOf } from "../services/queue-rooms";
import { drainOutbox, eventMessage, type ConfigRow, type TicketRow } from "./outbox";
import { RemoteJoins } from "./remote";
import { migrateRoom } from "./schema";
import { RoomSockets, type BoardData, type QueueStatusData } from "./sockets";
import type { ConfirmMethod } from "../domain/remote-join";
import type {
  NewTicket,
  QueueSummary,
  RemoteJoinAndTicket,
  RemoteLocation,
  Reservation,
  RoomConfig,
  RoomError,
  RoomResult,
  RoomSettings,
  TicketQuery,
  TicketView,
  TransferSnapshot,
} from "./types";

/** Thrown inside a storage transaction to roll it back; returned to the caller as a value. */
class Refusal extends Error {
  constructor(readonly error: RoomError) {
    super(error.message);
  }
}

function refuse(code: RoomError["code"], message: string, details: Record<string, unknown> = {}): never {
  throw new Refusal({ code, message, details });
}

function invalidState(status: string, allowed: readonly string[], message: string, extra: Record<string, unknown> = {}): never {
  refuse("INVALID_STATE", message, { status, allowed: [...allowed], ...extra });
}

const CALL_HISTORY = 100;
const MINUTE_MS = 60_000;
/**
 * A hand-off to another queue takes milliseconds; one still open after this long was cut
 * short (the Worker failed between reserving and completing it). The room's alarm then
 * settles it with the target room, so the ticket is never left unusable.
 */
export const HAND_OFF_TIMEOUT_MS = 60_000;

type Configured = ConfigRow & { organization_id: string; queue_id: string; service_id: string; letter: string };

/**
 * One per queue: the single writer of that queue's tickets. Every method that reads and then
 * writes the order runs synchronously over its SQLite storage, so calls are serialized and
 * none can interleave inside another. Each change writes its domain events to the outbox in
 * the same transaction; the alarm delivers them (see outbox.ts).
 */
export class QueueRoom extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly sockets: RoomSockets;
  private readonly remote: RemoteJoins;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrateRoom(this.sql);
    this.sockets = new RoomSockets(ctx, env, this.sql, (config) => this.configure(config));
    // Keep-alives are answered without waking a hibernated room.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    this.remote = new RemoteJoins(this.sql, {
      queueId: () => (this.config() as Configured).queue_id,
      row: (id) => this.row(id),
      updateTicket: (id, fields, at) => this.update(id, fields, at),
      emit: (type, ticket, at, data) => this.emit(this.config() as Configured, type, ticket, at, data),
      refuse,
    });
  }

  // ---- configuration and queue-level operations ------------------------------------------

  /** Gives the room its catalog facts once; later calls change nothing (the room is the authority). */
  configure(config: RoomConfig): void {
    this.sql.exec(
      `UPDATE room SET queue_id = ?, organization_id = ?, service_id = ?, letter = ?, max_capacity = ?, no_show_ms = ?, status = ?, archived_at = ?
       WHERE id = 1 AND organization_id IS NULL`,
      config.queueId,
      config.organizationId,
      config.serviceId,
      config.letter,
      config.maxCapacity,
      config.noShowTimeoutMinutes * MINUTE_MS,
      config.status,
      config.archivedAt,
    );
  }

  /**
   * Changes the settings the room enforces. A lower capacity refuses joins until the line is
   * under it (nobody is removed); a new no-show timeout applies to tickets already called.
   */
  reconfigure(settings: RoomSettings, at: number): RoomResult<QueueSummary> {
    return this.mutate(at, (cfg) => {
      this.assertNotArchived(cfg);
      const changes: Record<string, unknown> = {};
      if (settings.maxCapacity !== undefined && settings.maxCapacity !== cfg.max_capacity) {
        this.sql.exec("UPDATE room SET max_capacity = ? WHERE id = 1", settings.maxCapacity);
        changes.maxCapacity = settings.maxCapacity;
      }
      const noShowMs = settings.noShowTimeoutMinutes === undefined ? undefined : settings.noShowTimeoutMinutes * MINUTE_MS;
      if (noShowMs !== undefined && noShowMs !== cfg.no_show_ms) {
        this.sql.exec("UPDATE room SET no_show_ms = ? WHERE id = 1", noShowMs);
        changes.noShowTimeoutMinutes = settings.noShowTimeoutMinutes;
      }
      // The event also carries the room's new deadline to D1 through the outbox.
      if (Object.keys(changes).length > 0) this.emit(cfg, "queue.updated", null, at, changes);
      return this.summaryOf(this.config() as Configured, at);
    });
  }

  summary(at: number): QueueSummary | null {
    const cfg = this.config();
    if (cfg.organization_id === null || cfg.retired_at !== null) return null;
    return this.summaryOf(cfg as Configured, at);
  }

  setStatus(status: QueueStatus, at: number): RoomResult<QueueSummary> {
    return this.mutate(at, (cfg) => {
      this.assertNotArchived(cfg);
      if (cfg.status !== status) {
        this.sql.exec("UPDATE room SET status = ? WHERE id = 1", status);
        this.emit(cfg, "queue.status_changed", null, at, { from: cfg.status, to: status });
      }
      return this.summaryOf(this.config() as Configured, at);
    });
  }

  /** Cancels every waiting and called ticket (a ticket being served stays with its operator). */
  clear(at: number): RoomResult<{ cancelled: number }> {
    return this.mutate(at, (cfg) => {
      this.assertNotArchived(cfg);
      const cancelled = this.cancelLive(cfg, at, "cleared");
      this.emit(cfg, "queue.cleared", null, at, { cancelled });
      return { cancelled };
    });
  }

  /**
   * Closes the queue for good: waiting and called tickets are cancelled, tickets being served
   * are completed, and every later change is refused. Tickets stay readable.
   */
  archive(at: number): RoomResult<QueueSummary> {
    return this.mutate(at, (cfg) => {
      this.assertNotArchived(cfg);
      this.cancelLive(cfg, at, "archived");
      for (const row of this.rowsWhere("status = 'serving'")) this.completeServing(cfg, row, at);
      this.sql.exec("UPDATE room SET status = 'closed', archived_at = ? WHERE id = 1", at);
      if (cfg.status !== "closed") this.emit(cfg, "queue.status_changed", null, at, { from: cfg.status, to: "closed" });
      this.emit(cfg, "queue.archived", null, at, {});
      return this.summaryOf(this.config() as Configured, at);
    });
  }

  /**
   * The queue is being deleted (its service, location or organization went): cancel its live
   * tickets and refuse everything afterwards. Idempotent.
   */
  retire(at: number): void {
    this.ctx.storage.transactionSync(() => {
      const cfg = this.config();
      if (cfg.retired_at !== null) return;
      if (cfg.organization_id !== null) this.cancelLive(cfg as Configured, at, "queue_deleted");
      this.sql.exec("UPDATE room SET retired_at = ? WHERE id = 1", at);
    });
    this.armAlarm();
    this.sockets.changed(at);
  }

  // ---- ticket creation ----------------------------------------------------------------------

  join(input: NewTicket, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => {
      this.assertAcceptsTickets(cfg, input.partySize);
      if (input.source === "remote") this.remote.assertNoneActive(input.userId);
      const row = this.createTicket(cfg, input, at);
      if (input.source === "remote") this.remote.start(row.id, at);
      this.emit(cfg, "ticket.created", row, at, {});
      const view = this.view(cfg, row.id, at);
      this.watchLongWait(cfg, view, at);
      return view;
    });
  }

  /** Target side of a transfer between queues: idempotent by the source ticket's id. */
  admitTransferred(snapshot: TransferSnapshot, prioritize: boolean, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => {
      const admission = this.sql
        .exec<{ ticket_id: string | null }>("SELECT ticket_id FROM admissions WHERE source_ticket_id = ?", snapshot.ticketId)
        .toArray()[0];
      if (admission?.ticket_id) return this.view(cfg, admission.ticket_id, at);
      if (admission) refuse("TRANSFER_ABANDONED", "This hand-off was abandoned in favour of another one");
      this.assertAcceptsTickets(cfg, snapshot.partySize);
      const row = this.createTicket(
        cfg,
        {
          userId: snapshot.userId,
          partySize: snapshot.partySize,
          isPriority: prioritize || snapshot.isPriority,
          isGhostMode: snapshot.isGhostMode,
          visitorName: snapshot.visitorName,
          phone: snapshot.phone,
          language: snapshot.language,
          source: "transfer",
        },
        at,
      );
      this.sql.exec("INSERT INTO admissions (source_ticket_id, ticket_id) VALUES (?, ?)", snapshot.ticketId, row.id);
      this.emit(cfg, "ticket.created", row, at, { transferredFromId: snapshot.ticketId });
      return this.view(cfg, row.id, at);
    });
  }

  /**
   * Makes sure a hand-off from `sourceTicketId` is never admitted later: answers the ticket
   * already admitted, or leaves a tombstone so a late admission is refused.
   */
  abandonTransfer(sourceTicketId: string): string | null {
    return this.ctx.storage.transactionSync(() => {
      const admission = this.sql
        .exec<{ ticket_id: string | null }>("SELECT ticket_id FROM admissions WHERE source_ticket_id = ?", sourceTicketId)
        .toArray()[0];
      if (admission) return admission.ticket_id;
      this.sql.exec("INSERT INTO admissions (source_ticket_id, ticket_id) VALUES (?, NULL)", sourceTicketId);
      return null;
    });
  }

  // ---- operator actions on the order --------------------------------------------------------

  /**
   * Calls the first callable ticket for `operatorId`. The ticket that operator was serving is
   * completed in the same transaction; nothing changes when there is no one to call.
   */
  callNext(operatorId: string, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => {
      if (cfg.archived_at !== null || cfg.status === "closed") {
        refuse("QUEUE_CLOSED", "This queue is closed", { status: cfg.archived_at !== null ? "archived" : cfg.status });
      }
      const next = this.firstCallableRow();
      if (!next) refuse("QUEUE_EMPTY", "No ticket is waiting to be called");
      for (const serving of this.rowsWhere("status = 'serving' AND assigned_to_id = ?", operatorId)) {
        this.completeServing(cfg, serving, at);
      }
      this.update(next.id, { status: "called", called_at: at, assigned_to_id: operatorId }, at);
      this.sql.exec("INSERT INTO calls (at, operator_id) VALUES (?, ?)", at, operatorId);
      this.sql.exec("DELETE FROM calls WHERE seq <= (SELECT MAX(seq) FROM calls) - ?", CALL_HISTORY);
      this.emit(cfg, "ticket.called", this.row(next.id), at, {});
      return this.view(cfg, next.id, at);
    });
  }

  present(ticketId: string, at: number): RoomResult<TicketView> {
    return this.transition(ticketId, "present", at, (cfg, row) => {
      if (row.present_at === null) {
        this.update(row.id, { present_at: at }, at);
        this.emit(cfg, "ticket.present", this.row(row.id), at, {});
      }
    });
  }

  serve(ticketId: string, at: number): RoomResult<TicketView> {
    return this.transition(ticketId, "serve", at, (cfg, row) => {
      this.update(row.id, { status: "serving", serving_at: at }, at);
      this.emit(cfg, "ticket.serving", this.row(row.id), at, {});
    });
  }

  complete(ticketId: string, at: number): RoomResult<TicketView> {
    return this.transition(ticketId, "complete", at, (cfg, row) => this.completeServing(cfg, row, at));
  }

  skipAbsent(ticketId: string, reason: string, at: number): RoomResult<TicketView> {
    return this.transition(ticketId, "skip", at, (cfg, row) => {
      this.update(row.id, { status: "skipped", skip_reason: reason }, at);
      this.emit(cfg, "ticket.skipped", this.row(row.id), at, { reason });
    });
  }

  cancel(ticketId: string, at: number): RoomResult<TicketView> {
    return this.transition(ticketId, "cancel", at, (cfg, row) => {
      this.update(row.id, { status: "cancelled" }, at);
      this.emit(cfg, "ticket.cancelled", this.row(row.id), at, { reason: "cancelled" });
    });
  }

  assign(ticketId: string, operatorId: string, at: number): RoomResult<TicketView> {
    return this.transition(ticketId, "transferOperator", at, (cfg, row) => {
      this.update(row.id, { assigned_to_id: operatorId }, at);
      this.emit(cfg, "ticket.assigned", this.row(row.id), at, { previousAssignedToId: row.assigned_to_id });
    });
  }

  /**
   * `restore` puts the same ticket back at the front; `rejoin` leaves it as it is and creates
   * a new ticket at the back. A ticket is recovered at most once.
   */
  recover(ticketId: string, option: RecoveryOption, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => {
      const row = this.existing(ticketId);
      if (row.transferring_to !== null) this.refuseTransferring(row, "recover");
      if (!allows("recover", row.status)) invalidState(row.status, allowedFrom("recover"), `A ${row.status} ticket cannot be recovered`);
      const successor = this.sql.exec<{ id: string }>("SELECT id FROM tickets WHERE recovered_from_id = ?", row.id).toArray()[0];
      if (successor) {
        invalidState(row.status, allowedFrom("recover"), "This ticket was already recovered", { recoveredToId: successor.id });
      }
      this.assertAcceptsTickets(cfg, row.party_size);
      if (option === "restore") {
        const seq = this.nextPrioritySeq();
        this.update(
          row.id,
          { status: "waiting", lane: LANE.priority, order_key: seq, called_at: null, assigned_to_id: null, skip_reason: null },
          at,
        );
        this.emit(cfg, "ticket.recovered", this.row(row.id), at, { recoveryOption: option });
        return this.view(cfg, row.id, at);
      }
      const fresh = this.createTicket(
        cfg,
        {
          userId: row.user_id,
          partySize: row.party_size,
          isPriority: false,
          isGhostMode: row.is_ghost_mode === 1,
          visitorName: row.visitor_name,
          phone: row.phone,
          language: row.language,
          source: "recovery",
        },
        at,
        row.id,
      );
      this.emit(cfg, "ticket.recovered", fresh, at, { recoveryOption: option, recoveredFromId: row.id });
      return this.view(cfg, fresh.id, at);
    });
  }

  /** Called by the sweep: called tickets past the no-show timeout become expired. */
  expireDue(at: number): { expired: number; nextDeadline: number | null; gone: boolean } {
    const cfg = this.config();
    if (cfg.organization_id === null || cfg.retired_at !== null) return { expired: 0, nextDeadline: null, gone: true };
    const result = this.mutate(at, (c) => {
      const due = this.rowsWhere("status = 'called' AND called_at + ? <= ?", c.no_show_ms, at);
      for (const row of due) {
        this.update(row.id, { status: "expired" }, at);
        const expired = this.row(row.id);
        this.emit(c, "ticket.expired", expired, at, {});
        this.emit(c, "ticket.no_show", expired, at, {});
      }
      return due.length + this.remote.enforce(at);
    });
    return { expired: result.ok ? result.value : 0, nextDeadline: this.nextDeadline(), gone: false };
  }

  // ---- remote join and entry scans ----------------------------------------------------------

  remoteJoin(ticketId: string, at: number): RoomResult<RemoteJoinAndTicket> {
    return this.read((cfg) => this.remoteView(cfg, ticketId, at));
  }

  updateRemoteLocation(ticketId: string, location: RemoteLocation, at: number): RoomResult<RemoteJoinAndTicket> {
    return this.mutate(at, (cfg) => {
      this.remote.updateLocation(ticketId, location, at);
      return this.remoteView(cfg, ticketId, at);
    });
  }

  confirmRemote(ticketId: string, method: ConfirmMethod, at: number): RoomResult<RemoteJoinAndTicket> {
    return this.mutate(at, (cfg) => {
      this.remote.confirm(ticketId, method, at);
      return this.remoteView(cfg, ticketId, at);
    });
  }

  /** The user's live (waiting or called) ticket here, the oldest first; null when none. */
  liveTicketOf(userId: string, at: number): RoomResult<TicketView | null> {
    return this.read((cfg) => {
      const row = this.liveRowOf(userId);
      return row ? this.view(cfg, row.id, at) : null;
    });
  }

  /** A verification scan: the scanner's live ticket is present; a remote join arrives by qr_scan. */
  presentOwn(userId: string, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => {
      const row = this.liveRowOf(userId) ?? refuse("NOT_FOUND", "You hold no waiting or called ticket in this queue");
      const remote = this.remote.find(row.id);
      if (remote && remote.status !== "arrived" && row.status === "waiting") {
        this.remote.confirm(row.id, "qr_scan", at);
      } else if (row.present_at === null) {
        this.update(row.id, { present_at: at }, at);
        this.emit(cfg, "ticket.present", this.row(row.id), at, {});
      }
      return this.view(cfg, row.id, at);
    });
  }

  // ---- transfer between queues: source side -------------------------------------------------

  /** Marks the ticket as leaving, so call-next skips it until the hand-off ends either way. */
  reserveTransfer(ticketId: string, targetQueueId: string, at: number): RoomResult<Reservation> {
    return this.mutate(at, (cfg) => {
      const row = this.existing(ticketId);
      if (row.transferring_to !== null) {
        return { kind: "pending", targetQueueId: row.transferring_to, snapshot: this.snapshot(cfg, row) };
      }
      if (!allows("transferQueue", row.status)) {
        invalidState(row.status, allowedFrom("transferQueue"), `A ${row.status} ticket cannot move to another queue`);
      }
      this.sql.exec("UPDATE tickets SET transferring_to = ?, transferring_since = ? WHERE id = ?", targetQueueId, at, row.id);
      return { kind: "reserved", snapshot: this.snapshot(cfg, row) };
    });
  }

  /** The target refused: the ticket stays where it was, callable again. */
  releaseTransfer(ticketId: string, targetQueueId: string): void {
    this.sql.exec("UPDATE tickets SET transferring_to = NULL WHERE id = ? AND transferring_to = ?", ticketId, targetQueueId);
  }

  /** The target admitted the ticket: the source closes. Repeating it changes nothing. */
  completeTransfer(ticketId: string, targetQueueId: string, newTicketId: string, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => {
      const row = this.existing(ticketId);
      if (row.status === "waiting" || row.status === "called") {
        this.update(row.id, { status: "cancelled", transferred_to_id: newTicketId, transferring_to: null }, at);
        this.emit(cfg, "ticket.transferred", this.row(row.id), at, { targetQueueId, transferredToId: newTicketId });
      } else if (row.transferring_to !== null) {
        this.sql.exec("UPDATE tickets SET transferring_to = NULL WHERE id = ?", row.id);
      }
      return this.view(cfg, row.id, at);
    });
  }

  // ---- reads -------------------------------------------------------------------------------

  getTicket(ticketId: string, at: number): RoomResult<TicketView> {
    return this.read((cfg) => this.view(cfg, this.existing(ticketId).id, at));
  }

  listTickets(query: TicketQuery, at: number): RoomResult<{ items: TicketView[]; total: number }> {
    return this.read((cfg) => {
      const perTicket = this.perTicket(at);
      const filter = query.status === null ? "1 = 1" : "status = ?";
      const args = query.status === null ? [] : [query.status];
      const total = this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM tickets WHERE ${filter}`, ...args).one().n;
      if (query.status === "waiting") {
        // The page is read from the order index: position = rank in the line, no full scan.
        const rows = this.sql
          .exec<TicketRow>("SELECT * FROM tickets WHERE status = 'waiting' ORDER BY lane, order_key LIMIT ? OFFSET ?", query.limit, query.offset)
          .toArray();
        return { items: rows.map((r, i) => this.toView(cfg, r, query.offset + i + 1, perTicket)), total };
      }
      const rows = this.sql
        .exec<TicketRow>(`SELECT * FROM tickets WHERE ${filter} ORDER BY number LIMIT ? OFFSET ?`, ...args, query.limit, query.offset)
        .toArray();
      return { items: rows.map((r) => this.toView(cfg, r, this.positionOf(r), perTicket)), total };
    });
  }

  // ---- widget live channel (sockets.ts) ------------------------------------------------------

  /** A widget WebSocket forwarded by the Worker for this queue (GET /v1/widget/ws). */
  override async fetch(request: Request): Promise<Response> {
    return this.sockets.accept(request);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.sockets.message(ws, message);
  }

  override webSocketClose(ws: WebSocket, code: number, reason: string): void {
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
    } catch {
      // already closed
    }
  }

  /** The widget status of this queue; null until configured, or once deleted. */
  widgetStatus(at: number): QueueStatusData | null {
    return this.sockets.status(at);
  }

  /** Another room of the organization relays this queue's updates to its sockets. */
  watch(watcherQueueId: string, config: RoomConfig, name: string): QueueStatusData | null {
    return this.sockets.watch(watcherQueueId, config, name);
  }

  deliverUpdate(queueId: string, text: string): number {
    return this.sockets.deliver(queueId, text);
  }

  /** The display board's part of this queue; null until configured, or once deleted. */
  widgetBoard(at: number): BoardData | null {
    return this.sockets.board(at);
  }

  // ---- outbox delivery ---------------------------------------------------------------------

  /** At least once: every step of the drain is idempotent. */
  override async alarm(): Promise<void> {
    const more = await drainOutbox(this.sql, this.env, () => this.nextDeadline());
    if (more) {
      await this.ctx.storage.setAlarm(Date.now());
      return;
    }
    await this.settleStaleHandOffs(now());
    this.armAlarm();
  }

  /**
   * Each hand-off open for HAND_OFF_TIMEOUT_MS is closed the way a retry of the transfer
   * would: if the target admitted the ticket, the source completes; otherwise the target
   * is told never to admit it and the ticket is released here, callable again.
   */
  private async settleStaleHandOffs(at: number): Promise<void> {
    const stale = this.sql
      .exec<{ id: string; transferring_to: string }>(
        "SELECT id, transferring_to FROM tickets WHERE transferring_to IS NOT NULL AND transferring_since <= ?",
        at - HAND_OFF_TIMEOUT_MS,
      )
      .toArray();
    for (const ticket of stale) {
      const admitted = await roomOf(this.env, ticket.transferring_to).abandonTransfer(ticket.id);
      // Both are idempotent and conditional, so a transfer retried meanwhile is not undone.
      if (admitted !== null) this.completeTransfer(ticket.id, ticket.transferring_to, admitted, at);
      else this.releaseTransfer(ticket.id, ticket.transferring_to);
    }
  }

  // ---- internals ---------------------------------------------------------------------------

  private config(): ConfigRow {
    return this.sql.exec<ConfigRow>("SELECT * FROM room WHERE id = 1").one();
  }

  private configured(): Configured {
    const cfg = this.config();
    if (cfg.retired_at !== null) refuse("NOT_FOUND", "Queue not found");
    if (cfg.organization_id === null) refuse("ROOM_UNCONFIGURED", "The room has not learnt its queue yet");
    return cfg as Configured;
  }

  private read<T>(fn: (cfg: Configured) => T): RoomResult<T> {
    try {
      return { ok: true, value: fn(this.configured()) };
    } catch (err) {
      if (err instanceof Refusal) return { ok: false, error: err.error };
      throw err;
    }
  }

  /** One storage transaction: a refusal rolls back everything the function wrote. */
  private mutate<T>(at: number, fn: (cfg: Configured) => T): RoomResult<T> {
    try {
      const value = this.ctx.storage.transactionSync(() => {
        const out = fn(this.configured());
        this.remote.markFront(at);
        this.announceApproaching(this.config() as Configured, at);
        return out;
      });
      this.armAlarm();
      this.sockets.changed(at);
      return { ok: true, value };
    } catch (err) {
      if (err instanceof Refusal) return { ok: false, error: err.error };
      throw err;
    }
  }

  private transition(
    ticketId: string,
    operation: TicketOperation,
    at: number,
    apply: (cfg: Configured, row: TicketRow) => void,
  ): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => {
      const row = this.existing(ticketId);
      if (row.transferring_to !== null) this.refuseTransferring(row, operation);
      if (!allows(operation, row.status)) {
        invalidState(row.status, allowedFrom(operation), `Not allowed while the ticket is ${row.status}`);
      }
      apply(cfg, row);
      return this.view(cfg, row.id, at);
    });
  }

  private refuseTransferring(row: TicketRow, operation: TicketOperation): never {
    invalidState(row.status, allowedFrom(operation), "The ticket is being transferred to another queue", {
      transferringTo: row.transferring_to,
    });
  }

  private assertNotArchived(cfg: Configured): void {
    if (cfg.archived_at !== null) invalidState("archived", ["active", "paused", "closed"], "This queue is archived");
  }

  private assertAcceptsTickets(cfg: Configured, partySize: number): void {
    if (cfg.archived_at !== null) refuse("QUEUE_CLOSED", "This queue is archived", { status: "archived" });
    if (cfg.status === "closed") refuse("QUEUE_CLOSED", "This queue is closed", { status: "closed" });
    if (cfg.status === "paused") refuse("QUEUE_PAUSED", "This queue is paused and takes no new tickets", { status: "paused" });
    if (cfg.max_capacity !== null) {
      const used = this.capacityUsed();
      if (used + partySize > cfg.max_capacity) {
        refuse("QUEUE_FULL", "This queue is full", { maxCapacity: cfg.max_capacity, used, partySize });
      }
    }
  }

  private createTicket(cfg: Configured, input: NewTicket, at: number, recoveredFromId: string | null = null): TicketRow {
    const used = cfg.max_capacity === null ? 0 : this.capacityUsed();
    const number = this.sql.exec<{ n: number }>("UPDATE room SET next_number = next_number + 1 WHERE id = 1 RETURNING next_number - 1 AS n").one().n;
    const lane: Lane = input.isPriority ? LANE.priority : LANE.regular;
    const orderKey = input.isPriority ? this.nextPrioritySeq() : number;
    const id = newTicketId(cfg.queue_id);
    this.sql.exec(
      `INSERT INTO tickets (id, number, lane, order_key, status, user_id, party_size, is_priority, is_ghost_mode, source,
         visitor_name, phone, language, recovered_from_id, created_at, updated_at, version)
       VALUES (?, ?, ?, ?, 'waiting', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      number,
      lane,
      orderKey,
      input.userId,
      input.partySize,
      input.isPriority ? 1 : 0,
      input.isGhostMode ? 1 : 0,
      input.source,
      input.visitorName,
      input.phone,
      input.language,
      recoveredFromId,
      at,
      at,
      this.bumpVersion(),
    );
    // Someone who starts close to the front has nothing to "reach": only later moves announce.
    if ((this.positionOf(this.row(id)) ?? Infinity) <= ALMOST_CALLED_AHEAD + 1) {
      this.sql.exec("UPDATE tickets SET almost_called_sent = 1 WHERE id = ?", id);
    }
    if (crossesCapacityWarning(used, used + input.partySize, cfg.max_capacity)) {
      this.emit(cfg, "queue.capacity_warning", null, at, { used: used + input.partySize, maxCapacity: cfg.max_capacity });
    }
    return this.row(id);
  }

  /** The wait a new ticket faces starts or ends a long-wait episode (see longWaitChange). */
  private watchLongWait(cfg: Configured, joined: TicketView, at: number): void {
    if (joined.estimatedWaitMinutes === null || joined.position === null) return;
    const change = longWaitChange(joined.estimatedWaitMinutes, cfg.long_wait_at !== null);
    if (change === "start") {
      this.sql.exec("UPDATE room SET long_wait_at = ? WHERE id = 1", at);
      this.emit(cfg, "queue.long_wait", null, at, { estimatedWaitMinutes: joined.estimatedWaitMinutes, position: joined.position });
    } else if (change === "end") {
      this.sql.exec("UPDATE room SET long_wait_at = NULL WHERE id = 1");
    }
  }

  private completeServing(cfg: Configured, row: TicketRow, at: number): void {
    this.update(row.id, { status: "served", served_at: at }, at);
    const served = this.row(row.id);
    this.emit(cfg, "ticket.served", served, at, {});
    if (served.is_ghost_mode === 0) this.emit(cfg, "review.request", served, at, {});
  }

  private cancelLive(cfg: Configured, at: number, reason: string): number {
    const live = this.rowsWhere("status IN ('waiting', 'called')");
    for (const row of live) {
      this.update(row.id, { status: "cancelled", transferring_to: null }, at);
      this.emit(cfg, "ticket.cancelled", this.row(row.id), at, { reason });
    }
    return live.length;
  }

  /** `ticket.almost_called` once for each waiting ticket that comes within 3 of the front. */
  private announceApproaching(cfg: Configured, at: number): void {
    const line = this.sql
      .exec<TicketRow>("SELECT * FROM tickets WHERE status = 'waiting' ORDER BY lane, order_key LIMIT ?", ALMOST_CALLED_AHEAD + 1)
      .toArray();
    for (const row of line) {
      if (row.almost_called_sent === 1) continue;
      this.sql.exec("UPDATE tickets SET almost_called_sent = 1 WHERE id = ?", row.id);
      this.emit(cfg, "ticket.almost_called", row, at, {});
    }
  }

  private emit(cfg: Configured, type: EventType, ticket: TicketRow | null, at: number, data: Record<string, unknown>): void {
    const message = eventMessage(type, cfg, ticket, at, data);
    this.sql.exec("INSERT INTO outbox (ticket_id, message) VALUES (?, ?)", ticket?.id ?? null, JSON.stringify(message));
  }

  /**
   * Now when the outbox has rows to deliver, else when the oldest open hand-off times out.
   * The alarm's wall-clock time is delivery scheduling only; business time is `at`.
   */
  private armAlarm(): void {
    const pending = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n;
    if (pending > 0) {
      void this.ctx.storage.setAlarm(Date.now());
      return;
    }
    const since = this.sql
      .exec<{ since: number | null }>("SELECT MIN(transferring_since) AS since FROM tickets WHERE transferring_to IS NOT NULL")
      .one().since;
    // The delay is taken on the service clock (tests move it) and scheduled in real time.
    if (since !== null) void this.ctx.storage.setAlarm(Date.now() + Math.max(0, since + HAND_OFF_TIMEOUT_MS - now()));
  }

  private bumpVersion(): number {
    return this.sql.exec<{ version: number }>("UPDATE room SET version = version + 1 WHERE id = 1 RETURNING version").one().version;
  }

  private nextPrioritySeq(): number {
    return this.sql.exec<{ seq: number }>("UPDATE room SET priority_seq = priority_seq + 1 WHERE id = 1 RETURNING priority_seq AS seq").one().seq;
  }

  private update(id: string, fields: Partial<Record<keyof TicketRow, string | number | null>>, at: number): void {
    const columns = Object.keys(fields);
    const values = Object.values(fields) as (string | number | null)[];
    this.sql.exec(
      `UPDATE tickets SET ${columns.map((c) => `${c} = ?`).join(", ")}, updated_at = ?, version = ? WHERE id = ?`,
      ...values,
      at,
      this.bumpVersion(),
      id,
    );
    this.remote.onTicketChange(id, fields, at);
  }

  private liveRowOf(userId: string): TicketRow | null {
    return this.sql
      .exec<TicketRow>("SELECT * FROM tickets WHERE user_id = ? AND status IN ('waiting', 'called') ORDER BY number LIMIT 1", userId)
      .toArray()[0] ?? null;
  }

  private remoteView(cfg: Configured, ticketId: string, at: number): RemoteJoinAndTicket {
    const remote = this.remote.existing(ticketId);
    return { remoteJoin: this.remote.view(remote, this.row(ticketId)), ticket: this.view(cfg, ticketId, at) };
  }

  private row(id: string): TicketRow {
    return this.sql.exec<TicketRow>("SELECT * FROM tickets WHERE id = ?", id).one();
  }

  private existing(id: string): TicketRow {
    const row = this.sql.exec<TicketRow>("SELECT * FROM tickets WHERE id = ?", id).toArray()[0];
    if (!row) refuse("NOT_FOUND", "Ticket not found");
    return row;
  }

  private rowsWhere(condition: string, ...args: (string | number | null)[]): TicketRow[] {
    return this.sql.exec<TicketRow>(`SELECT * FROM tickets WHERE ${condition}`, ...args).toArray();
  }

  // The order index (status, lane, order_key) answers these without reading the whole line,
  // so joining and calling stay cheap in a long queue.

  /**
   * The first callable ticket in queue order (priority lane, then by order key): waiting, not
   * leaving for another queue, and, if joined remotely, arrived.
   */
  private firstCallableRow(): TicketRow | null {
    return (
      this.sql
        .exec<TicketRow>(
          `SELECT * FROM tickets WHERE status = 'waiting' AND transferring_to IS NULL AND (source <> 'remote' OR present_at IS NOT NULL)
           ORDER BY lane, order_key LIMIT 1`,
        )
        .toArray()[0] ?? null
    );
  }

  /** 1 = next; null when not waiting. Counts the waiting tickets ahead in the order index. */
  private positionOf(row: TicketRow): number | null {
    if (row.status !== "waiting") return null;
    const ahead = this.sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM tickets WHERE status = 'waiting' AND (lane, order_key) < (?, ?)", row.lane, row.order_key)
      .one().n;
    return ahead + 1;
  }

  private capacityUsed(): number {
    return this.sql
      .exec<{ used: number }>("SELECT COALESCE(SUM(party_size), 0) AS used FROM tickets WHERE status IN ('waiting', 'called')")
      .one().used;
  }

  private perTicket(at: number): number {
    const calls = this.sql.exec<{ at: number; operator_id: string }>("SELECT at, operator_id FROM calls").toArray();
    return minutesPerTicket(calls.map((c): CallRecord => ({ at: c.at, operatorId: c.operator_id })), at);
  }

  private nextDeadline(): number | null {
    const cfg = this.config();
    const row = this.sql.exec<{ first: number | null }>("SELECT MIN(called_at) AS first FROM tickets WHERE status = 'called'").one();
    const noShow = row.first === null ? null : row.first + cfg.no_show_ms;
    const remote = this.remote.nextDeadline();
    if (noShow === null || remote === null) return noShow ?? remote;
    return Math.min(noShow, remote);
  }

  private view(cfg: Configured, id: string, at: number): TicketView {
    const row = this.row(id);
    return this.toView(cfg, row, this.positionOf(row), this.perTicket(at));
  }

  /** `position` comes from `positionOf` or from the rank in an ordered page; null unless waiting. */
  private toView(cfg: Configured, row: TicketRow, position: number | null, perTicket: number): TicketView {
    return {
      id: row.id,
      queueId: cfg.queue_id,
      serviceId: cfg.service_id,
      organizationId: cfg.organization_id,
      userId: row.user_id,
      number: row.number,
      displayCode: displayCode(cfg.letter, row.number),
      status: row.status,
      partySize: row.party_size,
      isPriority: row.is_priority === 1,
      isGhostMode: row.is_ghost_mode === 1,
      visitorName: row.visitor_name,
      assignedToId: row.assigned_to_id,
      calledAt: row.called_at,
      servedAt: row.served_at,
      createdAt: row.created_at,
      position,
      estimatedWaitMinutes: position === null ? null : estimatedWaitMinutes(position, perTicket),
      presentAt: row.present_at,
      servingAt: row.serving_at,
      skipReason: row.skip_reason,
      recoveredFromId: row.recovered_from_id,
      transferredToId: row.transferred_to_id,
      source: row.source,
      updatedAt: row.updated_at,
    };
  }

  private summaryOf(cfg: Configured, at: number): QueueSummary {
    const counts = this.sql
      .exec<{ status: string; n: number }>("SELECT status, COUNT(*) AS n FROM tickets WHERE status IN ('waiting', 'serving') GROUP BY status")
      .toArray();
    const waitingCount = counts.find((c) => c.status === "waiting")?.n ?? 0;
    return {
      status: cfg.status,
      archivedAt: cfg.archived_at,
      maxCapacity: cfg.max_capacity,
      noShowTimeoutMinutes: cfg.no_show_ms / MINUTE_MS,
      waitingCount,
      servingCount: counts.find((c) => c.status === "serving")?.n ?? 0,
      estimatedWaitMinutes: estimatedWaitMinutes(waitingCount, this.perTicket(at)),
    };
  }

  private snapshot(cfg: Configured, row: TicketRow): TransferSnapshot {
    return {
      ticketId: row.id,
      organizationId: cfg.organization_id,
      userId: row.user_id,
      partySize: row.party_size,
      isPriority: row.is_priority === 1,
      isGhostMode: row.is_ghost_mode === 1,
      visitorName: row.visitor_name,
      phone: row.phone,
      language: row.language,
    };
  }
}

