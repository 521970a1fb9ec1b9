import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { call, expectOk } from "../helpers/api";
import { room, settle } from "../helpers/catalog";
import { captureEvents } from "../helpers/events";
import { queueFixture, registerUser } from "../helpers/fixtures";
import { testClock } from "../helpers/clock";
import { CALL_HISTORY, CALL_TRIM_EVERY } from "../../src/queue-room/store";
import { FINISHED_STATUSES } from "../../src/queue-room/archive";

// Issue 43: what a join and a call-next ask of the room's SQLite. Each statement costs the room
// its own overhead (0.1-0.2 ms under wrangler dev), so the room keeps its row and the rules'
// copy between reads (store.ts, rules.ts), and walks the front of the line for remote joins only
// while one waits to reach it (remote.ts markFront).

/** Every SQL text the queue's room runs while `run` runs, in order. */
async function roomStatements(queueId: string, run: () => Promise<unknown>): Promise<string[]> {
  const ran: string[] = [];
  const restore = await runInDurableObject(room(queueId), (_object, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    const spy = vi.spyOn(sql, "exec").mockImplementation((query: string, ...bindings: unknown[]) => {
      ran.push(query.replace(/\s+/g, " ").trim());
      return exec(query, ...bindings);
    });
    return () => spy.mockRestore();
  });
  try {
    await run();
  } finally {
    await runInDurableObject(room(queueId), () => restore());
  }
  return ran;
}

