import type { DomainEventMessage, EventType } from "../domain/events";
import {
  ACTIVE_REMOTE_STATUSES,
  FRONT_EXPIRY_MS,
  GEOFENCE_RADIUS_M,
  geofenceStatus,
  isActiveRemote,
  nextRemoteDeadline,
  remoteDeadlines,
  type ConfirmMethod,
  type RemoteJoinStatus,
} from "../domain/remote-join";
import { iso } from "../lib/time";
import { newId } from "../lib/ids";
import type { TicketRow } from "./rows";
import type { RemoteJoinView, RemoteLocation, RoomError } from "./types";

// The remote-join side of a QueueRoom: each remote ticket's journey (pending → travelling /
// within_geofence → arrived) and the clocks it runs under. The room calls in here inside its
// own storage transactions, so every rule below is applied by the queue's single writer.

export type RemoteJoinRow = {
  ticket_id: string;
  id: string;
  status: RemoteJoinStatus;
  geofence_radius_m: number;
  latitude: number | null;
  longitude: number | null;
  accuracy_m: number | null;
  distance_m: number | null;
  last_location_at: number;
  warned_at: number | null;
  reached_front_at: number | null;
  arrived_at: number | null;
  confirm_method: ConfirmMethod | null;
  created_at: number;
  updated_at: number;
};

type Cell = string | number | null;

/** What the room lends this module: its ticket writes, its outbox and its refusals. */
export interface RemoteHost {
  queueId(): string;
  row(ticketId: string): TicketRow;
  updateTicket(ticketId: string, fields: Partial<Record<keyof TicketRow, Cell>>, at: number): void;
  emit(type: EventType, ticket: TicketRow, at: number, data: Record<string, unknown>): void;
  refuse(code: RoomError["code"], message: string, details?: Record<string, unknown>): never;
}

const ACTIVE_SQL = ACTIVE_REMOTE_STATUSES.map((s) => `'${s}'`).join(", ");

/** How deep into the line the front is looked for: past this many uncallable tickets, none more start their clock. */
const FRONT_SCAN_LIMIT = 100;

export class RemoteJoins {
  constructor(
    private readonly sql: SqlStorage,
    private readonly host: RemoteHost,
  ) {}

  /**
   * Whether the table may hold a row (undefined: ask it). Most queues never see a remote join:
   * then a ticket's change and the walk to the front ask nothing of it (issue 43: two statements
   * of every call-next). `start` is the table's only insert and sets it; rows leave only through
   * the archive, after which a `true` kept costs a read, never a missed journey.
   */
  private mayHoldAny: boolean | undefined;

  private anyRow(): boolean {
    return (this.mayHoldAny ??= this.sql.exec("SELECT 1 FROM remote_joins LIMIT 1").toArray().length > 0);
  }

  /** One remote join on its way per user and queue: a second start would only hold two places. */
  assertNoneActive(userId: string): void {
    const live = this.sql
      .exec<{ ticket_id: string }>(
        `SELECT r.ticket_id FROM tickets t JOIN remote_joins r ON r.ticket_id = t.id
         WHERE t.user_id = ? AND t.status = 'waiting' AND r.status IN (${ACTIVE_SQL}) LIMIT 1`,
        userId,
      )
      .toArray()[0];
    if (live)
      this.host.refuse("CONFLICT", "You already have a remote join on its way in this queue", {
        field: "queueId",
        ticketId: live.ticket_id,
      });
  }

  start(ticketId: string, at: number): void {
    this.mayHoldAny = true;
    this.sql.exec(
      `INSERT INTO remote_joins (ticket_id, id, status, geofence_radius_m, last_location_at, created_at, updated_at)
       VALUES (?, ?, 'pending', ?, ?, ?, ?)`,
      ticketId,
      newId("rjn"),
      GEOFENCE_RADIUS_M,
      at,
      at,
      at,
    );
  }

  find(ticketId: string): RemoteJoinRow | null {
    if (!this.anyRow()) return null;
    return this.sql.exec<RemoteJoinRow>("SELECT * FROM remote_joins WHERE ticket_id = ?", ticketId).toArray()[0] ?? null;
  }

  existing(ticketId: string): RemoteJoinRow {
    return this.find(ticketId) ?? this.host.refuse("NOT_FOUND", "Remote join not found");
  }

  /** The owner's position: inside or outside the geofence, and the inactivity clock restarts. */
  updateLocation(ticketId: string, location: RemoteLocation, at: number): void {
    const remote = this.activeOf(ticketId, "take a location update");
    const status = geofenceStatus(location.distanceM, location.accuracyM, remote.geofence_radius_m);
    this.sql.exec(
      `UPDATE remote_joins SET status = ?, latitude = ?, longitude = ?, accuracy_m = ?, distance_m = ?, last_location_at = ?,
         warned_at = NULL, updated_at = ? WHERE ticket_id = ?`,
      status,
      location.latitude,
      location.longitude,
      location.accuracyM,
      location.distanceM,
      at,
      at,
      ticketId,
    );
  }

