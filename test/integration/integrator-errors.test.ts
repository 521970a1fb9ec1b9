import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { createApiKey, createOrganization, registerUser, setPlan } from "../helpers/fixtures";

// Frictions a newcomer hit (issue #32), continued from integrator-frictions.test.ts: errors that
// link to their explanation, 401s that name the credential expected, analytics that default to
// today where the branch is.

describe("every error links to its explanation", () => {
  it("docUrl on the envelope opens GET /v1/errors/{code}, which the API answers without a credential", async () => {
    const res = await call("GET", "/v1/queues/que_nothing0000000000000");
    expectError(res, 401, "AUTHENTICATION_ERROR");
    expect(res.body.error.docUrl).toBe("https://api.test/v1/errors/AUTHENTICATION_ERROR");

    const doc = expectOk(await call("GET", new URL(res.body.error.docUrl).pathname));
    expect(doc).toMatchObject({ code: "AUTHENTICATION_ERROR", status: 401, docUrl: res.body.error.docUrl });
    expect(doc.meaning).toMatch(/credential/);

    const all = expectOk(await call("GET", "/v1/errors"));
    expect(all.map((d: { code: string }) => d.code)).toEqual(expect.arrayContaining(["QUEUE_EMPTY", "VALIDATION_ERROR", "NOT_FOUND"]));
    expectError(await call("GET", "/v1/errors/NO_SUCH_CODE"), 400, "VALIDATION_ERROR", "code");
  });
});

describe("a 401 names the credential it expected", () => {
  it("no credential: the message names X-API-Key and the Bearer session, details.expected lists them", async () => {
    const res = await call("GET", "/v1/business/dashboard");
    expectError(res, 401, "AUTHENTICATION_ERROR");
    expect(res.body.error.message).toContain("X-API-Key");
    expect(res.body.error.message).toContain("Authorization: Bearer sess_");
    expect(res.body.error.details.expected).toEqual(expect.arrayContaining(["X-API-Key: qk_live_…"]));
  });

  it("an unknown key, a malformed Authorization: each says which header and what it must carry", async () => {
    const key = await call("GET", "/v1/business/dashboard", { apiKey: "qk_live_notakey" });
    expectError(key, 401, "AUTHENTICATION_ERROR");
    expect(key.body.error.message).toMatch(/^Unknown API key: X-API-Key/);
    const basic = await call("GET", "/v1/business/dashboard", { headers: { Authorization: "Basic dXNlcjpwYXNz" } });
    expectError(basic, 401, "AUTHENTICATION_ERROR");
    expect(basic.body.error.message).toContain("The Authorization header must be 'Bearer <token>'");
  });
});

describe("analytics dates default to today where the queue is", () => {
  it("at 00:30 in Paris (22:30 UTC), no range reads the Paris day that just began, and counts its ticket", async () => {
    testClock.set("2026-06-10T22:30:00.000Z");
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "banking" });
    await setPlan(org.id, "pro");
    const location = expectOk(
      await call("POST", "/v1/locations", {
        token: owner.token,
        body: { organizationId: org.id, name: "Opéra", address: "1 rue Auber", latitude: 48.87, longitude: 2.33, timezone: "Europe/Paris" },
      }),
      201,
    );
    const headers = { "X-Organization-Id": org.id };
    const service = expectOk(
      await call("POST", "/v1/services", {
        token: owner.token,
        headers,
        body: { name: "Counter", locationIds: [location.id], serviceTypeId: "st_other_general" },
      }),
      201,
    );
    const queue = expectOk(
      await call("POST", "/v1/business/queues", { token: owner.token, headers, body: { serviceId: service.id, name: "Main" } }),
      201,
    );
    expectOk(await call("POST", `/v1/queues/${queue.id}/operator-join`, { token: owner.token, body: {} }), 201);
    await settle(queue.id);

    const { key } = await createApiKey(owner, org.id, ["read:analytics"]);
    const today = expectOk(await call("GET", "/v1/analytics/summary", { apiKey: key }));
    expect(today).toMatchObject({ from: "2026-06-10T22:00:00.000Z", to: "2026-06-11T22:00:00.000Z", timeZones: ["Europe/Paris"] });
    expect(today.totals.created).toBe(1);
    // `from` alone runs to the end of today there; a UTC reading would have ended at 00:00 UTC.
    const since = expectOk(await call("GET", "/v1/analytics/summary?from=2026-06-10", { apiKey: key }));
    expect(since).toMatchObject({ from: "2026-06-09T22:00:00.000Z", to: "2026-06-11T22:00:00.000Z" });
    // A bad bound is still refused with the field named.
    expectError(await call("GET", "/v1/analytics/summary?to=2026-13-01", { apiKey: key }), 400, "VALIDATION_ERROR", "to");
  });
});
