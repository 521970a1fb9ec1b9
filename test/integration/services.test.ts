import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk } from "../helpers/api";
import { addMember, createOrganization, createQueue, registerUser, type TestUser } from "../helpers/fixtures";

const PARIS = { latitude: 48.8566, longitude: 2.3522 };

async function setup(opts: { plan?: "starter" | "pro"; type?: string } = {}) {
  const user = await registerUser();
  const org = await createOrganization(user, { type: opts.type ?? "banking" });
  if (opts.plan === "pro") await env.DB.prepare("UPDATE subscriptions SET plan = 'pro' WHERE organization_id = ?").bind(org.id).run();
  const loc = expectOk(
    await call("POST", "/v1/locations", { token: user.token, body: { organizationId: org.id, name: "HQ", address: "1 rue", ...PARIS } }),
    201,
  );
  return { user, org, loc };
}

async function addLocation(user: TestUser, organizationId: string, name = "Branch") {
  return expectOk(
    await call("POST", "/v1/locations", { token: user.token, body: { organizationId, name, address: "2 rue", ...PARIS } }),
    201,
  );
}

async function addService(user: TestUser, locationIds: string[], extra: Record<string, unknown> = {}) {
  return expectOk(
    await call("POST", "/v1/services", {
      token: user.token,
      body: { name: "Teller", locationIds, serviceTypeId: "st_bank_teller", ...extra },
    }),
    201,
  );
}

let ticketNumber = 0;
async function insertTicket(t: {
  queueId: string;
  serviceId: string;
  organizationId: string;
  status: string;
  servedAt?: number;
  createdAt?: number;
}) {
  ticketNumber += 1;
  const at = t.createdAt ?? Date.parse("2026-03-02T09:00:00.000Z");
  await env.DB.prepare(
    `INSERT INTO tickets (id, queue_id, service_id, organization_id, user_id, number, display_code, status, party_size, is_priority, is_ghost_mode, source, served_at, created_at, updated_at, version)
     VALUES (?, ?, ?, ?, 'usr_x', ?, ?, ?, 1, 0, 0, 'app', ?, ?, ?, 1)`,
  )
    .bind(
      `tkt_${t.queueId.slice(4)}${String(ticketNumber).padStart(12, "0")}`,
      t.queueId,
      t.serviceId,
      t.organizationId,
      ticketNumber,
      `A-${ticketNumber}`,
      t.status,
      t.servedAt ?? null,
      at,
      at,
    )
    .run();
}

describe("GET /v1/services/types", () => {
  it("lists an organization type's types plus the other ones, with names in fr and en", async () => {
    const types = expectOk(await call("GET", "/v1/services/types?organizationType=banking"));
    const ids = types.map((t: any) => t.id);
    expect(ids).toContain("st_bank_teller");
    expect(ids).toContain("st_other_reception");
    expect(ids).not.toContain("st_health_lab");
    expect(types.find((t: any) => t.id === "st_bank_teller")).toEqual({
      id: "st_bank_teller",
      name: { fr: "Guichet", en: "Teller" },
      organizationType: "banking",
    });
    const all = expectOk(await call("GET", "/v1/services/types"));
    expect(all.length).toBeGreaterThan(types.length);
  });

  it("refuses an unknown organization type", async () => {
    expectError(await call("GET", "/v1/services/types?organizationType=bakery"), 400, "VALIDATION_ERROR", "organizationType");
  });
});

