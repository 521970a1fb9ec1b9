import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, createCatalog, createOrganization, registerUser, setPlan } from "../helpers/fixtures";

// CONTRACT §10: free text shown to the public (names, visitor names, descriptions, titles) refuses
// control characters, bidi overrides and lone surrogates with 400 VALIDATION_ERROR naming the
// field. A name like `abc\u202Egnp.exe` shows as "abcexe.png" on a board; a NUL truncates it in
// some printers and screen readers.

const UNSAFE = {
  "a right-to-left override": "abc\u202Egnp.exe",
  "a NUL": "Agence\u0000Centre",
  "a lone surrogate": "Caf\uD800e",
  "an isolate": "x\u2066y\u2069",
  "a C1 control": "a\u0085b",
};

async function setup() {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  await setPlan(org.id, "pro");
  const catalog = await createCatalog(owner, org.id);
  const widget = await createApiKey(owner, org.id, ["widget", "write"]);
  return { owner, org, ...catalog, widget };
}

describe("public free text", () => {
  it("is refused on every route that takes it, naming the field, and nothing is written", async () => {
    const s = await setup();
    const token = s.owner.token;
    const cases: { method: string; path: string; body: (v: string) => Record<string, unknown>; field: string; apiKey?: string }[] = [
      {
        method: "POST",
        path: `/v1/widget/queue/${s.queueId}/join`,
        body: (v) => ({ visitorName: v }),
        field: "visitorName",
        apiKey: s.widget.key,
      },
      { method: "POST", path: `/v1/queues/${s.queueId}/operator-join`, body: (v) => ({ visitorName: v }), field: "visitorName" },
      { method: "PATCH", path: `/v1/locations/${s.locationId}`, body: (v) => ({ name: v }), field: "name" },
      { method: "PATCH", path: `/v1/locations/${s.locationId}`, body: (v) => ({ address: v }), field: "address" },
      { method: "PATCH", path: `/v1/services/${s.serviceId}`, body: (v) => ({ name: v }), field: "name" },
      { method: "PATCH", path: `/v1/services/${s.serviceId}`, body: (v) => ({ description: v }), field: "description" },
      { method: "PATCH", path: `/v1/business/queues/${s.queueId}`, body: (v) => ({ name: v }), field: "name" },
      { method: "PATCH", path: `/v1/business/queues/${s.queueId}`, body: (v) => ({ description: v }), field: "description" },
      { method: "PATCH", path: `/v1/organizations/${s.org.id}`, body: (v) => ({ name: v }), field: "name" },
      { method: "POST", path: `/v1/locations/${s.locationId}/desks`, body: (v) => ({ name: v, queueIds: [s.queueId] }), field: "name" },
      {
        method: "POST",
        path: `/v1/calendar/organization/${s.org.id}`,
        body: (v) => ({ title: v, startDate: "2030-01-01T09:00:00Z", endDate: "2030-01-01T10:00:00Z" }),
        field: "title",
      },
    ];
    for (const c of cases) {
      for (const [what, value] of Object.entries(UNSAFE)) {
        const res = await call(c.method, c.path, { token: c.apiKey ? undefined : token, apiKey: c.apiKey, body: c.body(value) });
        expect(res.status, `${c.method} ${c.path} ${c.field} with ${what}`).toBe(400);
        expectError(res, 400, "VALIDATION_ERROR", c.field);
      }
    }
    // Nothing was written: the names are the fixture's, and the queue has nobody waiting.
    const locations = expectOk(await call("GET", "/v1/business/locations", { token, headers: { "X-Organization-Id": s.org.id } }));
    expect(locations.find((l: { id: string }) => l.id === s.locationId)).toMatchObject({ name: "Main", address: "1 rue" });
    expect(expectOk(await call("GET", `/v1/queues/${s.queueId}`, { token }))).toMatchObject({ name: "Main", waitingCount: 0 });
  });

  it("keeps what people really write: accents, scripts, emoji, and line breaks in descriptions", async () => {
    const s = await setup();
    const token = s.owner.token;
    for (const name of ["Zoë Ørsted-Ñúñez", "محمد علي", "李小龍", "Anne 👩🏽‍⚕️", "Guichet n° 3 — Crédit"]) {
      expectOk(await call("PATCH", `/v1/locations/${s.locationId}`, { token, body: { name } }));
      const ticket = expectOk(
        await call("POST", `/v1/widget/queue/${s.queueId}/join`, { apiKey: s.widget.key, body: { visitorName: name } }),
        201,
      );
      expect(ticket.visitorName ?? ticket.ticket?.visitorName).toBe(name);
    }
    const description = "Ouvert du lundi au vendredi.\nSamedi matin sur rendez-vous.\tMerci.";
    expect(expectOk(await call("PATCH", `/v1/services/${s.serviceId}`, { token, body: { description } })).description).toBe(description);
  });
});
