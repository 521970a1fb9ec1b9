import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { sweep } from "../helpers/cron";
import { addMember, createApiKey, createOrganization, registerUser, type TestUser } from "../helpers/fixtures";

// The audit log through HTTP (issue 31, docs/security.md): entries, access, the chain.

async function orgWithOwner() {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  return { owner, organizationId: org.id as string };
}

async function auditOf(caller: TestUser | { apiKey: string }, organizationId: string, query = ""): Promise<any[]> {
  const auth = "token" in caller ? { token: caller.token } : { apiKey: caller.apiKey };
  return expectOk(await call("GET", `/v1/organizations/${organizationId}/audit-events${query}`, auth));
}

describe("audit log: API keys", () => {
  it("records a key's creation and revocation once each, with who, from where and the request id", async () => {
    const { owner, organizationId } = await orgWithOwner();
    const created = await call("POST", `/v1/organizations/${organizationId}/api-keys`, {
      token: owner.token,
      body: { name: "Kiosk", permissions: ["read:queues"] },
      headers: { "X-Request-ID": "req-create-key-1", "X-Forwarded-For": "203.0.113.7" },
    });
    const key = expectOk(created, 201);
    expectOk(
      await call("DELETE", `/v1/organizations/${organizationId}/api-keys/${key.id}`, {
        token: owner.token,
        headers: { "X-Request-ID": "req-revoke-key-1" },
      }),
    );
    // A second revocation changes nothing and records nothing.
    expectError(await call("DELETE", `/v1/organizations/${organizationId}/api-keys/${key.id}`, { token: owner.token }), 404, "NOT_FOUND");

    const entries = await auditOf(owner, organizationId, `?entityId=${key.id}`);
    expect(entries.map((e) => e.action)).toEqual(["api_key.revoked", "api_key.created"]);
    const [revoked, creation] = entries;
    expect(creation).toMatchObject({
      actor: { type: "user", id: owner.id },
      entityType: "api_key",
      entityId: key.id,
      requestId: "req-create-key-1",
      ipAddress: "203.0.113.7",
      changes: { name: { before: null, after: "Kiosk" }, permissions: { before: null, after: ["read:queues"] } },
    });
    expect(revoked).toMatchObject({ actor: { type: "user", id: owner.id }, requestId: "req-revoke-key-1" });
    expect(revoked.sequence).toBe(creation.sequence + 1);
    expect(revoked.previousHash).toBe(creation.hash);
    // The key's value never reaches the log.
    const rows = await env.DB.prepare("SELECT * FROM audit_events WHERE organization_id = ?").bind(organizationId).all();
    expect(JSON.stringify(rows.results)).not.toContain(key.key);
  });

  it("names the key as the actor when a key acts", async () => {
    const { owner, organizationId } = await orgWithOwner();
    const admin = await createApiKey(owner, organizationId, ["admin"]);
    const made = expectOk(
      await call("POST", `/v1/organizations/${organizationId}/api-keys`, { apiKey: admin.key, body: { name: "By key" } }),
      201,
    );
    const [entry] = await auditOf(owner, organizationId, `?entityId=${made.id}`);
    expect(entry.actor).toEqual({ type: "api_key", id: admin.id });
    expect((await auditOf(owner, organizationId, `?actorId=${admin.id}`)).map((e) => e.entityId)).toEqual([made.id]);
  });
});