describe("POST /v1/services", () => {
  it("creates an active service linked to its locations", async () => {
    const { user, org, loc } = await setup({ plan: "pro" });
    const second = await addLocation(user, org.id);
    const svc = await addService(user, [loc.id, second.id, loc.id], { description: "Cash", isVirtual: true, maxRemoteJoinRadiusKm: 2.5 });
    expect(svc).toMatchObject({
      organizationId: org.id,
      name: "Teller",
      description: "Cash",
      serviceTypeId: "st_bank_teller",
      isVirtual: true,
      maxRemoteJoinRadiusKm: 2.5,
      status: "active",
      queues: [],
      statistics: { queueCount: 0, waitingCount: 0, servedToday: 0 },
    });
    expect(svc.id).toMatch(/^svc_[0-9a-z]{20}$/);
    expect(svc.locationIds.sort()).toEqual([loc.id, second.id].sort());
  });

  it("accepts an `other` type for any organization and refuses a type of another organization type", async () => {
    const { user, loc } = await setup({ type: "healthcare" });
    expectError(
      await call("POST", "/v1/services", {
        token: user.token,
        body: { name: "x", locationIds: [loc.id], serviceTypeId: "st_bank_teller" },
      }),
      400,
      "VALIDATION_ERROR",
      "serviceTypeId",
    );
    expectError(
      await call("POST", "/v1/services", { token: user.token, body: { name: "x", locationIds: [loc.id], serviceTypeId: "st_nope" } }),
      400,
      "VALIDATION_ERROR",
      "serviceTypeId",
    );
    expect((await addService(user, [loc.id], { serviceTypeId: "st_other_reception" })).serviceTypeId).toBe("st_other_reception");
  });

  it("allows one service on starter: the second is 402 PLAN_REQUIRED, and leaves nothing behind", async () => {
    const { user, org, loc } = await setup();
    await addService(user, [loc.id]);
    const res = await call("POST", "/v1/services", {
      token: user.token,
      body: { name: "Second", locationIds: [loc.id], serviceTypeId: "st_bank_teller" },
    });
    expectError(res, 402, "PLAN_REQUIRED");
    expect(res.body.error.details).toMatchObject({ requiredPlan: "pro", currentPlan: "starter" });
    const links = await env.DB.prepare("SELECT count(*) AS n FROM service_locations WHERE location_id = ?")
      .bind(loc.id)
      .first<{ n: number }>();
    expect(links?.n).toBe(1);
    const racing = await Promise.all(
      [1, 2, 3].map(() =>
        call("POST", "/v1/services", { token: user.token, body: { name: "Race", locationIds: [loc.id], serviceTypeId: "st_bank_teller" } }),
      ),
    );
    expect(racing.every((r) => r.status === 402)).toBe(true);
    await env.DB.prepare("UPDATE subscriptions SET plan = 'pro' WHERE organization_id = ?").bind(org.id).run();
    await addService(user, [loc.id], { name: "Now allowed" });
  });

  it("counts exactly under concurrency on starter", async () => {
    const { user, loc } = await setup();
    const results = await Promise.all(
      [1, 2, 3, 4].map((i) =>
        call("POST", "/v1/services", {
          token: user.token,
          body: { name: `S${i}`, locationIds: [loc.id], serviceTypeId: "st_bank_teller" },
        }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 402)).toHaveLength(3);
  });

  it.each([
    ["a missing name", { name: undefined }, "name"],
    ["no locations", { locationIds: [] }, "locationIds"],
    ["a wrong type", { isVirtual: "yes" }, "isVirtual"],
    ["a radius out of range", { maxRemoteJoinRadiusKm: 101 }, "maxRemoteJoinRadiusKm"],
    ["a zero radius", { maxRemoteJoinRadiusKm: 0 }, "maxRemoteJoinRadiusKm"],
    ["an unknown field", { organizationId: "org_x" }, "organizationId"],
    ["a status at creation", { status: "inactive" }, "status"],
  ])("refuses %s", async (_label, patch, field) => {
    const { user, loc } = await setup();
    const body = { name: "Teller", locationIds: [loc.id], serviceTypeId: "st_bank_teller", ...patch };
    expectError(await call("POST", "/v1/services", { token: user.token, body }), 400, "VALIDATION_ERROR", field);
  });

  it("is 404 for unknown locations and other organizations' locations, 403 for an operator", async () => {
    const { user, org, loc } = await setup({ plan: "pro" });
    const other = await setup();
    const body = (locationIds: string[]) => ({ name: "x", locationIds, serviceTypeId: "st_bank_teller" });
    expectError(await call("POST", "/v1/services", { token: user.token, body: body([other.loc.id]) }), 404, "NOT_FOUND");
    const mixed = await call("POST", "/v1/services", { token: user.token, body: body([loc.id, other.loc.id]) });
    expectError(mixed, 404, "NOT_FOUND", "locationIds");
    expectError(
      await call("POST", "/v1/services", { token: user.token, body: body(["loc_00000000000000000000"]) }),
      404,
      "NOT_FOUND",
      "locationIds",
    );
    const operator = await addMember(user, org.id, "operator");
    expectError(await call("POST", "/v1/services", { token: operator.token, body: body([loc.id]) }), 403, "AUTHORIZATION_ERROR");
  });
});

describe("GET /v1/business/services", () => {
  it("lists services with locations, live queues and statistics", async () => {
    testClock.set("2026-03-02T15:00:00.000Z");
    const { user, org, loc } = await setup({ plan: "pro" });
    const svc = await addService(user, [loc.id]);
    const empty = await addService(user, [loc.id], { name: "Empty" });
    const qa = await createQueue(user, org.id, svc.id, { name: "Queue A" });
    const qb = await createQueue(user, org.id, svc.id, { name: "Queue B", state: "paused" });
    await createQueue(user, org.id, svc.id, { name: "Queue C", state: "archived" });
    const base = { serviceId: svc.id, organizationId: org.id };
    await insertTicket({ ...base, queueId: qa, status: "waiting" });
    await insertTicket({ ...base, queueId: qa, status: "waiting" });
    await insertTicket({ ...base, queueId: qb, status: "waiting" });
    await insertTicket({ ...base, queueId: qa, status: "called" });
    await insertTicket({ ...base, queueId: qa, status: "served", servedAt: Date.parse("2026-03-02T10:00:00.000Z") });
    await insertTicket({ ...base, queueId: qb, status: "served", servedAt: Date.parse("2026-03-01T23:59:59.000Z") });

    const res = await call("GET", "/v1/business/services", { token: user.token });
    const list = expectOk(res);
    expect(res.body.meta).toMatchObject({ total: 2, page: 1, limit: 10, hasMore: false });
    // Both were created at the same pinned instant: the order between them is by id.
    expect(list.find((s: any) => s.id === svc.id)).toMatchObject({
      locationIds: [loc.id],
      queues: [
        { id: qa, name: "Queue A", letter: "A", status: "active" },
        { id: qb, name: "Queue B", letter: "B", status: "paused" },
      ],
      statistics: { queueCount: 2, waitingCount: 3, servedToday: 1 },
    });
    expect(list.find((s: any) => s.id === empty.id)).toMatchObject({
      queues: [],
      statistics: { queueCount: 0, waitingCount: 0, servedToday: 0 },
    });
  });

  it("filters by ids and pages", async () => {
    const { user, loc } = await setup({ plan: "pro" });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      testClock.set(Date.parse("2026-03-02T10:00:00.000Z") + i * 1000);
      ids.push((await addService(user, [loc.id], { name: `S${i}` })).id);
    }
    const filtered = await call("GET", `/v1/business/services?ids=${ids[1]},${ids[3]}, ,svc_00000000000000000000`, { token: user.token });
    expect(expectOk(filtered).map((s: any) => s.id)).toEqual([ids[1], ids[3]]);
    expect(filtered.body.meta.total).toBe(2);
    const page2 = await call("GET", "/v1/business/services?limit=3&page=2", { token: user.token });
    expect(expectOk(page2).map((s: any) => s.name)).toEqual(["S3"]);
    expect(page2.body.meta).toMatchObject({ total: 4, page: 2, limit: 3, hasMore: false });
    const offset = await call("GET", "/v1/business/services?limit=2&offset=1", { token: user.token });
    expect(expectOk(offset).map((s: any) => s.name)).toEqual(["S1", "S2"]);
    expect(offset.body.meta.hasMore).toBe(true);
    expect(expectOk(await call("GET", "/v1/business/services?limit=100", { token: user.token }))).toHaveLength(4);
    expectError(await call("GET", "/v1/business/services?limit=101", { token: user.token }), 400, "VALIDATION_ERROR", "limit");
    expectError(await call("GET", "/v1/business/services?offset=-1", { token: user.token }), 400, "VALIDATION_ERROR", "offset");
    const hundred = [ids[0], ...Array.from({ length: 99 }, (_, i) => `svc_${i}`)].join(",");
    expect(
      expectOk(await call("GET", `/v1/business/services?ids=${hundred}&limit=100`, { token: user.token })).map((s: any) => s.id),
    ).toEqual([ids[0]]);
    const tooMany = Array.from({ length: 101 }, (_, i) => `svc_${i}`).join(",");
    expectError(await call("GET", `/v1/business/services?ids=${tooMany}`, { token: user.token }), 400, "VALIDATION_ERROR", "ids");
  });

  it("never shows another organization's services", async () => {
    const a = await setup();
    const b = await setup();
    const foreign = await addService(b.user, [b.loc.id]);
    const res = await call("GET", `/v1/business/services?ids=${foreign.id}`, { token: a.user.token });
    expect(expectOk(res)).toEqual([]);
  });
});

