import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { acceptInvitation, addMember, createOrganization, inviteMember, queueFixture, registerUser } from "../helpers/fixtures";

// Membership by consent (issue 26): an organization could add any registered account by
// e-mail (201, and 404 naming `email` for an unknown one: an oracle of who has an account);
// the victim then failed every request without X-Organization-Id and could not leave.

const DAY = 24 * 60 * 60 * 1000;

/** What the outbox stand-in would have e-mailed (it prints one JSON line per message). */
function outboxEmails(log: { mock: { calls: unknown[][] } }): { to: string; payload: any }[] {
  return log.mock.calls
    .map(([line]): any => {
      try {
        return JSON.parse(String(line));
      } catch {
        return null;
      }
    })
    .filter((m: any) => m?.notification === "outbox" && m.channel === "email");
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("inviting a member", () => {
  it("answers the same 202 whether the e-mail has an account or not, and makes nobody a member", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const victim = await registerUser();
    const log = vi.spyOn(console, "log");
    const known = await call("POST", `/v1/organizations/${org.id}/members`, {
      token: owner.token,
      body: { email: victim.email, role: "admin" },
    });
    const stranger = `${unique("nobody")}@example.com`;
    const unknown = await call("POST", `/v1/organizations/${org.id}/members`, {
      token: owner.token,
      body: { email: stranger, role: "admin" },
    });
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(Object.keys(known.body.data).sort()).toEqual(Object.keys(unknown.body.data).sort());
    expect(known.body.data).toMatchObject({ status: "pending", role: "admin", email: victim.email });
    expect(Date.parse(known.body.data.expiresAt) - Date.parse(known.body.data.createdAt)).toBe(7 * DAY);
    // Both were e-mailed; neither is a member, and the victim's own requests are untouched.
    expect(outboxEmails(log).map((m) => m.to)).toEqual([victim.email, stranger]);
    expect(outboxEmails(log)[0]!.payload.text).toContain(`/v1/invitations/${known.body.data.id}/accept`);
    expect(expectOk(await call("GET", "/v1/auth/me", { token: victim.token })).memberships).toEqual([]);
    expectError(await call("GET", `/v1/organizations/${org.id}`, { token: victim.token }), 404, "NOT_FOUND");
  });

  it("tells an invitee with an account in the app, and they accept from their own list", async () => {
    const f = await queueFixture("pro");
    const invitee = await registerUser();
    const other = await createOrganization(invitee);
    await inviteMember(f.owner, f.organizationId, invitee.email, "operator");
    const inbox = expectOk(await call("GET", "/v1/notifications", { token: invitee.token }));
    const note = inbox.find((n: any) => n.type === "member.invited");
    expect(note.data).toMatchObject({ organizationId: f.organizationId });
    const mine = expectOk(await call("GET", "/v1/invitations", { token: invitee.token }));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ id: note.data.invitationId, organizationId: f.organizationId, organizationName: "Test organization" });
    // Their requests that name no organization still go to their own while they have one.
    expectOk(await call("GET", "/v1/business/dashboard", { token: invitee.token }));
    const accepted = expectOk(await call("POST", `/v1/invitations/${mine[0].id}/accept`, { token: invitee.token }));
    expect(accepted.status).toBe("accepted");
    const me = expectOk(await call("GET", "/v1/auth/me", { token: invitee.token }));
    expect(me.memberships.map((m: any) => m.organizationId).sort()).toEqual([f.organizationId, other.id].sort());
    expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets`, { token: invitee.token }));
  });

  it("reaches someone who registers later with the invited e-mail", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const email = `${unique("later")}@example.com`;
    await inviteMember(owner, org.id, email, "manager");
    const person = await registerUser({ email });
    await acceptInvitation(person, org.id);
    expect(expectOk(await call("GET", "/v1/auth/me", { token: person.token })).memberships).toEqual([
      { organizationId: org.id, role: "manager", locationIds: null },
    ]);
  });

  it("may be accepted only by the invited account, once, within 7 days", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const invitee = await registerUser();
    const intruder = await registerUser();
    const { id } = await inviteMember(owner, org.id, invitee.email, "operator");
    expectError(await call("POST", `/v1/invitations/${id}/accept`, { token: intruder.token }), 404, "NOT_FOUND");
    const key = await call("POST", `/v1/organizations/${org.id}/api-keys`, {
      token: owner.token,
      body: { name: "k", permissions: ["admin"] },
    });
    expectError(await call("POST", `/v1/invitations/${id}/accept`, { apiKey: key.body.data.key }), 403, "AUTHORIZATION_ERROR");
    expectOk(await call("POST", `/v1/invitations/${id}/accept`, { token: invitee.token }));
    const again = await call("POST", `/v1/invitations/${id}/accept`, { token: invitee.token });
    expectError(again, 409, "INVALID_STATE");
    expect(again.body.error.details.status).toBe("accepted");

    const start = Date.now();
    testClock.set(start);
    const email = `${unique("slow")}@example.com`;
    await inviteMember(owner, org.id, email, "operator");
    testClock.set(start + 7 * DAY + 60_000);
    const late = await registerUser({ email });
    expect(expectOk(await call("GET", "/v1/invitations", { token: late.token }))).toEqual([]);
    const login = expectOk(await call("POST", "/v1/auth/login", { body: { email: owner.email, password: "correct horse battery" } }));
    const listed = await call("GET", `/v1/organizations/${org.id}/invitations`, { token: login.session.token });
    expect(expectOk(listed).find((i: any) => i.email === email).status).toBe("expired");
  });

  it("may be declined, and revoked by an admin; neither makes a member", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const decliner = await registerUser();
    const revoked = await registerUser();
    const a = await inviteMember(owner, org.id, decliner.email, "operator");
    const b = await inviteMember(owner, org.id, revoked.email, "operator");
    expect(expectOk(await call("POST", `/v1/invitations/${a.id}/decline`, { token: decliner.token })).status).toBe("declined");
    const pending = expectOk(await call("GET", `/v1/organizations/${org.id}/invitations`, { token: owner.token }));
    expect(pending.map((i: any) => i.id)).toEqual([b.id]);
    expect(expectOk(await call("DELETE", `/v1/organizations/${org.id}/invitations/${b.id}`, { token: owner.token })).status).toBe(
      "revoked",
    );
    expectError(await call("POST", `/v1/invitations/${b.id}/accept`, { token: revoked.token }), 409, "INVALID_STATE");
    expectError(await call("POST", `/v1/invitations/${a.id}/accept`, { token: decliner.token }), 409, "INVALID_STATE");
    expect(expectOk(await call("GET", `/v1/organizations/${org.id}/members`, { token: owner.token }))).toHaveLength(1);
    // Operators neither list nor revoke.
    const operator = await addMember(owner, org.id, "operator");
    expectError(await call("GET", `/v1/organizations/${org.id}/invitations`, { token: operator.token }), 403, "AUTHORIZATION_ERROR");
  });

  it("inviting a pending e-mail again refreshes the one invitation", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const email = `${unique("twice")}@example.com`;
    const first = await inviteMember(owner, org.id, email, "operator");
    const second = await inviteMember(owner, org.id, email, "manager");
    expect(second.id).toBe(first.id);
    expect(second.role).toBe("manager");
    expect(expectOk(await call("GET", `/v1/organizations/${org.id}/invitations`, { token: owner.token }))).toHaveLength(1);
  });
});

describe("leaving an organization", () => {
  it("any member may leave one they do not own; the owner may not", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const operator = await addMember(owner, org.id, "operator");
    const path = `/v1/organizations/${org.id}/members`;
    expect(expectOk(await call("DELETE", `${path}/${operator.id}`, { token: operator.token }))).toEqual({
      userId: operator.id,
      removed: true,
    });
    expect(expectOk(await call("GET", "/v1/auth/me", { token: operator.token })).memberships).toEqual([]);
    expectError(await call("GET", `/v1/organizations/${org.id}`, { token: operator.token }), 404, "NOT_FOUND");
    expectError(await call("DELETE", `${path}/${owner.id}`, { token: owner.token }), 403, "AUTHORIZATION_ERROR");
  });
});

describe("the default organization", () => {
  it("is used when a user with several memberships names none; only a membership can be chosen", async () => {
    const user = await registerUser();
    const own = await createOrganization(user);
    const owner = await registerUser();
    const other = await createOrganization(owner);
    await addMember(owner, other.id, "manager", user);
    expectError(await call("GET", "/v1/business/dashboard", { token: user.token }), 400, "VALIDATION_ERROR", "X-Organization-Id");

    expectOk(await call("PATCH", "/v1/auth/me", { token: user.token, body: { defaultOrganizationId: other.id } }));
    expect(expectOk(await call("GET", "/v1/auth/me", { token: user.token })).user.defaultOrganizationId).toBe(other.id);
    expectOk(await call("GET", "/v1/business/dashboard", { token: user.token }));

    // The header still wins; a stranger organization cannot be chosen; null clears the choice.
    expectOk(await call("GET", "/v1/business/dashboard", { token: user.token, headers: { "X-Organization-Id": own.id } }));
    const stranger = await createOrganization(await registerUser());
    expectError(
      await call("PATCH", "/v1/auth/me", { token: user.token, body: { defaultOrganizationId: stranger.id } }),
      404,
      "NOT_FOUND",
      "defaultOrganizationId",
    );
    expectError(
      await call("PATCH", "/v1/auth/me", { token: user.token, body: { defaultOrganizationId: 7 } }),
      400,
      "VALIDATION_ERROR",
      "defaultOrganizationId",
    );
    expectError(
      await call("PATCH", "/v1/auth/me", { token: user.token, body: { defaultOrganizationId: null, language: "fr" } }),
      400,
      "VALIDATION_ERROR",
      "language",
    );
    expectOk(await call("PATCH", "/v1/auth/me", { token: user.token, body: { defaultOrganizationId: null } }));
    expectError(await call("GET", "/v1/business/dashboard", { token: user.token }), 400, "VALIDATION_ERROR", "X-Organization-Id");

    // Leaving the default organization leaves a stale choice that is ignored, not an error.
    expectOk(await call("PATCH", "/v1/auth/me", { token: user.token, body: { defaultOrganizationId: other.id } }));
    expectOk(await call("DELETE", `/v1/organizations/${other.id}/members/${user.id}`, { token: user.token }));
    expectOk(await call("GET", "/v1/business/dashboard", { token: user.token }));
  });
});
