import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ARCHIVE_CANDIDATES_SQL, NEXT_DUE_SQL, ROOM_KEEP_MS } from "../../src/queue-room/archive";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk } from "../helpers/api";
import { room, settle } from "../helpers/catalog";
import { createApiKey, queueFixture, type Fixture, walkIn } from "../helpers/fixtures";
import { now } from "../../src/lib/clock";

// The room keeps only live and recent tickets: finished ones leave its SQLite once D1 holds
// them (docs/retention.md). Reads of an archived ticket fall back to D1.

const HOUR = 3_600_000;

async function roomTicketIds(queueId: string): Promise<string[]> {
  return runInDurableObject(room(queueId), (_o, state) =>
    state.storage.sql
      .exec<{ id: string }>("SELECT id FROM tickets ORDER BY number")
      .toArray()
      .map((r) => r.id),
  );
}

// Sessions idle out after 12 h and these tests move the clock by days: an API key does not.
const keys = new Map<string, string>();
function auth(f: Fixture): { apiKey: string } {
  return { apiKey: keys.get(f.queueId)! };
}
async function fixture(): Promise<Fixture> {
  const f = await queueFixture("pro");
  keys.set(f.queueId, (await createApiKey(f.owner, f.organizationId, ["admin"])).key);
  return f;
}

async function callServeComplete(f: Fixture): Promise<any> {
  const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, auth(f)));
  expectOk(await call("POST", `/v1/tickets/${t.id}/serve`, auth(f)));
  return expectOk(await call("POST", `/v1/tickets/${t.id}/complete`, auth(f)));
}

/**
 * Runs the archive step until nothing due is left that it may take. The room's own alarm may
 * run chunks at the same time (both are safe together: a row goes once), so the outcome is
 * read from the room's rows, not from the counts answered.
 */
async function archiveAll(queueId: string, at: number): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const r = await room(queueId).command({ verb: "archiveFinished", at });
    if (r.more) continue;
    const due = await runInDurableObject(
      room(queueId),
      (_o, state) => state.storage.sql.exec(ARCHIVE_CANDIDATES_SQL, at - ROOM_KEEP_MS, 1).toArray().length,
    );
    if (due === 0) return;
  }
  throw new Error("archive did not finish");
}

