import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { addMember, createApiKey, queueFixture } from "../helpers/fixtures";

// A 403 names what a person can act on (issue 39): the key scope they can create, or the roles
// that may act; the internal permission stays in details for support.

describe("permission refusals", () => {
  it("a key without the scope is told which scope to create (manage:webhooks), the permission kept in details", async () => {
    const f = await queueFixture("pro");
    const write = (await createApiKey(f.owner, f.organizationId, ["write"])).key;
    const res = await call("GET", "/v1/events", { apiKey: write });
    expectError(res, 403, "AUTHORIZATION_ERROR");
    const refused = res.body.error;
    expect(refused.message).toBe("This API key cannot do this: it needs a key with manage:webhooks (or admin)");
    expect(refused.message).not.toContain("WEBHOOK_MANAGE");
    expect(refused.details).toMatchObject({
      permission: "WEBHOOK_MANAGE",
      scopes: ["manage:webhooks", "admin"],
      roles: ["owner", "admin"],
    });
    // The README's quickstart key (write + manage:webhooks) reads the event stream.
    const quickstart = (await createApiKey(f.owner, f.organizationId, ["write", "manage:webhooks"])).key;
    expectOk(await call("GET", "/v1/events", { apiKey: quickstart }));
    // A guarded route (a queue in the path) says the same.
    const read = (await createApiKey(f.owner, f.organizationId, ["read"])).key;
    const guardedRes = await call("POST", `/v1/queues/${f.queueId}/call-next`, { apiKey: read });
    expectError(guardedRes, 403, "AUTHORIZATION_ERROR");
    const call_ = guardedRes.body.error;
    expect(call_.message).toBe("This API key cannot do this: it needs a key with write:queues (or write, admin)");
    expect(call_.details).toMatchObject({ permission: "QUEUE_OPERATE" });
  });

  it("a member is told which roles may act", async () => {
    const f = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    const res = await call("GET", `/v1/organizations/${f.organizationId}/webhooks`, { token: operator.token });
    expectError(res, 403, "AUTHORIZATION_ERROR");
    const refused = res.body.error;
    expect(refused.message).toBe("Your role (operator) cannot do this: it needs owner or admin");
    expect(refused.details).toMatchObject({ permission: "WEBHOOK_MANAGE", roles: ["owner", "admin"] });
  });
});
