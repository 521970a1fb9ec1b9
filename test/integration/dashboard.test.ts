import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk } from "../helpers/api";
import { createOrganization, createQueue, registerUser } from "../helpers/fixtures";

const NOW = "2026-03-02T15:00:00.000Z";

let n = 0;
async function insertTicket(queueId: string, serviceId: string, organizationId: string, status: string, createdAt: string) {
  n += 1;
  const at = Date.parse(createdAt);
  await env.DB.prepare(
    `INSERT INTO tickets (id, queue_id, service_id, organization_id, user_id, number, display_code, status, party_size, is_priority, is_ghost_mode, source, created_at, updated_at, version)
     VALUES (?, ?, ?, ?, 'usr_x', ?, ?, ?, 1, 0, 0, 'app', ?, ?, 1)`,
  )
    .bind(`tkt_${queueId.slice(4)}${String(n).padStart(12, "0")}`, queueId, serviceId, organizationId, n, `A-${n}`, status, at, at)
    .run();
}

describe("GET /v1/business/dashboard", () => {
  it("counts locations, services and queues by status, and today's tickets", async () => {
    testClock.set(NOW);
    const user = await registerUser();
    const org = await createOrganization(user);
    await env.DB.prepare("UPDATE subscriptions SET plan = 'pro' WHERE organization_id = ?").bind(org.id).run();
    const locIds: string[] = [];
    for (const name of ["A", "B"]) {
      const loc = expectOk(
        await call("POST", "/v1/locations", {
          token: user.token,
          body: { organizationId: org.id, name, address: "x", latitude: 1, longitude: 1 },
        }),
        201,
      );
      locIds.push(loc.id);
    }
    const svc = (name: string) =>
      call("POST", "/v1/services", { token: user.token, body: { name, locationIds: locIds, serviceTypeId: "st_bank_teller" } }).then((r) =>
        expectOk(r, 201),
      );
    const s1 = await svc("One");
    const s2 = await svc("Two");
    await svc("Three");
    const q1 = await createQueue(user, org.id, s1.id);
    await createQueue(user, org.id, s1.id, { state: "paused" });
    await createQueue(user, org.id, s2.id, { state: "closed" });
    await createQueue(user, org.id, s2.id, { state: "archived" });
    expectOk(await call("PATCH", `/v1/services/${s2.id}`, { token: user.token, body: { status: "inactive" } }));
    await insertTicket(q1, s1.id, org.id, "waiting", "2026-03-02T09:00:00.000Z");
    await insertTicket(q1, s1.id, org.id, "waiting", "2026-03-02T10:00:00.000Z");
    await insertTicket(q1, s1.id, org.id, "served", "2026-03-02T00:00:00.000Z");
    await insertTicket(q1, s1.id, org.id, "served", "2026-03-01T23:59:59.999Z");
    // Today's served ticket: called 12 minutes after joining, served for 4 minutes.
    const joined = Date.parse("2026-03-02T00:00:00.000Z");
    await env.DB.prepare("UPDATE tickets SET called_at = ?, serving_at = ?, served_at = ? WHERE display_code = ? AND queue_id = ?")
      .bind(joined + 12 * 60_000, joined + 13 * 60_000, joined + 17 * 60_000, `A-${n - 1}`, q1)
      .run();

    const other = await registerUser();
    await createOrganization(other);

    const data = expectOk(await call("GET", "/v1/business/dashboard", { token: user.token }));
    expect(data).toEqual({
      organizationId: org.id,
      generatedAt: NOW,
      locations: { total: 2 },
      services: { total: 3, byStatus: { active: 2, inactive: 1, pending: 0, rejected: 0 } },
      queues: { total: 3, byStatus: { active: 1, paused: 1, closed: 1 } },
      tickets: {
        today: { total: 3, byStatus: { waiting: 2, called: 0, serving: 0, served: 1, skipped: 0, expired: 0, cancelled: 0, held: 0 } },
        averageWaitMinutes: 12,
        averageServiceMinutes: 4,
      },
    });
  });

  it("needs ANALYTICS_VIEW and the organization context", async () => {
    const user = await registerUser();
    const org = await createOrganization(user);
    const operator = await registerUser();
    await env.DB.prepare("INSERT INTO members (organization_id, user_id, role, created_at, updated_at) VALUES (?, ?, 'operator', 0, 0)")
      .bind(org.id, operator.id)
      .run();
    expectError(await call("GET", "/v1/business/dashboard", { token: operator.token }), 403, "AUTHORIZATION_ERROR");
    const empty = expectOk(await call("GET", "/v1/business/dashboard", { token: user.token }));
    expect(empty.locations.total).toBe(0);
    expect(empty.services.byStatus.active).toBe(0);
    expectError(await call("GET", "/v1/business/dashboard"), 401, "AUTHENTICATION_ERROR");
    expectError(
      await call("GET", "/v1/business/dashboard", { token: user.token, headers: { "X-Organization-Id": "not-an-id" } }),
      400,
      "VALIDATION_ERROR",
      "X-Organization-Id",
    );
    const stranger = await registerUser();
    await createOrganization(stranger);
    expectError(
      await call("GET", "/v1/business/dashboard", { token: stranger.token, headers: { "X-Organization-Id": org.id } }),
      404,
      "NOT_FOUND",
    );
  });
});

describe("OpenAPI", () => {
  it("documents the catalog routes", async () => {
    const res = await call("GET", "/v1/openapi.json");
    expect(res.status).toBe(200);
    for (const path of [
      "/v1/locations",
      "/v1/business/locations",
      "/v1/locations/search",
      "/v1/locations/nearby",
      "/v1/locations/{locationId}",
      "/v1/services",
      "/v1/services/types",
      "/v1/business/services",
      "/v1/services/{serviceId}",
      "/v1/services/organization/search",
      "/v1/business/dashboard",
    ]) {
      expect(res.body.paths, path).toHaveProperty([path]);
    }
    const nearby = res.body.paths["/v1/locations/nearby"].get;
    expect(
      nearby.parameters
        .filter((p: any) => p.in === "query")
        .map((p: any) => p.name)
        .sort(),
    ).toEqual(["lat", "limit", "lon", "radiusKm"]);
  });
});
