import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import { fanOutEvent } from "../../src/webhooks/webhooks";
import { sweep } from "../helpers/cron";
import { createOrganization, registerUser } from "../helpers/fixtures";
import { depsOf } from "../../src/http/deps";

// The queries that run on every event or every minute read through an index, never a whole
// table. The statements are the ones the code runs (caught at D1's prepare while it runs,
// Drizzle's included), each planned by D1's own SQLite with EXPLAIN QUERY PLAN: an index
// dropped or a query rewritten past its index fails here rather than in production.

/** Every SQL text `run` prepares on D1, in order, without duplicates. */
async function statementsOf(run: () => Promise<unknown>): Promise<string[]> {
  const seen = new Set<string>();
  const prepare = env.DB.prepare.bind(env.DB);
  const spy = vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
    seen.add(query);
    return prepare(query);
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return [...seen];
}

/** How many parameters a statement takes (`?` or numbered `?N`, outside string literals). */
function parameterCount(sql: string): number {
  const code = sql.replace(/'(?:[^']|'')*'/g, "''");
  const numbered = [...code.matchAll(/\?(\d+)/g)].map((m) => Number(m[1]));
  return numbered.length > 0 ? Math.max(...numbered) : (code.match(/\?/g) ?? []).length;
}

async function plan(sql: string): Promise<string> {
  const binds = Array.from({ length: parameterCount(sql) }, () => 0);
  const rows = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...binds)
    .all<{ detail: string }>();
  return rows.results.map((r) => r.detail).join(" | ");
}

/**
 * Whole-table reads that are meant: the personal-data sweep walks organizations (one row each,
 * for its retention setting) and reads each one's due rows through a partial index; the
 * backfill's next organization is an ordered read that stops at its LIMIT 1.
 */
const MEANT_SCANS: { statement: RegExp; scan: string }[] = [
  { statement: /FROM "?organizations"? "?o"? CROSS JOIN/i, scan: "SCAN o" },
  {
    // Raw SQL or Drizzle's quoted lower-case form (the limit bound).
    statement: /from "?analytics_backfill"? order by ("?analytics_backfill"?\.)?"?organization_id"? limit (1|\?)$/i,
    scan: "SCAN analytics_backfill USING INDEX sqlite_autoindex_analytics_backfill_1",
  },
  // A partial index holding only the entries not sealed into their chain yet: few, by design.
  {
    statement: /FROM "?audit_events"? INDEXED BY "?audit_events_unsealed_idx"? WHERE ("?audit_events"?\.)?"?seq"? IS NULL LIMIT (100|\?)$/i,
    scan: "SCAN audit_events USING INDEX audit_events_unsealed_idx",
  },
];

/** The statements whose plan reads a whole table it should not, with their plans (empty when all is well). */
async function scans(statements: string[]): Promise<{ sql: string; plan: string }[]> {
  const found: { sql: string; plan: string }[] = [];
  for (const sql of statements) {
    const p = await plan(sql);
    const meant = MEANT_SCANS.filter((m) => m.statement.test(sql.trim())).map((m) => m.scan);
    // `SCAN CONSTANT ROW` is a VALUES list, not a table.
    const unmeant = p.split(" | ").filter((step) => /^SCAN (?!CONSTANT ROW)/.test(step) && !meant.includes(step));
    if (unmeant.length > 0) found.push({ sql: sql.replace(/\s+/g, " "), plan: p });
  }
  return found;
}

describe("hot queries use their indexes", () => {
  it("fanOutEvent: one event's deliveries are read back through webhook_deliveries_event_idx, not every delivery", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    await env.DB.prepare(
      "INSERT INTO webhooks (id, organization_id, url, events, enabled, secret, created_at, updated_at) VALUES (?, ?, 'https://hooks.example.com/in', '[\"*\"]', 1, 'whsec_AAAA', 0, 0)",
    )
      .bind(`whk_${crypto.randomUUID().replace(/-/g, "").slice(0, 20)}`, org.id)
      .run();
    // The delivery messages stay here: this test is about the reads, not the sending.
    const queued = vi.spyOn(env.WEBHOOKS, "sendBatch").mockResolvedValue(undefined as never);
    const event: DomainEventMessage = {
      id: `evt_${crypto.randomUUID().replace(/-/g, "")}`,
      type: "ticket.created",
      organizationId: org.id,
      queueId: null,
      ticketId: null,
      occurredAt: new Date().toISOString(),
      data: {},
    };
    const statements = await statementsOf(() => fanOutEvent(depsOf(env), event, Date.now()));
    expect(queued).toHaveBeenCalledTimes(1);

    // Raw SQL or Drizzle's quoted lower-case form: `select "id" from "webhook_deliveries" where ("webhook_deliveries"."event_id" = ?`.
    const readBack = statements.find((s) =>
      /select "?id"? from "?webhook_deliveries"?\s+where \(?("?webhook_deliveries"?\.)?"?event_id"? = \?/i.test(s),
    );
    expect(readBack, statements.join("\n")).toBeDefined();
    expect(await plan(readBack!)).toMatch(/SEARCH webhook_deliveries USING (COVERING )?INDEX webhook_deliveries_event_idx \(event_id=\?\)/);
    expect(await scans(statements)).toEqual([]);
  });

  it("the minute sweep: every statement it runs on D1 reads through an index", async () => {
    // On a ten-minute mark, so the twins' leftover pass (every 10 minutes) runs too: at any other
    // minute it stayed out, and the test passed or failed by the clock.
    const statements = await statementsOf(() => sweep(Date.now() - (Date.now() % 600_000)));
    // Each sweep's first read ran (no-shows, idempotency keys, remote-join expiries,
    // subscriptions, domains, appointment reminders, personal data, analytics backfill).
    for (const table of [
      "room_deadlines",
      "idempotency_keys",
      "remote_join_expiries",
      "subscriptions",
      "verified_domains",
      "calendar_events",
      "analytics_backfill",
    ]) {
      expect(
        statements.some((s) => s.includes(table)),
        `${table}: ${statements.join("\n")}`,
      ).toBe(true);
    }
    expect(await plan(statements.find((s) => /from "?remote_join_expiries"?/i.test(s))!)).toMatch(
      /USING (COVERING )?INDEX remote_join_expiries_expired_idx \(expired_at<\?\)/,
    );
    expect(await plan(statements.find((s) => /from "?calendar_events"?/i.test(s))!)).toMatch(
      /USING INDEX calendar_events_type_start_idx \(event_type=\? AND start_at<\?\)/,
    );
    // The twins' leftover pass: one range of twin ids per table with an organization_id.
    expect(statements.some((s) => /^delete from "tickets" where \("tickets"\."organization_id" >= \?/.test(s))).toBe(true);
    expect(await scans(statements)).toEqual([]);
  });
});
