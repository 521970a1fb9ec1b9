import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import { fanOutEvents } from "../../src/webhooks/webhooks";
import { recordEvents } from "../../src/webhooks/event-stream";
import { sweep } from "../helpers/cron";
import { createOrganization, registerUser } from "../helpers/fixtures";
import { depsOf } from "../../src/http/deps";

// The queries that run on every event or every minute read through an index, never a whole
// table. The statements are the ones the code runs (caught at D1's prepare while it runs,
// Drizzle's included), each planned by D1's own SQLite with EXPLAIN QUERY PLAN: an index
// dropped or a query rewritten past its index fails here rather than in production.

/** Every SQL text `run` prepares on D1, in order, each time it is prepared. */
async function preparedDuring(run: () => Promise<unknown>): Promise<string[]> {
  const prepared: string[] = [];
  const prepare = env.DB.prepare.bind(env.DB);
  const spy = vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
    prepared.push(query);
    return prepare(query);
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return prepared;
}

/** Every SQL text `run` prepares on D1, in order, without duplicates. */
async function statementsOf(run: () => Promise<unknown>): Promise<string[]> {
  return [...new Set(await preparedDuring(run))];
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
    // `SCAN CONSTANT ROW` is a VALUES list, and `SCAN json_each VIRTUAL TABLE` the rows of a JSON
    // parameter (the statement's own input): neither is a table.
    const unmeant = p.split(" | ").filter((step) => /^SCAN (?!CONSTANT ROW|json_each VIRTUAL TABLE)/.test(step) && !meant.includes(step));
    if (unmeant.length > 0) found.push({ sql: sql.replace(/\s+/g, " "), plan: p });
  }
  return found;
}

describe("hot queries use their indexes", () => {
  it("fanOutEvents: a batch reads its organizations' subscriptions once, and its deliveries back through webhook_deliveries_event_idx", async () => {
    const subscribed = await createOrganization(await registerUser());
    const unsubscribed = await createOrganization(await registerUser());
    await env.DB.prepare(
      "INSERT INTO webhooks (id, organization_id, url, events, enabled, secret, created_at, updated_at) VALUES (?, ?, 'https://hooks.example.com/in', '[\"*\"]', 1, 'whsec_AAAA', 0, 0)",
    )
      .bind(`whk_${crypto.randomUUID().replace(/-/g, "").slice(0, 20)}`, subscribed.id)
      .run();
    // The delivery messages stay here: this test is about the reads, not the sending.
    const queued = vi.spyOn(env.WEBHOOKS, "sendBatch").mockResolvedValue(undefined as never);
    const event = (organizationId: string): DomainEventMessage => ({
      id: `evt_${crypto.randomUUID().replace(/-/g, "")}`,
      type: "ticket.created",
      organizationId,
      queueId: null,
      ticketId: null,
      occurredAt: new Date().toISOString(),
      data: {},
    });
    // A batch as the EVENTS consumer gets it: joins of two organizations, interleaved.
    const events = [subscribed.id, unsubscribed.id, subscribed.id, unsubscribed.id, subscribed.id, unsubscribed.id].map(event);
    let queuedCount = 0;
    // The statements run in D1 batches (the subscriptions' read is prepared once per isolate, then bound).
    const batched: string[] = [];
    const batch = env.DB.batch.bind(env.DB);
    const batchSpy = vi.spyOn(env.DB, "batch").mockImplementation((statements: D1PreparedStatement[]) => {
      for (const st of statements) batched.push(String(Reflect.get(st, "statement")));
      return batch(statements);
    });
    let prepared: string[] = [];
    try {
      prepared = await preparedDuring(async () => {
        queuedCount = await fanOutEvents(depsOf(env), events, Date.now());
      });
    } finally {
      batchSpy.mockRestore();
    }
    expect(queuedCount).toBe(3);

    // One read of the subscriptions for the six events (it was one per event), built once.
    const subscriptions = /from "?webhooks"?\s+where/i;
    expect(
      batched.filter((s) => subscriptions.test(s)),
      batched.join("\n"),
    ).toHaveLength(1);
    // The subscribed organization's three events got a delivery each, queued in one send; the other's none.
    const stored = await env.DB.prepare("SELECT event_id, organization_id FROM webhook_deliveries WHERE event_id IN (?, ?, ?, ?, ?, ?)")
      .bind(...events.map((e) => e.id))
      .all<{ event_id: string; organization_id: string }>();
    expect(stored.results.map((r) => r.event_id).sort()).toEqual(
      events
        .filter((e) => e.organizationId === subscribed.id)
        .map((e) => e.id)
        .sort(),
    );
    expect(queued).toHaveBeenCalledTimes(1);
    expect(queued.mock.calls[0]![0]).toHaveLength(3);

    // Raw SQL or Drizzle's quoted lower-case form: `select "id" from "webhook_deliveries" where ("webhook_deliveries"."event_id" in (?, ?, ?)`.
    const readBack = prepared.find((s) =>
      /select "?id"? from "?webhook_deliveries"?\s+where \(?("?webhook_deliveries"?\.)?"?event_id"? in \(/i.test(s),
    );
    expect(readBack, prepared.join("\n")).toBeDefined();
    expect(await plan(readBack!)).toMatch(/SEARCH webhook_deliveries USING (COVERING )?INDEX webhook_deliveries_event_idx \(event_id=\?\)/);
    expect(await scans([...new Set(prepared)])).toEqual([]);

    // The queue delivers at least once: the same batch again adds no delivery and queues the three not yet attempted.
    expect(await fanOutEvents(depsOf(env), events, Date.now())).toBe(3);
    const again = await env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE organization_id = ?")
      .bind(subscribed.id)
      .first<{ n: number }>();
    expect(again?.n).toBe(3);
  });

  it("recordEvents: a batch of 30 events is one insert of the event stream (its rows as one JSON parameter), in the batch's order, and a replay adds none", async () => {
    const org = await createOrganization(await registerUser());
    const events: DomainEventMessage[] = Array.from({ length: 30 }, (_, i) => ({
      id: `evt_${crypto.randomUUID().replace(/-/g, "")}`,
      type: "ticket.created",
      organizationId: org.id,
      queueId: null,
      ticketId: null,
      occurredAt: new Date().toISOString(),
      data: { position: i + 1 },
    }));
    const batch = vi.spyOn(env.DB, "batch");
    let sizes: number[];
    try {
      await recordEvents(depsOf(env), events, Date.now());
      sizes = batch.mock.calls.map(([statements]) => statements.length);
    } finally {
      batch.mockRestore();
    }
    // One round trip: the insert of all 30 and the prune of the expired. The statement is built
    // once per isolate (db/prepared.ts): nothing is prepared for a later batch.
    expect(sizes).toEqual([2]);
    expect(await preparedDuring(() => recordEvents(depsOf(env), events.slice(0, 3), Date.now()))).toEqual([]);
    const stored = async () =>
      (
        await env.DB.prepare("SELECT id FROM organization_events WHERE organization_id = ? ORDER BY seq").bind(org.id).all<{ id: string }>()
      ).results.map((r) => r.id);
    expect(await stored()).toEqual(events.map((e) => e.id));
    await recordEvents(depsOf(env), events, Date.now());
    expect(await stored()).toEqual(events.map((e) => e.id));
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
