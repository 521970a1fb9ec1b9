import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { addMember, createOrganization, registerUser } from "../helpers/fixtures";

// Issue 40: a signed-in person gets everything held about them (GET /v1/auth/me/export) and can
// erase their account (DELETE /v1/auth/me), unless they are the last owner of an organization.

describe("GET /v1/auth/me/export", () => {
  it("answers the account, its memberships, sessions and the audit entries it made; never a password or token", async () => {
    const owner = await registerUser({ firstName: "Awa", lastName: "Diallo" });
    const org = await createOrganization(owner, { name: "Banque du Port" });
    const data = expectOk(await call("GET", "/v1/auth/me/export", { token: owner.token }));
    expect(data.user).toMatchObject({ id: owner.id, email: owner.email, firstName: "Awa", lastName: "Diallo" });
    expect(data.memberships).toEqual([
      expect.objectContaining({ organizationId: org.id, organizationName: "Banque du Port", role: "owner" }),
    ]);
    expect(data.sessions.length).toBeGreaterThanOrEqual(1);
    expect(data.auditEntries).toEqual([expect.objectContaining({ organizationId: org.id, action: "organization.created" })]);
    const text = JSON.stringify(data);
    expect(text).not.toMatch(/password|tokenHash|token_hash|sess_/i);
  });

  it("needs a session", async () => {
    expectError(await call("GET", "/v1/auth/me/export"), 401, "AUTHENTICATION_ERROR");
  });
});

describe("DELETE /v1/auth/me", () => {
  it("refuses the last owner of an organization with 409 naming it", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { name: "Banque du Port" });
    const res = await call("DELETE", "/v1/auth/me", { token: owner.token });
    expectError(res, 409, "CONFLICT");
    expect(res.body.error.message).toContain("Banque du Port");
    expect(res.body.error.details.organizations).toEqual([{ id: org.id, name: "Banque du Port" }]);
    expectOk(await call("GET", "/v1/auth/me", { token: owner.token }));
  });

  it("erases a member: memberships and sessions gone, the user row anonymised, sign-in refused, the organization's log records it", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const member = await addMember(owner, org.id, "operator");
    const erased = expectOk(await call("DELETE", "/v1/auth/me", { token: member.token }));
    expect(erased).toEqual({ erased: true, organizationIds: [org.id] });

    expectError(await call("GET", "/v1/auth/me", { token: member.token }), 401, "AUTHENTICATION_ERROR");
    const login = await call("POST", "/v1/auth/login", { body: { email: member.email, password: "correct horse battery" } });
    expectError(login, 401, "AUTHENTICATION_ERROR");

    const row = await env.DB.prepare("SELECT email, first_name, last_name FROM users WHERE id = ?").bind(member.id).first();
    expect(row).toEqual({ email: `erased+${member.id}@invalid`, first_name: "", last_name: "" });
    const left = await env.DB.prepare(
      "SELECT (SELECT COUNT(*) FROM members WHERE user_id = ?1) AS members, (SELECT COUNT(*) FROM sessions WHERE user_id = ?1) AS sessions",
    )
      .bind(member.id)
      .first();
    expect(left).toEqual({ members: 0, sessions: 0 });
    const anyMention = await env.DB.prepare("SELECT COUNT(*) AS n FROM users WHERE email = ?").bind(member.email).first();
    expect(anyMention).toEqual({ n: 0 });

    const log = expectOk(await call("GET", `/v1/organizations/${org.id}/audit-events?action=member.erased`, { token: owner.token }));
    expect(log).toEqual([expect.objectContaining({ actor: { type: "user", id: member.id }, entityType: "member", entityId: member.id })]);
    const members = expectOk(await call("GET", `/v1/organizations/${org.id}/members`, { token: owner.token }));
    expect(members.map((m: any) => m.userId ?? m.id)).not.toContain(member.id);
  });
});
