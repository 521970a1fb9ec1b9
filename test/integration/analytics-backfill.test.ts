import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BACKFILL_PAGE } from "../../src/jobs/analytics-backfill";
import { rebuildAnalytics } from "../../src/analytics/analytics-aggregates";
import { call, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { addQueue, queueFixture, registerUser } from "../helpers/fixtures";
import { sweep } from "../helpers/cron";
import { depsOf } from "../../src/http/deps";

// Tickets that existed before the aggregates (migration 0008) are counted by the minute sweep
// for every organization migration 0015 listed: a bounded page per run, through the drain's
// own version-guarded statements, so tickets the drain already counted are not counted again
// and the result equals a rebuild from the projection.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Old tickets written straight into the projection, as they were before the aggregates existed. */
async function insertOldTickets(organizationId: string, serviceId: string, queueIds: string[], n: number, start: number) {
  const rows = Array.from({ length: n }, (_, i) => {
    const created = start + i * 7 * MINUTE;
    const status = ["served", "served", "expired", "cancelled", "waiting"][i % 5]!;
    const called = status === "waiting" || status === "cancelled" ? null : created + ((i * 37) % 50) * MINUTE;
    return [
      `tkt_old_${organizationId.slice(4, 12)}_${String(i).padStart(5, "0")}`,
      queueIds[i % queueIds.length],
      status,
      ["app", "widget", "qr", "operator"][i % 4],
      called,
      status === "served" ? called! + MINUTE : null,
      status === "served" ? called! + (((i * 13) % 20) + 2) * MINUTE : null,
      i % 3 === 0 ? null : (i * 7) % 40,
      created,
    ];
  });
  await env.DB.prepare(
    `INSERT INTO tickets (id, queue_id, service_id, organization_id, user_id, number, display_code, status, party_size, is_priority,
       is_ghost_mode, source, called_at, serving_at, served_at, first_estimate_minutes, created_at, updated_at, version)
     SELECT j.value->>0, j.value->>1, ?1, ?2, 'usr_visitor', j.key + 1, 'A-001', j.value->>2, 1, 0, 0, j.value->>3,
       j.value->>4, j.value->>5, j.value->>6, j.value->>7, j.value->>8, j.value->>8, 2
     FROM json_each(?3) AS j`,
  )
    .bind(serviceId, organizationId, JSON.stringify(rows))
    .run();
}

async function summary(f: { owner: { token: string }; organizationId: string }) {
  return expectOk(
    await call("GET", "/v1/analytics/summary?from=2025-01-01&to=2025-12-31&groupBy=day", {
      token: f.owner.token,
      headers: { "X-Organization-Id": f.organizationId },
    }),
  );
}

describe("analytics backfill of tickets older than the aggregates", () => {
  it("counts a listed organization's old tickets a page per minute, each once, ending equal to a rebuild", async () => {
    const start = Date.UTC(2025, 5, 2, 8);
    testClock.set(start);
    const f = await queueFixture("pro");
    const second = await addQueue(f);
    // One ticket of the same period made through the API: the drain counts it as it changes.
    const visitor = await registerUser({ accountType: "customer" });
    expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: visitor.token }), 201);
    await settle(f.queueId);
    const old = 2 * BACKFILL_PAGE + 40;
    await insertOldTickets(f.organizationId, f.serviceId, [f.queueId, second], old, start + HOUR);
    expect((await summary(f)).totals.created).toBe(1);

    // What migration 0015 does for every organization that already has tickets.
    await env.DB.prepare("INSERT INTO analytics_backfill (organization_id) VALUES (?)").bind(f.organizationId).run();
    await sweep(start + 2 * HOUR);
    // The join's ticket is the oldest: the first page holds it and 249 old ones, and it is not counted again.
    expect((await summary(f)).totals.created).toBe(BACKFILL_PAGE);
    const cursor = await env.DB.prepare("SELECT tickets FROM analytics_backfill WHERE organization_id = ?").bind(f.organizationId).first();
    expect(cursor).toEqual({ tickets: BACKFILL_PAGE });

    await sweep(start + 2 * HOUR + MINUTE);
    await sweep(start + 2 * HOUR + 2 * MINUTE);
    const done = await summary(f);
    expect(done.totals.created).toBe(1 + old);
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM analytics_backfill WHERE organization_id = ?").bind(f.organizationId).first(),
    ).toEqual({ n: 0 });

    // Another run, or a page replayed after the cursor moved, changes nothing.
    await sweep(start + 2 * HOUR + 3 * MINUTE);
    await env.DB.prepare("INSERT INTO analytics_backfill (organization_id) VALUES (?)").bind(f.organizationId).run();
    for (let i = 0; i < 3; i++) await sweep(start + 3 * HOUR + i * MINUTE);
    expect(await summary(f)).toEqual(done);

    // Equal to a rebuild from the projection, figure for figure.
    await rebuildAnalytics(depsOf(env), f.organizationId);
    expect(await summary(f)).toEqual(done);
    expect(done.totals.served).toBeGreaterThan(0);
    expect(done.totals.waitMinutes.count).toBeGreaterThan(0);
  });

  it("an organization that is not listed is left alone", async () => {
    const start = Date.UTC(2025, 7, 4, 9);
    testClock.set(start);
    const f = await queueFixture("pro");
    await insertOldTickets(f.organizationId, f.serviceId, [f.queueId], 30, start);
    await sweep(start + HOUR);
    expect((await summary(f)).totals.created).toBe(0);
  });
});
