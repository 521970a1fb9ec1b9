import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { operatorBlock, serviceClosure } from "../../src/calendar/availability";
import { call, expectError, expectOk } from "../helpers/api";
import { insertLocation, insertService } from "../helpers/catalog";
import { addMember, createOrganization, registerUser, type TestUser } from "../helpers/fixtures";
import { depsOf } from "../../src/http/deps";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Team {
  orgId: string;
  owner: TestUser;
  manager: TestUser;
  operator: TestUser;
  operator2: TestUser;
}

async function team(): Promise<Team> {
  const owner = await registerUser({ firstName: "Olga" });
  const org = await createOrganization(owner);
  const [manager, operator, operator2] = [
    await addMember(owner, org.id, "manager", { firstName: "Manon" }),
    await addMember(owner, org.id, "operator", { firstName: "Oscar" }),
    await addMember(owner, org.id, "operator", { firstName: "Otto" }),
  ];
  return { orgId: org.id, owner, manager, operator, operator2 };
}

const base = { title: "Team meeting", startDate: "2026-06-01T10:00:00Z", endDate: "2026-06-01T11:00:00Z" };

function createEvent(t: Team, who: TestUser, body: Record<string, unknown>) {
  return call("POST", `/v1/calendar/organization/${t.orgId}`, { token: who.token, body });
}

function listCalendar(who: TestUser, query: string, orgId?: string) {
  return call("GET", `/v1/business/calendar${query}`, { token: who.token, headers: orgId ? { "X-Organization-Id": orgId } : {} });
}

let t: Team;
beforeAll(async () => {
  t = await team();
});

describe("POST /v1/calendar/organization/{organizationId}", () => {
  it("creates an event with every field, eventType defaulting to event", async () => {
    const serviceId = await insertService(t.orgId, null);
    const data = expectOk(
      await createEvent(t, t.manager, {
        ...base,
        description: "Weekly sync",
        serviceId,
        attendees: [t.operator.id, t.operator.id, t.operator2.id],
        color: "#3366ff",
        recurrencePattern: "weekly",
        recurrenceEndDate: "2026-06-30",
      }),
      201,
    );
    expect(data).toMatchObject({
      organizationId: t.orgId,
      title: "Team meeting",
      description: "Weekly sync",
      startDate: "2026-06-01T10:00:00.000Z",
      endDate: "2026-06-01T11:00:00.000Z",
      eventType: "event",
      serviceId,
      locationId: null,
      attendees: [t.operator.id, t.operator2.id],
      color: "#3366ff",
      recurrencePattern: "weekly",
      recurrenceEndDate: "2026-06-30T23:59:59.999Z",
      timezone: "UTC",
      createdById: t.manager.id,
    });
    expect(data.id).toMatch(/^evt_[0-9a-z]{20}$/);
  });

  it.each(["shift", "break", "closure", "event", "unavailability", "appointment"])("accepts eventType %s", async (eventType) => {
    expect(expectOk(await createEvent(t, t.owner, { ...base, eventType }), 201).eventType).toBe(eventType);
  });

  it("reads a bare date as 00:00 in the location's timezone and accepts offsets", async () => {
    const locationId = await insertLocation(t.orgId, "Europe/Paris");
    const data = expectOk(
      await createEvent(t, t.manager, {
        title: "Closed",
        eventType: "closure",
        locationId,
        startDate: "2026-07-01",
        endDate: "2026-07-02T00:00:00+02:00",
      }),
      201,
    );
    expect(data.startDate).toBe("2026-06-30T22:00:00.000Z");
    expect(data.endDate).toBe("2026-07-01T22:00:00.000Z");
    expect(data.timezone).toBe("Europe/Paris");
  });

  it.each([
    ["a missing title", { title: undefined }, "title"],
    ["a title of the wrong type", { title: 42 }, "title"],
    ["an empty title", { title: "  " }, "title"],
    ["an unknown field", { organizationId: "org_x" }, "organizationId"],
    ["a missing startDate", { startDate: undefined }, "startDate"],
    ["a startDate that is not a date", { startDate: "tomorrow" }, "startDate"],
    ["an impossible date", { startDate: "2026-02-30" }, "startDate"],
    ["a timestamp without offset", { startDate: "2026-06-01T10:00:00" }, "startDate"],
    ["an endDate before startDate", { endDate: "2026-06-01T09:00:00Z" }, "endDate"],
    ["an endDate equal to startDate", { endDate: base.startDate }, "endDate"],
    ["an unknown eventType", { eventType: "meeting" }, "eventType"],
    ["a color that is not hex", { color: "red" }, "color"],
    ["a color of 5 digits", { color: "#12345" }, "color"],
    ["an unknown recurrencePattern", { recurrencePattern: "yearly" }, "recurrencePattern"],
    ["a recurrenceEndDate before startDate", { recurrencePattern: "daily", recurrenceEndDate: "2026-05-01" }, "recurrenceEndDate"],
    ["a recurrenceEndDate without pattern", { recurrenceEndDate: "2026-07-01" }, "recurrenceEndDate"],
    ["a recurring event longer than 31 days", { recurrencePattern: "monthly", endDate: "2026-07-15T00:00:00Z" }, "endDate"],
    ["attendees that are not a list", { attendees: "usr_x" }, "attendees"],
    ["attendees that are not members", { attendees: ["usr_00000000000000000000"] }, "attendees"],
  ])("refuses %s with 400 VALIDATION_ERROR", async (_label, patch, field) => {
    expectError(await createEvent(t, t.manager, { ...base, ...patch }), 400, "VALIDATION_ERROR", field);
  });

  it("refuses a service or location of another organization with 404 on the field", async () => {
    const other = await team();
    const foreignService = await insertService(other.orgId, null);
    const foreignLocation = await insertLocation(other.orgId, "UTC");
    expectError(await createEvent(t, t.manager, { ...base, serviceId: foreignService }), 404, "NOT_FOUND", "serviceId");
    expectError(await createEvent(t, t.manager, { ...base, locationId: foreignLocation }), 404, "NOT_FOUND", "locationId");
    expectError(await createEvent(t, t.manager, { ...base, attendees: [other.operator.id] }), 400, "VALIDATION_ERROR", "attendees");
  });

  it("refuses an operator (403), an outsider (404) and no credential (401)", async () => {
    expectError(await createEvent(t, t.operator, base), 403, "AUTHORIZATION_ERROR");
    expectError(await createEvent(t, await registerUser(), base), 404, "NOT_FOUND");
    expectError(await call("POST", `/v1/calendar/organization/${t.orgId}`, { body: base }), 401, "AUTHENTICATION_ERROR");
  });
});

