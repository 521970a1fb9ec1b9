import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { call, callSettled, expectError, expectOk, unique, type ApiResponse } from "../helpers/api";
import { testClock } from "../helpers/clock";
import {
  acceptInvitation,
  addMember,
  createApiKey,
  createOrganization,
  createQueueFixture,
  registerUser,
  type QueueFixture,
  type TestUser,
} from "../helpers/fixtures";
import { checkInCode } from "../../src/appointments/check-in";
import { capture, inbox } from "../helpers/notifications";
import { fakeInternet } from "../helpers/outbound";

// Booking an appointment (docs/appointments.md): exact under concurrency, refused with clear
// codes, held for a few minutes, rescheduled, cancelled, each told to the customer.

const BOOKING = { durationMinutes: 30, slotStepMinutes: 30, capacityPerSlot: 1, leadTimeMinutes: 0, horizonDays: 60 };
const WEEKDAY = [{ open: "09:00", close: "12:00" }];
/** Monday 23 March 2026, 09:00 in Paris (UTC+1). */
const MON_0900 = "2026-03-23T08:00:00.000Z";
const MON_0930 = "2026-03-23T08:30:00.000Z";

async function clinic(booking: Record<string, unknown> = {}): Promise<QueueFixture> {
  testClock.set("2026-03-20T08:00:00.000Z");
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "healthcare" });
  const f = await createQueueFixture(owner, org.id);
  const hours = { mon: WEEKDAY, tue: WEEKDAY, wed: WEEKDAY, thu: WEEKDAY, fri: WEEKDAY };
  expectOk(
    await call("PATCH", `/v1/locations/${f.locationId}`, { token: owner.token, body: { timezone: "Europe/Paris", openingHours: hours } }),
  );
  expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: owner.token, body: { booking: { ...BOOKING, ...booking } } }));
  return f;
}

const customer = (name = "Awa Diallo", language = "fr") => ({ name, language });

function bookBody(f: QueueFixture, start: string, extra: Record<string, unknown> = {}) {
  return { serviceId: f.serviceId, locationId: f.locationId, start, customer: customer(), ...extra };
}

const book = (f: QueueFixture, start: string, auth: { token?: string; apiKey?: string }, extra: Record<string, unknown> = {}) =>
  call("POST", "/v1/appointments", { ...auth, body: bookBody(f, start, extra) });

const slotsOf = async (f: QueueFixture, date = "2026-03-23") =>
  expectOk<any[]>(
    await call("GET", `/v1/services/${f.serviceId}/slots?locationId=${f.locationId}&from=${date}&to=${date}T23:00:00Z`, {
      token: f.owner.token,
    }),
  );
const startsOf = async (f: QueueFixture, date?: string) => (await slotsOf(f, date)).map((s) => s.start.slice(11, 16));

async function event(f: QueueFixture, body: Record<string, unknown>) {
  return expectOk(await call("POST", `/v1/calendar/organization/${f.organizationId}`, { token: f.owner.token, body }), 201);
}

/** The team calendar's `appointment` occurrences on Monday 23 March: [event id, start, attendees]. */
async function appointmentEvents(f: QueueFixture): Promise<[string, string, string[]][]> {
  const list = expectOk<any[]>(
    await call("GET", "/v1/business/calendar?startDate=2026-03-23T00:00:00Z&endDate=2026-03-24T00:00:00Z", {
      token: f.owner.token,
      headers: { "X-Organization-Id": f.organizationId },
    }),
  );
  return list.filter((e) => e.eventType === "appointment").map((e) => [e.id, e.occurrenceStart, e.attendees]);
}

function refusal(res: ApiResponse, reason: string, field = "start") {
  expectError(res, 409, "SLOT_UNAVAILABLE", field);
  expect(res.body.error.details.reason).toBe(reason);
}

/** A member scoped to `locationIds`, invited and accepted through the API. */
async function scopedMember(f: QueueFixture, role: string, locationIds: string[]): Promise<TestUser> {
  const user = await registerUser();
  expectOk(
    await call("POST", `/v1/organizations/${f.organizationId}/members`, {
      token: f.owner.token,
      body: { email: user.email, role, locationIds },
    }),
    202,
  );
  await acceptInvitation(user, f.organizationId);
  return user;
}

