import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { iso, utcMonth } from "../lib/time";
import type { Result } from "../lib/result";
import { migrateLedger } from "./schema";

// The organization's monthly ticket ledger (docs/room-rules.md, "Quota"): one object per
// organization, the single writer of its `tickets` count. A room takes one unit per join
// before it creates the ticket and gives it back when the join is refused after all, so the
// count is exact across every queue of the organization without a D1 write per join.
//
// D1's usage_counters row is a projection of this count: written by the alarm a moment after
// a change (coalesced: one write for a burst), and on demand before the usage route reads it
// (`flush`). The first take of a month starts from D1's row, so a count kept before this
// object existed carries on.

/** How long after a change the count is written to D1: one write for every change meanwhile. */
const FLUSH_DELAY_MS = 1_000;
/** After a failed write, the alarm tries again this much later. */
const FLUSH_RETRY_MS = 5_000;

/** The ledger's one refusal: the month's quota is used up (the API's QUOTA_EXCEEDED). */
export interface QuotaRefusal {
  code: "QUOTA_EXCEEDED";
  message: string;
  details: { limit: number; used: number; resetsAt: string };
}

/**
 * Where D1 keeps the counts (usage_counters), given by the composition root (src/room-host.ts):
 * the ledger sits beside db/ and imports none of it, as the room does.
 */
export interface LedgerStore {
  /** The month's count D1 holds (0 without a row). */
  ticketsUsed(organizationId: string, period: string): Promise<number>;
  /** Writes the months' counts in one batch, each only while the organization exists. */
  writeTickets(organizationId: string, counts: readonly { period: string; used: number }[]): Promise<void>;
}

/** A room's count of the joins of one month it has not reported yet (`record`). */
export interface TalliedJoins {
  period: string;
  joins: number;
}

type PeriodRow = {
  period: string;
  used: number;
  flushed: number;
};

