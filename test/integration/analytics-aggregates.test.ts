import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CHANNEL_COLUMNS } from "../../src/domain/analytics";
import { batchWrites } from "../../src/db/prepared";
import { analyticsDrainStatements } from "../../src/queue-room/projection";
import { rebuildAnalytics } from "../../src/analytics/analytics-aggregates";
import { configuredOf, readRoom, type Configured, type TicketRow } from "../../src/queue-room/store";
import { call, expectOk } from "../helpers/api";
import { room, settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { queueFixture, registerUser } from "../helpers/fixtures";
import { depsOf } from "../../src/http/deps";

// The aggregates kept by the outbox drain: the figures of a real ticket journey, nothing
// counted twice when a batch is replayed, and the drain's rows equal to a rebuild.

async function roomRows(queueId: string, ticketId: string): Promise<{ cfg: Configured; ticket: TicketRow }> {
  return runInDurableObject(room(queueId), (_object, state) => {
    const cfg = configuredOf(readRoom(state.storage.sql));
    if (cfg === null) throw new Error("room not configured");
    return { cfg, ticket: state.storage.sql.exec<TicketRow>("SELECT * FROM tickets WHERE id = ?", ticketId).one() };
  });
}

async function hourlyRows(queueId: string) {
  const rows = await env.DB.prepare("SELECT * FROM analytics_hourly WHERE queue_id = ? ORDER BY hour_start").bind(queueId).all<any>();
  return rows.results.map((r): any => ({
    ...Object.fromEntries(Object.entries(r).filter(([column]) => !CHANNEL_COLUMNS.includes(column))),
    wait_hist: nonZero(JSON.parse(r.wait_hist)),
    service_hist: nonZero(JSON.parse(r.service_hist)),
    estimate_error_hist: nonZero(JSON.parse(r.estimate_error_hist)),
    // The per-channel columns (migration 0015) that are not zero, as "<channel>_<metric>".
    channels: nonZero(Object.fromEntries(CHANNEL_COLUMNS.map((column) => [column, r[column]]))),
  }));
}

/** Histograms keep zero entries after a count moved out of a bucket; they mean nothing. */
function nonZero(map: Record<string, number>) {
  return Object.fromEntries(Object.entries(map).filter(([, n]) => n !== 0));
}

const HOUR = 3_600_000;
const MINUTE = 60_000;

describe("analytics aggregates kept by the outbox drain", () => {
  it("count a served ticket once, with its wait, service and first estimate, in its creation hour", async () => {
    const start = Date.UTC(2026, 2, 10, 9, 20);
    testClock.set(start);
    const f = await queueFixture("pro");
    const alice = await registerUser({ accountType: "customer" });
    const bob = await registerUser({ accountType: "customer" });
    const a = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: alice.token }), 201);
    const b = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: bob.token }), 201);
    await settle(f.queueId);
    testClock.set(start + 7 * MINUTE);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    expectOk(await call("POST", `/v1/tickets/${a.id}/serve`, { token: f.owner.token }));
    testClock.set(start + 10 * MINUTE);
    expectOk(await call("POST", `/v1/tickets/${a.id}/complete`, { token: f.owner.token }));
    expectOk(await call("POST", `/v1/tickets/${b.id}/cancel`, { token: bob.token }));
    await settle(f.queueId);

    const projected = await env.DB.prepare("SELECT first_estimate_minutes FROM tickets WHERE id = ?").bind(a.id).first<any>();
    expect(projected.first_estimate_minutes).toBe(a.estimatedWaitMinutes);
    const [row, ...rest] = await hourlyRows(f.queueId);
    expect(rest).toEqual([]);
    const promisedMs = a.estimatedWaitMinutes * MINUTE;
    expect(row).toMatchObject({
      hour_start: Date.UTC(2026, 2, 10, 9),
      created: 2,
      served: 1,
      cancelled: 1,
      no_show: 0,
      transferred: 0,
      waited: 1,
      wait_ms: 7 * MINUTE,
      serviced: 1,
      service_ms: 3 * MINUTE,
      estimated: 1,
      estimate_error_ms: Math.abs(7 * MINUTE - promisedMs),
      estimate_bias_ms: 7 * MINUTE - promisedMs,
    });
    // 7 min is bucket 28 (15 s buckets under 10 min); 3 min is bucket 12.
    expect(row.wait_hist).toEqual({ "28": 1 });
    expect(row.service_hist).toEqual({ "12": 1 });
    expect(row.channels).toEqual({ app_c: 2, app_s: 1, app_x: 1, app_w: 1, app_wm: 7 * MINUTE });

    // A rebuild from the projection gives the same row.
    const before = await hourlyRows(f.queueId);
    await rebuildAnalytics(depsOf(env), f.organizationId, [f.queueId]);
    expect(await hourlyRows(f.queueId)).toEqual(before);
  });

  it("a replayed drain batch, or an older ticket state arriving late, counts nothing twice", async () => {
    const start = Date.UTC(2026, 4, 2, 14, 5);
    testClock.set(start);
    const f = await queueFixture("pro");
    const alice = await registerUser({ accountType: "customer" });
    const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: alice.token }), 201);
    await settle(f.queueId);
    const waiting = await roomRows(f.queueId, t.id);
    testClock.set(start + 4 * MINUTE);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    await settle(f.queueId);
    const called = await roomRows(f.queueId, t.id);
    const settled = await hourlyRows(f.queueId);
    expect(settled[0]).toMatchObject({ created: 1, waited: 1, wait_ms: 4 * MINUTE });

    // The same batch again (at-least-once delivery), twice, then the older state.
    for (let i = 0; i < 2; i++) await batchWrites(env.DB, analyticsDrainStatements(called.cfg, [called.ticket]));
    await batchWrites(env.DB, analyticsDrainStatements(waiting.cfg, [waiting.ticket]));
    expect(await hourlyRows(f.queueId)).toEqual(settled);

    // A newer state still moves the figures, exactly once: the wait stays, the ticket is served.
    testClock.set(start + 5 * MINUTE);
    expectOk(await call("POST", `/v1/tickets/${t.id}/serve`, { token: f.owner.token }));
    testClock.set(start + 6 * MINUTE);
    expectOk(await call("POST", `/v1/tickets/${t.id}/complete`, { token: f.owner.token }));
    await settle(f.queueId);
    const done = await roomRows(f.queueId, t.id);
    await batchWrites(env.DB, analyticsDrainStatements(done.cfg, [done.ticket]));
    const [row] = await hourlyRows(f.queueId);
    expect(row).toMatchObject({ created: 1, served: 1, waited: 1, wait_ms: 4 * MINUTE, serviced: 1, service_ms: MINUTE });
    expect(row.wait_hist).toEqual({ "16": 1 });
    expect(row.service_hist).toEqual({ "4": 1 });
    expect(row.hour_start).toBe(Date.UTC(2026, 4, 2, 14));
    expect(start - row.hour_start).toBeLessThan(HOUR);
  });

  it("one drain of many tickets, over two hours and several channels, some in the same buckets, counts what a rebuild counts", async () => {
    const start = Date.UTC(2026, 5, 3, 9, 50);
    testClock.set(start);
    const f = await queueFixture("pro");
    const op = { token: f.owner.token };
    const customers = await Promise.all(Array.from({ length: 3 }, () => registerUser({ accountType: "customer" })));
    // Hour 9: three app joins, two walk-ins and a VIP; hour 10: two more walk-ins.
    for (const c of customers) expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: c.token }), 201);
    for (let i = 0; i < 2; i++) expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { ...op, body: {} }), 201);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { ...op, body: {} }), 201);
    testClock.set(start + 12 * MINUTE);
    for (let i = 0; i < 2; i++) expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { ...op, body: {} }), 201);
    await settle(f.queueId);
    // Then, all in one drain: four calls a minute apart (two waits share a bucket with the same
    // wait), two served, one skipped, one cancelled.
    const called: string[] = [];
    for (let i = 0; i < 4; i++) {
      testClock.set(start + (14 + (i < 2 ? 0 : i)) * MINUTE);
      called.push(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, op)).id);
    }
    testClock.set(start + 20 * MINUTE);
    for (const id of called.slice(0, 2)) {
      expectOk(await call("POST", `/v1/tickets/${id}/serve`, op));
      expectOk(await call("POST", `/v1/tickets/${id}/complete`, op));
    }
    expectOk(await call("POST", `/v1/tickets/${called[2]}/skip-absent`, op));
    expectOk(await call("POST", `/v1/tickets/${called[3]}/cancel`, op));
    await settle(f.queueId);

    const drained = await hourlyRows(f.queueId);
    expect(drained.map((r) => r.created)).toEqual([6, 2]);
    expect(Object.values(drained[0].wait_hist as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(4);
    await rebuildAnalytics(depsOf(env), f.organizationId, [f.queueId]);
    expect(await hourlyRows(f.queueId)).toEqual(drained);
  });
});