describe("POST /v1/calendar/organization/{organizationId}/availability", () => {
  it("lets an operator declare their own unavailability", async () => {
    const res = await call("POST", `/v1/calendar/organization/${t.orgId}/availability`, {
      token: t.operator.token,
      body: { title: "Dentist", startDate: "2026-06-02T13:00:00Z", endDate: "2026-06-02T15:00:00Z", description: "back at 3" },
    });
    const data = expectOk(res, 201);
    expect(data).toMatchObject({
      eventType: "unavailability",
      attendees: [t.operator.id],
      createdById: t.operator.id,
      description: "back at 3",
    });
  });

  it.each([
    ["an eventType", { eventType: "shift" }, "eventType"],
    ["attendees", { attendees: [] }, "attendees"],
    ["a missing endDate", { endDate: undefined }, "endDate"],
    ["an endDate before startDate", { endDate: "2026-06-01T09:00:00Z" }, "endDate"],
    ["a bad recurrencePattern", { recurrencePattern: 1 }, "recurrencePattern"],
  ])("refuses %s with 400", async (_label, patch, field) => {
    const res = await call("POST", `/v1/calendar/organization/${t.orgId}/availability`, {
      token: t.operator.token,
      body: { ...base, ...patch },
    });
    expectError(res, 400, "VALIDATION_ERROR", field);
  });

  it("refuses an outsider with 404", async () => {
    const res = await call("POST", `/v1/calendar/organization/${t.orgId}/availability`, {
      token: (await registerUser()).token,
      body: base,
    });
    expectError(res, 404, "NOT_FOUND");
  });
});

