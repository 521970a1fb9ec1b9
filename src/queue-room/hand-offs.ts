import { allowedFrom, allows } from "../domain/tickets";
import { randomString } from "../lib/ids";
import { invalidState, refuse } from "./refusals";
import type { RoomClient } from "./contract";
import type { Configured, RoomStore, TicketRow } from "./store";
import { parseAnswers } from "./views";
import type { NewTicket, Reservation, RoomResult, TicketView, TransferSnapshot } from "./types";

// Moving a ticket to another queue of the organization: a hand-off between two rooms that is
// safe to retry after a failure at any step (docs/queue-room.md, "Hand-offs").
//  source: reserve (a new hand-off id; call-next skips the ticket)
//          → complete (cancelled, transferredToId) or release (callable again);
//  target: admit, at most once per hand-off id, or abandon (a tombstone for that hand-off
//          only: a later hand-off of the same ticket is a new id and may be admitted).
// A hand-off left open (the Worker failed midway) is settled by the source's alarm.

/**
 * A hand-off takes milliseconds; one still open after this long was cut short. The room's
 * alarm then settles it with the target, so the ticket is never left unusable.
 */
export const HAND_OFF_TIMEOUT_MS = 60_000;
/** After a settlement failed (the target threw or was unreachable), the alarm tries again this much later. */
export const HAND_OFF_RETRY_MS = 30_000;

/** What the room lends this module: its change path, its admission rules and other rooms. */
export interface HandOffHost {
  /** The room's one change path (version, outbox, alarm, sockets). */
  mutate<T>(at: number, fn: (cfg: Configured) => T): RoomResult<T>;
  existing(ticketId: string): TicketRow;
  /** Creates a ticket under the same acceptance rules as a join. */
  admit(cfg: Configured, input: NewTicket, at: number): TicketRow;
  view(cfg: Configured, ticketId: string, at: number): TicketView;
  /** Another queue's room. */
  peer(queueId: string): Pick<RoomClient, "peer">;
  /** A visit's route hand-off (visit-routes.ts) only goes forward: it is driven, never abandoned. */
  settleRoute(open: OpenHandOff, at: number): Promise<RoomResult<string | null>> | null;
}

export type OpenHandOff = { id: string; transferring_to: string; hand_off_id: string };

function newHandOffId(): string {
  return `hof_${randomString(20)}`;
}

export class HandOffs {
  constructor(
    private readonly store: RoomStore,
    private readonly transaction: <T>(fn: () => T) => T,
    private readonly host: HandOffHost,
  ) {}

  // ---- source side -------------------------------------------------------------------------

  /** Marks the ticket as leaving, so call-next skips it until the hand-off ends either way. */
  reserve(cfg: Configured, ticketId: string, targetQueueId: string, at: number): Reservation {
    const row = this.host.existing(ticketId);
    if (row.transferring_to !== null && row.hand_off_id !== null) {
      return { kind: "pending", targetQueueId: row.transferring_to, snapshot: snapshot(cfg, row, row.hand_off_id) };
    }
    if (!allows("transferQueue", row.status)) {
      invalidState(row.status, allowedFrom("transferQueue"), `A ${row.status} ticket cannot move to another queue`);
    }
    const handOffId = newHandOffId();
    this.store.update(row.id, { transferring_to: targetQueueId, transferring_since: at, hand_off_id: handOffId }, at);
    return { kind: "reserved", snapshot: snapshot(cfg, row, handOffId) };
  }

  /**
   * The target will not admit this hand-off: the ticket stays where it was, callable again;
   * in a queue archived meanwhile it is cancelled, as the archive would have done.
   */
  release(cfg: Configured, ticketId: string, handOffId: string, at: number): void {
    const row = this.host.existing(ticketId);
    if (row.hand_off_id !== handOffId) return; // another hand-off, or already ended
    const ended = { transferring_to: null, transferring_since: null, hand_off_id: null };
    const live = row.status === "waiting" || row.status === "called";
    if (cfg.archived_at !== null && live) {
      this.store.update(row.id, { status: "cancelled", ...ended }, at);
      this.store.emit(cfg, "ticket.cancelled", this.store.row(row.id), at, { reason: "archived" });
    } else {
      this.store.update(row.id, ended, at);
    }
  }

  /** The target admitted this hand-off as `newTicketId`: the source closes. Repeating it changes nothing. */
  complete(cfg: Configured, ticketId: string, handOffId: string, newTicketId: string, at: number): TicketView {
    const row = this.host.existing(ticketId);
    if (row.hand_off_id === handOffId) {
      const ended = { transferring_to: null, transferring_since: null, hand_off_id: null };
      if (row.status === "waiting" || row.status === "called") {
        this.store.update(row.id, { status: "cancelled", transferred_to_id: newTicketId, ...ended }, at);
        this.store.emit(cfg, "ticket.transferred", this.store.row(row.id), at, {
          targetQueueId: row.transferring_to,
          transferredToId: newTicketId,
        });
      } else {
        this.store.update(row.id, ended, at);
      }
    }
    return this.host.view(cfg, row.id, at);
  }

  /** The ticket's open hand-off, if any. */
  openOf(ticketId: string): OpenHandOff | null {
    const row = this.host.existing(ticketId);
    return row.transferring_to !== null && row.hand_off_id !== null
      ? { id: row.id, transferring_to: row.transferring_to, hand_off_id: row.hand_off_id }
      : null;
  }

