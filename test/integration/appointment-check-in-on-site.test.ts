import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { appointmentRow, bookAppointment } from "../helpers/booked-appointments";
import { testClock } from "../helpers/clock";
import { createApiKey, createOrganization, createQueueFixture, registerUser, type QueueFixture } from "../helpers/fixtures";

// Issue 38: checking in on site without typing a code. The kiosk reads the appointment's QR code
// (the manage link the confirmation carries), and a customer's phone checks in with the manage
// token only within the service's check-in radius of the location when the service sets one
// (`booking.checkInRadiusMeters`, like remote join's geofence). docs/appointments.md.

const START = Date.parse("2026-06-10T10:30:00.000Z");
const MIN = 60_000;
/** The fixture's location (createQueueFixture). */
const PLACE = { latitude: 48.8566, longitude: 2.3522 };
/** About 60 m north of it, and about 1.1 km north. */
const NEAR = { latitude: 48.85714, longitude: 2.3522 };
const FAR = { latitude: 48.8666, longitude: 2.3522 };

async function clinic(): Promise<QueueFixture> {
  testClock.set(START - 60 * MIN);
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "healthcare" });
  return createQueueFixture(owner, org.id, PLACE);
}

const book = (f: QueueFixture, startAt = START) =>
  bookAppointment({ auth: { token: f.owner.token }, serviceId: f.serviceId, locationId: f.locationId, startAt });

/** The manage link the confirmation carries (docs/appointments.md), as the appointment's QR code holds it. */
const manageLink = (id: string, token: string) => `https://queue.example/appointments/${id}#token=${token}`;

async function withRadius(f: QueueFixture, checkInRadiusMeters: number | null): Promise<void> {
  const service = expectOk(await call("GET", `/v1/services/${f.serviceId}`, { token: f.owner.token }));
  const saved = expectOk(
    await call("PATCH", `/v1/services/${f.serviceId}`, {
      token: f.owner.token,
      body: { booking: { ...service.booking, checkInRadiusMeters } },
    }),
  );
  expect(saved.booking.checkInRadiusMeters).toBe(checkInRadiusMeters);
}

describe("the kiosk checks an appointment in by its QR code", () => {
  it("the manage link's QR checks it in (201, the visitor's ticket token), again is the same ticket (200); too early is CHECK_IN_NOT_OPEN", async () => {
    const f = await clinic();
    const apt = await book(f);
    const key = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const kiosk = (qr: string) => call("POST", `/v1/widget/locations/${f.locationId}/check-in`, { apiKey: key.key, body: { qr } });

    testClock.set(START - 31 * MIN);
    const early = await kiosk(manageLink(apt.id, apt.token));
    expectError(early, 409, "CHECK_IN_NOT_OPEN");
    expect(early.body.error.details).toMatchObject({ opensAt: "2026-06-10T10:00:00.000Z" });
    expect((await appointmentRow(apt.id)).status).toBe("booked");

    testClock.set(START - 5 * MIN);
    const made = expectOk(await kiosk(manageLink(apt.id, apt.token)), 201);
    expect(made.appointment).toMatchObject({ id: apt.id, status: "checked_in" });
    expect(made.ticket).toMatchObject({ kind: "appointment", source: "widget", appointmentAt: "2026-06-10T10:30:00.000Z" });
    expect(made.ticketToken).toMatch(/^[A-Za-z0-9_-]{40,}$/);

    const again = expectOk(await kiosk(manageLink(apt.id, apt.token)), 200);
    expect(again.ticket.id).toBe(made.ticket.id);
    expect(again.ticketToken).toBeNull();
  });

  it("a QR with a wrong token, another location's appointment or no appointment in it is refused; code and qr together are 400", async () => {
    const f = await clinic();
    const apt = await book(f);
    const other = await clinic();
    const elsewhere = await book(other);
    const key = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const kiosk = (body: Record<string, unknown>) =>
      call("POST", `/v1/widget/locations/${f.locationId}/check-in`, { apiKey: key.key, body });
    testClock.set(START - 5 * MIN);

    expectError(await kiosk({ qr: manageLink(apt.id, elsewhere.token) }), 404, "NOT_FOUND");
    expectError(await kiosk({ qr: manageLink(elsewhere.id, elsewhere.token) }), 404, "NOT_FOUND");
    expectError(await kiosk({ qr: manageLink(apt.id, "x".repeat(44)) }), 404, "NOT_FOUND");
    const notOurs = await kiosk({ qr: "https://example.com/some/other/code" });
    expectError(notOurs, 400, "VALIDATION_ERROR");
    expect(notOurs.body.error.details.field).toBe("qr");
    const both = await kiosk({ qr: manageLink(apt.id, apt.token), code: "7KQ2MX" });
    expectError(both, 400, "VALIDATION_ERROR");
    const neither = await kiosk({});
    expectError(neither, 400, "VALIDATION_ERROR");
    expect((await appointmentRow(apt.id)).status).toBe("booked");
    expect((await appointmentRow(elsewhere.id)).status).toBe("booked");
  });
});

