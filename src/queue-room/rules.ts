import { iso } from "../lib/time";
import { refuse } from "./refusals";
import type { RoomRulesCopy } from "./types";

// The rules a join and a call-next check, held by the room (docs/room-rules.md): the service's
// status, its closures and every member's breaks over a window of days, the plan's monthly
// ticket quota. D1 is their source of truth; the Worker pushes a fresh copy to every room a
// change concerns before it answers the change, and the queue's row carries the version the
// room must hold. A copy older than that version, or an instant outside the window the copy
// covers, is refused RULES_STALE: the Worker loads the rules again and retries.

type Block = {
  seq: number;
  closes_service: number;
  user_id: string | null;
  event_id: string;
  start_at: number;
  end_at: number;
};

type RulesRow = {
  version: number;
  valid_from: number;
  valid_until: number;
  service_status: string;
  tickets_per_month: number | null;
};

export class RoomRules {
  /** The copy's row and its blocks, kept between reads (issue 43); undefined: read them. The room drops them with `forget` when a transaction rolls back. */
  private kept: RulesRow | null | undefined;
  private keptBlocks: Block[] | undefined;
  /** Moves whenever the copy may have changed (a new copy, a rollback): a check made at the same generation and instant stands. */
  generation = 0;

  constructor(private readonly sql: SqlStorage) {}

  forget(): void {
    this.kept = undefined;
    this.keptBlocks = undefined;
    this.generation += 1;
  }

  /** Keeps `copy` unless the room already holds a newer version (pushes may cross). */
  apply(copy: RoomRulesCopy): boolean {
    const current = this.row();
    if (current !== null && current.version > copy.version) return false;
    this.forget();
    this.sql.exec(
      `INSERT INTO room_rules (id, version, valid_from, valid_until, service_status, tickets_per_month, blend) VALUES (1, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET version = excluded.version, valid_from = excluded.valid_from, valid_until = excluded.valid_until,
         service_status = excluded.service_status, tickets_per_month = excluded.tickets_per_month, blend = excluded.blend`,
      copy.version,
      copy.validFrom,
      copy.validUntil,
      copy.serviceStatus,
      copy.ticketsPerMonth,
      copy.blend ? JSON.stringify(copy.blend) : null,
    );
    this.sql.exec("DELETE FROM room_blocks");
    copy.blocks.forEach((b, seq) => {
      const users = b.attendees.length === 0 ? [null] : b.attendees;
      for (const user of users) {
        this.sql.exec(
          "INSERT INTO room_blocks (seq, closes_service, user_id, event_id, start_at, end_at) VALUES (?, ?, ?, ?, ?, ?)",
          seq,
          b.closesService ? 1 : 0,
          user,
          b.eventId,
          b.start,
          b.end,
        );
      }
    });
    return true;
  }

  /**
   * A join's checks: the service takes tickets and no closure of it runs at `at`. Answers the
   * monthly quota the join must then take a unit of.
   */
  assertJoin(at: number, version: number, rowMayBeKept = false): { ticketsPerMonth: number | null } {
    const rules = this.fresh(at, version);
    // A rule changed after the Worker's row was read (a row it kept: an intake question added,
    // say): the row is read again before the join is judged on it (docs/hot-path.md).
    if (rowMayBeKept && rules.version > version) {
      refuse("QUEUE_ROW_STALE", "The queue row the join was sent with is older than the room's rules", {
        version: rules.version,
        sent: version,
      });
    }
    if (rules.service_status !== "active") {
      refuse("QUEUE_CLOSED", "This queue's service is not taking tickets", {
        reason: "service_inactive",
        serviceStatus: rules.service_status,
      });
    }
    const closure = this.latestCovering(at, (b) => b.closes_service === 1);
    if (closure) {
      refuse("QUEUE_CLOSED", "This service is closed right now", {
        reason: "closure",
        eventId: closure.event_id,
        until: iso(closure.end_at),
      });
    }
    return { ticketsPerMonth: rules.tickets_per_month };
  }

  /** A call-next's check: the calling member is not on a break, closure or unavailability. */
  assertMayCall(userId: string | null, at: number, version: number): void {
    if (userId === null) return;
    this.fresh(at, version);
    const block = this.latestCovering(at, (b) => b.user_id === null || b.user_id === userId);
    if (block) {
      refuse("OPERATOR_UNAVAILABLE", "You are on a break, closure or unavailability right now", {
        eventId: block.event_id,
        until: iso(block.end_at),
      });
    }
  }

  private row(): RulesRow | null {
    if (this.kept !== undefined) return this.kept;
    return (this.kept =
      this.sql.exec<RulesRow>("SELECT version, valid_from, valid_until, service_status, tickets_per_month FROM room_rules").toArray()[0] ??
      null);
  }

  private fresh(at: number, version: number): RulesRow {
    const rules = this.row();
    if (rules === null || rules.version < version || at < rules.valid_from || at >= rules.valid_until) {
      refuse("RULES_STALE", "The room's copy of the rules must be refreshed", { version: rules?.version ?? null, required: version });
    }
    return rules;
  }

  /**
   * The covering occurrence that ends last (the first such in D1's order), as the calendar answers
   * it. The blocks are read once per copy: a window of days of closures and breaks, a few hundred
   * rows at most, and a join and a call-next each asked the storage (0.25 ms of a join).
   */
  private latestCovering(at: number, applies: (block: Block) => boolean): Block | null {
    this.keptBlocks ??= this.sql
      .exec<Block>("SELECT seq, closes_service, user_id, event_id, start_at, end_at FROM room_blocks ORDER BY end_at DESC, seq ASC")
      .toArray();
    return this.keptBlocks.find((b) => b.start_at <= at && b.end_at > at && applies(b)) ?? null;
  }
}