describe("audit log: access", () => {
  it("is for owners, admins and keys with read:audit; others 403, another organization 404", async () => {
    const { owner, organizationId } = await orgWithOwner();
    const admin = await addMember(owner, organizationId, "admin");
    const manager = await addMember(owner, organizationId, "manager");
    const auditKey = await createApiKey(owner, organizationId, ["read:audit"]);
    const readKey = await createApiKey(owner, organizationId, ["read"]);
    const path = `/v1/organizations/${organizationId}/audit-events`;
    expectOk(await call("GET", path, { token: admin.token }));
    expectOk(await call("GET", path, { apiKey: auditKey.key }));
    expectError(await call("GET", path, { token: manager.token }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("GET", path, { apiKey: readKey.key }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("GET", `${path}/verify`, { apiKey: readKey.key }), 403, "AUTHORIZATION_ERROR");

    const other = await orgWithOwner();
    expectError(await call("GET", `/v1/organizations/${other.organizationId}/audit-events`, { token: owner.token }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/organizations/${other.organizationId}/audit-events`, { apiKey: auditKey.key }), 404, "NOT_FOUND");
    expectError(
      await call("GET", `/v1/organizations/${other.organizationId}/audit-events/verify`, { token: owner.token }),
      404,
      "NOT_FOUND",
    );
  });

  it("offers no way to change or delete an entry", async () => {
    const { owner, organizationId } = await orgWithOwner();
    const path = `/v1/organizations/${organizationId}/audit-events`;
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const res = await call(method, path, { token: owner.token, body: {} });
      expect([404, 405]).toContain(res.status);
    }
  });

  it("refuses a bad filter or cursor with the field at fault", async () => {
    const { owner, organizationId } = await orgWithOwner();
    const path = `/v1/organizations/${organizationId}/audit-events`;
    expectError(await call("GET", `${path}?from=yesterday`, { token: owner.token }), 400, "VALIDATION_ERROR", "from");
    expectError(await call("GET", `${path}?cursor=nonsense`, { token: owner.token }), 400, "VALIDATION_ERROR", "cursor");
    expectError(await call("GET", `${path}?limit=101`, { token: owner.token }), 400, "VALIDATION_ERROR", "limit");
    expectError(await call("GET", `${path}?from=2026-03-02&to=2026-03-01`, { token: owner.token }), 400, "VALIDATION_ERROR", "to");
  });
});

describe("audit log: pages, filters, CSV", () => {
  it("pages newest first through the cursor, and filters by action and time", async () => {
    const { owner, organizationId } = await orgWithOwner();
    for (let i = 0; i < 5; i++) await createApiKey(owner, organizationId, ["read"]);
    const first = await call("GET", `/v1/organizations/${organizationId}/audit-events?action=api_key.created&limit=2`, {
      token: owner.token,
    });
    const page1 = expectOk(first);
    expect(first.body.meta).toMatchObject({ limit: 2, hasMore: true });
    const page2 = expectOk(
      await call(
        "GET",
        `/v1/organizations/${organizationId}/audit-events?action=api_key.created&limit=2&cursor=${first.body.meta.nextCursor}`,
        {
          token: owner.token,
        },
      ),
    );
    const seqs = [...page1, ...page2].map((e: any) => e.sequence);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(new Set(seqs).size).toBe(4);
    expect(await auditOf(owner, organizationId, "?action=api_key.created&to=2000-01-01")).toEqual([]);
    expect(await auditOf(owner, organizationId, "?action=api_key.created&from=2000-01-01")).toHaveLength(5);
  });

  it("exports the log as CSV, and the export is itself recorded", async () => {
    const { owner, organizationId } = await orgWithOwner();
    const key = await createApiKey(owner, organizationId, ["read"]);
    const res = await call("GET", `/v1/organizations/${organizationId}/audit-events/export.csv`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/csv");
    const lines = (res.body as string)
      .replace(/^\uFEFF/, "")
      .trim()
      .split("\r\n");
    expect(lines[0]).toBe("sequence,createdAt,actorType,actorId,entityType,entityId,action,changes,ipAddress,requestId,hash");
    expect(lines.some((l) => l.includes(key.id) && l.includes("api_key.created"))).toBe(true);
    const exports = await auditOf(owner, organizationId, "?action=export.audit");
    expect(exports).toHaveLength(1);
    expect(exports[0].actor).toEqual({ type: "user", id: owner.id });
  });
});

describe("audit log: the hash chain", () => {
  it("verifies an untouched chain, and finds an entry altered directly in D1", async () => {
    const { owner, organizationId } = await orgWithOwner();
    for (let i = 0; i < 3; i++) await createApiKey(owner, organizationId, ["read"]);
    const verify = `/v1/organizations/${organizationId}/audit-events/verify`;
    const sound = expectOk(await call("GET", verify, { token: owner.token }));
    // The organization's creation is the first entry, then the three keys.
    expect(sound).toMatchObject({ valid: true, checked: 4, firstSequence: 1, lastSequence: 4, brokenAt: null });

    const second = (await auditOf(owner, organizationId, "?limit=100")).find((e) => e.sequence === 2);
    await env.DB.prepare("UPDATE audit_events SET actor_id = 'usr_someoneelse00000000' WHERE id = ?").bind(second.id).run();
    const broken = expectOk(await call("GET", verify, { token: owner.token }));
    expect(broken).toMatchObject({ valid: false, checked: 1, brokenAt: { sequence: 2, entryId: second.id, reason: "hash_mismatch" } });
  });

  it("finds a deleted entry", async () => {
    const { owner, organizationId } = await orgWithOwner();
    for (let i = 0; i < 3; i++) await createApiKey(owner, organizationId, ["read"]);
    await call("GET", `/v1/organizations/${organizationId}/audit-events`, { token: owner.token });
    await env.DB.prepare("DELETE FROM audit_events WHERE organization_id = ? AND seq = 2").bind(organizationId).run();
    const broken = expectOk(await call("GET", `/v1/organizations/${organizationId}/audit-events/verify`, { token: owner.token }));
    expect(broken).toMatchObject({ valid: false, brokenAt: { sequence: 2, reason: "missing_entry" } });
  });

  it("keeps one unbroken chain when many changes land at once", async () => {
    const { owner, organizationId } = await orgWithOwner();
    await Promise.all(Array.from({ length: 12 }, () => createApiKey(owner, organizationId, ["read"])));
    // Readers seal concurrently too.
    await Promise.all(Array.from({ length: 4 }, () => auditOf(owner, organizationId)));
    const verdict = expectOk(await call("GET", `/v1/organizations/${organizationId}/audit-events/verify`, { token: owner.token }));
    expect(verdict).toMatchObject({ valid: true, checked: 13, firstSequence: 1, lastSequence: 13 });
  });
});

describe("audit log: retention per plan", () => {
  it("the minute cron drops starter entries older than 30 days, and the kept chain verifies from its anchor", async () => {
    const { owner, organizationId } = await orgWithOwner();
    const admin = await createApiKey(owner, organizationId, ["admin"]);
    const later = Date.now() + 31 * 86_400_000;
    testClock.set(later);
    try {
      const path = `/v1/organizations/${organizationId}/api-keys`;
      expectOk(await call("POST", path, { apiKey: admin.key, body: { name: "A month later" } }), 201);
      await sweep(later);
      const kept = await env.DB.prepare("SELECT seq FROM audit_events WHERE organization_id = ? ORDER BY seq").bind(organizationId).all();
      expect(kept.results.map((r) => r.seq)).toEqual([3]);
      const verdict = expectOk(await call("GET", `/v1/organizations/${organizationId}/audit-events/verify`, { apiKey: admin.key }));
      expect(verdict).toMatchObject({ valid: true, checked: 1, firstSequence: 3, lastSequence: 3 });
    } finally {
      testClock.reset();
    }
  });
});
