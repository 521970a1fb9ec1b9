import { describe, expect, it } from "vitest";
import { call, callSettled, expectError, expectOk } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { createOrganization, createQueueFixture, registerUser, type QueueFixture } from "../helpers/fixtures";
import { inbox } from "../helpers/notifications";

// Issue 38 (e): an `appointment` event made through the staff calendar with a customer is a real
// booking (docs/appointments.md): the same row, slot check and capacity as POST /v1/appointments,
// in the customer's own list, checked in and called the same way; its event moves and cancels it.

const BOOKING = { durationMinutes: 30, slotStepMinutes: 30, capacityPerSlot: 1, leadTimeMinutes: 0, horizonDays: 60 };
const WEEKDAY = [{ open: "09:00", close: "12:00" }];
/** Monday 23 March 2026, 09:00 in Paris (UTC+1). */
const MON_0900 = "2026-03-23T08:00:00.000Z";
const MON_0930 = "2026-03-23T08:30:00.000Z";
const MON_1000 = "2026-03-23T09:00:00.000Z";
const MIN = 60_000;

async function clinic(at = "2026-03-20T08:00:00.000Z"): Promise<QueueFixture> {
  testClock.set(at);
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "healthcare" });
  const f = await createQueueFixture(owner, org.id);
  const hours = { mon: WEEKDAY, tue: WEEKDAY, wed: WEEKDAY, thu: WEEKDAY, fri: WEEKDAY };
  expectOk(
    await call("PATCH", `/v1/locations/${f.locationId}`, { token: owner.token, body: { timezone: "Europe/Paris", openingHours: hours } }),
  );
  expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: owner.token, body: { booking: BOOKING } }));
  return f;
}

const inCalendar = (f: QueueFixture, body: Record<string, unknown>) =>
  call("POST", `/v1/calendar/organization/${f.organizationId}`, { token: f.owner.token, body });

const appointmentEvent = (f: QueueFixture, start: string, end: string, extra: Record<string, unknown> = {}) => ({
  title: "Rendez-vous",
  eventType: "appointment",
  serviceId: f.serviceId,
  locationId: f.locationId,
  startDate: start,
  endDate: end,
  customer: { name: "Awa Diallo", language: "fr" },
  ...extra,
});

const customerBooks = (f: QueueFixture, token: string, start: string) =>
  callSettled("POST", "/v1/appointments", {
    token,
    body: { serviceId: f.serviceId, locationId: f.locationId, start, customer: { name: "Awa Diallo", language: "fr" } },
  });

const slotStarts = async (f: QueueFixture) =>
  expectOk<any[]>(
    await call("GET", `/v1/services/${f.serviceId}/slots?locationId=${f.locationId}&from=2026-03-23&to=2026-03-23T12:00:00Z`, {
      token: f.owner.token,
    }),
  ).map((s) => s.start);