async function otherLocation(f: QueueFixture): Promise<string> {
  return expectOk(
    await call("POST", "/v1/locations", {
      token: f.owner.token,
      body: { organizationId: f.organizationId, name: "Annex", address: "2 rue", latitude: 48.86, longitude: 2.36 },
    }),
    201,
  ).id;
}

describe("booking", () => {
  it("a customer books a free slot: the appointment, its manage token once, the calendar event; the slot is gone", async () => {
    const f = await clinic();
    const awa = await registerUser({ accountType: "customer" });
    const booked = expectOk(await book(f, MON_0900, { token: awa.token }, { notes: "First visit" }), 201);
    expect(booked).toMatchObject({
      serviceId: f.serviceId,
      locationId: f.locationId,
      start: MON_0900,
      end: MON_0930,
      status: "booked",
      staffId: null,
      customer: { name: "Awa Diallo", phone: null, email: null, language: "fr" },
      notes: "First visit",
      customerUserId: awa.id,
    });
    expect(booked.id).toMatch(/^apt_/);
    expect(booked.manageToken).toMatch(/^[A-Za-z0-9_-]{44}$/);
    expect(await startsOf(f)).toEqual(["08:30", "09:00", "09:30", "10:00", "10:30"]);
    // The team calendar shows it as an appointment.
    expect(await appointmentEvents(f)).toEqual([[booked.calendarEventId, MON_0900, []]]);
    // Read back: by the token, by the customer's session, by staff; the token is never shown again.
    const byToken = expectOk(
      await call("GET", `/v1/appointments/${booked.id}`, { headers: { "X-Appointment-Token": booked.manageToken } }),
    );
    expect(byToken.manageToken).toBeUndefined();
    expect(byToken.id).toBe(booked.id);
    // The kiosk's check-in code is on the booking's answer (the widget's confirmation shows it) and on every read.
    expect(booked.checkInCode).toBe(await checkInCode(booked.id));
    expect(byToken.checkInCode).toBe(booked.checkInCode);
    // What the manage page shows: the service, the place and its time zone, when check-in opens.
    expect(byToken.place).toEqual({
      serviceName: expect.any(String),
      locationName: expect.any(String),
      timezone: "Europe/Paris",
      checkInOpensAt: "2026-03-23T07:30:00.000Z",
    });
    expectOk(await call("GET", `/v1/appointments/${booked.id}`, { token: awa.token }));
    expectOk(await call("GET", `/v1/appointments/${booked.id}`, { token: f.owner.token }));
    expect(expectOk<any[]>(await call("GET", "/v1/me/appointments", { token: awa.token })).map((a) => a.id)).toEqual([booked.id]);
  });

  it("refuses with clear codes: taken, overlapping, too soon, beyond the horizon, a closure, a break, off the grid, unbookable, bad input", async () => {
    const f = await clinic({ slotStepMinutes: 15, leadTimeMinutes: 60, horizonDays: 10 });
    const awa = { token: (await registerUser()).token };
    expectOk(await book(f, MON_0900, awa), 201);
    refusal(await book(f, MON_0900, awa), "full");
    // 09:15-09:45 overlaps the 09:00-09:30 booking.
    refusal(await book(f, "2026-03-23T08:15:00Z", awa), "full");
    expectOk(await book(f, MON_0930, awa), 201);
    refusal(await book(f, "2026-03-20T08:30:00Z", awa), "too_soon");
    refusal(await book(f, "2026-04-06T08:00:00Z", awa), "beyond_horizon");
    await event(f, {
      title: "Inventory",
      eventType: "closure",
      serviceId: f.serviceId,
      startDate: "2026-03-24T08:00:00Z",
      endDate: "2026-03-24T09:00:00Z",
    });
    refusal(await book(f, "2026-03-24T08:15:00Z", awa), "no_slot");
    await event(f, { title: "Team meeting", eventType: "break", startDate: "2026-03-24T10:00:00Z", endDate: "2026-03-24T10:30:00Z" });
    refusal(await book(f, "2026-03-24T10:00:00Z", awa), "no_slot");
    refusal(await book(f, "2026-03-24T09:05:00Z", awa), "no_slot");
    refusal(await book(f, "2026-03-28T09:00:00Z", awa), "no_slot"); // Saturday: closed
    expectError(await book(f, "tomorrow", awa), 400, "VALIDATION_ERROR", "start");
    expectError(await book(f, "2026-03-24", awa), 400, "VALIDATION_ERROR", "start");
    expectError(
      await call("POST", "/v1/appointments", { ...awa, body: { ...bookBody(f, MON_0900), customer: { language: "fr" } } }),
      400,
      "VALIDATION_ERROR",
      "customer.name",
    );
    expectError(
      await call("POST", "/v1/appointments", { ...awa, body: { ...bookBody(f, MON_0900), customer: { name: "A", language: "xx" } } }),
      400,
      "VALIDATION_ERROR",
      "customer.language",
    );
    expectError(
      await call("POST", "/v1/appointments", {
        ...awa,
        body: { ...bookBody(f, MON_0900), customer: { name: "A", language: "fr", phone: "06 12" } },
      }),
      400,
      "VALIDATION_ERROR",
      "customer.phone",
    );
    expectError(
      await call("POST", "/v1/appointments", { ...awa, body: { ...bookBody(f, MON_0900), status: "checked_in" } }),
      400,
      "VALIDATION_ERROR",
      "status",
    );
    expectError(await book(f, MON_0900, awa, { holdId: "hld_nope" }), 400, "VALIDATION_ERROR", "holdId");
    expectError(
      await call("POST", "/v1/appointments", { ...awa, body: { ...bookBody(f, MON_0900), serviceId: "svc_nope" } }),
      404,
      "NOT_FOUND",
    );
    expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { booking: null } }));
    expectError(await book(f, "2026-03-25T09:00:00Z", awa), 400, "VALIDATION_ERROR", "serviceId");
    expectError(await book(f, "2026-03-25T09:00:00Z", {}), 401, "AUTHENTICATION_ERROR");
  });

  it("gives the least booked staff member on shift when none is named, never one twice at once, and respects breaks", async () => {
    const f = await clinic({ capacityPerSlot: 2 });
    const awa = await addMember(f.owner, f.organizationId, "operator");
    const ben = await addMember(f.owner, f.organizationId, "operator");
    for (const [who, title] of [
      [awa, "Awa"],
      [ben, "Ben"],
    ] as const) {
      await event(f, {
        title,
        eventType: "shift",
        attendees: [who.id],
        startDate: "2026-03-23T08:00:00Z",
        endDate: "2026-03-23T11:00:00Z",
      });
    }
    await event(f, {
      title: "Ben's break",
      eventType: "break",
      attendees: [ben.id],
      startDate: "2026-03-23T10:00:00Z",
      endDate: "2026-03-23T10:30:00Z",
    });
    const c = { token: (await registerUser()).token };
    const first = expectOk(await book(f, MON_0900, c), 201);
    const second = expectOk(await book(f, MON_0930, c), 201);
    // Each went to whoever had fewer bookings that day.
    expect(new Set([first.staffId, second.staffId])).toEqual(new Set([awa.id, ben.id]));
    // Named: the staff member who is free; the one already booked then is refused.
    const third = expectOk(await book(f, MON_0900, c, { staffId: second.staffId }), 201);
    expect(third.staffId).toBe(second.staffId);
    refusal(await book(f, MON_0900, c), "full");
    refusal(await book(f, "2026-03-23T10:00:00Z", c, { staffId: ben.id }), "staff_busy", "staffId");
    expect(expectOk(await book(f, "2026-03-23T10:00:00Z", c), 201).staffId).toBe(awa.id);
    // 10:00 had one staff member free: capacity 2 is limited by staff.
    refusal(await book(f, "2026-03-23T10:00:00Z", c), "full");
  });

  it("20 concurrent bookings of a slot with capacity 2 make exactly 2", async () => {
    const f = await clinic({ capacityPerSlot: 2 });
    const c = { token: (await registerUser()).token };
    const results = await Promise.all(Array.from({ length: 20 }, (_v, i) => book(f, MON_0900, c, { customer: customer(`Visitor ${i}`) })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(2);
    for (const r of results.filter((r) => r.status !== 201)) refusal(r, "full");
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM appointments WHERE service_id = ? AND status = 'booked'")
      .bind(f.serviceId)
      .first<{ n: number }>();
    expect(rows?.n).toBe(2);
    expect((await slotsOf(f)).find((s) => s.start === MON_0900)).toBeUndefined();
  });

  it("books on local time across the DST change", async () => {
    const f = await clinic();
    const c = { token: (await registerUser()).token };
    // Monday 30 March: Paris is UTC+2, 09:00 is 07:00Z; 08:00Z (10:00) is the third slot.
    refusal(await book(f, "2026-03-30T06:30:00Z", c), "no_slot");
    expect(expectOk(await book(f, "2026-03-30T09:00:00+02:00", c), 201).start).toBe("2026-03-30T07:00:00.000Z");
    expect(await startsOf(f, "2026-03-30")).toEqual(["07:30", "08:00", "08:30", "09:00", "09:30"]);
  });
});