describe("geofenced check-in with the manage token", () => {
  const byPhone = (id: string, token: string, position?: Record<string, number>) =>
    call("POST", `/v1/appointments/${id}/check-in`, {
      headers: { "X-Appointment-Token": token },
      ...(position ? { body: { position } } : {}),
    });

  it("within the radius checks in; too far is 422 OUT_OF_RANGE with the distance; too early is CHECK_IN_NOT_OPEN; again is the same ticket", async () => {
    const f = await clinic();
    await withRadius(f, 200);
    const apt = await book(f);

    testClock.set(START - 40 * MIN);
    expectError(await byPhone(apt.id, apt.token, { ...NEAR, accuracy: 10 }), 409, "CHECK_IN_NOT_OPEN");

    testClock.set(START - 10 * MIN);
    const far = await byPhone(apt.id, apt.token, { ...FAR, accuracy: 20 });
    expectError(far, 422, "OUT_OF_RANGE");
    expect(far.body.error.details.maxKm).toBe(0.2);
    expect(far.body.error.details.distanceKm).toBeGreaterThan(1);
    expect(far.body.error.details.distanceKm).toBeLessThan(1.2);
    expect((await appointmentRow(apt.id)).status).toBe("booked");

    // No position at all, where the service asks for one: 400 naming it.
    const blind = await byPhone(apt.id, apt.token);
    expectError(blind, 400, "VALIDATION_ERROR");
    expect(blind.body.error.details.field).toBe("position");

    const done = expectOk(await byPhone(apt.id, apt.token, { ...NEAR, accuracy: 15 }), 201);
    expect(done.ticket).toMatchObject({ kind: "appointment", source: "app" });
    expect(done.appointment.status).toBe("checked_in");

    // Already checked in: the same ticket, wherever the phone is now.
    const again = expectOk(await byPhone(apt.id, apt.token, { ...FAR, accuracy: 20 }), 200);
    expect(again.ticket.id).toBe(done.ticket.id);
  });

  it("a poor fix counts in the customer's favour (distance minus accuracy), as remote join's geofence does", async () => {
    const f = await clinic();
    await withRadius(f, 200);
    const apt = await book(f);
    testClock.set(START - 10 * MIN);
    // ~1.1 km away but the fix is only good to 1 km: possibly within 200 m.
    expectOk(await byPhone(apt.id, apt.token, { ...FAR, accuracy: 1_000 }), 201);
  });

  it("staff and the kiosk are on site: no position asked; without a radius the token checks in from anywhere", async () => {
    const f = await clinic();
    await withRadius(f, 200);
    const staffs = await book(f);
    const kiosks = await book(f, START + 10 * MIN);
    const key = await createApiKey(f.owner, f.organizationId, ["widget"]);
    testClock.set(START - 5 * MIN);
    expectOk(await call("POST", `/v1/appointments/${staffs.id}/check-in`, { token: f.owner.token }), 201);
    expectOk(
      await call("POST", `/v1/widget/locations/${f.locationId}/check-in`, {
        apiKey: key.key,
        body: { qr: manageLink(kiosks.id, kiosks.token) },
      }),
      201,
    );

    await withRadius(f, null);
    const anywhere = await book(f, START + 20 * MIN);
    expectOk(await byPhone(anywhere.id, anywhere.token, { ...FAR, accuracy: 5 }), 201);
  });

  it("a bad position is 400 naming the field", async () => {
    const f = await clinic();
    await withRadius(f, 200);
    const apt = await book(f);
    testClock.set(START - 10 * MIN);
    const bad = await byPhone(apt.id, apt.token, { latitude: 123, longitude: 2.35 });
    expectError(bad, 400, "VALIDATION_ERROR");
    expect(bad.body.error.details.field).toBe("position.latitude");
  });
});
