import { LANE } from "../domain/tickets";
import { nextLeg, type RouteLeg } from "../domain/visit-route";
import { randomString } from "../lib/ids";
import type { RoomClient } from "./contract";
import { refuse } from "./refusals";
import { codeOf, parseRoute } from "./rows";
import type { Configured, RoomStore, TicketRow } from "./store";
import type { NewTicket, RoomResult, RouteSnapshot, TicketView } from "./types";
import { parseAnswers } from "./views";

// Several services in one visit (docs/visits.md): when a leg is completed, the same visitor
// (code, token, answers) waits in the next service's queue. The hand-off is the transfer
// protocol's (hand-offs.ts) with one difference: it only goes forward. The leg's completion
// and the reservation of the next leg are one storage transaction in the source; the target
// admits each hand-off id at most once (`admissions`); the source then records where the
// visitor went (`routed_to_id`, `ticket.route_advanced`, once per hand-off). A hand-off cut
// short anywhere is driven again by the source (at once after the completion, then by its
// alarm) until the target answers: the completed leg can never be undone, so nothing is
// abandoned, and a repeated admission answers the ticket already admitted.

/** A leg's reservation of the next one, written with its completion (Commands.completeServing). */
export interface NextLegReservation {
  transferring_to: string;
  transferring_since: number;
  hand_off_id: string;
  route_token_hash: string | null;
}

/** The route's next leg for a row being completed, with the visitor's token hash; null on a last leg or no route. */
export function reserveNextLeg(store: RoomStore, row: TicketRow, at: number): NextLegReservation | null {
  const route = parseRoute(row.route);
  if (route === null || row.leg_index === null) return null;
  const next = nextLeg(route, row.leg_index);
  if (next === null) return null;
  // Read before the completion: a finished ticket's token is forgotten (followers.ts).
  const token = store.sql.exec<{ hash: string }>("SELECT hash FROM ticket_tokens WHERE ticket_id = ?", row.id).toArray()[0];
  return {
    transferring_to: next.queueId,
    transferring_since: at,
    hand_off_id: `hof_${randomString(20)}`,
    route_token_hash: token?.hash ?? null,
  };
}

/** A route's hand-off is the one of a completed leg (a transfer's ticket is still waiting or called). */
export function isRouteHandOff(row: Pick<TicketRow, "status" | "route">): boolean {
  return row.status === "served" && row.route !== null;
}

export interface VisitRoutesHost {
  mutate<T>(at: number, fn: (cfg: Configured) => T): RoomResult<T>;
  read<T>(fn: (cfg: Configured) => T): RoomResult<T>;
  /** A ticket for the visitor, without a join's capacity and status checks (they are in the building). */
  insert(cfg: Configured, input: NewTicket, at: number): TicketRow;
  view(cfg: Configured, ticketId: string, at: number): TicketView;
  /** The visitor's token for the new leg. */
  issueToken(ticketId: string, tokenHash: string): void;
  peer(queueId: string): Pick<RoomClient, "command">;
}

type Open = { id: string; transferring_to: string; hand_off_id: string };

/** Refusals after which the target will never admit: the visit ends at the leg completed. */
const FINAL_REFUSALS = new Set(["QUEUE_CLOSED", "NOT_FOUND", "TRANSFER_ABANDONED"]);

export class VisitRoutes {
  constructor(
    private readonly store: RoomStore,
    private readonly host: VisitRoutesHost,
  ) {}

  // ---- source side -------------------------------------------------------------------------

  snapshot(cfg: Configured, row: TicketRow): RouteSnapshot {
    const route = parseRoute(row.route) ?? refuse("INVALID_STATE", "This ticket has no route");
    return {
      handOffId: row.hand_off_id ?? refuse("INVALID_STATE", "This ticket has no open hand-off"),
      ticketId: row.id,
      organizationId: cfg.organization_id,
      userId: row.user_id,
      partySize: row.party_size,
      isGhostMode: row.is_ghost_mode === 1,
      visitorName: row.visitor_name,
      phone: row.phone,
      language: row.language,
      source: row.source,
      intake: row.intake === null ? null : parseAnswers(row.intake),
      intakePersonal: row.intake_personal === null ? null : parseAnswers(row.intake_personal),
      route,
      legIndex: (row.leg_index ?? 0) + 1,
      visitId: row.visit_id ?? row.id,
      visitStartedAt: row.visit_started_at ?? row.created_at,
      visitCode: codeOf(cfg.letter, row),
      tokenHash: row.route_token_hash,
    };
  }

