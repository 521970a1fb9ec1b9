import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, expectOk, type ApiResponse } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { addMember, createApiKey, createOrganization, createQueueFixture, registerUser, type QueueFixture } from "../helpers/fixtures";

// A service's booking settings and its free slots (docs/appointments.md): opening hours in the
// location's zone (DST), closures, staff shifts and breaks, a staff member's other appointment.

const BOOKING = { durationMinutes: 30, slotStepMinutes: 30, capacityPerSlot: 1, leadTimeMinutes: 0, horizonDays: 60 };
const WEEKDAY = [{ open: "09:00", close: "12:00" }];

async function clinic(): Promise<QueueFixture> {
  testClock.set("2026-03-20T08:00:00.000Z");
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "healthcare" });
  const f = await createQueueFixture(owner, org.id);
  const hours = { mon: WEEKDAY, tue: WEEKDAY, wed: WEEKDAY, thu: WEEKDAY, fri: WEEKDAY };
  expectOk(
    await call("PATCH", `/v1/locations/${f.locationId}`, { token: owner.token, body: { timezone: "Europe/Paris", openingHours: hours } }),
  );
  const service = expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: owner.token, body: { booking: BOOKING } }));
  expect(service.booking).toMatchObject({
    enabled: true,
    ...BOOKING,
    checkInOpensMinutes: 30,
    lateGraceMinutes: 10,
    lateBecomes: "walk_in",
  });
  return f;
}

const slots = (f: QueueFixture, from: string, to: string, auth: { token?: string; apiKey?: string } = { token: f.owner.token }) =>
  call("GET", `/v1/services/${f.serviceId}/slots?locationId=${f.locationId}&from=${from}&to=${to}`, auth);
const starts = (res: ApiResponse) => expectOk<any[]>(res).map((s) => s.start.slice(11, 16));

async function event(f: QueueFixture, body: Record<string, unknown>) {
  return expectOk(await call("POST", `/v1/calendar/organization/${f.organizationId}`, { token: f.owner.token, body }), 201);
}

