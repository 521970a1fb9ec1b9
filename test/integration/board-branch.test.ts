import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, createOrganization, registerUser, setPlan, walkIn, type TestUser } from "../helpers/fixtures";
import { LANGUAGES } from "../../src/domain/languages";

// The board of one branch (issue 39): `?location=` keeps the queues of the services offered at
// that location, with its name, its open desks, and letters that never collide on its screen.

interface Branch {
  locationId: string;
  serviceId: string;
  queueId: string;
  letter: string;
}

async function branch(owner: TestUser, organizationId: string, name: string, timezone: string): Promise<Branch> {
  const token = owner.token;
  const location = expectOk(
    await call("POST", "/v1/locations", {
      token,
      body: { organizationId, name, address: `1 rue de ${name}`, latitude: 48.85, longitude: 2.35, timezone },
    }),
    201,
  );
  const service = expectOk(
    await call("POST", "/v1/services", {
      token,
      body: { name: `Teller ${name}`, locationIds: [location.id], serviceTypeId: "st_bank_teller" },
    }),
    201,
  );
  const queue = expectOk(await call("POST", "/v1/business/queues", { token, body: { serviceId: service.id, name: `${name} line` } }), 201);
  return { locationId: location.id, serviceId: service.id, queueId: queue.id, letter: queue.letter };
}

async function twoBranches() {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  await setPlan(org.id, "pro");
  const first = await branch(owner, org.id, "Opera", "Europe/Paris");
  const second = await branch(owner, org.id, "Bastille", "America/Martinique");
  const widgetKey = (await createApiKey(owner, org.id, ["widget"])).key;
  return { owner, organizationId: org.id, first, second, widgetKey };
}

const boardOf = (organizationId: string, widgetKey: string, query = "") =>
  call("GET", `/v1/widget/organization/${organizationId}/display-board${query}`, { apiKey: widgetKey });