  /**
   * Drives one route hand-off forward: the target admits it (or answers the ticket it already
   * admitted), then the source records it. Answers the next leg's ticket id; a failure of the
   * target leaves the hand-off open for the alarm.
   */
  async settle(open: Open, at: number): Promise<RoomResult<string | null>> {
    const snap = this.host.read((cfg) => {
      const row = this.store.find(open.id);
      return row !== null && row.hand_off_id === open.hand_off_id ? this.snapshot(cfg, row) : null;
    });
    if (!snap.ok || snap.value === null) return snap.ok ? { ok: true, value: null } : snap;
    const admitted = await this.host.peer(open.transferring_to).command({ verb: "admitRouted", snapshot: snap.value, at });
    if (!admitted.ok && !FINAL_REFUSALS.has(admitted.error.code)) return admitted;
    return this.host.mutate(at, (cfg) => {
      if (admitted.ok) {
        this.complete(cfg, open.id, open.hand_off_id, admitted.value.id, at);
        return admitted.value.id;
      }
      this.end(cfg, open.id, open.hand_off_id, admitted.error.code, at);
      return null;
    });
  }

  /** The next leg holds the visitor as `nextTicketId`: recorded once, with one `ticket.route_advanced`. */
  private complete(cfg: Configured, ticketId: string, handOffId: string, nextTicketId: string, at: number): void {
    const row = this.store.find(ticketId);
    if (row === null || row.hand_off_id !== handOffId) return;
    const route = parseRoute(row.route) ?? [];
    this.store.update(
      row.id,
      { routed_to_id: nextTicketId, transferring_to: null, transferring_since: null, hand_off_id: null, route_token_hash: null },
      at,
    );
    const nextIndex = (row.leg_index ?? 0) + 1;
    this.store.emit(cfg, "ticket.route_advanced", this.store.row(row.id), at, {
      visitId: row.visit_id ?? row.id,
      fromQueueId: cfg.queue_id,
      toQueueId: row.transferring_to,
      toServiceId: route[nextIndex]?.serviceId ?? null,
      routedToId: nextTicketId,
      leg: { index: nextIndex + 1, of: route.length },
    });
  }

  /** The next leg's queue will never take the visitor (archived or deleted): the visit ends here. */
  private end(cfg: Configured, ticketId: string, handOffId: string, reason: string, at: number): void {
    const row = this.store.find(ticketId);
    if (row === null || row.hand_off_id !== handOffId) return;
    console.warn(`queue room: the next leg of visit ${row.visit_id ?? row.id} was refused (${reason}); the visit ends at ${cfg.queue_id}`);
    this.store.update(row.id, { transferring_to: null, transferring_since: null, hand_off_id: null, route_token_hash: null }, at);
  }

  // ---- target side -------------------------------------------------------------------------

