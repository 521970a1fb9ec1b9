import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { addMember, createApiKey, queueFixture, registerUser, walkIn } from "../helpers/fixtures";

// Issue 43: every revocation is refused on the very next request. Each case first uses the
// credential on the hot routes (join, call-next, GET ticket: the credential batch that also
// reads the path's queue and the caller's role), so anything an isolate kept from those
// requests (prepared statements, the Drizzle client) is warm; the next request, in this same
// isolate (the strictest case: other isolates share nothing but D1 and the objects), must be
// refused. A session is held by its user's object since issue 43, told of every change before
// the change answers (docs/hot-path.md "The caller's object"; more cases in caller-object.test.ts).

describe("revocation on the very next request", () => {
  it("logout: the token is refused at once, on the queue routes and elsewhere", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
    expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { token: customer.token }));
    expectOk(await call("POST", "/v1/auth/logout", { token: customer.token }));
    for (const [method, path] of [
      ["GET", `/v1/tickets/${ticket.id}`],
      ["POST", `/v1/queues/${f.queueId}/join`],
      ["GET", "/v1/auth/me"],
    ] as const) {
      const res = await call(method, path, { token: customer.token });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body.error.code).toBe("AUTHENTICATION_ERROR");
    }
  });

  it("removed member: their next call-next and ticket read are refused", async () => {
    const f = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    const t = await walkIn({ token: f.owner.token }, f.queueId);
    await walkIn({ token: f.owner.token }, f.queueId);
    expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: operator.token }));
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token }));
    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}/members/${operator.id}`, { token: f.owner.token }));
    expect((await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token })).status).toBe(404);
    expect((await call("GET", `/v1/tickets/${t.id}`, { token: operator.token })).status).toBe(404);
    // (GET /v1/queues/{id} is public: anyone may read a queue.)
    // Their session itself still works (they are a user, not a member any more).
    expectOk(await call("GET", "/v1/auth/me", { token: operator.token }));
  });

  it("lowered role: a manager made operator can no longer change the queue, and still operates it", async () => {
    const f = await queueFixture("pro");
    const manager = await addMember(f.owner, f.organizationId, "manager");
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: manager.token, body: { name: "Renamed" } }));
    expectOk(
      await call("PATCH", `/v1/organizations/${f.organizationId}/members/${manager.id}`, {
        token: f.owner.token,
        body: { role: "operator" },
      }),
    );
    const res = await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: manager.token, body: { name: "Again" } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("AUTHORIZATION_ERROR");
    await walkIn({ token: f.owner.token }, f.queueId);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: manager.token }));
  });

  it("deleted organization: its members' sessions lose its queues and its API keys stop working", async () => {
    const f = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    const { key } = await createApiKey(f.owner, f.organizationId, ["write:queues"]);
    const t = await walkIn({ apiKey: key }, f.queueId);
    expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: operator.token }));
    expectOk(await call("GET", `/v1/queues/${f.queueId}`, { apiKey: key }));
    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}`, { token: f.owner.token }));
    expect((await call("GET", `/v1/tickets/${t.id}`, { token: operator.token })).status).toBe(404);
    expect((await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token })).status).toBe(404);
    expect((await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })).status).toBe(404);
    const keyed = await call("GET", `/v1/queues/${f.queueId}`, { apiKey: key });
    expect([401, 403]).toContain(keyed.status);
    expect(["AUTHENTICATION_ERROR", "KEY_REVOKED"]).toContain(keyed.body.error.code);
  });

  it("revoked API key: its next join, call-next and ticket read are refused with KEY_REVOKED", async () => {
    const f = await queueFixture("pro");
    const { key, id } = await createApiKey(f.owner, f.organizationId, ["write:queues"]);
    const t = await walkIn({ apiKey: key }, f.queueId);
    expectOk(await call("GET", `/v1/tickets/${t.id}`, { apiKey: key }));
    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}/api-keys/${id}`, { token: f.owner.token }));
    for (const [method, path] of [
      ["POST", `/v1/queues/${f.queueId}/operator-join`],
      ["POST", `/v1/queues/${f.queueId}/call-next`],
      ["GET", `/v1/tickets/${t.id}`],
    ] as const) {
      const res = await call(method, path, { apiKey: key });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error.code).toBe("KEY_REVOKED");
    }
  });
});
