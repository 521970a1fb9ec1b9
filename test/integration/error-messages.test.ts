import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { createCatalog, createOrganization, registerUser } from "../helpers/fixtures";

// Messages that say what to do (issue: an API integrators enjoy). Each case names the fix.

describe("error messages that say what to do", () => {
  it("a customer operating a queue is told they are not a member of its organization", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const { queueId } = await createCatalog(owner, org.id);
    const customer = await registerUser({ accountType: "customer" });
    const res = await call("POST", `/v1/queues/${queueId}/call-next`, { token: customer.token });
    expectError(res, 404, "NOT_FOUND");
    expect(res.body.error.message).toMatch(/not a member of the organization that runs this queue/);
    expect(res.body.error.details).toMatchObject({ reason: "not_a_member" });
  });

  it("one phone rule everywhere, with an example in the message", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const { queueId } = await createCatalog(owner, org.id);
    const customer = await registerUser({ accountType: "customer" });
    const res = await call("POST", `/v1/queues/${queueId}/join`, { token: customer.token, body: { phone: "06 12 34 56 78" } });
    expectError(res, 400, "VALIDATION_ERROR", "phone");
    expect(res.body.error.details.reason).toMatch(/E\.164.*\+33612345678/);
    const widgetKey = expectOk(
      await call("POST", `/v1/organizations/${org.id}/api-keys`, {
        token: owner.token,
        body: { name: "w", permissions: ["widget", "write"] },
      }),
      201,
    );
    const widget = await call("POST", `/v1/widget/queue/${queueId}/join`, { apiKey: widgetKey.key, body: { phone: "06 12 34 56 78" } });
    expectError(widget, 400, "VALIDATION_ERROR", "phone");
    expect(widget.body.error.details.reason).toBe(res.body.error.details.reason);
    expectOk(await call("POST", `/v1/queues/${queueId}/join`, { token: customer.token, body: { phone: "+33612345678" } }), 201);
  });

  it("skip-absent needs no body", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const { queueId } = await createCatalog(owner, org.id);
    expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { token: owner.token }), 201);
    const called = expectOk(await call("POST", `/v1/queues/${queueId}/call-next`, { token: owner.token }));
    const skipped = expectOk(await call("POST", `/v1/tickets/${called.id}/skip-absent`, { token: owner.token }));
    expect(skipped).toMatchObject({ status: "skipped", skipReason: "absent" });
  });

  it("every 402 has the same details: requiredPlan, currentPlan, limit, feature", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const { serviceId, locationId } = await createCatalog(owner, org.id);
    const queue = await call("POST", "/v1/business/queues", { token: owner.token, body: { serviceId, name: "Second" } });
    expectError(queue, 402, "PLAN_REQUIRED");
    expect(queue.body.error.details).toEqual({ requiredPlan: "pro", currentPlan: "starter", limit: 1, feature: "queues" });
    const service = await call("POST", "/v1/services", {
      token: owner.token,
      body: { name: "Second", locationIds: [locationId], serviceTypeId: "st_bank_teller" },
    });
    expectError(service, 402, "PLAN_REQUIRED");
    expect(service.body.error.details).toEqual({ requiredPlan: "pro", currentPlan: "starter", limit: 1, feature: "services" });
  });

  it("GET /v1/organizations is a list with meta, paginated like every list", async () => {
    const owner = await registerUser();
    await createOrganization(owner);
    await createOrganization(owner);
    const res = await call("GET", "/v1/organizations?limit=1", { token: owner.token });
    expectOk(res);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.meta).toMatchObject({ total: 2, page: 1, limit: 1, hasMore: true });
  });
});
