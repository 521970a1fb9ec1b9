import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { acceptInvitation, addMember, createApiKey, createOrganization, inviteMember, registerUser } from "../helpers/fixtures";
import type { Env } from "../../src/env";

async function orgWithOwner() {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  return { owner, org, path: `/v1/organizations/${org.id}/members` };
}

async function ownerCount(organizationId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM members WHERE organization_id = ? AND role = 'owner'")
    .bind(organizationId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

describe("POST /v1/organizations/{id}/members", () => {
  it("invites; the person becomes a member with the role once they accept, and is listed", async () => {
    const { owner, org, path } = await orgWithOwner();
    const user = await registerUser({ firstName: "Grace", lastName: "Hopper" });
    const invitation = expectOk(
      await call("POST", path, { token: owner.token, body: { email: user.email.toUpperCase(), role: "manager" } }),
      202,
    );
    expect(invitation).toMatchObject({ organizationId: org.id, email: user.email, role: "manager", status: "pending" });
    expect(expectOk(await call("GET", "/v1/auth/me", { token: user.token })).memberships).toEqual([]);
    await acceptInvitation(user, org.id);
    const listed = expectOk(await call("GET", path, { token: owner.token })).find((m: any) => m.userId === user.id);
    expect(listed).toMatchObject({ userId: user.id, email: user.email, firstName: "Grace", lastName: "Hopper", role: "manager" });
    expect(listed.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const me = expectOk(await call("GET", "/v1/auth/me", { token: user.token }));
    expect(me.memberships).toEqual([{ organizationId: org.id, role: "manager", locationIds: null }]);
  });

  it("emits member.joined on the EVENTS queue when the invitee accepts, not before", async () => {
    const send = vi.spyOn(env.EVENTS as Env["EVENTS"], "send");
    try {
      const { owner, org } = await orgWithOwner();
      const user = await registerUser();
      await inviteMember(owner, org.id, user.email, "operator");
      expect(send.mock.calls.map(([message]) => message).filter((m) => m.type === "member.joined")).toEqual([]);
      await acceptInvitation(user, org.id);
      const joined = send.mock.calls.map(([message]) => message).filter((m) => m.type === "member.joined");
      expect(joined).toHaveLength(1);
      expect(joined[0]).toMatchObject({
        organizationId: org.id,
        queueId: null,
        ticketId: null,
        data: { userId: user.id, role: "operator", addedBy: owner.id },
      });
      expect(joined[0]!.id).toMatch(/^evt_/);
    } finally {
      send.mockRestore();
    }
  });

  it("answers 409 on email for someone already a member", async () => {
    const { owner, org, path } = await orgWithOwner();
    const user = await registerUser();
    await addMember(owner, org.id, "operator", user);
    expectError(await call("POST", path, { token: owner.token, body: { email: user.email, role: "admin" } }), 409, "CONFLICT", "email");
    expectError(await call("POST", path, { token: owner.token, body: { email: owner.email, role: "admin" } }), 409, "CONFLICT", "email");
  });

  it("refuses to create an owner (403), and managers and operators may not add members", async () => {
    const { owner, org, path } = await orgWithOwner();
    const admin = await registerUser();
    const manager = await registerUser();
    await addMember(owner, org.id, "admin", admin);
    await addMember(owner, org.id, "manager", manager);
    const candidate = await registerUser();
    expectError(
      await call("POST", path, { token: owner.token, body: { email: candidate.email, role: "owner" } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(
      await call("POST", path, { token: admin.token, body: { email: candidate.email, role: "owner" } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(
      await call("POST", path, { token: manager.token, body: { email: candidate.email, role: "operator" } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectOk(await call("POST", path, { token: admin.token, body: { email: candidate.email, role: "admin" } }), 202);
    expect(await ownerCount(org.id)).toBe(1);
  });

  it.each([
    ["a missing email", { role: "operator" }, "email"],
    ["a bad email", { email: "not-an-email", role: "operator" }, "email"],
    ["a missing role", { email: "a@example.com" }, "role"],
    ["an unknown role", { email: "a@example.com", role: "superuser" }, "role"],
    ["a wrong type", { email: 12, role: "operator" }, "email"],
    ["an unknown field", { email: "a@example.com", role: "operator", organizationId: "org_x" }, "organizationId"],
  ])("refuses %s with 400", async (_label, body, field) => {
    const { owner, path } = await orgWithOwner();
    expectError(await call("POST", path, { token: owner.token, body }), 400, "VALIDATION_ERROR", field);
  });
});

describe("GET /v1/organizations/{id}/members", () => {
  it("pages members for any member; a read key may not see them, an admin key may", async () => {
    const { owner, org, path } = await orgWithOwner();
    const operator = await registerUser();
    await addMember(owner, org.id, "operator", operator);
    for (let i = 0; i < 3; i++) await addMember(owner, org.id, "operator", await registerUser());
    const page = await call("GET", `${path}?limit=2&page=2`, { token: operator.token });
    expect(expectOk(page)).toHaveLength(2);
    expect(page.body.meta).toMatchObject({ total: 5, page: 2, limit: 2, hasMore: true });
    const first = await call("GET", path, { token: owner.token });
    expect(expectOk(first)[0]).toMatchObject({ userId: owner.id, role: "owner" });
    const readKey = await createApiKey(owner, org.id, ["read"]);
    expectError(await call("GET", path, { apiKey: readKey.key }), 403, "AUTHORIZATION_ERROR");
    const adminKey = await createApiKey(owner, org.id, ["admin"]);
    expect(expectOk(await call("GET", path, { apiKey: adminKey.key }))).toHaveLength(5);
  });

  it.each([
    ["limit above 100", "limit=101", "limit"],
    ["limit zero", "limit=0", "limit"],
    ["a page that is not a number", "page=two", "page"],
  ])("refuses %s with 400", async (_label, query, field) => {
    const { owner, path } = await orgWithOwner();
    expectError(await call("GET", `${path}?${query}`, { token: owner.token }), 400, "VALIDATION_ERROR", field);
  });
});

describe("PATCH and DELETE /v1/organizations/{id}/members/{userId}", () => {
  it("changes a role and removes a member", async () => {
    const { owner, org, path } = await orgWithOwner();
    const user = await registerUser();
    await addMember(owner, org.id, "operator", user);
    expect(expectOk(await call("PATCH", `${path}/${user.id}`, { token: owner.token, body: { role: "manager" } })).role).toBe("manager");
    expect(expectOk(await call("DELETE", `${path}/${user.id}`, { token: owner.token }))).toEqual({ userId: user.id, removed: true });
    expectError(await call("GET", `/v1/organizations/${org.id}`, { token: user.token }), 404, "NOT_FOUND");
    expectError(await call("DELETE", `${path}/${user.id}`, { token: owner.token }), 404, "NOT_FOUND");
    expectError(await call("PATCH", `${path}/${user.id}`, { token: owner.token, body: { role: "admin" } }), 404, "NOT_FOUND");
  });

  it("never demotes, removes or creates an owner (403): there is always exactly one", async () => {
    const { owner, org, path } = await orgWithOwner();
    const admin = await registerUser();
    await addMember(owner, org.id, "admin", admin);
    expectError(await call("PATCH", `${path}/${owner.id}`, { token: admin.token, body: { role: "operator" } }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("PATCH", `${path}/${owner.id}`, { token: owner.token, body: { role: "admin" } }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("DELETE", `${path}/${owner.id}`, { token: admin.token }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("DELETE", `${path}/${owner.id}`, { token: owner.token }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("PATCH", `${path}/${admin.id}`, { token: owner.token, body: { role: "owner" } }), 403, "AUTHORIZATION_ERROR");
    expect(await ownerCount(org.id)).toBe(1);
  });

  it("is refused to managers and operators (403)", async () => {
    const { owner, org, path } = await orgWithOwner();
    const manager = await registerUser();
    const operator = await registerUser();
    await addMember(owner, org.id, "manager", manager);
    await addMember(owner, org.id, "operator", operator);
    expectError(
      await call("PATCH", `${path}/${operator.id}`, { token: manager.token, body: { role: "manager" } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(await call("DELETE", `${path}/${manager.id}`, { token: operator.token }), 403, "AUTHORIZATION_ERROR");
  });

  it.each([
    ["a missing role", {}, "role"],
    ["an unknown role", { role: "boss" }, "role"],
    ["a wrong type", { role: 1 }, "role"],
    ["an unknown field", { role: "admin", email: "x@example.com" }, "email"],
  ])("PATCH refuses %s with 400", async (_label, body, field) => {
    const { owner, org, path } = await orgWithOwner();
    const user = await registerUser();
    await addMember(owner, org.id, "operator", user);
    expectError(await call("PATCH", `${path}/${user.id}`, { token: owner.token, body }), 400, "VALIDATION_ERROR", field);
  });
});