  /** Every open hand-off (clear and archive settle them all first). */
  open(): OpenHandOff[] {
    return this.store.sql
      .exec<OpenHandOff>("SELECT id, transferring_to, hand_off_id FROM tickets WHERE transferring_to IS NOT NULL")
      .toArray();
  }

  /** Hand-offs open for at least HAND_OFF_TIMEOUT_MS at `at`. */
  stale(at: number): OpenHandOff[] {
    return this.store.sql
      .exec<OpenHandOff>(
        `SELECT id, transferring_to, hand_off_id FROM tickets
         WHERE transferring_to IS NOT NULL AND (status = 'served' OR transferring_since <= ?)`,
        at - HAND_OFF_TIMEOUT_MS,
      )
      .toArray();
  }

  /** When the first open hand-off is due for settling (service clock); null when none is open. */
  nextTimeout(): number | null {
    const since = this.store.sql
      .exec<{ since: number | null }>(
        // A route's hand-off (a served leg, visit-routes.ts) is driven at once; a transfer's after the timeout.
        `SELECT MIN(CASE WHEN status = 'served' THEN transferring_since ELSE transferring_since + ? END) AS since
         FROM tickets WHERE transferring_to IS NOT NULL`,
        HAND_OFF_TIMEOUT_MS,
      )
      .one().since;
    return since;
  }

  /**
   * Closes a hand-off the way a retry of the transfer would: if the target admitted the
   * ticket, the source completes; otherwise the target is told never to admit it and the
   * ticket is released here. Both steps are idempotent and conditional, so a transfer retried
   * meanwhile is not undone.
   */
  async settle(open: OpenHandOff, at: number): Promise<RoomResult<string | null>> {
    const route = this.host.settleRoute(open, at);
    if (route !== null) return route;
    const answer = await this.host.peer(open.transferring_to).peer({ kind: "abandonTransfer", handOffId: open.hand_off_id });
    if (!answer.ok) return answer; // the target could not answer: the hand-off stays open
    const admitted = answer.value;
    return this.host.mutate(at, (cfg) => {
      if (admitted !== null) this.complete(cfg, open.id, open.hand_off_id, admitted, at);
      else this.release(cfg, open.id, open.hand_off_id, at);
      return admitted;
    });
  }

  /**
   * Settles each hand-off on its own: a target that fails (or is unreachable) leaves its
   * hand-off open for the alarm to retry and does not hold up the others. Answers how many
   * failed, with the last error.
   */
  async settleEach(handOffs: readonly OpenHandOff[], at: number): Promise<{ failed: number; error: unknown }> {
    let failed = 0;
    let error: unknown = null;
    for (const open of handOffs) {
      try {
        const settled = await this.settle(open, at);
        if (!settled.ok) {
          failed += 1;
          error = new Error(settled.error.message);
        }
      } catch (err) {
        failed += 1; // unreachable target
        error = err;
      }
    }
    return { failed, error };
  }

  // ---- target side -------------------------------------------------------------------------

  /** Admits the hand-off once: a repeat answers the ticket already admitted. */
  admit(cfg: Configured, handed: TransferSnapshot, prioritize: boolean, at: number): TicketView {
    const admission = this.admission(handed.handOffId);
    if (admission?.ticket_id) return this.host.view(cfg, admission.ticket_id, at);
    if (admission) refuse("TRANSFER_ABANDONED", "This hand-off was abandoned in favour of another one");
    const row = this.host.admit(
      cfg,
      {
        userId: handed.userId,
        partySize: handed.partySize,
        isPriority: prioritize || handed.isPriority,
        isGhostMode: handed.isGhostMode,
        visitorName: handed.visitorName,
        phone: handed.phone,
        language: handed.language,
        source: "transfer",
        intake: handed.intake ?? null,
        intakePersonal: handed.intakePersonal ?? null,
      },
      at,
    );
    this.store.sql.exec("INSERT INTO admissions (hand_off_id, ticket_id) VALUES (?, ?)", handed.handOffId, row.id);
    this.store.emit(cfg, "ticket.created", row, at, { transferredFromId: handed.ticketId });
    return this.host.view(cfg, row.id, at);
  }

  /**
   * Makes sure a hand-off is never admitted later: answers the ticket already admitted, or
   * leaves a tombstone so a late admission is refused. Protocol bookkeeping only: no ticket
   * of this queue changes, so it needs no version, event or update.
   */
  abandon(handOffId: string): string | null {
    return this.transaction(() => {
      const admission = this.admission(handOffId);
      if (admission) return admission.ticket_id;
      this.store.sql.exec("INSERT INTO admissions (hand_off_id, ticket_id) VALUES (?, NULL)", handOffId);
      return null;
    });
  }

  private admission(key: string): { ticket_id: string | null } | null {
    return (
      this.store.sql.exec<{ ticket_id: string | null }>("SELECT ticket_id FROM admissions WHERE hand_off_id = ?", key).toArray()[0] ?? null
    );
  }
}

function snapshot(cfg: Configured, row: TicketRow, handOffId: string): TransferSnapshot {
  return {
    handOffId,
    ticketId: row.id,
    organizationId: cfg.organization_id,
    userId: row.user_id,
    partySize: row.party_size,
    isPriority: row.is_priority === 1,
    isGhostMode: row.is_ghost_mode === 1,
    visitorName: row.visitor_name,
    phone: row.phone,
    language: row.language,
    intake: parseAnswers(row.intake),
    intakePersonal: parseAnswers(row.intake_personal),
  };
}
