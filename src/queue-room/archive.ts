import { inArray, sql } from "drizzle-orm";
import { database } from "../db/client";
import { batchWrites } from "../db/prepared";
import { tickets } from "../db/schema";
import type { Env } from "../env";
import { analyticsDrainStatements, ticketsUpsert } from "./projection";
import type { Configured, TicketRow } from "./rows";
import type { ArchiveResult } from "./types";

// The room keeps only live and recent tickets (docs/retention.md). A finished ticket leaves
// the room's SQLite once D1 is known to hold its latest version and nothing in the room can
// still need it. D1 stays the history (reads of an archived ticket fall back to it).
//
// Order of the steps, so a kill at any point loses nothing:
//  1. pick a chunk of candidates (read only);
//  2. in one D1 batch: upsert those D1 does not hold at their version (guarded by version,
//     like the drain, so it never goes back), then read back the versions D1 holds;
//  3. in one storage transaction: delete each ticket D1 holds at its current version, unless
//     it changed meanwhile (the version differs) or an outbox row still names it.
// A kill before 3 leaves every row in place; 2 is idempotent, so the next run repeats it.

/** How long a finished ticket stays in the room after its last change: the recovery window. */
export const ROOM_KEEP_MS = 24 * 3_600_000;
/** Tickets archived per chunk (one D1 read, one storage transaction). */
export const ARCHIVE_CHUNK = 500;
/** When due tickets could not be archived (D1 refused them), the next try waits this long. */
export const ARCHIVE_RETRY_MS = 10 * 60_000;

/** Finished: no command of the room moves them again, except `recover` of skipped/expired within ROOM_KEEP_MS. */
export const FINISHED_STATUSES = ["served", "cancelled", "expired", "skipped"] as const;
const FINISHED_SQL = FINISHED_STATUSES.map((s) => `'${s}'`).join(", ");

/**
 * The candidates: finished for ROOM_KEEP_MS, not in a hand-off, no event waiting for the
 * drain (the drain reads the ticket row), and not the origin of a ticket recovered from it
 * that is still here (its "already recovered" check reads that link). Read through the index
 * of finished tickets (schema.ts; named, since without statistics the planner prefers the
 * status prefix of the order index) and unordered (any due ticket will do; an ORDER BY would
 * sort the whole due range): the cost of a chunk does not grow with the room's history.
 */
export const ARCHIVE_CANDIDATES_SQL = `SELECT * FROM tickets t INDEXED BY tickets_finished
  WHERE t.status IN (${FINISHED_SQL}) AND t.updated_at <= ? AND t.transferring_to IS NULL
    AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.ticket_id = t.id)
    AND NOT EXISTS (SELECT 1 FROM tickets r WHERE r.recovered_from_id = t.id)
  LIMIT ?`;

/** The oldest finished ticket's last change: the first entry of the index of finished tickets. */
export const NEXT_DUE_SQL = `SELECT MIN(updated_at) AS at FROM tickets INDEXED BY tickets_finished WHERE status IN (${FINISHED_SQL})`;

export class RoomArchive {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: Env,
  ) {}

  /** Archives one chunk of due tickets; `more` when a full chunk went and others may be due. */
  async archiveChunk(cfg: Configured, at: number): Promise<ArchiveResult> {
    const sql = this.storage.sql;
    const candidates = sql.exec<TicketRow>(ARCHIVE_CANDIDATES_SQL, at - ROOM_KEEP_MS, ARCHIVE_CHUNK).toArray();
    if (candidates.length === 0) return { archived: 0, more: false };
    const held = await this.projectedVersions(cfg, candidates);
    const archived = this.storage.transactionSync(() => {
      let n = 0;
      for (const t of candidates) {
        const d1Version = held.get(t.id);
        if (d1Version === undefined || d1Version < t.version) continue;
        const gone = sql.exec(
          "DELETE FROM tickets WHERE id = ? AND version = ? AND NOT EXISTS (SELECT 1 FROM outbox WHERE ticket_id = ?)",
          t.id,
          t.version,
          t.id,
        ).rowsWritten;
        if (gone > 0) {
          sql.exec("DELETE FROM remote_joins WHERE ticket_id = ?", t.id);
          n += 1;
        }
      }
      return n;
    });
    return { archived, more: candidates.length === ARCHIVE_CHUNK && archived > 0 };
  }

  /** When the oldest finished ticket becomes due (service clock), or null when none is here. */
  nextDue(): number | null {
    const oldest = this.storage.sql.exec<{ at: number | null }>(NEXT_DUE_SQL).one().at;
    return oldest === null ? null : oldest + ROOM_KEEP_MS;
  }

  /**
   * The versions D1 holds for these tickets, after bringing up to date those it lacks (a
   * change that emitted no event, or an outbox drained before this step existed).
   */
  private async projectedVersions(cfg: Configured, rows: readonly TicketRow[]): Promise<Map<string, number>> {
    const db = database(this.env.DB);
    const ids = JSON.stringify(rows.map((r) => r.id));
    // The ids as one JSON parameter: a chunk holds more ids than a statement binds parameters.
    const read = () =>
      db
        .select({ id: tickets.id, version: tickets.version })
        .from(tickets)
        .where(inArray(tickets.id, db.select({ value: sql`value` }).from(sql`json_each(${ids})`)))
        .all();
    const held = new Map((await read()).map((r) => [r.id, r.version]));
    const behind = rows.filter((r) => (held.get(r.id) ?? -1) < r.version);
    if (behind.length === 0) return held;
    // As the drain does: the projection and the analytics aggregates in one batch (both safe
    // to repeat), in slices so a batch stays a reasonable size.
    for (let i = 0; i < behind.length; i += 50) {
      const slice = behind.slice(i, i + 50);
      await batchWrites(this.env.DB, [ticketsUpsert(cfg, slice), ...analyticsDrainStatements(cfg, slice)]);
    }
    return new Map((await read()).map((r) => [r.id, r.version]));
  }
}
