import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { insertService } from "../helpers/catalog";
import { addMember, createApiKey, createOrganization, createQueue, registerUser } from "../helpers/fixtures";

describe("GET /v1/organizations/{id}", () => {
  it("answers any member and any key of the organization", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { name: "Banque du Coin" });
    const operator = await registerUser();
    await addMember(owner, org.id, "operator", operator);
    const { key } = await createApiKey(owner, org.id);
    for (const opts of [{ token: owner.token }, { token: operator.token }, { apiKey: key }]) {
      const data = expectOk(await call("GET", `/v1/organizations/${org.id}`, opts));
      expect(data).toMatchObject({ id: org.id, name: "Banque du Coin", type: "banking", defaultLanguage: "en", website: null });
    }
  });

  it("answers 404 to a non-member and for an unknown id, 401 without a credential", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const stranger = await registerUser();
    expectError(await call("GET", `/v1/organizations/${org.id}`, { token: stranger.token }), 404, "NOT_FOUND");
    expectError(await call("GET", "/v1/organizations/org_00000000000000000000", { token: owner.token }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/organizations/${org.id}`), 401, "AUTHENTICATION_ERROR");
  });
});

describe("PATCH /v1/organizations/{id}", () => {
  it("changes the given fields, leaves the others, and null clears an optional field", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { description: "Old" });
    const patch = {
      name: "New name",
      legalName: "New Name SAS",
      website: "https://example.com/about",
      billingEmail: "Billing@Example.com",
      availabilityRadiusKm: 0.3,
      siret: "73282932000074",
      vatNumber: "FR44732829320",
      type: "retail",
      defaultLanguage: "fr",
      logoUrl: "https://cdn.example.com/logo.png",
    };
    const updated = expectOk(await call("PATCH", `/v1/organizations/${org.id}`, { token: owner.token, body: patch }));
    expect(updated).toMatchObject({ ...patch, billingEmail: "billing@example.com", description: "Old", slug: org.slug });
    expect(Date.parse(updated.updatedAt)).toBeGreaterThanOrEqual(Date.parse(org.updatedAt));

    const cleared = expectOk(
      await call("PATCH", `/v1/organizations/${org.id}`, {
        token: owner.token,
        body: { website: null, availabilityRadiusKm: null, description: null },
      }),
    );
    expect(cleared).toMatchObject({
      website: null,
      availabilityRadiusKm: null,
      description: null,
      name: "New name",
      siret: "73282932000074",
    });
    const read = expectOk(await call("GET", `/v1/organizations/${org.id}`, { token: owner.token }));
    expect(read).toEqual(cleared);
  });

  it("lets an admin and an admin key update, but not a manager or a read key (403)", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const admin = await registerUser();
    const manager = await registerUser();
    await addMember(owner, org.id, "admin", admin);
    await addMember(owner, org.id, "manager", manager);
    const adminKey = await createApiKey(owner, org.id, ["admin"]);
    const readKey = await createApiKey(owner, org.id);
    expectOk(await call("PATCH", `/v1/organizations/${org.id}`, { token: admin.token, body: { name: "By admin" } }));
    expectOk(await call("PATCH", `/v1/organizations/${org.id}`, { apiKey: adminKey.key, body: { name: "By key" } }));
    expectError(
      await call("PATCH", `/v1/organizations/${org.id}`, { token: manager.token, body: { name: "x" } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(
      await call("PATCH", `/v1/organizations/${org.id}`, { apiKey: readKey.key, body: { name: "x" } }),
      403,
      "AUTHORIZATION_ERROR",
    );
  });

  it.each([
    ["an unknown field", { slug: "taken" }, "slug"],
    ["a mass-assigned id", { id: "org_x" }, "id"],
    ["an http website", { website: "http://example.com" }, "website"],
    ["a website that is not a URL", { website: "example" }, "website"],
    ["a website on an IP literal", { website: "https://127.0.0.1/" }, "website"],
    ["a logo on localhost", { logoUrl: "https://localhost/logo.png" }, "logoUrl"],
    ["a radius not in the list", { availabilityRadiusKm: 3 }, "availabilityRadiusKm"],
    ["a radius of the wrong type", { availabilityRadiusKm: "1" }, "availabilityRadiusKm"],
    ["a bad billing email", { billingEmail: "nope" }, "billingEmail"],
    ["an unknown language", { defaultLanguage: "xx" }, "defaultLanguage"],
    ["an unknown type", { type: "casino" }, "type"],
    ["a null name", { name: null }, "name"],
    ["an empty name", { name: "  " }, "name"],
    ["a too long description", { description: "x".repeat(2001) }, "description"],
    ["an empty body", {}, "body"],
  ])("refuses %s with 400 on the field", async (_label, body, field) => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    expectError(await call("PATCH", `/v1/organizations/${org.id}`, { token: owner.token, body }), 400, "VALIDATION_ERROR", field);
  });
});

describe("DELETE /v1/organizations/{id}", () => {
  it("is for the owner only and removes the organization with its members and keys", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const admin = await registerUser();
    await addMember(owner, org.id, "admin", admin);
    const adminKey = await createApiKey(owner, org.id, ["admin"]);
    const serviceId = await insertService(org.id);
    await createQueue(owner, org.id, serviceId);
    expectError(await call("DELETE", `/v1/organizations/${org.id}`, { token: admin.token }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("DELETE", `/v1/organizations/${org.id}`, { apiKey: adminKey.key }), 403, "AUTHORIZATION_ERROR");

    expect(expectOk(await call("DELETE", `/v1/organizations/${org.id}`, { token: owner.token }))).toEqual({ id: org.id, deleted: true });
    expectError(await call("GET", `/v1/organizations/${org.id}`, { token: owner.token }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/organizations/${org.id}`, { apiKey: adminKey.key }), 401, "AUTHENTICATION_ERROR");
    const me = expectOk(await call("GET", "/v1/auth/me", { token: admin.token }));
    expect(me.memberships).toEqual([]);
    const left = await env.DB.prepare(
      "SELECT (SELECT count(*) FROM members WHERE organization_id = ?1) + (SELECT count(*) FROM subscriptions WHERE organization_id = ?1) + (SELECT count(*) FROM queues WHERE organization_id = ?1) + (SELECT count(*) FROM services WHERE organization_id = ?1) AS n",
    )
      .bind(org.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    expectError(await call("DELETE", `/v1/organizations/${org.id}`, { token: owner.token }), 404, "NOT_FOUND");
  });
});

