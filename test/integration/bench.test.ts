import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import benchWorker, { type BenchEnv } from "../bench/worker";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, createOrganization, queueFixture, registerUser } from "../helpers/fixtures";

// npm run bench runs its own entry (test/bench/worker.ts, test/bench/wrangler.toml). The
// Worker that deploys (the one under test here, wrangler.toml) has no /__bench/* routes and
// no way to turn its rate limits off; the bench entry is called directly with this test's
// bindings, plus a stand-in for its empty Durable Object.

let emptyCalls = 0;
const benchEnv: BenchEnv = {
  ...(env as Env),
  EMPTY_ROOM: {
    idFromName: (name: string) => name,
    get: () => ({ ping: async () => (emptyCalls++, 1) }),
  } as unknown as BenchEnv["EMPTY_ROOM"],
};

async function bench(method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}) {
  const ctx = createExecutionContext();
  const res = await benchWorker.fetch(
    new Request(`https://api.test${path}`, {
      method,
      headers: { ...(init.body === undefined ? {} : { "Content-Type": "application/json" }), ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    }),
    benchEnv,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

describe("the deployable Worker", () => {
  it.each([
    ["GET", "/__bench/empty"],
    ["GET", "/__bench/queues/que_00000000000000000000/ping"],
    ["POST", "/__bench/queues/que_00000000000000000000/tickets"],
    ["POST", "/__bench/organizations/org_00000000000000000000/plan"],
    ["POST", "/__bench/locations"],
    ["POST", "/__bench/analytics/history"],
    ["POST", "/__bench/analytics/rebuild/que_00000000000000000000"],
    ["GET", "/__bench/anything"],
  ])("%s %s answers 404 NOT_FOUND", async (method, path) => {
    const res = await call(method, path, method === "POST" ? { body: { count: 1, userId: "usr_x" } } : {});
    expectError(res, 404, "NOT_FOUND");
  });

  it("counts every request against its limit", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const { key } = await createApiKey(owner, org.id);
    const first = await call("GET", "/v1/locations/nearby?lat=48.85&lon=2.35&radiusKm=1");
    expect(first.headers.get("X-RateLimit-Limit")).toBe("6000"); // the public bucket (docs/limits.md)
    const a = await call("GET", "/v1/business/queues", { apiKey: key });
    const b = await call("GET", "/v1/business/queues", { apiKey: key });
    expect(Number(b.headers.get("X-RateLimit-Remaining"))).toBe(Number(a.headers.get("X-RateLimit-Remaining")) - 1);
  });
});

describe("the bench's Worker (test/bench/worker.ts)", () => {
  it("answers the baselines", async () => {
    expect(await bench("GET", "/__bench/empty")).toMatchObject({ status: 200, body: { success: true, data: null } });
    const before = emptyCalls;
    expect(await bench("GET", "/__bench/queues/que_00000000000000000000/ping")).toMatchObject({ status: 200, body: { data: 1 } });
    expect(emptyCalls).toBe(before + 1);
  });

  it("serves the API without counting requests against any limit", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const { key } = await createApiKey(owner, org.id);
    for (let i = 0; i < 3; i++) {
      const res = await bench("GET", "/v1/business/queues", { headers: { "X-API-Key": key } });
      expect(res.status).toBe(200);
      // Every request sees the whole minute's allowance: nothing was counted.
      expect(res.headers.get("X-RateLimit-Remaining")).toBe(res.headers.get("X-RateLimit-Limit"));
    }
  });

  it("seeds waiting tickets through the room and refuses a bad count", async () => {
    const f = await queueFixture("pro");
    const seeded = await bench("POST", `/__bench/queues/${f.queueId}/tickets`, { body: { count: 120, userId: f.owner.id } });
    expect(seeded).toMatchObject({ status: 200, body: { data: { seeded: 120, waitingCount: 120 } } });
    const queue = expectOk(await call("GET", `/v1/queues/${f.queueId}`, { token: f.owner.token }));
    expect(queue.waitingCount).toBe(120);

    for (const count of [0, 20_001, "5", 1.5]) {
      const bad = await bench("POST", `/__bench/queues/${f.queueId}/tickets`, { body: { count, userId: f.owner.id } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: { field: "count" } });
    }
    const unknown = await bench("POST", `/__bench/queues/${f.queueId}/tickets`, { body: { count: 1, userId: f.owner.id, extra: 1 } });
    expect(unknown.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: { field: "extra" } });
  });

  it("puts an organization on the enterprise plan and seeds locations found by the nearby search", async () => {
    const f = await queueFixture("starter");
    expect(await bench("POST", `/__bench/organizations/${f.organizationId}/plan`, { body: { plan: "enterprise" } })).toMatchObject({
      status: 200,
    });
    const refused = await bench("POST", `/__bench/organizations/${f.organizationId}/plan`, { body: { plan: "free" } });
    expect(refused.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: { field: "plan" } });
    const plan = await env.DB.prepare("SELECT plan FROM subscriptions WHERE organization_id = ?")
      .bind(f.organizationId)
      .first<{ plan: string }>();
    expect(plan?.plan).toBe("enterprise");

    const at = { latitude: -33.87, longitude: 151.21 };
    const seeded = await bench("POST", "/__bench/locations", {
      body: { organizationId: f.organizationId, count: 6_000, spreadKm: 10, ...at },
    });
    expect(seeded).toMatchObject({ status: 200, body: { data: { inserted: 6_000 } } });
    const near = expectOk(await call("GET", `/v1/locations/nearby?lat=${at.latitude}&lon=${at.longitude}&radiusKm=10&limit=100`));
    expect(near).toHaveLength(100);
    expect(near.every((l: any) => l.organization.id === f.organizationId && l.distanceKm <= 10)).toBe(true);

    const missing = await bench("POST", "/__bench/locations", { body: { organizationId: "org_nope", count: 1, spreadKm: 1, ...at } });
    expect(missing.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: { field: "organizationId" } });
  });

  it("seeds a served history into the projection and rebuilds its aggregates for the summary", async () => {
    const f = await queueFixture("pro");
    const start = Date.UTC(2025, 0, 1);
    for (const from of [0, 1_500]) {
      const seeded = await bench("POST", "/__bench/analytics/history", {
        body: { queueId: f.queueId, from, count: 1_500, perDay: 100, start },
      });
      expect(seeded).toMatchObject({ status: 200, body: { data: { inserted: 1_500 } } });
    }
    // 100 a day from 08:00 to 20:00 UTC: 30 days of 12 hours each.
    expect(await bench("POST", `/__bench/analytics/rebuild/${f.queueId}`)).toMatchObject({
      status: 200,
      body: { data: { tickets: 3_000, hours: 360 } },
    });
    const summary = expectOk(
      await call("GET", `/v1/analytics/summary?from=2025-01-01&to=2025-12-31&queueId=${f.queueId}`, { token: f.owner.token }),
    );
    expect(summary.totals).toMatchObject({ created: 3_000, served: 2_100, noShow: 600, cancelled: 300 });
    expect(summary.buckets).toHaveLength(30);
  });
});
