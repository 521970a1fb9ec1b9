import type { TalliedJoins } from "./ports";

// Joins the room counts itself (issue 43). Under an unlimited plan there is no quota to refuse a
// join, so a join does not wait for the organization's ledger (a hop and a write of its own on
// every join): the room counts it in the join's own transaction, by month, and reports the
// counts with its drain (the alarm after a change). A report is stored before it is sent and
// sent again, with the same number, until the ledger acknowledges it: each join is counted once
// whatever fails in between (the ledger applies a number once).

export class QuotaTally {
  constructor(
    private readonly sql: SqlStorage,
    private readonly transaction: <T>(fn: () => T) => T,
  ) {}

  /** One more join of `period` (a UTC month, YYYY-MM), in the join's transaction. */
  count(period: string): void {
    this.sql.exec("INSERT INTO quota_tally (period, joins) VALUES (?, 1) ON CONFLICT (period) DO UPDATE SET joins = joins + 1", period);
  }

  /** Counted joins not acknowledged by the ledger yet (a report in flight included). */
  pending(): boolean {
    return (
      this.sql.exec("SELECT 1 FROM quota_tally UNION ALL SELECT 1 FROM quota_report WHERE counts IS NOT NULL LIMIT 1").toArray().length > 0
    );
  }

  /**
   * Sends the report in flight, else one of every join counted so far, and forgets it once
   * `send` resolves. Throws what `send` throws (the report stays, for the next drain).
   */
  async report(send: (seq: number, counts: TalliedJoins[]) => Promise<void>): Promise<void> {
    const report = this.inFlight() ?? this.transaction(() => this.next());
    if (report === null) return;
    await send(report.seq, report.counts);
    this.sql.exec("UPDATE quota_report SET counts = NULL WHERE seq = ?", report.seq);
  }

  private inFlight(): { seq: number; counts: TalliedJoins[] } | null {
    const row = this.sql.exec<{ seq: number; counts: string | null }>("SELECT seq, counts FROM quota_report").one();
    if (row.counts === null) return null;
    const counts: TalliedJoins[] = JSON.parse(row.counts);
    return { seq: row.seq, counts };
  }

  /** Moves the counts into a new numbered report; joins counted after it wait for the next. */
  private next(): { seq: number; counts: TalliedJoins[] } | null {
    const counts = this.sql.exec<{ period: string; joins: number }>("SELECT period, joins FROM quota_tally ORDER BY period").toArray();
    if (counts.length === 0) return null;
    this.sql.exec("DELETE FROM quota_tally");
    const { seq } = this.sql
      .exec<{ seq: number }>("UPDATE quota_report SET seq = seq + 1, counts = ? RETURNING seq", JSON.stringify(counts))
      .one();
    return { seq, counts: counts.map(({ period, joins }) => ({ period, joins })) };
  }
}