export class OrganizationLedger extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** Months whose D1 count is being read, so concurrent first takes wait for the same read. */
  private readonly loading = new Map<string, Promise<void>>();
  /**
   * Each month's count as stored, kept in memory once read (issue 43: a take read its row twice
   * and the alarm once). This object is the single writer of ticket_periods; every write of a
   * count goes through `count`.
   */
  private readonly used = new Map<string, number>();
  /** An alarm is armed (set here, cleared when it runs): a take does not ask the storage again. */
  private flushArmed = false;

  constructor(
    ctx: DurableObjectState,
    env: Env,
    private readonly store: LedgerStore,
  ) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    migrateLedger(ctx.storage);
  }

  /**
   * Takes one ticket of the month of `at` when fewer than `limit` (null: unlimited) are used.
   * Answers the month's key, which a refund names.
   */
  async take(organizationId: string, at: number, limit: number | null): Promise<Result<{ period: string }, QuotaRefusal>> {
    const period = utcMonth(at);
    await this.load(organizationId, period.key);
    // No await from here to the write: the check and the count are one step of this object.
    const used = this.used.get(period.key) ?? this.periodRow(period.key)!.used;
    if (limit !== null && used >= limit) {
      return {
        ok: false,
        error: {
          code: "QUOTA_EXCEEDED",
          message: `The monthly quota of ${limit} tickets is used up`,
          details: { limit, used, resetsAt: iso(period.end) },
        },
      };
    }
    this.count(period.key, "UPDATE ticket_periods SET used = used + 1 WHERE period = ? RETURNING used");
    this.scheduleFlush();
    return { ok: true, value: { period: period.key } };
  }

  /** Gives back a unit taken for a ticket that was not created. */
  refund(period: string): void {
    this.count(period, "UPDATE ticket_periods SET used = used - 1 WHERE period = ? AND used > 0 RETURNING used");
    this.scheduleFlush();
  }

  /**
   * The joins a room counted itself, by month: under an unlimited plan there is nothing to
   * refuse, so the room takes no unit on a join's path and reports its count with its drain
   * (queue-room/quota-tally.ts, issue 43). `seq` numbers the room's reports: one sent again
   * (its answer was lost) is applied once.
   */
  async record(organizationId: string, room: string, seq: number, counts: readonly TalliedJoins[]): Promise<void> {
    for (const { period } of counts) await this.load(organizationId, period);
    // No await from here to the writes: the sequence check and the counts are one step.
    const last = this.sql.exec<{ seq: number }>("SELECT seq FROM room_reports WHERE room = ?", room).toArray()[0]?.seq ?? 0;
    if (seq <= last) return;
    this.ctx.storage.transactionSync(() => {
      for (const { period, joins } of counts) {
        this.count(period, "UPDATE ticket_periods SET used = used + ? WHERE period = ? RETURNING used", joins);
      }
      this.sql.exec("INSERT INTO room_reports (room, seq) VALUES (?, ?) ON CONFLICT (room) DO UPDATE SET seq = excluded.seq", room, seq);
    });
    this.scheduleFlush();
  }

  /** Writes a month's count with `update` (it answers the new count) and keeps what was written. */
  private count(period: string, update: string, ...before: number[]): void {
    const row = this.sql.exec<{ used: number }>(update, ...before, period).toArray()[0];
    if (row) this.used.set(period, row.used);
  }

  /** Writes every count D1 does not hold yet; the usage route calls it before reading D1. */
  async flush(): Promise<void> {
    const organizationId = this.organizationId();
    if (organizationId === null) return;
    const behind = this.sql.exec<PeriodRow>("SELECT period, used, flushed FROM ticket_periods WHERE used != flushed").toArray();
    if (behind.length === 0) return;
    // Written only while the organization exists: a count left behind by a deleted organization
    // has no row to go to, and a plain INSERT would fail the foreign key and retry for ever.
    await this.store.writeTickets(organizationId, behind);
    // Only what was written (or dropped with its organization) is marked written: a take
    // during the write stays behind.
    for (const row of behind) this.sql.exec("UPDATE ticket_periods SET flushed = ? WHERE period = ?", row.used, row.period);
  }

  override async alarm(): Promise<void> {
    this.flushArmed = false;
    try {
      await this.flush();
    } catch (err) {
      console.warn(`organization ledger: usage write failed, retrying in ${FLUSH_RETRY_MS / 1000} s: ${String(err)}`);
      await this.ctx.storage.setAlarm(Date.now() + FLUSH_RETRY_MS);
      this.flushArmed = true;
      return;
    }
    if (this.sql.exec("SELECT 1 FROM ticket_periods WHERE used != flushed").toArray().length > 0) this.scheduleFlush();
  }

  private organizationId(): string | null {
    return this.sql.exec<{ organization_id: string }>("SELECT organization_id FROM ledger_meta").toArray()[0]?.organization_id ?? null;
  }

  private periodRow(period: string): PeriodRow | null {
    return this.sql.exec<PeriodRow>("SELECT period, used, flushed FROM ticket_periods WHERE period = ?", period).toArray()[0] ?? null;
  }

  /** The month's count starts from D1's (read once per month, shared by concurrent takes). */
  private async load(organizationId: string, period: string): Promise<void> {
    if (this.used.has(period)) return;
    const stored = this.periodRow(period);
    if (stored !== null) {
      this.used.set(period, stored.used);
      return;
    }
    let pending = this.loading.get(period);
    if (!pending) {
      pending = (async () => {
        const used = await this.store.ticketsUsed(organizationId, period);
        this.sql.exec("INSERT OR IGNORE INTO ledger_meta (id, organization_id) VALUES (1, ?)", organizationId);
        this.sql.exec("INSERT OR IGNORE INTO ticket_periods (period, used, flushed) VALUES (?, ?, ?)", period, used, used);
        this.used.set(period, this.periodRow(period)!.used);
      })().finally(() => this.loading.delete(period));
      this.loading.set(period, pending);
    }
    await pending;
  }

  /** One alarm covers every change until it runs (an armed alarm is left as it is). */
  private scheduleFlush(): void {
    if (this.flushArmed) return;
    this.flushArmed = true;
    void this.ctx.storage.getAlarm().then((armed) => {
      if (armed === null) return this.ctx.storage.setAlarm(Date.now() + FLUSH_DELAY_MS);
    });
  }
}