  /** Admits the visitor's next leg once per hand-off id; a repeat answers the ticket admitted. */
  admit(cfg: Configured, snap: RouteSnapshot, at: number): TicketView {
    const admission = this.store.sql
      .exec<{ ticket_id: string | null }>("SELECT ticket_id FROM admissions WHERE hand_off_id = ?", snap.handOffId)
      .toArray()[0];
    if (admission?.ticket_id) return this.host.view(cfg, admission.ticket_id, at);
    if (admission) refuse("TRANSFER_ABANDONED", "This hand-off was abandoned");
    if (cfg.archived_at !== null) refuse("QUEUE_CLOSED", "This queue is archived", { status: "archived" });
    const leg = snap.route[snap.legIndex];
    if (leg === undefined || leg.queueId !== cfg.queue_id) refuse("INVALID_STATE", "This queue is not the visit's next leg");
    const inserted = this.host.insert(
      cfg,
      {
        userId: snap.userId,
        partySize: snap.partySize,
        isPriority: false,
        isGhostMode: snap.isGhostMode,
        visitorName: snap.visitorName,
        phone: snap.phone,
        language: snap.language,
        source: snap.source,
        intake: snap.intake,
        intakePersonal: snap.intakePersonal,
        route: snap.route,
      },
      at,
    );
    const place = leg.entry === "front" ? this.front(inserted.id, at) : this.atTime(inserted.id, snap.visitStartedAt);
    // Same transaction as the insert, which took this ticket's version: no version of its own.
    this.store.sql.exec(
      `UPDATE tickets SET leg_index = ?, visit_id = ?, visit_started_at = ?, visit_code = ?, routed_from_id = ?,
         lane = ?, order_key = ?, lined_up_at = ? WHERE id = ?`,
      snap.legIndex,
      snap.visitId,
      snap.visitStartedAt,
      snap.visitCode,
      snap.ticketId,
      place.lane,
      place.order_key,
      place.lined_up_at,
      inserted.id,
    );
    if (snap.tokenHash !== null) this.host.issueToken(inserted.id, snap.tokenHash);
    this.store.sql.exec("INSERT INTO admissions (hand_off_id, ticket_id) VALUES (?, ?)", snap.handOffId, inserted.id);
    this.store.emit(cfg, "ticket.created", this.store.row(inserted.id), at, {
      routedFromId: snap.ticketId,
      visitId: snap.visitId,
      leg: { index: snap.legIndex + 1, of: snap.route.length },
    });
    return this.host.view(cfg, inserted.id, at);
  }

  /** First in line, ahead of everyone waiting (as a return "first"). */
  private front(id: string, at: number): { lane: number; order_key: number; lined_up_at: number } {
    const room = this.store.room();
    const front = this.store.sql
      .exec<{ k: number | null; t: number | null }>(
        "SELECT MIN(order_key) AS k, MIN(lined_up_at) AS t FROM tickets WHERE status = 'waiting' AND lane = ? AND id != ?",
        LANE.priority,
        id,
      )
      .one();
    return {
      lane: LANE.priority,
      order_key: Math.min(front.k ?? room.priority_seq + 1, room.priority_seq + 1) - 1,
      lined_up_at: Math.min(front.t ?? at, at),
    };
  }

  /**
   * In the regular line where the visit's first join would stand: before the first waiting
   * ticket that lined up later, so `lined_up_at` never decreases along the lane.
   */
  private atTime(id: string, startedAt: number): { lane: number; order_key: number; lined_up_at: number } {
    const sql = this.store.sql;
    const after = sql
      .exec<{ k: number; t: number }>(
        `SELECT order_key AS k, COALESCE(lined_up_at, created_at) AS t FROM tickets
         WHERE status = 'waiting' AND lane = ? AND id != ? AND COALESCE(lined_up_at, created_at) > ? ORDER BY order_key LIMIT 1`,
        LANE.regular,
        id,
        startedAt,
      )
      .toArray()[0];
    const own = this.store.row(id);
    if (after === undefined) return { lane: LANE.regular, order_key: own.order_key, lined_up_at: own.lined_up_at ?? startedAt };
    const before = sql
      .exec<{ k: number; t: number }>(
        `SELECT order_key AS k, COALESCE(lined_up_at, created_at) AS t FROM tickets
         WHERE status = 'waiting' AND lane = ? AND id != ? AND order_key < ? ORDER BY order_key DESC LIMIT 1`,
        LANE.regular,
        id,
        after.k,
      )
      .toArray()[0];
    return {
      lane: LANE.regular,
      order_key: ((before?.k ?? after.k - 1) + after.k) / 2,
      lined_up_at: Math.max(startedAt, before?.t ?? startedAt),
    };
  }
}