describe("PATCH and DELETE /v1/calendar/{eventId}", () => {
  async function ownUnavailability(who: TestUser) {
    const res = await call("POST", `/v1/calendar/organization/${t.orgId}/availability`, {
      token: who.token,
      body: { ...base, title: "Away" },
    });
    return expectOk(res, 201).id as string;
  }

  it("lets a manager change any field, null clearing optional ones", async () => {
    const created = expectOk(
      await createEvent(t, t.manager, {
        ...base,
        color: "#fff",
        description: "x",
        attendees: [t.operator.id],
        recurrencePattern: "daily",
        recurrenceEndDate: "2026-06-10",
      }),
      201,
    );
    const res = await call("PATCH", `/v1/calendar/${created.id}`, {
      token: t.manager.token,
      body: {
        title: "Renamed",
        color: null,
        description: null,
        attendees: null,
        recurrencePattern: null,
        eventType: "shift",
        endDate: "2026-06-01T12:00:00Z",
      },
    });
    expect(expectOk(res)).toMatchObject({
      id: created.id,
      title: "Renamed",
      color: null,
      description: null,
      attendees: [],
      recurrencePattern: null,
      recurrenceEndDate: null,
      eventType: "shift",
      startDate: "2026-06-01T10:00:00.000Z",
      endDate: "2026-06-01T12:00:00.000Z",
    });
  });

  it.each([
    ["an endDate before the stored startDate", { endDate: "2026-06-01T09:00:00Z" }, "endDate"],
    ["a null title", { title: null }, "title"],
    ["a null startDate", { startDate: null }, "startDate"],
    ["an unknown field", { organizationId: "org_x" }, "organizationId"],
    ["a recurrenceEndDate on a one-off event", { recurrenceEndDate: "2026-07-01" }, "recurrenceEndDate"],
    ["a bad color", { color: "#ggg" }, "color"],
  ])("refuses %s with 400", async (_label, patch, field) => {
    const created = expectOk(await createEvent(t, t.manager, base), 201);
    expectError(await call("PATCH", `/v1/calendar/${created.id}`, { token: t.manager.token, body: patch }), 400, "VALIDATION_ERROR", field);
  });

  it("lets an operator edit and delete their own unavailability, within its fields", async () => {
    const id = await ownUnavailability(t.operator);
    const patched = expectOk(
      await call("PATCH", `/v1/calendar/${id}`, { token: t.operator.token, body: { title: "Doctor", endDate: "2026-06-01T12:00:00Z" } }),
    );
    expect(patched).toMatchObject({ title: "Doctor", endDate: "2026-06-01T12:00:00.000Z", eventType: "unavailability" });
    for (const [field, value] of [
      ["eventType", "break"],
      ["attendees", []],
      ["serviceId", null],
    ] as const) {
      const res = await call("PATCH", `/v1/calendar/${id}`, { token: t.operator.token, body: { [field]: value } });
      expectError(res, 403, "AUTHORIZATION_ERROR", field);
    }
    expect(expectOk(await call("DELETE", `/v1/calendar/${id}`, { token: t.operator.token }))).toEqual({ id, deleted: true });
    expectError(await call("DELETE", `/v1/calendar/${id}`, { token: t.operator.token }), 404, "NOT_FOUND");
  });

  it("refuses an operator on another's unavailability or an organization event; a manager may", async () => {
    const othersId = await ownUnavailability(t.operator2);
    const orgEvent = expectOk(await createEvent(t, t.manager, { ...base, eventType: "unavailability", attendees: [t.operator.id] }), 201);
    for (const id of [othersId, orgEvent.id]) {
      expectError(
        await call("PATCH", `/v1/calendar/${id}`, { token: t.operator.token, body: { title: "Mine" } }),
        403,
        "AUTHORIZATION_ERROR",
      );
      expectError(await call("DELETE", `/v1/calendar/${id}`, { token: t.operator.token }), 403, "AUTHORIZATION_ERROR");
    }
    expect(expectOk(await call("PATCH", `/v1/calendar/${othersId}`, { token: t.manager.token, body: { title: "Fixed" } })).title).toBe(
      "Fixed",
    );
    expectOk(await call("DELETE", `/v1/calendar/${othersId}`, { token: t.manager.token }));
  });

  it("a refused change names the roles that may make it, never the internal permission (issue 39)", async () => {
    const othersId = await ownUnavailability(t.operator2);
    const res = await call("PATCH", `/v1/calendar/${othersId}`, { token: t.operator.token, body: { title: "Mine" } });
    expectError(res, 403, "AUTHORIZATION_ERROR");
    expect(res.body.error.message).not.toContain("CALENDAR_MANAGE");
    expect(res.body.error.message).toContain("owner, admin or manager");
    expect(res.body.error.details).toMatchObject({ permission: "CALENDAR_MANAGE", roles: ["owner", "admin", "manager"] });
    const own = await ownUnavailability(t.operator);
    const field = await call("PATCH", `/v1/calendar/${own}`, { token: t.operator.token, body: { eventType: "break" } });
    expectError(field, 403, "AUTHORIZATION_ERROR", "eventType");
    expect(field.body.error.message).not.toContain("CALENDAR_MANAGE");
    expect(field.body.error.message).toContain("owner, admin or manager");
  });

  it("answers 404 for an unknown event and for an event of another organization", async () => {
    expectError(
      await call("PATCH", "/v1/calendar/evt_00000000000000000000", { token: t.manager.token, body: { title: "x" } }),
      404,
      "NOT_FOUND",
    );
    const created = expectOk(await createEvent(t, t.manager, base), 201);
    const outsider = await registerUser();
    expectError(await call("PATCH", `/v1/calendar/${created.id}`, { token: outsider.token, body: { title: "x" } }), 404, "NOT_FOUND");
    expectError(await call("DELETE", `/v1/calendar/${created.id}`, { token: outsider.token }), 404, "NOT_FOUND");
  });
});