describe("the board of one branch", () => {
  it("?location= shows that branch's queues and calls only, with its name, address and clock; a second branch's call does not appear", async () => {
    const t = await twoBranches();
    for (const b of [t.first, t.second]) {
      await walkIn(t.owner, b.queueId);
      expectOk(await call("POST", `/v1/queues/${b.queueId}/call-next`, { token: t.owner.token, body: {} }));
    }
    const all = expectOk(await boardOf(t.organizationId, t.widgetKey));
    expect(all.location).toBeNull();
    expect(all.queues.map((q: any) => q.queueId)).toEqual([t.first.queueId, t.second.queueId]);

    const first = expectOk(await boardOf(t.organizationId, t.widgetKey, `?location=${t.first.locationId}`));
    expect(first.location).toEqual({ id: t.first.locationId, name: "Opera", address: "1 rue de Opera" });
    expect(first.timeZone).toBe("Europe/Paris");
    expect(first.queues.map((q: any) => q.queueId)).toEqual([t.first.queueId]);
    expect(first.queues[0].called).toHaveLength(1);

    const second = expectOk(await boardOf(t.organizationId, t.widgetKey, `?location=${t.second.locationId}`));
    expect(second.location.name).toBe("Bastille");
    expect(second.timeZone).toBe("America/Martinique");
    expect(second.queues.map((q: any) => q.queueId)).toEqual([t.second.queueId]);
  });

  it("?queues= keeps the listed queues; a location of another organization is 404, a malformed one 400", async () => {
    const t = await twoBranches();
    const other = await twoBranches();
    const listed = expectOk(await boardOf(t.organizationId, t.widgetKey, `?queues=${t.second.queueId}`));
    expect(listed.queues.map((q: any) => q.queueId)).toEqual([t.second.queueId]);
    const none = expectOk(await boardOf(t.organizationId, t.widgetKey, `?location=${t.first.locationId}&queues=${t.second.queueId}`));
    expect(none.queues).toEqual([]);
    expectError(await boardOf(t.organizationId, t.widgetKey, `?location=${other.first.locationId}`), 404, "NOT_FOUND");
    expectError(await boardOf(t.organizationId, t.widgetKey, "?location=nope"), 400, "VALIDATION_ERROR", "location");
  });

  it("lists the branch's open desks by their counter label, also before their first call", async () => {
    const t = await twoBranches();
    const desk = (locationId: string, name: string, queueId: string) =>
      call("POST", `/v1/locations/${locationId}/desks`, { token: t.owner.token, body: { name, queueIds: [queueId] } });
    const one = expectOk(await desk(t.first.locationId, "Guichet 1", t.first.queueId), 201);
    expectOk(await desk(t.first.locationId, "Guichet 2", t.first.queueId), 201);
    const there = expectOk(await desk(t.second.locationId, "Guichet 9", t.second.queueId), 201);
    expect(expectOk(await boardOf(t.organizationId, t.widgetKey, `?location=${t.first.locationId}`)).desks).toEqual([]);
    expectOk(await call("POST", `/v1/desks/${one.id}/open`, { token: t.owner.token }));
    const key = (await createApiKey(t.owner, t.organizationId, ["write"])).key;
    expectOk(await call("POST", `/v1/desks/${there.id}/open`, { apiKey: key }));
    expect(expectOk(await boardOf(t.organizationId, t.widgetKey, `?location=${t.first.locationId}`)).desks).toEqual([
      { counter: "Guichet 1" },
    ]);
    expect(expectOk(await boardOf(t.organizationId, t.widgetKey, `?location=${t.second.locationId}`)).desks).toEqual([
      { counter: "Guichet 9" },
    ]);
  });

  it("two services at one location never share a letter; a service at another location may reuse it", async () => {
    const t = await twoBranches();
    expect(t.first.letter).toBe("A");
    expect(t.second.letter).toBe("A");
    const next = expectOk(
      await call("POST", "/v1/services", {
        token: t.owner.token,
        body: { name: "Loans", locationIds: [t.first.locationId], serviceTypeId: "st_bank_teller" },
      }),
      201,
    );
    const queue = expectOk(
      await call("POST", "/v1/business/queues", { token: t.owner.token, body: { serviceId: next.id, name: "Loans" } }),
      201,
    );
    expect(queue.letter).toBe("B");
    const board = expectOk(await boardOf(t.organizationId, t.widgetKey, `?location=${t.first.locationId}`));
    expect(board.queues.map((q: any) => q.queueId)).toEqual([t.first.queueId, queue.id]);
  });
});

describe("where a visitor's ticket is (the status page's header)", () => {
  it("answers the business, the service and the branch with its address to the ticket's token; 404 without it", async () => {
    const t = await twoBranches();
    const joined = expectOk(await call("POST", `/v1/widget/queue/${t.first.queueId}/join`, { apiKey: t.widgetKey, body: {} }), 201);
    const place = (token?: string) =>
      call("GET", `/v1/widget/tickets/${joined.id}/place`, { headers: token ? { "X-Ticket-Token": token } : {} });
    expect(expectOk(await place(joined.ticketToken))).toEqual({
      organization: { name: "Test organization", logoUrl: null },
      serviceName: "Teller Opera",
      location: { name: "Opera", address: "1 rue de Opera" },
      timeZone: "Europe/Paris",
      defer: { maxMinutes: 60, maxDefers: 2 },
      // The status page's language switch: the languages the business offers (all until set).
      defaultLanguage: "en",
      languages: LANGUAGES,
    });
    expectError(await place(), 404, "NOT_FOUND");
    const other = expectOk(await call("POST", `/v1/widget/queue/${t.first.queueId}/join`, { apiKey: t.widgetKey, body: {} }), 201);
    expectError(await place(other.ticketToken), 404, "NOT_FOUND");
    // A service offered at both branches names no branch.
    expectOk(
      await call("PATCH", `/v1/services/${t.first.serviceId}`, {
        token: t.owner.token,
        body: { locationIds: [t.first.locationId, t.second.locationId] },
      }),
    );
    expect(expectOk(await place(joined.ticketToken)).location).toBeNull();
  });
});
