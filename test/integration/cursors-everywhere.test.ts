import { env } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import openapi from "../../clients/typescript/openapi.json";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { acceptInvitation, createCatalog, createOrganization, registerUser, type TestUser } from "../helpers/fixtures";
import { fakeInternet } from "../helpers/outbound";

// Issue 41: every paged list reads by cursor. The lists are taken from the API document (every
// GET with a `page` parameter), so a list added later is checked here too: it must take
// startingAfter/endingBefore, and walking it by cursor while rows are created between pages
// neither repeats nor skips a row that was there when the walk began.

afterEach(() => vi.restoreAllMocks());

type Operation = { method: string; path: string; parameters: string[]; metaFields: string[] };

function pagedLists(): Operation[] {
  const doc = openapi as any;
  const schemaOf = (s: any): any => (s?.$ref ? doc.components.schemas[s.$ref.split("/").pop()] : s);
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    const get = ops.get;
    const parameters: string[] = (get?.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => p.name);
    if (!get || !parameters.includes("page")) continue;
    const body = schemaOf(get.responses["200"].content["application/json"].schema);
    out.push({ method: "GET", path, parameters, metaFields: Object.keys(schemaOf(body.properties.meta).properties) });
  }
  return out;
}

let owner: TestUser;
let orgId: string;
let catalog: { locationId: string; serviceId: string; queueId: string };
let webhookId: string;

/** For each list: its URL (with the fixture's ids) and how to add one more row to it. */
const LISTS: Record<string, { url: () => string; insert: () => Promise<unknown>; idOf?: (item: any) => string }> = {
  "/v1/organizations": { url: () => "/v1/organizations", insert: () => createOrganization(owner) },
  "/v1/organizations/{organizationId}/api-keys": {
    url: () => `/v1/organizations/${orgId}/api-keys`,
    insert: () => call("POST", `/v1/organizations/${orgId}/api-keys`, { token: owner.token, body: { name: unique("key") } }),
  },
  "/v1/organizations/{organizationId}/webhooks": {
    url: () => `/v1/organizations/${orgId}/webhooks`,
    insert: () =>
      call("POST", `/v1/organizations/${orgId}/webhooks`, {
        token: owner.token,
        // One event this file never causes: the deliveries walked are the test sends' only (with
        // "*", the other lists' events reached it from the EVENTS consumer during the walk).
        body: { url: "https://hooks.receiver.com/queue", events: ["queue.long_wait"] },
      }),
  },
  "/v1/organizations/{organizationId}/webhooks/{webhookId}/deliveries": {
    url: () => `/v1/organizations/${orgId}/webhooks/${webhookId}/deliveries`,
    insert: () => call("POST", `/v1/organizations/${orgId}/webhooks/${webhookId}/test`, { token: owner.token }),
  },
  "/v1/business/locations": {
    url: () => `/v1/business/locations`,
    insert: () =>
      call("POST", "/v1/locations", {
        token: owner.token,
        body: { organizationId: orgId, name: unique("Branch"), address: "2 rue", latitude: 48.85, longitude: 2.35 },
      }),
  },
  "/v1/locations/search": {
    url: () => `/v1/locations/search?organizationId=${orgId}`,
    insert: () => LISTS["/v1/business/locations"]!.insert(),
  },
  "/v1/business/services": {
    url: () => "/v1/business/services",
    insert: () =>
      call("POST", "/v1/services", {
        token: owner.token,
        body: { name: unique("Desk"), locationIds: [catalog.locationId], serviceTypeId: "st_bank_teller" },
      }),
  },
  "/v1/services/organization/search": {
    url: () => `/v1/services/organization/search?organizationId=${orgId}`,
    insert: () => LISTS["/v1/business/services"]!.insert(),
  },
  "/v1/business/queues": {
    url: () => "/v1/business/queues",
    // One queue per service on every plan's default: each new queue gets a service of its own.
    insert: async () => {
      const service = expectOk((await LISTS["/v1/business/services"]!.insert()) as any, 201);
      expectOk(
        await call("POST", "/v1/business/queues", {
          token: owner.token,
          headers: { "X-Organization-Id": orgId },
          body: { serviceId: service.id, name: unique("q") },
        }),
        201,
      );
    },
  },
  "/v1/locations/{locationId}/desks": {
    url: () => `/v1/locations/${catalog.locationId}/desks`,
    insert: () =>
      call("POST", `/v1/locations/${catalog.locationId}/desks`, {
        token: owner.token,
        body: { name: unique("Desk"), queueIds: [catalog.queueId] },
      }),
  },
  "/v1/organizations/{organizationId}/invitations": {
    url: () => `/v1/organizations/${orgId}/invitations`,
    insert: () =>
      call("POST", `/v1/organizations/${orgId}/members`, {
        token: owner.token,
        body: { email: `${unique("inv")}@example.com`, role: "operator" },
      }),
  },
  "/v1/organizations/{organizationId}/members": {
    url: () => `/v1/organizations/${orgId}/members`,
    insert: async () => {
      const member = await registerUser();
      expectOk(
        await call("POST", `/v1/organizations/${orgId}/members`, { token: owner.token, body: { email: member.email, role: "operator" } }),
        202,
      );
      await acceptInvitation(member, orgId);
    },
    idOf: (m) => m.userId,
  },
  "/v1/business/calendar/availability": {
    url: () => "/v1/business/calendar/availability",
    insert: () => LISTS["/v1/organizations/{organizationId}/members"]!.insert(),
    idOf: (m) => m.userId,
  },
  "/v1/qr-tokens": {
    url: () => "/v1/qr-tokens",
    insert: () => call("POST", "/v1/qr-tokens", { token: owner.token, body: { purpose: "queue_join", queueId: catalog.queueId } }),
  },
  "/v1/nfc/tags": {
    url: () => "/v1/nfc/tags",
    insert: () =>
      call("POST", "/v1/nfc/tags", {
        token: owner.token,
        body: { nfcId: unique("nfc"), queueId: catalog.queueId, locationName: "Door", latitude: 48.85, longitude: 2.35 },
      }),
  },
};