describe("holds", () => {
  it("a hold takes the slot for 5 minutes; booking with it converts it; an expired hold frees the slot", async () => {
    const f = await clinic();
    const c = { token: (await registerUser()).token };
    const slot = { serviceId: f.serviceId, locationId: f.locationId, start: MON_0900 };
    const hold = expectOk(await call("POST", "/v1/appointments/holds", { ...c, body: slot }), 201);
    expect(hold).toMatchObject({ start: MON_0900, end: MON_0930, staffId: null, expiresAt: "2026-03-20T08:05:00.000Z" });
    expect(hold.id).toMatch(/^hld_/);
    expect(await startsOf(f)).not.toContain("08:00");
    refusal(await book(f, MON_0900, c), "full");
    refusal(await call("POST", "/v1/appointments/holds", { ...c, body: slot }), "full");
    expectError(await book(f, MON_0930, c, { holdId: hold.id }), 400, "VALIDATION_ERROR", "holdId");
    const booked = expectOk(await book(f, MON_0900, c, { holdId: hold.id }), 201);
    expect(booked.start).toBe(MON_0900);
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM appointment_holds WHERE id = ?").bind(hold.id).first<{ n: number }>())?.n).toBe(
      0,
    );

    const second = expectOk(await call("POST", "/v1/appointments/holds", { ...c, body: { ...slot, start: MON_0930 } }), 201);
    testClock.advance(5 * 60_000 - 1);
    refusal(await book(f, MON_0930, c), "full");
    testClock.advance(1);
    expect(await startsOf(f)).toContain("08:30");
    // Booking with the expired hold takes the slot if it is still free.
    expect(expectOk(await book(f, MON_0930, c, { holdId: second.id }), 201).start).toBe(MON_0930);
  });

  it("are refused like bookings: bad input, a slot not free, no credential, a key of another organization", async () => {
    const f = await clinic();
    const c = { token: (await registerUser()).token };
    expectError(
      await call("POST", "/v1/appointments/holds", { ...c, body: { serviceId: f.serviceId, locationId: f.locationId } }),
      400,
      "VALIDATION_ERROR",
      "start",
    );
    refusal(
      await call("POST", "/v1/appointments/holds", {
        ...c,
        body: { serviceId: f.serviceId, locationId: f.locationId, start: "2026-03-23T07:00:00Z" },
      }),
      "no_slot",
    );
    expectError(
      await call("POST", "/v1/appointments/holds", { body: { serviceId: f.serviceId, locationId: f.locationId, start: MON_0900 } }),
      401,
      "AUTHENTICATION_ERROR",
    );
    const stranger = await registerUser();
    const other = await createOrganization(stranger);
    const key = await createApiKey(stranger, other.id, ["write"]);
    expectError(
      await call("POST", "/v1/appointments/holds", {
        apiKey: key.key,
        body: { serviceId: f.serviceId, locationId: f.locationId, start: MON_0900 },
      }),
      404,
      "NOT_FOUND",
    );
  });
});