  /**
   * Arrival. The Worker has checked who confirms and, for a scan, that the scan happened;
   * the geofence condition is the room's own state.
   */
  confirm(ticketId: string, method: ConfirmMethod, at: number): void {
    const remote = this.activeOf(ticketId, "be confirmed");
    if (method === "geofence" && remote.status !== "within_geofence") {
      this.host.refuse("INVALID_STATE", "Confirming by geofence needs a location update inside the geofence first", {
        status: remote.status,
        allowed: ["within_geofence"],
        method,
      });
    }
    this.arrive(ticketId, method, at);
  }

  /** Marks the join arrived and the ticket present, which makes it callable. */
  arrive(ticketId: string, method: ConfirmMethod, at: number): void {
    this.sql.exec(
      "UPDATE remote_joins SET status = 'arrived', arrived_at = ?, confirm_method = ?, updated_at = ? WHERE ticket_id = ?",
      at,
      method,
      at,
      ticketId,
    );
    if (this.host.row(ticketId).present_at === null) {
      this.host.updateTicket(ticketId, { present_at: at }, at);
      this.host.emit("ticket.present", this.host.row(ticketId), at, {});
    }
    this.host.emit("remote_join.arrived", this.host.row(ticketId), at, { method });
  }

  /**
   * Keeps the join in step with every change of its ticket (the room calls this from its one
   * ticket-writing method): presence is arrival (an operator's `present` is a manual
   * confirmation); a ticket leaving the line ends a join still on its way; a ticket put back
   * in the line (restore) starts its journey again with fresh clocks.
   */
  onTicketChange(ticketId: string, fields: { status?: Cell | undefined; present_at?: Cell | undefined }, at: number): void {
    if (fields.status === undefined && (fields.present_at === undefined || fields.present_at === null)) return;
    const remote = this.find(ticketId);
    if (!remote) return;
    if (fields.status === "waiting" && !isActiveRemote(remote.status) && remote.status !== "arrived") {
      this.sql.exec(
        `UPDATE remote_joins SET status = 'pending', last_location_at = ?, warned_at = NULL, reached_front_at = NULL, updated_at = ?
         WHERE ticket_id = ?`,
        at,
        at,
        ticketId,
      );
      return;
    }
    if (!isActiveRemote(remote.status)) return;
    if (fields.present_at !== undefined && fields.present_at !== null) {
      this.sql.exec(
        "UPDATE remote_joins SET status = 'arrived', arrived_at = ?, confirm_method = 'manual', updated_at = ? WHERE ticket_id = ?",
        at,
        at,
        ticketId,
      );
      this.host.emit("remote_join.arrived", this.host.row(ticketId), at, { method: "manual" });
    } else if (fields.status !== undefined && fields.status !== "waiting") {
      this.sql.exec("UPDATE remote_joins SET status = 'cancelled', updated_at = ? WHERE ticket_id = ?", at, ticketId);
    }
  }

  /**
   * Starts the 30-minute clock of each remote join that has reached the front: no callable
   * ticket is ahead of it, so it would be called next if it had arrived. Walks the line from
   * the front through the index and stops at the first callable ticket.
   */
  markFront(at: number): void {
    // Most lines hold no remote join still short of the front: then nothing to walk (issue 43:
    // the walk read up to FRONT_SCAN_LIMIT rows on every change, 0.5 ms of a call-next).
    if (!this.anyRow()) return;
    const waiting = this.sql
      .exec(`SELECT 1 FROM remote_joins WHERE status IN (${ACTIVE_SQL}) AND reached_front_at IS NULL LIMIT 1`)
      .toArray();
    if (waiting.length === 0) return;
    const line = this.sql.exec<{ id: string; source: string; present_at: number | null; transferring_to: string | null }>(
      `SELECT id, source, present_at, transferring_to FROM tickets WHERE status = 'waiting' ORDER BY lane, order_key LIMIT ?`,
      FRONT_SCAN_LIMIT,
    );
    const reached: string[] = [];
    for (const t of line) {
      if (t.transferring_to !== null) continue;
      if (t.source !== "remote" || t.present_at !== null) break;
      reached.push(t.id);
    }
    for (const id of reached) {
      this.sql.exec(
        `UPDATE remote_joins SET reached_front_at = ?, updated_at = ? WHERE ticket_id = ? AND reached_front_at IS NULL AND status IN (${ACTIVE_SQL})`,
        at,
        at,
        id,
      );
    }
  }

