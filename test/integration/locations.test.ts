import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { boundingBox, destination, distanceKm } from "../../src/domain/geo";
import { testClock } from "../helpers/clock";
import { nearbyCandidates } from "../../src/catalog/locations";
import { call, expectError, expectOk } from "../helpers/api";
import { addMember, createOrganization, createQueue, registerUser, type TestUser } from "../helpers/fixtures";
import { depsOf } from "../../src/http/deps";

const PARIS = { latitude: 48.8566, longitude: 2.3522 };

async function owner() {
  const user = await registerUser();
  const org = await createOrganization(user);
  return { user, org };
}

function locationBody(organizationId: string, extra: Record<string, unknown> = {}) {
  return { organizationId, name: "Agence Opéra", address: "1 place de l'Opéra, 75009 Paris", ...PARIS, ...extra };
}

async function addLocation(user: TestUser, organizationId: string, extra: Record<string, unknown> = {}) {
  return expectOk(await call("POST", "/v1/locations", { token: user.token, body: locationBody(organizationId, extra) }), 201);
}

describe("POST /v1/locations", () => {
  it("creates a location with defaults", async () => {
    const { user, org } = await owner();
    const loc = await addLocation(user, org.id);
    expect(loc).toMatchObject({ organizationId: org.id, name: "Agence Opéra", ...PARIS, timezone: "UTC", phone: null, email: null });
    expect(loc.id).toMatch(/^loc_[0-9a-z]{20}$/);
    const full = await addLocation(user, org.id, { timezone: "Europe/Paris", phone: "+33 1 23 45 67 89", email: "Opera@Bank.example" });
    expect(full).toMatchObject({ timezone: "Europe/Paris", phone: "+33 1 23 45 67 89", email: "opera@bank.example" });
  });

  it.each([
    ["a missing name", { name: undefined }, "name"],
    ["a wrong type", { latitude: "48.8" }, "latitude"],
    ["a latitude out of range", { latitude: 90.0001 }, "latitude"],
    ["a longitude out of range", { longitude: -180.5 }, "longitude"],
    ["an unknown time zone", { timezone: "Europe/Atlantis" }, "timezone"],
    ["a bad email", { email: "nope" }, "email"],
    ["a bad phone", { phone: "call me" }, "phone"],
    ["an unknown field", { status: "open" }, "status"],
  ])("refuses %s", async (_label, patch, field) => {
    const { user, org } = await owner();
    expectError(
      await call("POST", "/v1/locations", { token: user.token, body: locationBody(org.id, patch) }),
      400,
      "VALIDATION_ERROR",
      field,
    );
  });

  it("is 404 for another organization and 403 for an operator", async () => {
    const { user, org } = await owner();
    const stranger = await registerUser();
    expectError(await call("POST", "/v1/locations", { token: stranger.token, body: locationBody(org.id) }), 404, "NOT_FOUND");
    const operator = await addMember(user, org.id, "operator");
    expectError(await call("POST", "/v1/locations", { token: operator.token, body: locationBody(org.id) }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("POST", "/v1/locations", { body: locationBody(org.id) }), 401, "AUTHENTICATION_ERROR");
  });
});

describe("GET /v1/business/locations", () => {
  it("pages through the organization's locations", async () => {
    const { user, org } = await owner();
    for (let i = 0; i < 5; i++) {
      testClock.set(Date.parse("2026-03-02T10:00:00.000Z") + i * 1000);
      await addLocation(user, org.id, { name: `Site ${i}` });
    }
    const first = await call("GET", "/v1/business/locations?limit=2", { token: user.token });
    expect(expectOk(first).map((l: any) => l.name)).toEqual(["Site 0", "Site 1"]);
    expect(first.body.meta).toMatchObject({ total: 5, page: 1, limit: 2, hasMore: true });
    const last = await call("GET", "/v1/business/locations?limit=2&page=3", { token: user.token });
    expect(expectOk(last).map((l: any) => l.name)).toEqual(["Site 4"]);
    expect(last.body.meta).toMatchObject({ total: 5, page: 3, limit: 2, hasMore: false });
    const byOffset = await call("GET", "/v1/business/locations?limit=2&offset=3", { token: user.token });
    expect(expectOk(byOffset).map((l: any) => l.name)).toEqual(["Site 3", "Site 4"]);
    expect(byOffset.body.meta.hasMore).toBe(false);
    const all = await call("GET", "/v1/business/locations?limit=100", { token: user.token });
    expect(expectOk(all)).toHaveLength(5);
    expect(all.body.meta.hasMore).toBe(false);
  });

  it("refuses bad paging and needs an organization context", async () => {
    const { user, org } = await owner();
    expectError(await call("GET", "/v1/business/locations?limit=101", { token: user.token }), 400, "VALIDATION_ERROR", "limit");
    expectError(await call("GET", "/v1/business/locations?page=0", { token: user.token }), 400, "VALIDATION_ERROR", "page");
    expectError(await call("GET", "/v1/business/locations?offset=x", { token: user.token }), 400, "VALIDATION_ERROR", "offset");
    await createOrganization(user);
    expectError(await call("GET", "/v1/business/locations", { token: user.token }), 400, "VALIDATION_ERROR", "X-Organization-Id");
    const withHeader = await call("GET", "/v1/business/locations", { token: user.token, headers: { "X-Organization-Id": org.id } });
    expect(withHeader.body.meta.total).toBe(0);
    const stranger = await registerUser();
    await createOrganization(stranger);
    expectError(
      await call("GET", "/v1/business/locations", { token: stranger.token, headers: { "X-Organization-Id": org.id } }),
      404,
      "NOT_FOUND",
    );
  });
});

describe("GET /v1/locations/search", () => {
  it("matches name or address, case-insensitively, with wildcards taken literally", async () => {
    const { user, org } = await owner();
    await addLocation(user, org.id, { name: "Gare du Nord", address: "18 rue de Dunkerque" });
    await addLocation(user, org.id, { name: "Bastille", address: "2 place de la BASTILLE" });
    await addLocation(user, org.id, { name: "100% Montmartre", address: "rue Lepic" });
    const byName = expectOk(await call("GET", `/v1/locations/search?organizationId=${org.id}&q=gare`, { token: user.token }));
    expect(byName.map((l: any) => l.name)).toEqual(["Gare du Nord"]);
    const byAddress = expectOk(await call("GET", `/v1/locations/search?organizationId=${org.id}&q=dunkerque`, { token: user.token }));
    expect(byAddress.map((l: any) => l.name)).toEqual(["Gare du Nord"]);
    const both = expectOk(await call("GET", `/v1/locations/search?organizationId=${org.id}&q=bastille`, { token: user.token }));
    expect(both).toHaveLength(1);
    const percent = expectOk(
      await call("GET", `/v1/locations/search?organizationId=${org.id}&q=${encodeURIComponent("%")}`, { token: user.token }),
    );
    expect(percent.map((l: any) => l.name)).toEqual(["100% Montmartre"]);
    const operator = await addMember(user, org.id, "operator");
    const all = await call("GET", `/v1/locations/search?organizationId=${org.id}`, { token: operator.token });
    expect(all.body.meta.total).toBe(3);
  });

  it("refuses a missing organization and hides other organizations", async () => {
    const { user } = await owner();
    const other = await owner();
    expectError(await call("GET", "/v1/locations/search?q=x", { token: user.token }), 400, "VALIDATION_ERROR", "organizationId");
    expectError(await call("GET", `/v1/locations/search?organizationId=${other.org.id}`, { token: user.token }), 404, "NOT_FOUND");
    expectError(
      await call("GET", `/v1/locations/search?organizationId=${other.org.id}&limit=101`, { token: user.token }),
      400,
      "VALIDATION_ERROR",
      "limit",
    );
  });
});

describe("GET /v1/locations/nearby", () => {
  // A spot in the Pacific, far from every other test's locations.
  const CENTER = { latitude: -30.5, longitude: -140.25 };

  it("returns locations of every organization inside the radius, nearest first, anonymously", async () => {
    const a = await owner();
    const b = await owner();
    const places = [
      { who: a, km: 3, bearing: 10 },
      { who: b, km: 1, bearing: 200 },
      { who: a, km: 9.99, bearing: 0 },
      { who: b, km: 10.01, bearing: 0 },
      { who: a, km: 40, bearing: 90 },
    ];
    for (const [i, p] of places.entries()) {
      await addLocation(p.who.user, p.who.org.id, { name: `P${i}`, ...destination(CENTER, p.bearing, p.km) });
    }
    const res = await call("GET", `/v1/locations/nearby?lat=${CENTER.latitude}&lon=${CENTER.longitude}&radiusKm=10`);
    const found = expectOk(res);
    expect(found.map((l: any) => l.name)).toEqual(["P1", "P0", "P2"]);
    expect(found[0].organization).toEqual({ id: b.org.id, name: "Test organization" });
    expect(found[0].distanceKm).toBeCloseTo(1, 2);
    expect(found[2].distanceKm).toBeCloseTo(9.99, 2);
    const limited = expectOk(
      await call("GET", `/v1/locations/nearby?lat=${CENTER.latitude}&lon=${CENTER.longitude}&radiusKm=100&limit=2`, {
        token: a.user.token,
      }),
    );
    expect(limited.map((l: any) => l.name)).toEqual(["P1", "P0"]);
    const wide = expectOk(await call("GET", `/v1/locations/nearby?lat=${CENTER.latitude}&lon=${CENTER.longitude}&radiusKm=100`));
    expect(wide.map((l: any) => l.name)).toEqual(["P1", "P0", "P2", "P3", "P4"]);
  });

  it("finds locations across the antimeridian", async () => {
    const { user, org } = await owner();
    await addLocation(user, org.id, { name: "West of the line", latitude: -16.5, longitude: 179.98 });
    await addLocation(user, org.id, { name: "East of the line", latitude: -16.5, longitude: -179.97 });
    const found = expectOk(await call("GET", "/v1/locations/nearby?lat=-16.5&lon=-179.99&radiusKm=5"));
    expect(found.map((l: any) => l.name)).toEqual(["East of the line", "West of the line"]);
    expect(found[1].distanceKm).toBeCloseTo(distanceKm({ latitude: -16.5, longitude: -179.99 }, { latitude: -16.5, longitude: 179.98 }), 2);
  });

  it.each([
    ["a missing lat", "lon=2&radiusKm=5", "lat"],
    ["a wrong type", "lat=abc&lon=2&radiusKm=5", "lat"],
    ["a blank value", "lat=&lon=2&radiusKm=5", "lat"],
    ["lat out of range", "lat=91&lon=2&radiusKm=5", "lat"],
    ["lon out of range", "lat=1&lon=181&radiusKm=5", "lon"],
    ["radius 0", "lat=1&lon=2&radiusKm=0", "radiusKm"],
    ["radius 101", "lat=1&lon=2&radiusKm=101", "radiusKm"],
    ["limit 101", "lat=1&lon=2&radiusKm=5&limit=101", "limit"],
    ["limit 1.5", "lat=1&lon=2&radiusKm=5&limit=1.5", "limit"],
  ])("refuses %s", async (_label, query, field) => {
    expectError(await call("GET", `/v1/locations/nearby?${query}`), 400, "VALIDATION_ERROR", field);
  });

  it("accepts a radius of exactly 100 km", async () => {
    expect(expectOk(await call("GET", "/v1/locations/nearby?lat=0&lon=0&radiusKm=100"))).toEqual([]);
  });

  it("asks the geo index for a latitude band, not a scan, over 10,000 locations", async () => {
    const { org } = await owner();
    const rows: string[] = [];
    for (let i = 0; i < 10_000; i++) rows.push(`loc_geo${String(i).padStart(13, "0")}`);
    // 9 columns a row, 11 rows a statement: under D1's 100 bound parameters.
    const statements = [];
    for (let i = 0; i < rows.length; i += 11) {
      const part = rows.slice(i, i + 11);
      const values = part.map(() => "(?, ?, ?, ?, ?, ?, 'UTC', ?, ?)").join(", ");
      const binds = part.flatMap((id, j) => {
        const n = i + j;
        return [id, org.id, `Geo ${n}`, "somewhere", -60 + (n % 120), -170 + ((n * 7) % 340), 0, 0];
      });
      statements.push(
        env.DB.prepare(
          `INSERT INTO locations (id, organization_id, name, address, latitude, longitude, timezone, created_at, updated_at) VALUES ${values}`,
        ).bind(...binds),
      );
    }
    for (let i = 0; i < statements.length; i += 100) await env.DB.batch(statements.slice(i, i + 100));
    const count = await env.DB.prepare("SELECT count(*) AS n FROM locations WHERE id LIKE 'loc_geo%'").first<{ n: number }>();
    expect(count?.n).toBe(10_000);
    await env.DB.prepare("ANALYZE").run();

    for (const center of [PARIS, { latitude: -16.5, longitude: 179.99 }, { latitude: 89.95, longitude: 0 }]) {
      const query = nearbyCandidates(depsOf(env), boundingBox(center, 50)).toSQL();
      const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
        .bind(...query.params)
        .all<{ detail: string }>();
      const details = plan.results.map((r) => r.detail).join("\n");
      expect(details).toMatch(/SEARCH locations USING INDEX locations_geo_idx \(latitude>\? AND latitude<\?\)/);
      expect(details).not.toMatch(/SCAN locations/);
    }
    const found = expectOk(await call("GET", "/v1/locations/nearby?lat=0&lon=0&radiusKm=100&limit=100"));
    for (const l of found) expect(l.distanceKm).toBeLessThanOrEqual(100);
  });
});

describe("PATCH /v1/locations/{id}", () => {
  it("changes fields and clears optional ones with null", async () => {
    const { user, org } = await owner();
    const loc = await addLocation(user, org.id, { timezone: "Europe/Paris", phone: "+33 1 00 00 00 00", email: "a@b.example" });
    const updated = expectOk(
      await call("PATCH", `/v1/locations/${loc.id}`, {
        token: user.token,
        body: { name: "Renamed", latitude: 10, timezone: null, phone: null, email: null },
      }),
    );
    expect(updated).toMatchObject({ name: "Renamed", latitude: 10, longitude: PARIS.longitude, timezone: "UTC", phone: null, email: null });
    const unchanged = expectOk(await call("PATCH", `/v1/locations/${loc.id}`, { token: user.token, body: {} }));
    expect(unchanged.name).toBe("Renamed");
  });

  it.each([
    ["organizationId", { organizationId: "org_x" }, "organizationId"],
    ["a wrong type", { name: 5 }, "name"],
    ["out of range", { longitude: 200 }, "longitude"],
    ["a null required field", { address: null }, "address"],
  ])("refuses %s", async (_label, body, field) => {
    const { user, org } = await owner();
    const loc = await addLocation(user, org.id);
    expectError(await call("PATCH", `/v1/locations/${loc.id}`, { token: user.token, body }), 400, "VALIDATION_ERROR", field);
  });

  it("is 404 for unknown ids and other organizations' locations", async () => {
    const { user, org } = await owner();
    const loc = await addLocation(user, org.id);
    const stranger = await registerUser();
    expectError(await call("PATCH", `/v1/locations/${loc.id}`, { token: stranger.token, body: { name: "x" } }), 404, "NOT_FOUND");
    expectError(
      await call("PATCH", "/v1/locations/loc_00000000000000000000", { token: user.token, body: { name: "x" } }),
      404,
      "NOT_FOUND",
    );
  });
});

describe("DELETE /v1/locations/{id}", () => {
  it("deletes services linked only to it with their queues, and only unlinks shared ones", async () => {
    testClock.set("2026-03-02T10:00:00.000Z");
    const user = await registerUser();
    const org = await createOrganization(user);
    await env.DB.prepare("UPDATE subscriptions SET plan = 'pro' WHERE organization_id = ?").bind(org.id).run();
    const doomed = await addLocation(user, org.id, { name: "Doomed" });
    const kept = await addLocation(user, org.id, { name: "Kept" });
    const mkService = async (name: string, locationIds: string[]) =>
      expectOk(
        await call("POST", "/v1/services", { token: user.token, body: { name, locationIds, serviceTypeId: "st_bank_teller" } }),
        201,
      );
    const onlyHere = await mkService("Only here", [doomed.id]);
    const shared = await mkService("Shared", [doomed.id, kept.id]);
    const elsewhere = await mkService("Elsewhere", [kept.id]);
    const q1 = await createQueue(user, org.id, onlyHere.id);
    const q2 = await createQueue(user, org.id, onlyHere.id);
    const q3 = await createQueue(user, org.id, shared.id);
    const q4 = await createQueue(user, org.id, elsewhere.id);

    const res = expectOk(await call("DELETE", `/v1/locations/${doomed.id}`, { token: user.token }));
    expect(res.deletedServiceIds).toEqual([onlyHere.id]);
    expect(res.deletedQueueIds.sort()).toEqual([q1, q2].sort());

    expectError(await call("GET", `/v1/services/${onlyHere.id}`, { token: user.token }), 404, "NOT_FOUND");
    const sharedNow = expectOk(await call("GET", `/v1/services/${shared.id}`, { token: user.token }));
    expect(sharedNow.locationIds).toEqual([kept.id]);
    expect(sharedNow.queues.map((q: any) => q.id)).toEqual([q3]);
    expect(expectOk(await call("GET", `/v1/services/${elsewhere.id}`, { token: user.token })).queues.map((q: any) => q.id)).toEqual([q4]);
    const queuesLeft = await env.DB.prepare("SELECT id FROM queues WHERE organization_id = ? ORDER BY id")
      .bind(org.id)
      .all<{ id: string }>();
    expect(queuesLeft.results.map((r) => r.id)).toEqual([q3, q4].sort());
    const locs = expectOk(await call("GET", "/v1/business/locations", { token: user.token }));
    expect(locs.map((l: any) => l.name)).toEqual(["Kept"]);
    expectError(await call("DELETE", `/v1/locations/${doomed.id}`, { token: user.token }), 404, "NOT_FOUND");
  });

  it("is 404 for another organization's location and 403 for an operator", async () => {
    const { user, org } = await owner();
    const loc = await addLocation(user, org.id);
    const stranger = await registerUser();
    expectError(await call("DELETE", `/v1/locations/${loc.id}`, { token: stranger.token }), 404, "NOT_FOUND");
    const operator = await addMember(user, org.id, "operator");
    expectError(await call("DELETE", `/v1/locations/${loc.id}`, { token: operator.token }), 403, "AUTHORIZATION_ERROR");
  });
});