describe("an appointment made through the calendar", () => {
  it("is a real booking: the appointment row, its slot taken (same capacity both ways), in the customer's own list and the day, the customer told", async () => {
    const f = await clinic();
    const awa = await registerUser();
    // Awa booked before with her account: she is a customer of the organization.
    const own = expectOk(await customerBooks(f, awa.token, MON_1000), 201);

    const res = await inCalendar(
      f,
      appointmentEvent(f, MON_0900, MON_0930, { customer: { name: "Awa Diallo", language: "fr", userId: awa.id } }),
    );
    const event = expectOk(res, 201);
    expect(event).toMatchObject({ eventType: "appointment", serviceId: f.serviceId, locationId: f.locationId, startDate: MON_0900 });
    expect(event.appointmentId).toMatch(/^apt_/);
    const apt = expectOk(await call("GET", `/v1/appointments/${event.appointmentId}`, { token: f.owner.token }));
    expect(apt).toMatchObject({
      status: "booked",
      start: MON_0900,
      end: MON_0930,
      calendarEventId: event.id,
      customerUserId: awa.id,
      customer: { name: "Awa Diallo", language: "fr" },
    });
    // The same capacity both ways: the slot is gone for the customer and for the calendar.
    expect(await slotStarts(f)).not.toContain(MON_0900);
    const full = await customerBooks(f, (await registerUser()).token, MON_0900);
    expectError(full, 409, "SLOT_UNAVAILABLE", "start");
    expect(full.body.error.details.reason).toBe("full");
    const again = await inCalendar(f, appointmentEvent(f, MON_0900, MON_0930));
    expectError(again, 409, "SLOT_UNAVAILABLE", "start");
    expect(again.body.error.details.reason).toBe("full");
    // A calendar booking takes a slot a customer booked no more than they could: 10:00 is Awa's own.
    expectError(await inCalendar(f, appointmentEvent(f, MON_1000, "2026-03-23T09:30:00.000Z")), 409, "SLOT_UNAVAILABLE", "start");

    const mine = expectOk<any[]>(await call("GET", "/v1/me/appointments", { token: awa.token }));
    expect(mine.map((a) => a.id).sort()).toEqual([event.appointmentId, own.id].sort());
    const day = expectOk<any[]>(await call("GET", `/v1/locations/${f.locationId}/appointments?date=2026-03-23`, { token: f.owner.token }));
    expect(day.map((a) => a.id)).toEqual([event.appointmentId, own.id]);
    // One event per appointment in the calendar: the booking's own.
    const week = expectOk<any[]>(
      await call("GET", "/v1/business/calendar?startDate=2026-03-23T00:00:00Z&endDate=2026-03-24T00:00:00Z", {
        token: f.owner.token,
        headers: { "X-Organization-Id": f.organizationId },
      }),
    );
    expect(week.filter((e) => e.eventType === "appointment").map((e) => e.id)).toEqual([event.id, own.calendarEventId]);
    const told = (await inbox(awa.id)).filter((n) => n.type === "appointment.created");
    expect(told).toHaveLength(2);
  });

  it("is checked in and called like any booking: a ticket of kind appointment that call-next calls", async () => {
    // The morning itself (a session lasts less than the three days from Friday).
    const f = await clinic("2026-03-23T07:00:00.000Z");
    const event = expectOk(await inCalendar(f, appointmentEvent(f, MON_0930, MON_1000)), 201);
    testClock.set(Date.parse(MON_0930) - 10 * MIN);
    const checked = expectOk(await call("POST", `/v1/appointments/${event.appointmentId}/check-in`, { token: f.owner.token }), 201);
    expect(checked.ticket).toMatchObject({ kind: "appointment", appointmentAt: MON_0930, status: "waiting" });
    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    expect(JSON.stringify(called)).toContain(checked.ticket.id);
    const ticket = expectOk(await call("GET", `/v1/tickets/${checked.ticket.id}`, { token: f.owner.token }));
    expect(ticket).toMatchObject({ status: "called", kind: "appointment" });
  });

  it("moving its event reschedules the appointment by the booking's rules; other fields are refused; deleting it cancels", async () => {
    const f = await clinic();
    const event = expectOk(await inCalendar(f, appointmentEvent(f, MON_0900, MON_0930)), 201);
    const path = `/v1/calendar/${event.id}`;
    const moved = expectOk(await call("PATCH", path, { token: f.owner.token, body: { startDate: MON_0930 } }));
    expect(moved).toMatchObject({ id: event.id, startDate: MON_0930, endDate: MON_1000, appointmentId: event.appointmentId });
    expect(expectOk(await call("GET", `/v1/appointments/${event.appointmentId}`, { token: f.owner.token }))).toMatchObject({
      start: MON_0930,
      status: "booked",
    });
    const starts = await slotStarts(f);
    expect(starts).toContain(MON_0900);
    expect(starts).not.toContain(MON_0930);
    // Another booking's slot, a length that is not the service's, and what the appointment owns are refused.
    const other = expectOk(await inCalendar(f, appointmentEvent(f, MON_1000, "2026-03-23T09:30:00.000Z")), 201);
    const taken = await call("PATCH", path, { token: f.owner.token, body: { startDate: MON_1000 } });
    expectError(taken, 409, "SLOT_UNAVAILABLE", "start");
    expectError(
      await call("PATCH", path, { token: f.owner.token, body: { startDate: MON_0900, endDate: MON_1000 } }),
      400,
      "VALIDATION_ERROR",
      "endDate",
    );
    expectError(await call("PATCH", path, { token: f.owner.token, body: { title: "Autre" } }), 400, "VALIDATION_ERROR", "title");
    expectError(await call("PATCH", path, { token: f.owner.token, body: { serviceId: null } }), 400, "VALIDATION_ERROR", "serviceId");

    expectOk(await call("DELETE", path, { token: f.owner.token }));
    expect(expectOk(await call("GET", `/v1/appointments/${event.appointmentId}`, { token: f.owner.token })).status).toBe("cancelled");
    expect(await slotStarts(f)).toContain(MON_0930);
    expectError(await call("PATCH", path, { token: f.owner.token, body: { startDate: MON_0900 } }), 404, "NOT_FOUND");
    // The other booking is untouched.
    expect(expectOk(await call("GET", `/v1/appointments/${other.appointmentId}`, { token: f.owner.token })).status).toBe("booked");
  });

  it("bad input names its field; an event without a customer stays a busy marker", async () => {
    const f = await clinic();
    const stranger = await registerUser();
    const bad = async (body: Record<string, unknown>, field: string) =>
      expectError(await inCalendar(f, body), 400, "VALIDATION_ERROR", field);
    await bad(appointmentEvent(f, MON_0900, MON_0930, { serviceId: undefined }), "serviceId");
    await bad(appointmentEvent(f, MON_0900, MON_0930, { locationId: undefined }), "locationId");
    await bad(appointmentEvent(f, MON_0900, MON_1000), "endDate");
    await bad(appointmentEvent(f, "2026-03-23", MON_0930), "startDate");
    await bad(appointmentEvent(f, MON_0900, MON_0930, { eventType: "event" }), "customer");
    await bad(appointmentEvent(f, MON_0900, MON_0930, { recurrencePattern: "weekly" }), "recurrencePattern");
    await bad(appointmentEvent(f, MON_0900, MON_0930, { attendees: [f.owner.id, stranger.id] }), "attendees");
    await bad(
      appointmentEvent(f, MON_0900, MON_0930, { customer: { name: "Awa", language: "fr", userId: stranger.id } }),
      "customer.userId",
    );
    await bad(appointmentEvent(f, MON_0900, MON_0930, { customer: { name: "Awa" } }), "customer.language");
    // Nothing was booked by the refusals.
    expect(await slotStarts(f)).toContain(MON_0900);
    // Without a customer: the calendar's event only, no appointment.
    const marker = expectOk(await inCalendar(f, appointmentEvent(f, MON_0900, MON_0930, { customer: undefined })), 201);
    expect(marker.appointmentId).toBeNull();
    const day = expectOk<any[]>(await call("GET", `/v1/locations/${f.locationId}/appointments?date=2026-03-23`, { token: f.owner.token }));
    expect(day).toEqual([]);
  });
});
