import { beforeAll, describe, expect, it } from "vitest";
import { call, expectError, expectOk, unique, type ApiResponse } from "../helpers/api";
import { acceptInvitation, createOrganization, registerUser, setPlan, walkIn, type TestUser } from "../helpers/fixtures";

// Roles per location (issue 31): a member limited to Lyon sees and acts on Lyon only. Every Paris
// resource answers exactly what the same resource answers a member of another organization (404,
// same message and details), listings leave Paris out, and a Lyon desk never calls in Paris.

interface Site {
  locationId: string;
  serviceId: string;
  queueId: string;
  deskId: string;
  eventId: string;
}

let owner: TestUser;
let organizationId: string;
let lyon: Site;
let paris: Site;
/** A Lyon desk that also lists the Paris queue (set up by the owner, who reaches both). */
let mixedDeskId: string;
let lyonOperator: TestUser;
let lyonManager: TestUser;
/** Members of another organization: the reference answer for "not yours". */
let outsiderOperator: TestUser;
let outsiderManager: TestUser;
let parisTicketId: string;

async function site(name: string, latitude: number, longitude: number): Promise<Site> {
  const token = owner.token;
  const location = expectOk(
    await call("POST", "/v1/locations", { token, body: { organizationId, name, address: `1 rue de ${name}`, latitude, longitude } }),
    201,
  );
  const service = expectOk(
    await call("POST", "/v1/services", {
      token,
      body: { name: `Teller ${name}`, locationIds: [location.id], serviceTypeId: "st_bank_teller" },
    }),
    201,
  );
  const headers = { "X-Organization-Id": organizationId };
  const queue = expectOk(await call("POST", "/v1/business/queues", { token, headers, body: { serviceId: service.id, name } }), 201);
  const desk = expectOk(
    await call("POST", `/v1/locations/${location.id}/desks`, { token, body: { name: `Desk ${name}`, queueIds: [queue.id] } }),
    201,
  );
  const event = expectOk(
    await call("POST", `/v1/calendar/organization/${organizationId}`, {
      token,
      body: {
        title: `Closure ${name}`,
        eventType: "closure",
        locationId: location.id,
        startDate: "2030-01-01T10:00:00Z",
        endDate: "2030-01-01T12:00:00Z",
      },
    }),
    201,
  );
  return { locationId: location.id, serviceId: service.id, queueId: queue.id, deskId: desk.id, eventId: event.id };
}

/** Invites with `locationIds` and has the person accept: the scope comes with the invitation. */
async function scopedMember(role: string, locationIds: string[] | undefined, org = organizationId, inviter = owner): Promise<TestUser> {
  const member = await registerUser();
  const res = await call("POST", `/v1/organizations/${org}/members`, {
    token: inviter.token,
    body: { email: member.email, role, ...(locationIds ? { locationIds } : {}) },
  });
  const invitation = expectOk(res, 202);
  expect(invitation.locationIds).toEqual(locationIds ?? null);
  await acceptInvitation(member, org);
  return member;
}

beforeAll(async () => {
  owner = await registerUser();
  organizationId = (await createOrganization(owner, { type: "banking" })).id;
  await setPlan(organizationId, "pro");
  lyon = await site("Lyon", 45.76, 4.84);
  paris = await site("Paris", 48.85, 2.35);
  mixedDeskId = expectOk(
    await call("POST", `/v1/locations/${lyon.locationId}/desks`, {
      token: owner.token,
      body: { name: "Mixed", queueIds: [lyon.queueId, paris.queueId] },
    }),
    201,
  ).id;
  lyonOperator = await scopedMember("operator", [lyon.locationId]);
  lyonManager = await scopedMember("manager", [lyon.locationId]);

  const stranger = await registerUser();
  const otherOrg = (await createOrganization(stranger, { type: "banking" })).id;
  await setPlan(otherOrg, "pro");
  outsiderOperator = await scopedMember("operator", undefined, otherOrg, stranger);
  outsiderManager = await scopedMember("manager", undefined, otherOrg, stranger);
  parisTicketId = (await walkIn(owner, paris.queueId)).id;
});

/** The parts of an answer that must not tell a scoped member from a stranger. */
function refusal(res: ApiResponse) {
  return { status: res.status, code: res.body?.error?.code, message: res.body?.error?.message, details: res.body?.error?.details };
}

type Probe = [label: string, method: string, path: () => string, body?: () => unknown];