describe("GET /v1/business/calendar", () => {
  it("expands a weekly 09:00 Paris event across the March DST change", async () => {
    const t2 = await team();
    const locationId = await insertLocation(t2.orgId, "Europe/Paris");
    const created = expectOk(
      await createEvent(t2, t2.manager, {
        title: "Morning shift",
        eventType: "shift",
        locationId,
        startDate: "2026-03-16T09:00:00+01:00",
        endDate: "2026-03-16T17:00:00+01:00",
        recurrencePattern: "weekly",
      }),
      201,
    );
    const data = expectOk(await listCalendar(t2.operator, "?startDate=2026-03-20&endDate=2026-04-07"));
    expect(data.map((o: any) => [o.occurrenceStart, o.occurrenceEnd])).toEqual([
      ["2026-03-23T08:00:00.000Z", "2026-03-23T16:00:00.000Z"],
      ["2026-03-30T07:00:00.000Z", "2026-03-30T15:00:00.000Z"],
      ["2026-04-06T07:00:00.000Z", "2026-04-06T15:00:00.000Z"],
    ]);
    expect(data[0]).toMatchObject({
      id: created.id,
      title: "Morning shift",
      eventType: "shift",
      timezone: "Europe/Paris",
      startDate: "2026-03-16T08:00:00.000Z",
    });
  });

  it("uses the organization's first location's timezone when the event has none", async () => {
    const t2 = await team();
    await insertLocation(t2.orgId, "America/New_York", Date.now() - DAY);
    await insertLocation(t2.orgId, "Asia/Tokyo");
    expectOk(
      await createEvent(t2, t2.manager, {
        title: "Standup",
        startDate: "2026-03-02T09:00:00-05:00",
        endDate: "2026-03-02T09:15:00-05:00",
        recurrencePattern: "weekly",
        recurrenceEndDate: "2026-03-09",
      }),
      201,
    );
    const data = expectOk(await listCalendar(t2.manager, "?startDate=2026-03-01&endDate=2026-04-01"));
    expect(data.map((o: any) => o.occurrenceStart)).toEqual(["2026-03-02T14:00:00.000Z", "2026-03-09T13:00:00.000Z"]);
  });

  it("includes an occurrence the range cuts, and only the range", async () => {
    const t2 = await team();
    expectOk(
      await createEvent(t2, t2.manager, {
        title: "Daily",
        startDate: "2026-06-01T10:00:00Z",
        endDate: "2026-06-01T12:00:00Z",
        recurrencePattern: "daily",
      }),
      201,
    );
    const data = expectOk(await listCalendar(t2.manager, "?startDate=2026-06-03T11:00:00Z&endDate=2026-06-04T11:00:00%2B00:00"));
    expect(data.map((o: any) => o.occurrenceStart)).toEqual(["2026-06-03T10:00:00.000Z", "2026-06-04T10:00:00.000Z"]);
  });

  it("defaults to the next 7 days from today (UTC)", async () => {
    const t2 = await team();
    const soon = new Date(Date.now() + DAY).toISOString();
    const later = new Date(Date.now() + 10 * DAY).toISOString();
    expectOk(
      await createEvent(t2, t2.manager, { title: "Soon", startDate: soon, endDate: new Date(Date.parse(soon) + HOUR).toISOString() }),
      201,
    );
    expectOk(
      await createEvent(t2, t2.manager, { title: "Later", startDate: later, endDate: new Date(Date.parse(later) + HOUR).toISOString() }),
      201,
    );
    const res = await listCalendar(t2.manager, "");
    expect(expectOk(res).map((o: any) => o.title)).toEqual(["Soon"]);
    expect(res.body.meta).toMatchObject({ total: 1, page: 1, hasMore: false });
  });

  it.each([
    ["?startDate=soon", "startDate"],
    ["?endDate=2026-13-01", "endDate"],
    ["?startDate=2026-06-02&endDate=2026-06-01", "endDate"],
    ["?startDate=2026-06-01&endDate=2026-06-01", "endDate"],
    ["?startDate=2026-01-01&endDate=2027-01-03", "endDate"],
  ])("refuses %s with 400", async (query, field) => {
    expectError(await listCalendar(t.manager, query), 400, "VALIDATION_ERROR", field);
  });

  it("needs X-Organization-Id for a member of several organizations, and a credential", async () => {
    const t2 = await team();
    await createOrganization(t2.owner);
    expectError(await listCalendar(t2.owner, ""), 400, "VALIDATION_ERROR", "X-Organization-Id");
    expectOk(await listCalendar(t2.owner, "", t2.orgId));
    expectError(await listCalendar(t2.owner, "", t.orgId), 404, "NOT_FOUND");
    expectError(await call("GET", "/v1/business/calendar"), 401, "AUTHENTICATION_ERROR");
  });

  it("refuses a range holding more than 5,000 occurrences", async () => {
    const t2 = await team();
    for (let i = 0; i < 14; i++) {
      expectOk(
        await createEvent(t2, t2.manager, {
          title: `Daily ${i}`,
          startDate: "2026-01-01T08:00:00Z",
          endDate: "2026-01-01T09:00:00Z",
          recurrencePattern: "daily",
        }),
        201,
      );
    }
    expect(expectOk(await listCalendar(t2.manager, "?startDate=2026-01-01&endDate=2026-02-01"))).toHaveLength(14 * 31);
    expectError(await listCalendar(t2.manager, "?startDate=2026-01-01&endDate=2027-01-01"), 400, "VALIDATION_ERROR", "endDate");
  });
});