describe("reschedule and cancel", () => {
  it("moves to another free slot with its calendar event, refuses a taken one, and cancels to free the slot", async () => {
    const f = await clinic();
    const c = { token: (await registerUser()).token };
    const a = expectOk(await book(f, MON_0900, c), 201);
    const b = expectOk(await book(f, "2026-03-23T09:00:00Z", c), 201);
    const token = { "X-Appointment-Token": a.manageToken };
    refusal(await call("PATCH", `/v1/appointments/${a.id}`, { headers: token, body: { start: b.start } }), "full");
    expectError(
      await call("PATCH", `/v1/appointments/${a.id}`, { headers: token, body: { start: "soon" } }),
      400,
      "VALIDATION_ERROR",
      "start",
    );
    expectError(
      await call("PATCH", `/v1/appointments/${a.id}`, { headers: token, body: { start: MON_0930, serviceId: f.serviceId } }),
      400,
      "VALIDATION_ERROR",
      "serviceId",
    );
    // To its own slot, and then later: it does not compete with itself.
    expectOk(await call("PATCH", `/v1/appointments/${a.id}`, { headers: token, body: { start: MON_0900 } }));
    const moved = expectOk(await call("PATCH", `/v1/appointments/${a.id}`, { headers: token, body: { start: MON_0930 } }));
    expect(moved).toMatchObject({ start: MON_0930, end: "2026-03-23T09:00:00.000Z", status: "booked" });
    expect(await startsOf(f)).toEqual(["08:00", "09:30", "10:00", "10:30"]);
    expect((await appointmentEvents(f)).find((e) => e[0] === a.calendarEventId)?.[1]).toBe(MON_0930);

    const cancelled = expectOk(await call("POST", `/v1/appointments/${a.id}/cancel`, { headers: token }));
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.cancelledAt).toBe("2026-03-20T08:00:00.000Z");
    expect(await startsOf(f)).toEqual(["08:00", "08:30", "09:30", "10:00", "10:30"]);
    expect((await appointmentEvents(f)).map((e) => e[0])).toEqual([b.calendarEventId]);
    expectError(await call("POST", `/v1/appointments/${a.id}/cancel`, { headers: token }), 409, "INVALID_STATE");
    expectError(await call("PATCH", `/v1/appointments/${a.id}`, { headers: token, body: { start: MON_0900 } }), 409, "INVALID_STATE");
    // The freed slot books again.
    expectOk(await book(f, MON_0930, c), 201);
  });
});