/** SQLite's plan of each query in the queue's room, its details joined; every `?` bound to 0. */
async function plansOf(queueId: string, queries: readonly string[]): Promise<string[]> {
  return runInDurableObject(room(queueId), (_object, state) =>
    queries.map((query) =>
      state.storage.sql
        .exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${query}`, ...Array.from(query.matchAll(/\?/g), () => 0))
        .toArray()
        .map((r) => r.detail)
        .join(" | "),
    ),
  );
}

const ROOM_ROW = "SELECT * FROM room WHERE id = 1";
const RULES_ROW = /FROM room_rules$/;
const BLOCKS = /FROM room_blocks/;
const APPOINTMENT_WAITING = "SELECT 1 FROM tickets WHERE status = 'waiting' AND kind = 'appointment' LIMIT 1";
const WATCHERS = /FROM (ticket|widget)_watchers/;
const REMOTE_JOINS = /remote_joins/;
const OUTBOX_COUNT = "SELECT COUNT(*) AS n FROM outbox";
const CALLS = "SELECT at, operator_id FROM calls ORDER BY seq";
const FRONT_WALK = /^SELECT id, source, present_at, transferring_to FROM tickets WHERE status = 'waiting'/;

describe("the room's statements", () => {
  it("a join reads the room row and the rules at most once, and does not walk the front without a remote join", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
    await settle(f.queueId);
    const other = await registerUser({ accountType: "customer" });
    const ran = await roomStatements(f.queueId, async () => {
      const joined = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: other.token }), 201);
      expect(joined.position).toBe(2);
    });
    expect(ran.filter((q) => q === ROOM_ROW).length).toBeLessThanOrEqual(1);
    expect(ran.filter((q) => RULES_ROW.test(q) || BLOCKS.test(q))).toEqual([]);
    expect(ran.filter((q) => q === APPOINTMENT_WAITING)).toEqual([]);
    expect(ran.filter((q) => FRONT_WALK.test(q))).toEqual([]);
    // No remote join was ever started here: the journeys' table is not asked (remote.ts).
    expect(ran.filter((q) => REMOTE_JOINS.test(q))).toEqual([]);
    // A new ticket is at the back of its lane: its position comes from the counters, nobody behind is counted.
    expect(ran.filter((q) => /order_key [<>] \?/.test(q))).toEqual([]);
    // Nobody follows a ticket or relays the queue, the join's event is the outbox's news, and
    // no call was made since the last read of the pace.
    expect(ran.filter((q) => WATCHERS.test(q) || q === OUTBOX_COUNT || q === CALLS)).toEqual([]);
  });

  it("a join writes its ticket once, whole: the first estimate and the 'told' flag are in the row it inserts, and reach D1", async () => {
    const f = await queueFixture("pro");
    const joinAs = async () => {
      const customer = await registerUser({ accountType: "customer" });
      let joined: { id: string; position: number; estimatedWaitMinutes: number | null } | undefined;
      const ran = await roomStatements(f.queueId, async () => {
        joined = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
      });
      return { joined: joined!, ran };
    };
    // The first in line is near the front from the start ("told" at once); the sixth is not.
    const near = await joinAs();
    for (let i = 0; i < 4; i++) expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    const far = await joinAs();
    expect([near.joined.position, far.joined.position]).toEqual([1, 6]);
    for (const { ran } of [near, far]) {
      expect(ran.filter((q) => /^INSERT INTO tickets /.test(q))).toHaveLength(1);
      expect(ran.filter((q) => /^INSERT INTO tickets .*RETURNING/.test(q))).toEqual([]);
      expect(ran.filter((q) => /^UPDATE tickets /.test(q))).toEqual([]);
    }
    const stored = await runInDurableObject(room(f.queueId), (_object, state) =>
      [near, far].map(({ joined }) =>
        state.storage.sql
          .exec<{ first_estimate_minutes: number | null; almost_called_sent: number }>(
            "SELECT first_estimate_minutes, almost_called_sent FROM tickets WHERE id = ?",
            joined.id,
          )
          .one(),
      ),
    );
    expect(far.joined.estimatedWaitMinutes).toBeGreaterThan(0);
    expect(stored).toEqual([
      { first_estimate_minutes: near.joined.estimatedWaitMinutes, almost_called_sent: 1 },
      { first_estimate_minutes: far.joined.estimatedWaitMinutes, almost_called_sent: 0 },
    ]);
    await settle(f.queueId);
    const projected = await env.DB.prepare("SELECT id, first_estimate_minutes FROM tickets WHERE id IN (?, ?) ORDER BY number")
      .bind(near.joined.id, far.joined.id)
      .all<{ id: string; first_estimate_minutes: number | null }>();
    expect(projected.results).toEqual([
      { id: near.joined.id, first_estimate_minutes: near.joined.estimatedWaitMinutes },
      { id: far.joined.id, first_estimate_minutes: far.joined.estimatedWaitMinutes },
    ]);
  });

  it("a call-next reads the room row at most once; the line still moves in order", async () => {
    const f = await queueFixture("pro");
    const ids: string[] = [];
    // Six: the second call brings the sixth within 3 of the front.
    for (let i = 0; i < 6; i++)
      ids.push(expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201).id);
    expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })).id).toBe(ids[0]);
    const ran = await roomStatements(f.queueId, async () => {
      expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })).id).toBe(ids[1]);
    });
    expect(ran.filter((q) => q === ROOM_ROW).length).toBeLessThanOrEqual(1);
    expect(ran.filter((q) => BLOCKS.test(q))).toEqual([]);
    expect(ran.filter((q) => q === APPOINTMENT_WAITING)).toEqual([]);
    expect(ran.filter((q) => FRONT_WALK.test(q))).toEqual([]);
    expect(ran.filter((q) => WATCHERS.test(q) || q === OUTBOX_COUNT)).toEqual([]);
    expect(ran.filter((q) => REMOTE_JOINS.test(q))).toEqual([]);
    expect(ran.filter((q) => /^DELETE FROM calls/.test(q))).toEqual([]);
    // The call's two events (called, almost your turn) are written together.
    expect(ran.filter((q) => /^INSERT INTO outbox/.test(q))).toEqual(["INSERT INTO outbox (ticket_id, message) VALUES (?, ?), (?, ?)"]);
    // The call changed the pace, and the room's copy moved with it: no read.
    expect(ran.filter((q) => q === CALLS)).toEqual([]);
    // Whole rows (some sixty columns) are read for the ticket to call and the caller's tickets
    // being served (none here): the called ticket's event and answer are the row as written, the
    // caller's previous call is read by its few columns, and the one now third behind it ("almost
    // your turn") is marked and read for its event in one statement.
    expect(ran.filter((q) => /^SELECT \* FROM tickets/.test(q))).toHaveLength(2);
    expect(ran.filter((q) => /^UPDATE tickets SET almost_called_sent = 1 WHERE id = \? RETURNING/.test(q))).toHaveLength(1);
  });

  it("a change's events are written together, past what one statement binds, and delivered in their order", async () => {
    const f = await queueFixture("pro");
    const ids: string[] = [];
    for (let i = 0; i < 55; i++)
      ids.push(expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201).id);
    await settle(f.queueId);
    const { sent, restore } = captureEvents();
    try {
      const ran = await roomStatements(f.queueId, async () => {
        expectOk(await call("POST", `/v1/queues/${f.queueId}/clear`, { token: f.owner.token }));
      });
      // 55 cancellations: two statements (a statement binds at most 100 values, 50 events).
      expect(ran.filter((q) => /^INSERT INTO outbox/.test(q))).toHaveLength(2);
      await settle(f.queueId);
    } finally {
      restore();
    }
    const cancelled = sent.filter((e) => e.ticketId !== null).map((e) => e.ticketId);
    expect(cancelled).toEqual(ids);
    expect(new Set(sent.map((e) => e.id)).size).toBe(sent.length);
  });

  it("a drain reads its tickets in one statement, whatever their number", async () => {
    const f = await queueFixture("pro");
    await settle(f.queueId);
    for (let i = 0; i < 4; i++) expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    const ran = await roomStatements(f.queueId, () => settle(f.queueId));
    expect(ran.filter((q) => /FROM tickets WHERE id/.test(q))).toEqual([
      "SELECT * FROM tickets WHERE id IN (SELECT value FROM json_each(?))",
    ]);
  });

  it("the widget's status counts the line from its counters, reads neither the room row nor the pace again, and nothing while the line is unchanged", async () => {
    const f = await queueFixture("pro");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201).id);
    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    expect(called.id).toBe(ids[0]);
    const statusOf = async () => expectOk(await call("GET", `/v1/widget/queue/${f.queueId}/status`));
    const first = await statusOf();
    expect(first).toMatchObject({ waitingCount: 2, nowServing: [called.displayCode] });
    // Nothing changed since: the status the room answered last, without a statement.
    const ran = await roomStatements(f.queueId, async () => expect(await statusOf()).toEqual(first));
    expect(ran).toEqual([]);
    // A change moves the counters the next status reads, and no more than that.
    const changed = await roomStatements(f.queueId, async () => {
      expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
      expect(await statusOf()).toMatchObject({ waitingCount: 1, nowServing: [expect.any(String), called.displayCode] });
    });
    expect(changed.filter((q) => q === ROOM_ROW || q === CALLS || /COUNT\(\*\)/.test(q))).toEqual([]);
  });

  it("the pace the room keeps after its calls is the pace its table gives: the last calls, in order, past the history's length", async () => {
    const start = Date.UTC(2026, 6, 1, 9);
    testClock.set(start);
    const f = await queueFixture("pro");
    for (let i = 0; i < 12; i++) expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    const statusOf = async () => expectOk(await call("GET", `/v1/widget/queue/${f.queueId}/status`));
    // Calls at an uneven pace, the status read between them (the room keeps its copy of the pace).
    for (let i = 0; i < 6; i++) {
      testClock.set(start + (i * 40 + (i % 3) * 15) * 1000);
      expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
      await statusOf();
    }
    const kept = await statusOf();
    expect(kept.waitingCount).toBe(6);
    expect(kept.estimatedWaitMinutes).toBeGreaterThan(0);
    // The same room with its kept copies dropped: everything read again from its tables.
    type Store = { forget(): void; recordCall(at: number, operatorId: string): void; calls(): readonly unknown[] };
    const storeOf = (object: unknown) => Reflect.get(object as object, "store") as Store;
    await runInDurableObject(room(f.queueId), (object) => storeOf(object).forget());
    expect(await statusOf()).toEqual(kept);
    // Past the history's length the copy keeps the last calls, as the table does.
    const [copy, table, rows] = await runInDurableObject(room(f.queueId), (object, state) => {
      const store = storeOf(object);
      store.calls();
      for (let i = 0; i < CALL_HISTORY + 2 * CALL_TRIM_EVERY + 5; i++) store.recordCall(start + i, `op_${i}`);
      const copy = store.calls();
      store.forget();
      return [copy, store.calls(), state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM calls").one().n];
    });
    expect(copy).toHaveLength(CALL_HISTORY);
    expect(copy).toEqual(table);
    expect((copy as { operatorId: string }[]).at(-1)).toMatchObject({ operatorId: `op_${CALL_HISTORY + 2 * CALL_TRIM_EVERY + 4}` });
    // The table is trimmed once every CALL_TRIM_EVERY calls, not on each.
    expect(rows).toBeGreaterThanOrEqual(CALL_HISTORY);
    expect(rows).toBeLessThan(CALL_HISTORY + CALL_TRIM_EVERY);
  });

  it("a new copy of the rules and a new setting are obeyed by the very next join: closed, then open, then full", async () => {
    const f = await queueFixture("pro");
    const customer = () => registerUser({ accountType: "customer" });
    expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: (await customer()).token }), 201);
    expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { status: "inactive" } }));
    const closed = await call("POST", `/v1/queues/${f.queueId}/join`, { token: (await customer()).token });
    expect(closed.body.error?.code).toBe("QUEUE_CLOSED");
    expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { status: "active" } }));
    expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: (await customer()).token }), 201);
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: { maxCapacity: 2 } }));
    const full = await call("POST", `/v1/queues/${f.queueId}/join`, { token: (await customer()).token });
    expect(full.body.error?.code).toBe("QUEUE_FULL");
  });
});

describe("the caller's latest open call", () => {
  it("is read through its own index, in the order wanted: no scan of the called tickets, no sort", async () => {
    const f = await queueFixture("pro");
    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    const [plan] = await plansOf(f.queueId, [
      "SELECT * FROM tickets WHERE status = 'called' AND assigned_to_id = ? AND transferring_to IS NULL ORDER BY called_at DESC, lane, order_key LIMIT 1",
    ]);
    expect(plan).toContain("USING INDEX tickets_called_by");
    expect(plan).not.toContain("TEMP B-TREE");
  });
});

describe("the hand-offs under way", () => {
  it("are found through an index of the tickets being moved: the room's statements about them scan nothing else", async () => {
    const f = await queueFixture("pro");
    for (let i = 0; i < 3; i++) expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    await settle(f.queueId);
    // A change and its drain ask for the next hand-off deadline (the room's alarm).
    const ran = await roomStatements(f.queueId, async () => {
      expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
      await settle(f.queueId);
    });
    const moving = [...new Set(ran.filter((q) => q.includes("transferring_to IS NOT NULL")))];
    expect(moving.length).toBeGreaterThan(0);
    const plans = await plansOf(f.queueId, moving);
    // The whole of the partial index at most: only the tickets being moved are in it.
    for (const plan of plans) expect(plan).toMatch(/^(SCAN|SEARCH) tickets USING INDEX tickets_transferring/);
  });
});

describe("the waiting appointments", () => {
  it("are found through an index of appointments alone (a walk-in's writes do not maintain it)", async () => {
    const f = await queueFixture("pro");
    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    const plans = await plansOf(f.queueId, [
      APPOINTMENT_WAITING,
      "SELECT appointment_at - ? AS at FROM tickets WHERE status = 'waiting' AND kind = 'appointment' AND appointment_late = 0 AND lane <> 0 AND appointment_at IS NOT NULL",
    ]);
    const indexes = await runInDurableObject(room(f.queueId), (_object, state) =>
      state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tickets'")
        .toArray()
        .map((r) => r.name),
    );
    expect(plans[0]).toContain("USING COVERING INDEX tickets_appointments");
    expect(plans[1]).toContain("USING INDEX tickets_appointments");
    expect(indexes).not.toContain("tickets_status_kind");
  });
});

describe("the first open call", () => {
  it("is found through an index of called tickets by time: a drain's deadline does not read every called ticket", async () => {
    const f = await queueFixture("pro");
    for (let i = 0; i < 3; i++) expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    const ran = await roomStatements(f.queueId, async () => {
      for (let i = 0; i < 2; i++) expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
      await settle(f.queueId);
    });
    const first = [...new Set(ran.filter((q) => q.includes("MIN(called_at)")))];
    expect(first).toHaveLength(1);
    const [plan] = await plansOf(f.queueId, first);
    // One probe of an index that holds the called tickets alone, in the order of their calls.
    expect(plan).toMatch(/^SEARCH tickets USING (COVERING )?INDEX tickets_called_at$/);
  });
});

describe("the finished tickets", () => {
  it("are the only ones indexed by their last change: a live ticket's writes, which all change it, maintain no such index", async () => {
    const f = await queueFixture("pro");
    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    const indexes = await runInDurableObject(room(f.queueId), (_object, state) =>
      state.storage.sql
        .exec<{ name: string; sql: string }>(
          "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tickets' AND sql LIKE '%updated_at%'",
        )
        .toArray(),
    );
    expect(indexes.map((i) => i.name)).toEqual(["tickets_finished"]);
    expect(indexes[0]!.sql).toContain(`WHERE status IN (${FINISHED_STATUSES.map((s) => `'${s}'`).join(", ")})`);
  });
});