const operatorProbes: Probe[] = [
  ["service", "GET", () => `/v1/services/${paris.serviceId}`],
  ["queue's tickets", "GET", () => `/v1/queues/${paris.queueId}/tickets`],
  ["queue call-next", "POST", () => `/v1/queues/${paris.queueId}/call-next`, () => ({})],
  ["queue walk-in", "POST", () => `/v1/queues/${paris.queueId}/operator-join`, () => ({})],
  ["ticket", "GET", () => `/v1/tickets/${parisTicketId}`],
  ["ticket cancel", "POST", () => `/v1/tickets/${parisTicketId}/cancel`, () => ({})],
  ["location's desks", "GET", () => `/v1/locations/${paris.locationId}/desks`],
  ["desk", "GET", () => `/v1/desks/${paris.deskId}`],
  ["desk open", "POST", () => `/v1/desks/${paris.deskId}/open`, () => ({})],
  ["floor", "GET", () => `/v1/locations/${paris.locationId}/floor`],
  ["calendar event delete", "DELETE", () => `/v1/calendar/${paris.eventId}`],
  // The widget's routes also take a member's session (the console's kiosk and walk-in pages).
  ["kiosk of the location", "GET", () => `/v1/widget/locations/${paris.locationId}/kiosk`],
  ["widget join", "POST", () => `/v1/widget/queue/${paris.queueId}/join`, () => ({})],
  ["widget questions", "GET", () => `/v1/widget/queue/${paris.queueId}/intake`],
];

const managerProbes: Probe[] = [
  ["location change", "PATCH", () => `/v1/locations/${paris.locationId}`, () => ({ name: "Mine now" })],
  ["location delete", "DELETE", () => `/v1/locations/${paris.locationId}`],
  ["service change", "PATCH", () => `/v1/services/${paris.serviceId}`, () => ({ name: "Mine now" })],
  ["service delete", "DELETE", () => `/v1/services/${paris.serviceId}`],
  ["queue status", "PATCH", () => `/v1/business/queues/${paris.queueId}/status`, () => ({ status: "paused" })],
  ["queue clear", "POST", () => `/v1/queues/${paris.queueId}/clear`, () => ({})],
  ["desk create", "POST", () => `/v1/locations/${paris.locationId}/desks`, () => ({ name: "X", queueIds: [paris.queueId] })],
  ["desk change", "PATCH", () => `/v1/desks/${paris.deskId}`, () => ({ name: "X" })],
  ["calendar event change", "PATCH", () => `/v1/calendar/${paris.eventId}`, () => ({ title: "Mine now" })],
  ["analytics of the location", "GET", () => `/v1/analytics/summary?from=2030-01-01&to=2030-01-02&locationId=${paris.locationId}`],
  ["analytics of the service", "GET", () => `/v1/analytics/summary?from=2030-01-01&to=2030-01-02&serviceId=${paris.serviceId}`],
  ["analytics of the queue", "GET", () => `/v1/analytics/summary?from=2030-01-01&to=2030-01-02&queueId=${paris.queueId}`],
];

async function probe(who: TestUser, method: string, path: string, body: unknown): Promise<ApiResponse> {
  return call(method, path, { token: who.token, ...(body === undefined ? {} : { body }) });
}