beforeAll(async () => {
  owner = await registerUser();
  const org = await createOrganization(owner);
  orgId = org.id;
  await env.DB.prepare("UPDATE subscriptions SET plan = 'enterprise' WHERE organization_id = ?").bind(orgId).run();
  fakeInternet({ "hooks.receiver.com": { A: ["93.184.216.34"] } });
  catalog = await createCatalog(owner, orgId);
  webhookId = expectOk((await LISTS["/v1/organizations/{organizationId}/webhooks"]!.insert()) as any, 201).id;
  vi.restoreAllMocks();
});

describe("every paged list of the API document reads by cursor", () => {
  const lists = pagedLists();

  it("each takes startingAfter and endingBefore and answers nextCursor and previousCursor", () => {
    expect(lists.length).toBeGreaterThanOrEqual(20);
    for (const list of lists) {
      expect({ path: list.path, parameters: list.parameters }).toEqual({
        path: list.path,
        parameters: expect.arrayContaining(["startingAfter", "endingBefore"]),
      });
      expect({ path: list.path, meta: list.metaFields }).toEqual({
        path: list.path,
        meta: expect.arrayContaining(["nextCursor", "previousCursor"]),
      });
    }
  });

  const walked = lists.filter((l) => LISTS[l.path] !== undefined);
  it.each(walked.map((l) => l.path))("%s: a walk by cursor while rows are created neither repeats nor skips", async (path) => {
    fakeInternet({ "hooks.receiver.com": { A: ["93.184.216.34"] } });
    const list = LISTS[path]!;
    const idOf = list.idOf ?? ((item: any) => item.id);
    for (let i = 0; i < 4; i++) await list.insert();
    const sep = list.url().includes("?") ? "&" : "?";
    const read = async (query: string) => {
      const res = await call("GET", `${list.url()}${sep}${query}`, { token: owner.token, headers: { "X-Organization-Id": orgId } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as { data: any[]; meta: any };
    };
    const before = (await read("limit=100")).data.map(idOf);
    expect(before.length).toBeGreaterThanOrEqual(4);

    const seen: string[] = [];
    let page = await read("limit=2");
    for (let guard = 0; ; guard++) {
      expect(guard).toBeLessThan(200);
      seen.push(...page.data.map(idOf));
      if (page.meta.nextCursor === null) break;
      await list.insert();
      page = await read(`limit=2&startingAfter=${page.meta.nextCursor}`);
      expect(page.meta.page).toBeNull();
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);

    // And back: from the last page to the first by previousCursor, in the same order.
    const after = (await read("limit=100")).data.map(idOf);
    let back = await read(`limit=2&endingBefore=${after.at(-1)}`);
    const backwards: string[] = [...after.slice(-1)];
    for (let guard = 0; ; guard++) {
      expect(guard).toBeLessThan(200);
      backwards.unshift(...back.data.map(idOf));
      if (!back.meta.hasMore) break;
      back = await read(`limit=2&endingBefore=${back.meta.previousCursor}`);
    }
    expect(backwards).toEqual(after);
  });

  it("a cursor that names no record of the list, or mixed with page, is a 400 on its field", async () => {
    expectError(
      await call("GET", `/v1/organizations/${orgId}/api-keys?startingAfter=key_unknown`, { token: owner.token }),
      400,
      "VALIDATION_ERROR",
    );
    const res = await call("GET", `/v1/organizations/${orgId}/api-keys?page=2&startingAfter=key_unknown`, { token: owner.token });
    expectError(res, 400, "VALIDATION_ERROR");
    expect(res.body.error.details.field).toBe("startingAfter");
  });

  it("an API key pinned before 2026-11-28 gets the lists without cursors; the header asks for the new shape", async () => {
    const path = `/v1/organizations/${orgId}/api-keys?limit=1`;
    const old = await call("GET", path, { token: owner.token, headers: { "Queue-Version": "2026-11-26" } });
    expect(Object.keys(old.body.meta).sort()).toEqual(["hasMore", "limit", "page", "total"]);
    const current = await call("GET", path, { token: owner.token, headers: { "Queue-Version": "2026-11-28" } });
    expect(current.body.meta).toMatchObject({ page: 1, nextCursor: expect.any(String), previousCursor: null });
  });
});