describe("reschedule with the manage token", () => {
  it("reads the slots it may move to with the token (its own counted free), moves atomically and frees the old", async () => {
    const f = await clinic();
    const c = { token: (await registerUser()).token };
    const a = expectOk(await book(f, MON_0900, c), 201);
    const b = expectOk(await book(f, MON_0930, c), 201);
    const token = { "X-Appointment-Token": a.manageToken };
    const slotsPath = (id: string, q = "from=2026-03-23&to=2026-03-24") => `/v1/appointments/${id}/slots?${q}`;

    // Its own slot is offered (it does not compete with itself); b's is not.
    const offered = expectOk<any[]>(await call("GET", slotsPath(a.id), { headers: token }));
    expect(offered.map((s) => s.start.slice(11, 16))).toEqual(["08:00", "09:00", "09:30", "10:00", "10:30"]);
    expect(offered[0]).toMatchObject({ start: MON_0900, end: MON_0930, capacity: 1, remaining: 1, current: true });
    expect(offered[1].current).toBe(false);
    // The same for staff who reach it and the customer's own session; a wrong token or another's is 404.
    expect(expectOk<any[]>(await call("GET", slotsPath(a.id), { token: f.owner.token })).length).toBe(5);
    expect(expectOk<any[]>(await call("GET", slotsPath(a.id), c)).length).toBe(5);
    expectError(await call("GET", slotsPath(a.id), { headers: { "X-Appointment-Token": b.manageToken } }), 404, "NOT_FOUND");
    expectError(await call("GET", slotsPath(a.id), { token: (await registerUser()).token }), 404, "NOT_FOUND");
    expectError(await call("GET", slotsPath(a.id), {}), 401, "AUTHENTICATION_ERROR");
    expectError(await call("GET", slotsPath(a.id, "from=2026-03-23"), { headers: token }), 400, "VALIDATION_ERROR", "to");
    expectError(await call("GET", slotsPath(a.id, "from=2026-03-23&to=2026-05-23"), { headers: token }), 400, "VALIDATION_ERROR", "to");

    // Two customers move to the one free 10:00 at once: one gets it, the other is told it is full.
    const [first, second] = await Promise.all([
      call("PATCH", `/v1/appointments/${a.id}`, { headers: token, body: { start: "2026-03-23T09:00:00.000Z" } }),
      call("PATCH", `/v1/appointments/${b.id}`, {
        headers: { "X-Appointment-Token": b.manageToken },
        body: { start: "2026-03-23T09:00:00.000Z" },
      }),
    ]);
    const statuses = [first.status, second.status].sort();
    expect(statuses).toEqual([200, 409]);
    const loser = first.status === 409 ? first : second;
    refusal(loser, "full");
    // The winner's old slot is free again; the loser keeps theirs.
    const winner = first.status === 200 ? a : b;
    const free = await startsOf(f);
    expect(free).toContain(winner.start.slice(11, 16));
    expect(free).not.toContain("09:00");
    expect(free).not.toContain((first.status === 409 ? a : b).start.slice(11, 16));
    // A cancelled appointment offers no slot.
    expectOk(await call("POST", `/v1/appointments/${a.id}/cancel`, { headers: token }));
    expectError(await call("GET", slotsPath(a.id), { headers: token }), 409, "INVALID_STATE");
  });
});