describe("a Lyon-scoped member on Paris resources", () => {
  it.each(operatorProbes)("operator: %s answers 404 exactly as to another organization's operator", async (_label, method, path, body) => {
    const scoped = await probe(lyonOperator, method, path(), body?.());
    const stranger = await probe(outsiderOperator, method, path(), body?.());
    expectError(scoped, 404, "NOT_FOUND");
    expect(refusal(scoped)).toEqual(refusal(stranger));
  });

  it.each(managerProbes)("manager: %s answers 404 exactly as to another organization's manager", async (_label, method, path, body) => {
    const scoped = await probe(lyonManager, method, path(), body?.());
    const stranger = await probe(outsiderManager, method, path(), body?.());
    expectError(scoped, 404, "NOT_FOUND");
    expect(refusal(scoped)).toEqual(refusal(stranger));
  });

  it("left Paris untouched: its ticket still waits and its location, service and queue are unchanged", async () => {
    expect(expectOk(await call("GET", `/v1/tickets/${parisTicketId}`, { token: owner.token })).status).toBe("waiting");
    expect(expectOk(await call("GET", `/v1/services/${paris.serviceId}`, { token: owner.token })).name).toBe("Teller Paris");
    expect(expectOk(await call("GET", `/v1/queues/${paris.queueId}`, { token: owner.token })).status).toBe("active");
    // The widget join above took no ticket: the walk-in is still the only one.
    const tickets = expectOk(await call("GET", `/v1/queues/${paris.queueId}/tickets`, { token: owner.token }));
    expect(tickets.map((t: { id: string }) => t.id)).toEqual([parisTicketId]);
  });

  it("cannot put Paris into Lyon's things: a service at Paris, a queue of Paris's service, a desk calling Paris, a ticket sent there", async () => {
    const token = lyonManager.token;
    expectError(
      await call("POST", "/v1/services", {
        token,
        body: { name: "Both", locationIds: [lyon.locationId, paris.locationId], serviceTypeId: "st_bank_teller" },
      }),
      404,
      "NOT_FOUND",
    );
    expectError(
      await call("PATCH", `/v1/services/${lyon.serviceId}`, { token, body: { locationIds: [paris.locationId] } }),
      404,
      "NOT_FOUND",
    );
    expectError(
      await call("POST", "/v1/business/queues", { token, body: { serviceId: paris.serviceId, name: "Mine" } }),
      404,
      "NOT_FOUND",
      "serviceId",
    );
    expectError(
      await call("POST", `/v1/locations/${lyon.locationId}/desks`, { token, body: { name: "Sneaky", queueIds: [paris.queueId] } }),
      404,
      "NOT_FOUND",
      "queueIds",
    );
    const lyonTicket = await walkIn(lyonOperator, lyon.queueId);
    expectError(
      await call("POST", `/v1/tickets/${lyonTicket.id}/transfer-queue`, {
        token: lyonOperator.token,
        body: { targetQueueId: paris.queueId },
      }),
      404,
      "NOT_FOUND",
      "targetQueueId",
    );
    expectOk(await call("POST", `/v1/tickets/${lyonTicket.id}/cancel`, { token: lyonOperator.token, body: {} }));
    expectError(
      await call("POST", "/v1/locations", {
        token,
        body: { organizationId, name: "Marseille", address: "1 quai", latitude: 43.3, longitude: 5.37 },
      }),
      403,
      "AUTHORIZATION_ERROR",
    );
  });

  it("still works in Lyon: reads, manages and operates there", async () => {
    expectOk(await call("GET", `/v1/services/${lyon.serviceId}`, { token: lyonOperator.token }));
    expectOk(await call("GET", `/v1/desks/${lyon.deskId}`, { token: lyonOperator.token }));
    expectOk(await call("GET", `/v1/locations/${lyon.locationId}/floor`, { token: lyonOperator.token }));
    expectOk(await call("PATCH", `/v1/services/${lyon.serviceId}`, { token: lyonManager.token, body: { description: "Lyon counter" } }));
    const ticket = await walkIn(lyonOperator, lyon.queueId);
    const called = expectOk(await call("POST", `/v1/queues/${lyon.queueId}/call-next`, { token: lyonOperator.token, body: {} }));
    expect(called.id).toBe(ticket.id);
    expectOk(await call("POST", `/v1/tickets/${ticket.id}/cancel`, { token: lyonOperator.token, body: {} }));
  });
});

describe("listings leave Paris out", () => {
  const headers = () => ({ "X-Organization-Id": organizationId });

  it("locations, services, queues, calendar and the dashboard list Lyon only", async () => {
    const token = lyonManager.token;
    const locations = expectOk(await call("GET", "/v1/business/locations", { token, headers: headers() })) as any[];
    expect(locations.map((l) => l.id)).toEqual([lyon.locationId]);
    const search = expectOk(await call("GET", `/v1/locations/search?organizationId=${organizationId}&q=rue`, { token })) as any[];
    expect(search.map((l) => l.id)).toEqual([lyon.locationId]);
    const services = expectOk(await call("GET", "/v1/business/services", { token, headers: headers() })) as any[];
    expect(services.map((s) => s.id)).toEqual([lyon.serviceId]);
    const found = expectOk(await call("GET", `/v1/services/organization/search?organizationId=${organizationId}`, { token })) as any[];
    expect(found.map((s) => s.id)).toEqual([lyon.serviceId]);
    const queues = expectOk(await call("GET", "/v1/business/queues", { token, headers: headers() })) as any[];
    expect(queues.map((q) => q.id)).toEqual([lyon.queueId]);
    const calendar = expectOk(
      await call("GET", "/v1/business/calendar?startDate=2030-01-01&endDate=2030-01-02", { token, headers: headers() }),
    ) as any[];
    expect(calendar.map((o) => o.id)).toEqual([lyon.eventId]);
    const dashboard = expectOk(await call("GET", "/v1/business/dashboard", { token, headers: headers() }));
    expect(dashboard.locations.total).toBe(1);
    expect(dashboard.services.total).toBe(1);
    expect(dashboard.queues.total).toBe(1);

    // The whole organization's members still see both.
    const all = expectOk(await call("GET", "/v1/business/queues", { token: owner.token, headers: headers() })) as any[];
    expect(all.map((q) => q.id).sort()).toEqual([lyon.queueId, paris.queueId].sort());
  });

  it("analytics without a filter still answer a Lyon manager (over Lyon's queues; Paris filters are 404 above)", async () => {
    expectOk(await call("GET", "/v1/analytics/summary?from=2030-01-01&to=2030-01-02", { token: lyonManager.token, headers: headers() }));
  });
});