describe("GET/PATCH/DELETE /v1/services/{id}", () => {
  it("reads, updates and replaces the location links", async () => {
    const { user, org, loc } = await setup();
    const other = await addLocation(user, org.id);
    const svc = await addService(user, [loc.id], { description: "d", maxRemoteJoinRadiusKm: 3 });
    expect(expectOk(await call("GET", `/v1/services/${svc.id}`, { token: user.token })).locationIds).toEqual([loc.id]);
    testClock.set(Date.now() + 60_000);
    const updated = expectOk(
      await call("PATCH", `/v1/services/${svc.id}`, {
        token: user.token,
        body: {
          name: "Renamed",
          status: "inactive",
          locationIds: [other.id],
          description: null,
          maxRemoteJoinRadiusKm: null,
          serviceTypeId: "st_other_general",
        },
      }),
    );
    expect(updated).toMatchObject({
      name: "Renamed",
      status: "inactive",
      locationIds: [other.id],
      description: null,
      maxRemoteJoinRadiusKm: null,
      serviceTypeId: "st_other_general",
    });
    expect(updated.updatedAt > svc.updatedAt).toBe(true);
    const again = expectOk(await call("GET", `/v1/services/${svc.id}`, { token: user.token }));
    expect(again).toEqual(updated);
    const operator = await addMember(user, org.id, "operator");
    expect(expectOk(await call("GET", `/v1/services/${svc.id}`, { token: operator.token })).id).toBe(svc.id);
    expectError(await call("PATCH", `/v1/services/${svc.id}`, { token: operator.token, body: { name: "x" } }), 403, "AUTHORIZATION_ERROR");
  });

  it.each([
    ["a bad status", { status: "archived" }, "status"],
    ["empty locations", { locationIds: [] }, "locationIds"],
    ["a wrong type", { name: 1 }, "name"],
    ["an unknown field", { organizationId: "org_x" }, "organizationId"],
    ["a radius out of range", { maxRemoteJoinRadiusKm: -1 }, "maxRemoteJoinRadiusKm"],
  ])("PATCH refuses %s", async (_label, body, field) => {
    const { user, loc } = await setup();
    const svc = await addService(user, [loc.id]);
    expectError(await call("PATCH", `/v1/services/${svc.id}`, { token: user.token, body }), 400, "VALIDATION_ERROR", field);
  });

  it("PATCH refuses locations and types that do not belong", async () => {
    const { user, loc } = await setup();
    const other = await setup();
    const svc = await addService(user, [loc.id]);
    expectError(
      await call("PATCH", `/v1/services/${svc.id}`, { token: user.token, body: { locationIds: [other.loc.id] } }),
      404,
      "NOT_FOUND",
      "locationIds",
    );
    expectError(
      await call("PATCH", `/v1/services/${svc.id}`, { token: user.token, body: { serviceTypeId: "st_health_lab" } }),
      400,
      "VALIDATION_ERROR",
      "serviceTypeId",
    );
    expect(expectOk(await call("GET", `/v1/services/${svc.id}`, { token: user.token })).locationIds).toEqual([loc.id]);
  });

  it("is 404 for another organization's service and unknown ids", async () => {
    const a = await setup();
    const b = await setup();
    const foreign = await addService(b.user, [b.loc.id]);
    expectError(await call("GET", `/v1/services/${foreign.id}`, { token: a.user.token }), 404, "NOT_FOUND");
    expectError(await call("PATCH", `/v1/services/${foreign.id}`, { token: a.user.token, body: { name: "x" } }), 404, "NOT_FOUND");
    expectError(await call("DELETE", `/v1/services/${foreign.id}`, { token: a.user.token }), 404, "NOT_FOUND");
    expectError(await call("GET", "/v1/services/svc_00000000000000000000", { token: a.user.token }), 404, "NOT_FOUND");
  });

  it("DELETE removes the service and its queues, and nothing else", async () => {
    const { user, org, loc } = await setup({ plan: "pro" });
    const doomed = await addService(user, [loc.id]);
    const kept = await addService(user, [loc.id], { name: "Kept" });
    const q1 = await createQueue(user, org.id, doomed.id);
    const q2 = await createQueue(user, org.id, doomed.id);
    const q3 = await createQueue(user, org.id, kept.id);
    const res = expectOk(await call("DELETE", `/v1/services/${doomed.id}`, { token: user.token }));
    expect(res).toMatchObject({ id: doomed.id, deleted: true });
    expect(res.deletedQueueIds.sort()).toEqual([q1, q2].sort());
    const left = await env.DB.prepare("SELECT id FROM queues WHERE organization_id = ?").bind(org.id).all<{ id: string }>();
    expect(left.results.map((r) => r.id)).toEqual([q3]);
    expectError(await call("GET", `/v1/services/${doomed.id}`, { token: user.token }), 404, "NOT_FOUND");
    expect(expectOk(await call("GET", `/v1/services/${kept.id}`, { token: user.token })).queues.map((q: any) => q.id)).toEqual([q3]);
    expect(expectOk(await call("GET", "/v1/business/locations", { token: user.token }))).toHaveLength(1);
  });
});

