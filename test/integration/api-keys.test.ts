import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { keyPermissions, ROLE_PERMISSIONS } from "../../src/domain/permissions";
import { testClock } from "../helpers/clock";
import { call, callSettled, expectError, expectOk, unique } from "../helpers/api";
import { addMember, createOrganization, registerUser } from "../helpers/fixtures";

async function orgWithOwner() {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  return { owner, org, path: `/v1/organizations/${org.id}/api-keys` };
}

describe("POST /v1/organizations/{id}/api-keys", () => {
  it("returns the full key once, stores only its hash, and the key works", async () => {
    const { owner, org, path } = await orgWithOwner();
    const created = expectOk(
      await call("POST", path, { token: owner.token, body: { name: "Kiosk", permissions: ["read:queues", "write:queues"] } }),
      201,
    );
    expect(created.key).toMatch(/^qk_live_[0-9a-z]{40}[0-9a-f]{32}$/);
    expect(created).toMatchObject({ name: "Kiosk", permissions: ["read:queues", "write:queues"], lastUsedAt: null, revokedAt: null });
    expect(created.id).toMatch(/^key_/);
    expect(created.maskedKey).toBe(`${created.key.slice(0, 16)}…${created.key.slice(-4)}`);
    const stored = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?").bind(created.id).first<Record<string, unknown>>();
    expect(JSON.stringify(stored)).not.toContain(created.key);
    expect(expectOk(await call("GET", `/v1/organizations/${org.id}`, { apiKey: created.key })).id).toBe(org.id);
    expect(expectOk(await call("GET", `/v1/organizations/${org.id}`, { token: created.key })).id).toBe(org.id);
  });

  it("gives a key with no permissions `read`, and drops duplicates", async () => {
    const { owner, path } = await orgWithOwner();
    expect(expectOk(await call("POST", path, { token: owner.token, body: { name: "Default" } }), 201).permissions).toEqual(["read"]);
    expect(expectOk(await call("POST", path, { token: owner.token, body: { name: "Empty", permissions: [] } }), 201).permissions).toEqual([
      "read",
    ]);
    const dup = expectOk(await call("POST", path, { token: owner.token, body: { name: "Dup", permissions: ["widget", "widget"] } }), 201);
    expect(dup.permissions).toEqual(["widget"]);
  });

  it("is for owners, admins and admin keys only", async () => {
    const { owner, org, path } = await orgWithOwner();
    const admin = await registerUser();
    const manager = await registerUser();
    await addMember(owner, org.id, "admin", admin);
    await addMember(owner, org.id, "manager", manager);
    expectOk(await call("POST", path, { token: admin.token, body: { name: "By admin", permissions: ["admin"] } }), 201);
    expectError(await call("POST", path, { token: manager.token, body: { name: "By manager" } }), 403, "AUTHORIZATION_ERROR");
    const writeKey = expectOk(await call("POST", path, { token: owner.token, body: { name: "w", permissions: ["write"] } }), 201);
    expectError(
      await call("POST", path, { apiKey: writeKey.key, body: { name: "By write key", permissions: ["admin"] } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    const adminKey = expectOk(await call("POST", path, { token: owner.token, body: { name: "a", permissions: ["admin"] } }), 201);
    expectOk(await call("POST", path, { apiKey: adminKey.key, body: { name: "By admin key" } }), 201);
  });

  it.each([
    ["a missing name", { permissions: ["read"] }, "name"],
    ["an empty name", { name: " " }, "name"],
    ["a name of the wrong type", { name: 5 }, "name"],
    ["an unknown permission", { name: "k", permissions: ["superuser"] }, "permissions.0"],
    ["permissions that are not a list", { name: "k", permissions: "read" }, "permissions"],
    ["an unknown field", { name: "k", organizationId: "org_x" }, "organizationId"],
    ["a too long name", { name: "k".repeat(101) }, "name"],
  ])("refuses %s with 400", async (_label, body, field) => {
    const { owner, path } = await orgWithOwner();
    expectError(await call("POST", path, { token: owner.token, body }), 400, "VALIDATION_ERROR", field);
  });
});

describe("GET and DELETE /v1/organizations/{id}/api-keys", () => {
  it("lists active keys masked; a revoked key disappears and is refused with 403 KEY_REVOKED", async () => {
    const { owner, org, path } = await orgWithOwner();
    const a = expectOk(await call("POST", path, { token: owner.token, body: { name: unique("a") } }), 201);
    const b = expectOk(await call("POST", path, { token: owner.token, body: { name: unique("b") } }), 201);
    const listed = await call("GET", path, { token: owner.token });
    const items = expectOk(listed);
    expect(listed.body.meta).toMatchObject({ total: 2, page: 1, hasMore: false });
    expect(items.map((k: any) => k.id).sort()).toEqual([a.id, b.id].sort());
    for (const item of items) {
      expect(item).not.toHaveProperty("key");
      expect(JSON.stringify(item)).not.toContain(a.key);
      expect(item.maskedKey).toMatch(/^qk_live_[0-9a-z]{8}…[0-9a-z]{4}$/);
    }

    const revoked = expectOk(await call("DELETE", `${path}/${a.id}`, { token: owner.token }));
    expect(revoked.id).toBe(a.id);
    expect(revoked.revokedAt).toMatch(/\.\d{3}Z$/);
    expect(expectOk(await call("GET", path, { token: owner.token })).map((k: any) => k.id)).toEqual([b.id]);
    expectError(await call("GET", `/v1/organizations/${org.id}`, { apiKey: a.key }), 403, "KEY_REVOKED");
    expectError(await call("DELETE", `${path}/${a.id}`, { token: owner.token }), 404, "NOT_FOUND");
    expectError(await call("DELETE", `${path}/key_00000000000000000000`, { token: owner.token }), 404, "NOT_FOUND");
  });

  it("refuses managers (403) and a limit above 100 (400)", async () => {
    const { owner, org, path } = await orgWithOwner();
    const manager = await registerUser();
    await addMember(owner, org.id, "manager", manager);
    expectError(await call("GET", path, { token: manager.token }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("GET", `${path}?limit=101`, { token: owner.token }), 400, "VALIDATION_ERROR", "limit");
  });

  it("cannot revoke another organization's key (404)", async () => {
    const a = await orgWithOwner();
    const b = await orgWithOwner();
    const keyOfB = expectOk(await call("POST", b.path, { token: b.owner.token, body: { name: "b" } }), 201);
    expectError(await call("DELETE", `${a.path}/${keyOfB.id}`, { token: a.owner.token }), 404, "NOT_FOUND");
    expectOk(await call("GET", `/v1/organizations/${b.org.id}`, { apiKey: keyOfB.key }));
  });
});

describe("key ceilings and usage", () => {
  it("grants no key more than the admin role, so every key creator (ORG_MANAGE) may mint any key", () => {
    for (const permission of keyPermissions(["admin", "write", "read", "widget", "manage:webhooks", "read:analytics"])) {
      expect(ROLE_PERMISSIONS.admin.has(permission), permission).toBe(true);
    }
  });

  it("records lastUsedAt, at most once a minute", async () => {
    testClock.set("2026-03-02T10:00:00.000Z");
    const { owner, org, path } = await orgWithOwner();
    const created = expectOk(await call("POST", path, { token: owner.token, body: { name: "used" } }), 201);
    const lastUsed = async () => {
      for (let i = 0; i < 50; i++) {
        const row = await env.DB.prepare("SELECT last_used_at AS t FROM api_keys WHERE id = ?")
          .bind(created.id)
          .first<{ t: number | null }>();
        if (row?.t != null) return row.t;
        await new Promise((r) => setTimeout(r, 20));
      }
      return null;
    };
    expectOk(await call("GET", `/v1/organizations/${org.id}`, { apiKey: created.key }));
    expect(await lastUsed()).toBe(Date.parse("2026-03-02T10:00:00.000Z"));
    testClock.advance(30_000);
    // Settled: whatever this request left running after its answer has finished.
    expectOk(await callSettled("GET", `/v1/organizations/${org.id}`, { apiKey: created.key }));
    expect(await lastUsed()).toBe(Date.parse("2026-03-02T10:00:00.000Z"));
    testClock.advance(31_000);
    expectOk(await call("GET", `/v1/organizations/${org.id}`, { apiKey: created.key }));
    for (let i = 0; i < 50 && (await lastUsed()) === Date.parse("2026-03-02T10:00:00.000Z"); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await lastUsed()).toBe(Date.parse("2026-03-02T10:01:01.000Z"));
    const listed = expectOk(await call("GET", path, { token: owner.token }));
    expect(listed[0].lastUsedAt).toBe("2026-03-02T10:01:01.000Z");
  });
});
