import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { call, expectError, expectOk } from "../helpers/api";
import { queueFixture } from "../helpers/catalog";

// The bench-only routes (npm run bench) must not exist unless the Worker runs with BENCH=1.
// The test Worker runs without it; the "with the flag" cases call the same app with it set.

async function withBench(method: string, path: string, body?: unknown) {
  const ctx = createExecutionContext();
  const res = await createApp().fetch(
    new Request(`https://api.test${path}`, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    { ...env, BENCH: "1" },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: (await res.json()) as any };
}

describe("/__bench/* without the BENCH flag", () => {
  it.each([
    ["GET", "/__bench/empty"],
    ["GET", "/__bench/queues/que_00000000000000000000/ping"],
    ["POST", "/__bench/queues/que_00000000000000000000/tickets"],
    ["POST", "/__bench/organizations/org_00000000000000000000/enterprise"],
    ["POST", "/__bench/locations"],
    ["GET", "/__bench/anything"],
  ])("%s %s answers 404 NOT_FOUND", async (method, path) => {
    const res = await call(method, path, method === "POST" ? { body: { count: 1, userId: "usr_x" } } : {});
    expectError(res, 404, "NOT_FOUND");
  });

  it("leaves the rate limits on", async () => {
    const res = await call("GET", "/v1/locations/nearby?lat=48.85&lon=2.35&radiusKm=1");
    expectOk(res);
    expect(res.headers.get("X-RateLimit-Limit")).toBe("6000"); // the public bucket (docs/limits.md)
  });
});

describe("/__bench/* with the BENCH flag", () => {
  it("answers the baselines", async () => {
    expect(await withBench("GET", "/__bench/empty")).toMatchObject({ status: 200, body: { success: true, data: null } });
    expect(await withBench("GET", "/__bench/queues/que_00000000000000000000/ping")).toMatchObject({ status: 200, body: { data: 1 } });
  });

  it("seeds waiting tickets through the room and refuses a bad count", async () => {
    const f = await queueFixture("pro");
    const seeded = await withBench("POST", `/__bench/queues/${f.queueId}/tickets`, { count: 120, userId: f.owner.id });
    expect(seeded).toMatchObject({ status: 200, body: { data: { seeded: 120, waitingCount: 120 } } });
    const queue = expectOk(await call("GET", `/v1/queues/${f.queueId}`, { token: f.owner.token }));
    expect(queue.waitingCount).toBe(120);

    for (const count of [0, 20_001, "5", 1.5]) {
      const bad = await withBench("POST", `/__bench/queues/${f.queueId}/tickets`, { count, userId: f.owner.id });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: { field: "count" } });
    }
    const unknown = await withBench("POST", `/__bench/queues/${f.queueId}/tickets`, { count: 1, userId: f.owner.id, extra: 1 });
    expect(unknown.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: { field: "extra" } });
  });

  it("puts an organization on the enterprise plan and seeds locations found by the nearby search", async () => {
    const f = await queueFixture("starter");
    expect(await withBench("POST", `/__bench/organizations/${f.organizationId}/enterprise`)).toMatchObject({ status: 200 });
    const plan = await env.DB.prepare("SELECT plan FROM subscriptions WHERE organization_id = ?").bind(f.organizationId).first<{ plan: string }>();
    expect(plan?.plan).toBe("enterprise");

    const at = { latitude: -33.87, longitude: 151.21 };
    const seeded = await withBench("POST", "/__bench/locations", { organizationId: f.organizationId, count: 6_000, spreadKm: 10, ...at });
    expect(seeded).toMatchObject({ status: 200, body: { data: { inserted: 6_000 } } });
    const near = expectOk(await call("GET", `/v1/locations/nearby?lat=${at.latitude}&lon=${at.longitude}&radiusKm=10&limit=100`));
    expect(near).toHaveLength(100);
    expect(near.every((l: any) => l.organization.id === f.organizationId && l.distanceKm <= 10)).toBe(true);

    const missing = await withBench("POST", "/__bench/locations", { organizationId: "org_nope", count: 1, spreadKm: 1, ...at });
    expect(missing.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: { field: "organizationId" } });
  });
});