describe("availability", () => {
  function availabilityAt(t2: Team, query = "") {
    return call("GET", `/v1/business/calendar/availability${query}`, { token: t2.manager.token });
  }

  it("marks attendees of a break unavailable until its end, and available at the end instant", async () => {
    const t0 = Date.parse("2030-05-06T08:00:00.000Z");
    testClock.set(t0);
    const t2 = await team();
    const brk = expectOk(
      await createEvent(t2, t2.manager, {
        title: "Coffee",
        eventType: "break",
        attendees: [t2.operator.id],
        startDate: "2030-05-06T09:00:00Z",
        endDate: "2030-05-06T09:30:00Z",
      }),
      201,
    );
    const status = async () => Object.fromEntries(expectOk(await availabilityAt(t2)).map((m: any) => [m.userId, m]));

    expect((await status())[t2.operator.id].available).toBe(true);
    testClock.set(t0 + HOUR);
    const during = await status();
    expect(during[t2.operator.id]).toMatchObject({
      available: false,
      firstName: "Oscar",
      role: "operator",
      blockedBy: { eventId: brk.id, eventType: "break", until: "2030-05-06T09:30:00.000Z" },
    });
    expect(during[t2.operator2.id]).toMatchObject({ available: true, blockedBy: null });
    testClock.set(t0 + HOUR + 30 * 60_000 - 1);
    expect((await status())[t2.operator.id].available).toBe(false);
    testClock.set(t0 + HOUR + 30 * 60_000);
    expect((await status())[t2.operator.id].available).toBe(true);
  });

  it("blocks everyone during a closure without attendees, reporting the latest end", async () => {
    const t2 = await team();
    expectOk(
      await createEvent(t2, t2.manager, {
        title: "Lunch",
        eventType: "break",
        startDate: "2026-06-01T12:00:00Z",
        endDate: "2026-06-01T13:00:00Z",
      }),
      201,
    );
    const closure = expectOk(
      await createEvent(t2, t2.manager, {
        title: "Closed",
        eventType: "closure",
        startDate: "2026-06-01T11:00:00Z",
        endDate: "2026-06-01T15:00:00Z",
      }),
      201,
    );
    expectOk(
      await createEvent(t2, t2.manager, {
        title: "Shift",
        eventType: "shift",
        attendees: [t2.operator.id],
        startDate: "2026-06-01T08:00:00Z",
        endDate: "2026-06-01T18:00:00Z",
      }),
      201,
    );
    const res = await availabilityAt(t2, "?at=2026-06-01T12:30:00Z&limit=2");
    const data = expectOk(res);
    expect(res.body.meta).toMatchObject({ total: 4, page: 1, limit: 2, hasMore: true });
    expect(data).toHaveLength(2);
    for (const m of data) expect(m.blockedBy).toEqual({ eventId: closure.id, eventType: "closure", until: "2026-06-01T15:00:00.000Z" });
    const later = expectOk(await availabilityAt(t2, "?at=2026-06-01T15:00:00Z"));
    expect(later.every((m: any) => m.available)).toBe(true);
  });

  it.each([
    ["?at=noon", "at"],
    ["?limit=101", "limit"],
    ["?page=0", "page"],
  ])("refuses %s with 400", async (query, field) => {
    expectError(await availabilityAt(t, query), 400, "VALIDATION_ERROR", field);
  });

  it("operatorBlock and serviceClosure see recurring occurrences in the event's timezone", async () => {
    const t2 = await team();
    const locationId = await insertLocation(t2.orgId, "Europe/Paris");
    const serviceId = await insertService(t2.orgId, locationId);
    const otherService = await insertService(t2.orgId, locationId);
    const brk = expectOk(
      await call("POST", `/v1/calendar/organization/${t2.orgId}/availability`, {
        token: t2.operator.token,
        body: {
          title: "Pickup kids",
          startDate: "2026-03-23T16:00:00+01:00",
          endDate: "2026-03-23T17:00:00+01:00",
          recurrencePattern: "daily",
        },
      }),
      201,
    );
    const closure = expectOk(
      await createEvent(t2, t2.manager, {
        title: "Maintenance",
        eventType: "closure",
        serviceId,
        locationId,
        attendees: [t2.manager.id],
        startDate: "2026-03-23T12:00:00+01:00",
        endDate: "2026-03-23T13:00:00+01:00",
        recurrencePattern: "weekly",
      }),
      201,
    );
    // A week later Paris is on summer time: 12:00 local is 10:00Z.
    const at = Date.parse("2026-03-30T10:30:00Z");
    expect(await serviceClosure(depsOf(env), t2.orgId, serviceId, at)).toEqual({
      eventId: closure.id,
      until: Date.parse("2026-03-30T11:00:00Z"),
    });
    expect(await serviceClosure(depsOf(env), t2.orgId, otherService, at)).toBeNull();
    expect(await serviceClosure(depsOf(env), t2.orgId, serviceId, Date.parse("2026-03-30T11:30:00Z"))).toBeNull();
    expect(await operatorBlock(depsOf(env), t2.orgId, t2.manager.id, at)).toEqual({
      eventId: closure.id,
      until: Date.parse("2026-03-30T11:00:00Z"),
    });
    expect(await operatorBlock(depsOf(env), t2.orgId, t2.operator.id, at)).toBeNull();
    // The unavailability has no location: the organization's first location (Paris) applies.
    expect(await operatorBlock(depsOf(env), t2.orgId, t2.operator.id, Date.parse("2026-03-30T14:15:00Z"))).toEqual({
      eventId: brk.id,
      until: Date.parse("2026-03-30T15:00:00Z"),
    });
  });
});
