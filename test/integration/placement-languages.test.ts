import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { bookAppointment } from "../helpers/booked-appointments";
import { testClock } from "../helpers/clock";
import { createOrganization, createQueueFixture, registerUser } from "../helpers/fixtures";

// Issue 38: a waiting ticket's `placement.reason` is told in its language from the catalogue
// (src/domain/languages, `placement`), in every catalogue language, not French or English only.

const START = Date.parse("2026-06-10T10:30:00.000Z"); // 12:30 in Madrid (summer time)
const MIN = 60_000;

describe("placement reasons in the ticket's language", () => {
  it("a Spanish appointment and a Spanish walk-in are told why in Spanish, at Madrid's wall-clock times", async () => {
    testClock.set(START - 60 * MIN);
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "healthcare" });
    const f = await createQueueFixture(owner, org.id);
    expectOk(await call("PATCH", `/v1/locations/${f.locationId}`, { token: owner.token, body: { timezone: "Europe/Madrid" } }));
    expectOk(
      await call("PUT", `/v1/business/queues/${f.queueId}/blend`, {
        token: owner.token,
        body: { appointmentsFirstFromMinutes: 15, walkInMaxWaitMinutes: 30 },
      }),
    );
    const apt = await bookAppointment({
      auth: { token: owner.token },
      serviceId: f.serviceId,
      locationId: f.locationId,
      startAt: START,
      language: "es",
    });
    testClock.set(START - 25 * MIN);
    const done = expectOk(
      await call("POST", `/v1/appointments/${apt.id}/check-in`, { headers: { "X-Appointment-Token": apt.token } }),
      201,
    );
    expect(done.ticket.placement).toMatchObject({
      rule: "appointment_early",
      reason: "Cita de las 12:30: con antelación, pasa antes que las personas sin cita a las 12:15",
    });

    const customer = await registerUser({ accountType: "customer" });
    const walkIn = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: { language: "es" } }), 201);
    expect(walkIn.placement).toMatchObject({
      rule: "walk_in_arrival",
      reason: "Sin cita, esperando desde hace 0 min, por orden de llegada (límite 30 min)",
    });

    // Past the cap, the walk-in's reason says so, still in Spanish.
    testClock.set(START - 25 * MIN + 31 * MIN);
    const later = expectOk(await call("GET", `/v1/tickets/${walkIn.id}`, { token: customer.token }));
    expect(later.placement).toMatchObject({
      rule: "walk_in_over_cap",
      reason: "Sin cita, esperando desde hace 31 min, por encima del límite de 30 min: antes que las citas",
    });
  });
});