describe("room archive step", () => {
  it("archives finished tickets past the keep window once D1 holds them; live ones, recent ones and ones with an undrained event stay", async () => {
    testClock.set("2026-06-01T08:00:00.000Z");
    const f = await fixture();
    const served = await walkIn(auth(f), f.queueId);
    const cancelled = await walkIn(auth(f), f.queueId);
    const waiting = await walkIn(auth(f), f.queueId);
    await callServeComplete(f);
    expectOk(await call("POST", `/v1/tickets/${cancelled.id}/cancel`, auth(f)));
    await settle(f.queueId);

    // Within the keep window nothing goes.
    testClock.advance(ROOM_KEEP_MS - HOUR);
    await archiveAll(f.queueId, now());
    expect(await roomTicketIds(f.queueId)).toEqual([served.id, cancelled.id, waiting.id]);

    // Past it: an outbox row still naming the cancelled ticket keeps it (the drain reads it).
    testClock.advance(2 * HOUR);
    await runInDurableObject(room(f.queueId), (_o, state) =>
      state.storage.sql.exec("INSERT INTO outbox (ticket_id, message) VALUES (?, '{}')", cancelled.id),
    );
    await archiveAll(f.queueId, now());
    expect(await roomTicketIds(f.queueId)).toEqual([cancelled.id, waiting.id]);
    await runInDurableObject(room(f.queueId), (_o, state) => state.storage.sql.exec("DELETE FROM outbox"));

    // The alarm runs the step too.
    await runDurableObjectAlarm(room(f.queueId));
    expect(await roomTicketIds(f.queueId)).toEqual([waiting.id]);

    // An archived ticket is still readable (from D1), finished, with no position.
    const read = expectOk(await call("GET", `/v1/tickets/${served.id}`, auth(f)));
    expect(read).toMatchObject({ id: served.id, status: "served", position: null, displayCode: served.displayCode });
    expect(expectOk(await call("GET", `/v1/tickets/${cancelled.id}`, auth(f))).status).toBe("cancelled");
    // Commands on an archived ticket are refused as for any ticket the room does not hold.
    expectError(await call("POST", `/v1/tickets/${served.id}/cancel`, auth(f)), 404, "NOT_FOUND");
    // The line goes on.
    expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, auth(f))).id).toBe(waiting.id);
  });

  it("a finished ticket D1 lacks (or holds at an older version) is projected first, then archived", async () => {
    testClock.set("2026-06-02T08:00:00.000Z");
    const f = await fixture();
    const a = await walkIn(auth(f), f.queueId);
    const b = await walkIn(auth(f), f.queueId);
    await callServeComplete(f);
    await callServeComplete(f);
    await settle(f.queueId);
    // A lost projection and one stuck at an older version.
    await env.DB.prepare("DELETE FROM tickets WHERE id = ?").bind(a.id).run();
    await env.DB.prepare("UPDATE tickets SET status = 'waiting', version = 1 WHERE id = ?").bind(b.id).run();
    testClock.advance(ROOM_KEEP_MS + HOUR);
    await archiveAll(f.queueId, now());
    expect(await roomTicketIds(f.queueId)).toEqual([]);
    const rows = await env.DB.prepare("SELECT id, status FROM tickets WHERE queue_id = ? ORDER BY number").bind(f.queueId).all();
    expect(rows.results).toEqual([
      { id: a.id, status: "served" },
      { id: b.id, status: "served" },
    ]);
  });

  it("a skipped ticket stays recoverable within the keep window; the original of a live recovery stays", async () => {
    testClock.set("2026-06-03T08:00:00.000Z");
    const f = await fixture();
    const t = await walkIn(auth(f), f.queueId);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, auth(f)));
    expectOk(await call("POST", `/v1/tickets/${t.id}/skip-absent`, { ...auth(f), body: { reason: "absent" } }));
    await settle(f.queueId);
    testClock.advance(ROOM_KEEP_MS - HOUR);
    await archiveAll(f.queueId, now());
    const fresh = expectOk(await call("POST", `/v1/tickets/${t.id}/recover`, { ...auth(f), body: { recoveryOption: "rejoin" } }));
    await settle(f.queueId);
    testClock.advance(2 * HOUR);
    // The skipped original is due, but its successor is still waiting here: it stays, so a
    // second recovery is still refused as "already recovered".
    await archiveAll(f.queueId, now());
    expectError(
      await call("POST", `/v1/tickets/${t.id}/recover`, { ...auth(f), body: { recoveryOption: "rejoin" } }),
      409,
      "INVALID_STATE",
    );
    expect(await roomTicketIds(f.queueId)).toEqual([t.id, fresh.id]);
  });

  it(
    "a room with 100,000 served tickets in its history stays bounded after the archive step, and its hot queries use indexes",
    { timeout: 300_000 },
    async () => {
      testClock.set("2026-06-04T08:00:00.000Z");
      const f = await fixture();
      const HISTORY = 100_000;
      const body = f.queueId.slice(4);
      const old = now() - 30 * 24 * HOUR;

      /** `count` served tickets, numbered from `from`, into the room and (as the drain would have) into D1. */
      async function history(from: number, count: number): Promise<void> {
        const series = `WITH RECURSIVE n(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM n WHERE i < ${from + count - 1})`;
        await runInDurableObject(room(f.queueId), (_o, state) => {
          state.storage.transactionSync(() => {
            state.storage.sql.exec(
              `${series} INSERT INTO tickets (id, number, lane, order_key, status, user_id, party_size, is_priority, is_ghost_mode, source,
               visitor_name, phone, assigned_to_id, called_at, serving_at, served_at, created_at, updated_at, version)
             SELECT 'tkt_${body}h' || printf('%011d', i), i, 1, i, 'served', 'usr_history', 1, 0, 1, 'operator',
               'Visitor ' || i, '+33600000000', 'usr_operator', ? + i, ? + i, ? + i + 60000, ? + i, ? + i + 60000, i FROM n`,
              old,
              old,
              old,
              old,
              old,
            );
            state.storage.sql.exec("UPDATE room SET next_number = ?, version = ?", from + count, from + count);
          });
        });
        await env.DB.prepare(
          `${series} INSERT INTO tickets (id, queue_id, service_id, organization_id, user_id, number, display_code, status, party_size,
           is_priority, is_ghost_mode, source, visitor_name, created_at, updated_at, version)
         SELECT 'tkt_${body}h' || printf('%011d', i), ?, ?, ?, 'usr_history', i, 'A-' || i, 'served', 1, 0, 1, 'operator',
           'Visitor ' || i, ? + i, ? + i + 60000, i FROM n`,
        )
          .bind(f.queueId, f.serviceId, f.organizationId, old, old)
          .run();
      }

      const stats = () =>
        runInDurableObject(room(f.queueId), (_o, state) => ({
          rows: state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM tickets").one().n,
          size: state.storage.sql.databaseSize,
        }));

      await history(1, HISTORY);
      const before = await stats();
      expect(before.rows).toBe(HISTORY);
      // A change arms the room's alarm, which starts archiving on its own.
      const live = await walkIn(auth(f), f.queueId);

      // The hot queries read through indexes, whatever the history (the same SQL as store.ts,
      // remote.ts and archive.ts): their cost does not grow with it.
      const plans = await runInDurableObject(room(f.queueId), (_o, state) => {
        const plan = (q: string, ...args: (string | number | null)[]) =>
          state.storage.sql
            .exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${q}`, ...args)
            .toArray()
            .map((r) => r.detail)
            .join(" | ");
        return {
          firstCallable: plan(
            `SELECT * FROM tickets WHERE status = 'waiting' AND transferring_to IS NULL AND (source <> 'remote' OR present_at IS NOT NULL)
           ORDER BY lane, order_key LIMIT 1`,
          ),
          position: plan("SELECT COUNT(*) AS n FROM tickets WHERE status = 'waiting' AND (lane, order_key) < (?, ?)", 1, 5),
          capacity: plan("SELECT COALESCE(SUM(party_size), 0) AS used FROM tickets WHERE status IN ('waiting', 'called')"),
          serving: plan("SELECT * FROM tickets WHERE status = 'serving' AND assigned_to_id = ?", "usr_x"),
          liveOf: plan("SELECT * FROM tickets WHERE user_id = ? AND status IN ('waiting', 'called') ORDER BY number LIMIT 1", "usr_x"),
          firstCalled: plan("SELECT MIN(called_at) AS first FROM tickets INDEXED BY tickets_called_at WHERE status = 'called'"),
          candidates: plan(ARCHIVE_CANDIDATES_SQL, 0, 500),
          nextDue: plan(NEXT_DUE_SQL),
        };
      });
      for (const [name, detail] of Object.entries(plans)) {
        expect(detail, name).not.toMatch(/SCAN tickets(?! USING)|SCAN t(?! USING)|SCAN r(?! USING)|SCAN o(?! USING)/);
        expect(detail, name).toMatch(/USING (COVERING )?INDEX|USING INTEGER PRIMARY KEY/);
      }
      expect(plans.candidates).toMatch(/tickets_finished/);
      expect(plans.nextDue).toMatch(/tickets_finished/);
      expect(plans.candidates).toMatch(/outbox_ticket/);

      // The archive step, in chunks.
      await archiveAll(f.queueId, now());
      const after = await stats();
      expect(after.rows).toBe(1);
      // The file itself gives the space back (workerd's SQLite reclaims freed pages).
      expect(after.size).toBeLessThan(before.size / 10);

      // Another 100,000 of history, archived: the file reuses the freed pages instead of growing.
      await history(HISTORY + 2, HISTORY); // after the live ticket, number HISTORY + 1
      await archiveAll(f.queueId, now());
      const again = await stats();
      expect(again.rows).toBe(1);
      expect(again.size).toBeLessThan(before.size / 10);
      console.log(`room storage: ${before.size} bytes with 100,000 history rows; ${again.size} after archiving 200,000`);

      // Join and call-next still behave.
      const joined = await walkIn(auth(f), f.queueId);
      expect(joined.position).toBe(2);
      expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, auth(f))).id).toBe(live.id);
      expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, auth(f))).id).toBe(joined.id);
      await settle(f.queueId);
      // The archived history is still in D1.
      const d1 = await env.DB.prepare("SELECT COUNT(*) AS n FROM tickets WHERE queue_id = ?").bind(f.queueId).first<{ n: number }>();
      expect(d1!.n).toBe(2 * HISTORY + 2);
    },
  );
});