describe("POST /v1/organizations/{id}/transfer-ownership", () => {
  it("makes the member the owner and the previous owner an admin", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const next = await registerUser();
    await addMember(owner, org.id, "operator", next);
    const res = await call("POST", `/v1/organizations/${org.id}/transfer-ownership`, { token: owner.token, body: { newOwnerId: next.id } });
    expect(expectOk(res)).toEqual({ organizationId: org.id, ownerId: next.id, previousOwnerId: owner.id, previousOwnerRole: "admin" });
    const list = expectOk(await call("GET", `/v1/organizations/${org.id}/members`, { token: next.token }));
    const roles = Object.fromEntries(list.map((m: any) => [m.userId, m.role]));
    expect(roles).toEqual({ [owner.id]: "admin", [next.id]: "owner" });
    // The former owner lost the owner-only permissions at once.
    expectError(await call("DELETE", `/v1/organizations/${org.id}`, { token: owner.token }), 403, "AUTHORIZATION_ERROR");
  });

  it("refuses a non-member (404 on newOwnerId), oneself (400), a non-owner (403) and bad bodies (400)", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const admin = await registerUser();
    const outsider = await registerUser();
    await addMember(owner, org.id, "admin", admin);
    const path = `/v1/organizations/${org.id}/transfer-ownership`;
    expectError(await call("POST", path, { token: owner.token, body: { newOwnerId: outsider.id } }), 404, "NOT_FOUND", "newOwnerId");
    expectError(await call("POST", path, { token: owner.token, body: { newOwnerId: owner.id } }), 400, "VALIDATION_ERROR", "newOwnerId");
    expectError(await call("POST", path, { token: admin.token, body: { newOwnerId: admin.id } }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("POST", path, { token: owner.token, body: {} }), 400, "VALIDATION_ERROR", "newOwnerId");
    expectError(await call("POST", path, { token: owner.token, body: { newOwnerId: 42 } }), 400, "VALIDATION_ERROR", "newOwnerId");
    expectError(
      await call("POST", path, { token: owner.token, body: { newOwnerId: admin.id, keepRole: true } }),
      400,
      "VALIDATION_ERROR",
      "keepRole",
    );
  });

  it("leaves exactly one owner when two transfers race", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const a = await registerUser();
    const b = await registerUser();
    await addMember(owner, org.id, "admin", a);
    await addMember(owner, org.id, "admin", b);
    const path = `/v1/organizations/${org.id}/transfer-ownership`;
    const results = await Promise.all([
      call("POST", path, { token: owner.token, body: { newOwnerId: a.id } }),
      call("POST", path, { token: owner.token, body: { newOwnerId: b.id } }),
    ]);
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    const owners = await env.DB.prepare("SELECT count(*) AS n FROM members WHERE organization_id = ? AND role = 'owner'")
      .bind(org.id)
      .first<{ n: number }>();
    expect(owners?.n).toBe(1);
  });
});

describe("POST /v1/organizations", () => {
  it("answers 409 CONFLICT on slug when the slug is taken", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    expectError(
      await call("POST", "/v1/organizations", { token: owner.token, body: { name: "Again", slug: org.slug } }),
      409,
      "CONFLICT",
      "slug",
    );
  });
});