describe("GET /v1/services/organization/search", () => {
  it("finds active services by name by default, every status with activeOnly=false, for operators too", async () => {
    const { user, org, loc } = await setup({ plan: "pro" });
    testClock.set("2026-03-02T10:00:00.000Z");
    await addService(user, [loc.id], { name: "Cash desk" });
    testClock.advance(1000);
    const paused = await addService(user, [loc.id], { name: "Cash advance" });
    await addService(user, [loc.id], { name: "Loans" });
    expectOk(await call("PATCH", `/v1/services/${paused.id}`, { token: user.token, body: { status: "pending" } }));
    const operator = await addMember(user, org.id, "operator");
    const active = expectOk(
      await call("GET", `/v1/services/organization/search?organizationId=${org.id}&q=CASH`, { token: operator.token }),
    );
    expect(active.map((s: any) => s.name)).toEqual(["Cash desk"]);
    const all = expectOk(
      await call("GET", `/v1/services/organization/search?organizationId=${org.id}&q=cash&activeOnly=false`, { token: operator.token }),
    );
    expect(all.map((s: any) => s.name)).toEqual(["Cash desk", "Cash advance"]);
    const everything = await call("GET", `/v1/services/organization/search?organizationId=${org.id}&activeOnly=false`, {
      token: user.token,
    });
    expect(everything.body.meta.total).toBe(3);
  });

  it("refuses bad input and hides other organizations", async () => {
    const { user } = await setup();
    const other = await setup();
    expectError(await call("GET", "/v1/services/organization/search", { token: user.token }), 400, "VALIDATION_ERROR", "organizationId");
    expectError(
      await call("GET", `/v1/services/organization/search?organizationId=${other.org.id}&activeOnly=maybe`, { token: user.token }),
      400,
      "VALIDATION_ERROR",
      "activeOnly",
    );
    expectError(
      await call("GET", `/v1/services/organization/search?organizationId=${other.org.id}`, { token: user.token }),
      404,
      "NOT_FOUND",
    );
    expectError(await call("GET", `/v1/services/organization/search?organizationId=${other.org.id}`), 401, "AUTHENTICATION_ERROR");
  });
});