describe("a desk's call-next", () => {
  it("never reaches a Paris queue for a Lyon operator, even at a desk that lists it", async () => {
    const token = lyonOperator.token;
    expectOk(await call("POST", `/v1/desks/${mixedDeskId}/open`, { token, body: {} }));
    // Only Paris has a waiting ticket: for the Lyon operator the desk's queues are empty.
    expectError(await call("POST", `/v1/desks/${mixedDeskId}/call-next`, { token, body: {} }), 409, "QUEUE_EMPTY");
    expect(expectOk(await call("GET", `/v1/tickets/${parisTicketId}`, { token: owner.token })).status).toBe("waiting");

    const lyonTicket = await walkIn(owner, lyon.queueId);
    const called = expectOk(await call("POST", `/v1/desks/${mixedDeskId}/call-next`, { token, body: {} }));
    expect(called.id).toBe(lyonTicket.id);
    expect(expectOk(await call("GET", `/v1/tickets/${parisTicketId}`, { token: owner.token })).status).toBe("waiting");
    expectOk(await call("POST", `/v1/desks/${mixedDeskId}/close`, { token, body: {} }));
  });
});

describe("setting a member's locations", () => {
  it("is shown on the member, changed by PATCH, cleared with null, and checked", async () => {
    const member = await scopedMember("operator", [lyon.locationId]);
    const path = `/v1/organizations/${organizationId}/members/${member.id}`;
    const listed = expectOk(await call("GET", `/v1/organizations/${organizationId}/members?limit=100`, { token: owner.token })) as any[];
    expect(listed.find((m) => m.userId === member.id).locationIds).toEqual([lyon.locationId]);

    expect(expectOk(await call("PATCH", path, { token: owner.token, body: { locationIds: [paris.locationId] } })).locationIds).toEqual([
      paris.locationId,
    ]);
    expectOk(await call("GET", `/v1/desks/${paris.deskId}`, { token: member.token }));
    expectError(await call("GET", `/v1/desks/${lyon.deskId}`, { token: member.token }), 404, "NOT_FOUND");

    expect(expectOk(await call("PATCH", path, { token: owner.token, body: { locationIds: null } })).locationIds).toBeNull();
    expectOk(await call("GET", `/v1/desks/${lyon.deskId}`, { token: member.token }));

    const stranger = await registerUser();
    const foreign = expectOk(
      await call("POST", "/v1/locations", {
        token: stranger.token,
        body: {
          organizationId: (await createOrganization(stranger)).id,
          name: "Elsewhere",
          address: "1 road",
          latitude: 1,
          longitude: 1,
        },
      }),
      201,
    );
    expectError(
      await call("PATCH", path, { token: owner.token, body: { locationIds: [foreign.id] } }),
      400,
      "VALIDATION_ERROR",
      "locationIds",
    );
    expectError(await call("PATCH", path, { token: owner.token, body: { locationIds: [] } }), 400, "VALIDATION_ERROR", "locationIds");
    expectError(
      await call("PATCH", path, { token: owner.token, body: { role: "admin", locationIds: [lyon.locationId] } }),
      400,
      "VALIDATION_ERROR",
      "locationIds",
    );
    expectError(
      await call("POST", `/v1/organizations/${organizationId}/members`, {
        token: owner.token,
        body: { email: `${unique("x")}@example.com`, role: "admin", locationIds: [lyon.locationId] },
      }),
      400,
      "VALIDATION_ERROR",
      "locationIds",
    );
  });

  it("is dropped when the member becomes an admin", async () => {
    const member = await scopedMember("manager", [lyon.locationId]);
    const path = `/v1/organizations/${organizationId}/members/${member.id}`;
    expect(expectOk(await call("PATCH", path, { token: owner.token, body: { role: "admin" } })).locationIds).toBeNull();
    expectOk(await call("GET", `/v1/desks/${paris.deskId}`, { token: member.token }));
  });
});