  /** Applies every clock that has run out at `at`; answers how many tickets left the line. */
  enforce(at: number): number {
    let removed = 0;
    for (const remote of this.onTheirWay()) {
      const due = remoteDeadlines(clockOf(remote));
      if (due.expiry !== null && due.expiry <= at && due.expiry <= due.autoSkip!) {
        this.expire(remote, at);
        removed += 1;
        continue;
      }
      if (due.warning !== null && due.warning <= at) this.warn(remote, at);
      if (due.autoSkip !== null && due.autoSkip <= at) {
        this.autoSkip(remote, at);
        removed += 1;
      }
    }
    return removed;
  }

  nextDeadline(): number | null {
    let next: number | null = null;
    for (const remote of this.onTheirWay()) {
      const due = nextRemoteDeadline(clockOf(remote));
      if (due !== null && (next === null || due < next)) next = due;
    }
    return next;
  }

  view(remote: RemoteJoinRow, ticket: TicketRow): RemoteJoinView {
    return {
      id: remote.id,
      ticketId: remote.ticket_id,
      queueId: this.host.queueId(),
      userId: ticket.user_id,
      status: remote.status,
      geofenceRadiusM: remote.geofence_radius_m,
      latitude: remote.latitude,
      longitude: remote.longitude,
      accuracyM: remote.accuracy_m,
      distanceM: remote.distance_m,
      lastLocationAt: remote.last_location_at,
      warnedAt: remote.warned_at,
      reachedFrontAt: remote.reached_front_at,
      expiresAt: isActiveRemote(remote.status) && remote.reached_front_at !== null ? remote.reached_front_at + FRONT_EXPIRY_MS : null,
      arrivedAt: remote.arrived_at,
      confirmMethod: remote.confirm_method,
      createdAt: remote.created_at,
      updatedAt: remote.updated_at,
    };
  }

  private activeOf(ticketId: string, what: string): RemoteJoinRow {
    const remote = this.existing(ticketId);
    const ticket = this.host.row(ticketId);
    if (!isActiveRemote(remote.status) || ticket.status !== "waiting") {
      this.host.refuse("INVALID_STATE", `A ${remote.status} remote join cannot ${what}`, {
        status: remote.status,
        allowed: [...ACTIVE_REMOTE_STATUSES],
        ticketStatus: ticket.status,
      });
    }
    return remote;
  }

  /** Joins still on their way whose ticket waits: few per queue, found through the status index. */
  private onTheirWay(): RemoteJoinRow[] {
    if (!this.anyRow()) return [];
    return this.sql
      .exec<RemoteJoinRow>(
        // CROSS JOIN keeps SQLite on the remote_joins status index rather than the waiting line.
        `SELECT r.* FROM remote_joins r CROSS JOIN tickets t ON t.id = r.ticket_id WHERE r.status IN (${ACTIVE_SQL}) AND t.status = 'waiting'`,
      )
      .toArray();
  }

  // Each ending writes the join first, so the ticket change that follows finds it settled.

  private expire(remote: RemoteJoinRow, at: number): void {
    this.sql.exec("UPDATE remote_joins SET status = 'expired', updated_at = ? WHERE ticket_id = ?", at, remote.ticket_id);
    this.host.updateTicket(remote.ticket_id, { status: "expired" }, at);
    const ticket = this.host.row(remote.ticket_id);
    this.host.emit("ticket.expired", ticket, at, { reason: "remote_join_expired" });
    this.host.emit("remote_join.expired", ticket, at, { reachedFrontAt: iso(remote.reached_front_at!) });
  }

  private warn(remote: RemoteJoinRow, at: number): void {
    this.sql.exec("UPDATE remote_joins SET warned_at = ?, updated_at = ? WHERE ticket_id = ?", at, at, remote.ticket_id);
    remote.warned_at = at;
    this.host.emit("inactivity.warning", this.host.row(remote.ticket_id), at, {
      lastLocationAt: iso(remote.last_location_at),
      autoSkipAt: iso(remoteDeadlines(clockOf(remote)).autoSkip!),
    });
  }

  private autoSkip(remote: RemoteJoinRow, at: number): void {
    this.sql.exec("UPDATE remote_joins SET status = 'cancelled', updated_at = ? WHERE ticket_id = ?", at, remote.ticket_id);
    this.host.updateTicket(remote.ticket_id, { status: "skipped", skip_reason: "auto_skipped" }, at);
    this.host.emit("ticket.auto_skipped", this.host.row(remote.ticket_id), at, { lastLocationAt: iso(remote.last_location_at) });
  }
}

function clockOf(remote: RemoteJoinRow) {
  return {
    status: remote.status,
    lastLocationAt: remote.last_location_at,
    warnedAt: remote.warned_at,
    reachedFrontAt: remote.reached_front_at,
  };
}