describe("who may", () => {
  it("book: a customer, staff reaching the location, a write or widget key; not a read key, another organization's key or a manager scoped elsewhere", async () => {
    const f = await clinic({ capacityPerSlot: 10 });
    const annex = await otherLocation(f);
    const widget = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const write = await createApiKey(f.owner, f.organizationId, ["write"]);
    const read = await createApiKey(f.owner, f.organizationId, ["read"]);
    const operator = await addMember(f.owner, f.organizationId, "operator");
    const here = await scopedMember(f, "manager", [f.locationId]);
    const elsewhere = await scopedMember(f, "manager", [annex]);
    const stranger = await registerUser();
    const other = await createOrganization(stranger);
    const otherKey = await createApiKey(stranger, other.id, ["write"]);

    for (const auth of [
      { apiKey: widget.key },
      { apiKey: write.key },
      { token: operator.token },
      { token: here.token },
      { token: f.owner.token },
    ]) {
      const a = expectOk(await book(f, MON_0900, auth), 201);
      expect(a.customerUserId).toBeNull();
    }
    expectError(await book(f, MON_0900, { apiKey: read.key }), 403, "AUTHORIZATION_ERROR");
    expectError(await book(f, MON_0900, { apiKey: otherKey.key }), 404, "NOT_FOUND");
    expectError(await book(f, MON_0900, { token: elsewhere.token }), 404, "NOT_FOUND");
    expectError(
      await call("POST", "/v1/appointments", { apiKey: widget.key, body: { ...bookBody(f, MON_0900), customer: {} } }),
      400,
      "VALIDATION_ERROR",
      "customer.name",
    );
    // The widget key reaches the booking routes and the slots, nothing else.
    expectOk(
      await call("GET", `/v1/services/${f.serviceId}/slots?locationId=${f.locationId}&from=2026-03-23&to=2026-03-24`, {
        apiKey: widget.key,
      }),
    );
    expectError(
      await call("GET", `/v1/locations/${f.locationId}/appointments?date=2026-03-23`, { apiKey: widget.key }),
      403,
      "AUTHORIZATION_ERROR",
    );
  });

  it("the widget books from any page, and a widget key locked to its origins only from them", async () => {
    const f = await clinic({ capacityPerSlot: 10 });
    const open = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const res = await call("POST", "/v1/appointments", {
      apiKey: open.key,
      headers: { Origin: "https://clinic.example" },
      body: bookBody(f, MON_0900),
    });
    expectOk(res, 201);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const h = { "X-Organization-Id": f.organizationId };
    const domain = `${unique("clinic")}.com`;
    const site = `https://${domain}`;
    const proof = expectOk(await call("POST", "/v1/business/verification/generate-token", { token: f.owner.token, headers: h }), 201).token;
    fakeInternet({ [domain]: { TXT: [`"service-verification=${proof}"`] } });
    expectOk(
      await call("POST", "/v1/business/verification/verify", {
        token: f.owner.token,
        headers: h,
        body: { domain, method: "dns" },
      }),
    );
    vi.restoreAllMocks();
    const locked = expectOk(
      await call("POST", `/v1/organizations/${f.organizationId}/api-keys`, {
        token: f.owner.token,
        body: { name: "Clinic site", permissions: ["widget"], allowedOrigins: [site] },
      }),
      201,
    );
    expectOk(
      await call("POST", "/v1/appointments", {
        apiKey: locked.key,
        headers: { Origin: site },
        body: bookBody(f, MON_0900),
      }),
      201,
    );
    for (const path of ["/v1/appointments", "/v1/appointments/holds"]) {
      const body = path.endsWith("holds") ? { serviceId: f.serviceId, locationId: f.locationId, start: MON_0900 } : bookBody(f, MON_0900);
      expectError(
        await call("POST", path, { apiKey: locked.key, headers: { Origin: "https://elsewhere.example" }, body }),
        403,
        "AUTHORIZATION_ERROR",
      );
    }
  });

  it("see, move and cancel: staff reaching the location, the customer; others 404, a key without the scope 403", async () => {
    const f = await clinic({ capacityPerSlot: 10 });
    const annex = await otherLocation(f);
    const awa = await registerUser();
    const a = expectOk(await book(f, MON_0900, { token: awa.token }), 201);
    const services = await createApiKey(f.owner, f.organizationId, ["read:services"]);
    const readQueues = await createApiKey(f.owner, f.organizationId, ["read:queues"]);
    const here = await scopedMember(f, "operator", [f.locationId]);
    const elsewhere = await scopedMember(f, "manager", [annex]);
    const stranger = await registerUser();
    const other = await createOrganization(stranger);
    const otherKey = await createApiKey(stranger, other.id, ["admin"]);
    const path = `/v1/appointments/${a.id}`;

    expectOk(await call("GET", path, { token: here.token }));
    expectOk(await call("GET", path, { apiKey: readQueues.key }));
    expectError(await call("GET", path, { apiKey: services.key }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("PATCH", path, { apiKey: readQueues.key, body: { start: MON_0930 } }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("POST", `${path}/cancel`, { apiKey: readQueues.key }), 403, "AUTHORIZATION_ERROR");
    for (const auth of [{ token: elsewhere.token }, { token: stranger.token }, { apiKey: otherKey.key }]) {
      expectError(await call("GET", path, auth), 404, "NOT_FOUND");
      expectError(await call("PATCH", path, { ...auth, body: { start: MON_0930 } }), 404, "NOT_FOUND");
      expectError(await call("POST", `${path}/cancel`, auth), 404, "NOT_FOUND");
    }
    expectError(await call("GET", path, {}), 401, "AUTHENTICATION_ERROR");
    expectError(await call("GET", path, { headers: { "X-Appointment-Token": "A".repeat(44) } }), 404, "NOT_FOUND");
    expectError(await call("GET", "/v1/appointments/apt_nope", { token: f.owner.token }), 404, "NOT_FOUND");
    expectError(await call("PATCH", path, { token: here.token, body: {} }), 400, "VALIDATION_ERROR", "start");
    expect(expectOk(await call("PATCH", path, { token: here.token, body: { start: MON_0930 } })).start).toBe(MON_0930);
    expect(expectOk(await call("POST", `${path}/cancel`, { token: awa.token })).status).toBe("cancelled");
  });

  it("list a location's day (staff reaching it) and a customer's own", async () => {
    const f = await clinic({ capacityPerSlot: 10 });
    const annex = await otherLocation(f);
    const awa = await registerUser();
    const ben = await registerUser();
    const a = expectOk(await book(f, MON_0930, { token: awa.token }), 201);
    const b = expectOk(await book(f, MON_0900, { token: ben.token }), 201);
    expectOk(await book(f, "2026-03-24T08:00:00Z", { token: awa.token }), 201);
    const day = await call("GET", `/v1/locations/${f.locationId}/appointments?date=2026-03-23`, { token: f.owner.token });
    expect(expectOk<any[]>(day).map((x) => x.id)).toEqual([b.id, a.id]);
    expect(day.body.meta).toMatchObject({ total: 2, hasMore: false });
    const here = await scopedMember(f, "operator", [f.locationId]);
    const elsewhere = await scopedMember(f, "manager", [annex]);
    const services = await createApiKey(f.owner, f.organizationId, ["read:services"]);
    expect(
      expectOk<any[]>(await call("GET", `/v1/locations/${f.locationId}/appointments?date=2026-03-23`, { token: here.token })),
    ).toHaveLength(2);
    expectError(
      await call("GET", `/v1/locations/${f.locationId}/appointments?date=2026-03-23`, { token: elsewhere.token }),
      404,
      "NOT_FOUND",
    );
    expectError(await call("GET", `/v1/locations/${f.locationId}/appointments?date=2026-03-23`, { token: awa.token }), 404, "NOT_FOUND");
    expectError(
      await call("GET", `/v1/locations/${f.locationId}/appointments?date=2026-03-23`, { apiKey: services.key }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(
      await call("GET", `/v1/locations/${f.locationId}/appointments?date=23/03/2026`, { token: f.owner.token }),
      400,
      "VALIDATION_ERROR",
      "date",
    );
    expectError(
      await call("GET", `/v1/locations/${f.locationId}/appointments?date=2026-02-30`, { token: f.owner.token }),
      400,
      "VALIDATION_ERROR",
      "date",
    );
    expect(expectOk<any[]>(await call("GET", "/v1/me/appointments", { token: awa.token })).map((x) => x.start)).toEqual([
      MON_0930,
      "2026-03-24T08:00:00.000Z",
    ]);
    expect(expectOk<any[]>(await call("GET", "/v1/me/appointments", { token: f.owner.token }))).toEqual([]);
    expectError(await call("GET", "/v1/me/appointments", { apiKey: services.key }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("GET", "/v1/me/appointments", {}), 401, "AUTHENTICATION_ERROR");
  });
});

describe("telling", () => {
  it("confirms, moves and cancels in the customer's language with the manage link, and publishes appointment.* events", async () => {
    const f = await clinic();
    const captured = capture();
    try {
      const john = await registerUser({ language: "fr" });
      const res = await callSettled("POST", "/v1/appointments", {
        token: john.token,
        body: { ...bookBody(f, MON_0900), customer: customer("John", "en") },
      });
      const a = expectOk(res, 201);
      const mine = (await inbox(john.id)).filter((n) => n.type.startsWith("appointment."));
      expect(mine.map((n) => [n.type, n.title])).toEqual([["appointment.created", "Appointment confirmed"]]);
      expect(mine[0]!.body).toContain("Counter: Monday, 23 March 2026 at 09:00.");
      expect(mine[0]!.body).toContain(`/appointments/${a.id}#token=${a.manageToken}`);
      await callSettled("PATCH", `/v1/appointments/${a.id}`, { token: john.token, body: { start: MON_0930 } });
      await callSettled("POST", `/v1/appointments/${a.id}/cancel`, { token: john.token });
      const titles = (await inbox(john.id)).filter((n) => n.type.startsWith("appointment.")).map((n) => n.body);
      expect(titles.slice(1)).toEqual([
        "Counter: now Monday, 23 March 2026 at 09:30.",
        "Counter on Monday, 23 March 2026 at 09:30 is cancelled.",
      ]);
      const events = captured.take((e) => e.type.startsWith("appointment."));
      expect(events.map((e) => [e.type, e.data.appointmentId, e.data.start])).toEqual([
        ["appointment.created", a.id, MON_0900],
        ["appointment.rescheduled", a.id, MON_0930],
        ["appointment.cancelled", a.id, MON_0930],
      ]);
      expect(JSON.stringify(events)).not.toContain(a.manageToken);
    } finally {
      captured.restore();
    }
  });
});