describe("slots", () => {
  it("follow the opening hours in the location's zone, the same local times across the DST change", async () => {
    const f = await clinic();
    // Monday 23 March, Paris is UTC+1.
    expect(starts(await slots(f, "2026-03-23", "2026-03-24"))).toEqual(["08:00", "08:30", "09:00", "09:30", "10:00", "10:30"]);
    // Monday 30 March, UTC+2 since Sunday's change.
    expect(starts(await slots(f, "2026-03-30", "2026-03-31"))).toEqual(["07:00", "07:30", "08:00", "08:30", "09:00", "09:30"]);
    // Saturday: closed.
    expect(starts(await slots(f, "2026-03-28", "2026-03-29"))).toEqual([]);
    const first = expectOk<any[]>(await slots(f, "2026-03-23", "2026-03-24"))[0];
    expect(first).toEqual({ start: "2026-03-23T08:00:00.000Z", end: "2026-03-23T08:30:00.000Z", capacity: 1, remaining: 1, staffIds: [] });
  });

  it("leave out a closure of the service and a break of everyone", async () => {
    const f = await clinic();
    await event(f, {
      title: "Inventory",
      eventType: "closure",
      serviceId: f.serviceId,
      startDate: "2026-03-23T09:00:00Z",
      endDate: "2026-03-23T10:00:00Z",
    });
    await event(f, { title: "Team meeting", eventType: "break", startDate: "2026-03-23T08:30:00Z", endDate: "2026-03-23T08:45:00Z" });
    expect(starts(await slots(f, "2026-03-23", "2026-03-24"))).toEqual(["08:00", "10:00", "10:30"]);
  });

  it("need a staff member on shift, not on a break, not at another appointment", async () => {
    const f = await clinic();
    const awa = await addMember(f.owner, f.organizationId, "operator");
    const ben = await addMember(f.owner, f.organizationId, "operator");
    await event(f, {
      title: "Awa",
      eventType: "shift",
      attendees: [awa.id],
      startDate: "2026-03-23T08:00:00Z",
      endDate: "2026-03-23T11:00:00Z",
    });
    await event(f, {
      title: "Ben",
      eventType: "shift",
      attendees: [ben.id],
      startDate: "2026-03-23T09:00:00Z",
      endDate: "2026-03-23T10:00:00Z",
    });
    await event(f, {
      title: "Awa's break",
      eventType: "break",
      attendees: [awa.id],
      startDate: "2026-03-23T09:00:00Z",
      endDate: "2026-03-23T09:30:00Z",
    });
    await event(f, {
      title: "Awa sees Mr Diallo",
      eventType: "appointment",
      attendees: [awa.id],
      startDate: "2026-03-23T10:00:00Z",
      endDate: "2026-03-23T10:30:00Z",
    });
    const found = expectOk<any[]>(await slots(f, "2026-03-23", "2026-03-24"));
    expect(found.map((s) => [s.start.slice(11, 16), s.staffIds])).toEqual([
      ["08:00", [awa.id]],
      ["08:30", [awa.id]],
      ["09:00", [ben.id]],
      ["09:30", [awa.id, ben.id].sort()],
      ["10:30", [awa.id]],
    ]);
    expect(found.find((s) => s.start.endsWith("09:30:00.000Z")).remaining).toBe(1); // capacity 1
  });

  it("start after the lead time and before the horizon", async () => {
    const f = await clinic();
    expectOk(
      await call("PATCH", `/v1/services/${f.serviceId}`, {
        token: f.owner.token,
        body: { booking: { ...BOOKING, leadTimeMinutes: 90, horizonDays: 3 } },
      }),
    );
    testClock.set("2026-03-23T08:10:00.000Z");
    const customer = { token: (await registerUser()).token };
    // 08:10Z + 90 min = 09:40Z: the first slot left is 10:00Z.
    expect(starts(await slots(f, "2026-03-23", "2026-03-24", customer))).toEqual(["10:00", "10:30"]);
    // The horizon, 3 days from 23 March 08:10Z, ends at 26 March 08:10Z.
    expect(starts(await slots(f, "2026-03-26", "2026-03-27", customer))).toEqual(["08:00"]);
    expect(starts(await slots(f, "2026-03-27", "2026-03-28", customer))).toEqual([]);
  });

  it("are refused with a clear code: bad range, unbookable service, unlinked location, other organization, no credential", async () => {
    const f = await clinic();
    expectError(await slots(f, "2026-03-24", "2026-03-23"), 400, "VALIDATION_ERROR", "to");
    expectError(await slots(f, "2026-03-01", "2026-04-15"), 400, "VALIDATION_ERROR", "to");
    expectError(await slots(f, "yesterday", "2026-03-23"), 400, "VALIDATION_ERROR", "from");
    expectError(
      await call("GET", `/v1/services/${f.serviceId}/slots?from=2026-03-23&to=2026-03-24`, { token: f.owner.token }),
      400,
      "VALIDATION_ERROR",
      "locationId",
    );
    expectError(
      await call("GET", `/v1/services/${f.serviceId}/slots?locationId=loc_nope&from=2026-03-23&to=2026-03-24`, { token: f.owner.token }),
      404,
      "NOT_FOUND",
    );
    expectError(await slots(f, "2026-03-23", "2026-03-24", {}), 401, "AUTHENTICATION_ERROR");
    const stranger = await registerUser();
    const other = await createOrganization(stranger);
    const key = await createApiKey(stranger, other.id, ["read"]);
    expectError(await slots(f, "2026-03-23", "2026-03-24", { apiKey: key.key }), 404, "NOT_FOUND");
    // A customer (any signed-in user) sees them.
    expect(starts(await slots(f, "2026-03-23", "2026-03-24", { token: stranger.token }))).toHaveLength(6);
    expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { booking: null } }));
    const refused = await slots(f, "2026-03-23", "2026-03-24");
    expectError(refused, 400, "VALIDATION_ERROR", "serviceId");
  });

  it("booking settings are a manager's to change, and checked", async () => {
    const f = await clinic();
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expectError(
      await call("PATCH", `/v1/services/${f.serviceId}`, { token: operator.token, body: { booking: BOOKING } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(
      await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { booking: { durationMinutes: 0 } } }),
      400,
      "VALIDATION_ERROR",
    );
    expectError(
      await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { booking: { lateBecomes: "gone" } } }),
      400,
      "VALIDATION_ERROR",
    );
    expectError(
      await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { booking: { slots: 3 } } }),
      400,
      "VALIDATION_ERROR",
    );
  });

  it("count a booking against every slot it overlaps, not only the one starting with it", async () => {
    const f = await clinic();
    expectOk(
      await call("PATCH", `/v1/services/${f.serviceId}`, {
        token: f.owner.token,
        body: { booking: { ...BOOKING, slotStepMinutes: 15 } },
      }),
    );
    // A booking 09:15-09:45 Paris (08:15Z-08:45Z), written as booking writes it.
    const at = Date.parse("2026-03-20T08:00:00Z");
    await env.DB.prepare(
      `INSERT INTO appointments (id, organization_id, service_id, location_id, start_at, end_at, status, customer_name, language, token_hash, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'booked', 'Awa', 'fr', 'x', ?, ?)`,
    )
      .bind(
        "apt_overlap0000000000000",
        f.organizationId,
        f.serviceId,
        f.locationId,
        Date.parse("2026-03-23T08:15:00Z"),
        Date.parse("2026-03-23T08:45:00Z"),
        at,
        at,
      )
      .run();
    // 08:00Z-08:30Z and 08:30Z-09:00Z overlap it, as does 08:15Z itself.
    expect(starts(await slots(f, "2026-03-23", "2026-03-24")).slice(0, 4)).toEqual(["08:45", "09:00", "09:15", "09:30"]);
  });
});
