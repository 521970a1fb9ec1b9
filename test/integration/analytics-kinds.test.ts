import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { bookAppointment } from "../helpers/booked-appointments";
import { insertLocation, insertService, settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { sweep } from "../helpers/cron";
import { createApiKey, queueFixture } from "../helpers/fixtures";

// Analytics by kind (docs/analytics.md): walk-ins beside appointments, the appointments'
// punctuality (checked in before or after their start) and their no-show rate.

const MIN = 60_000;

describe("GET /v1/analytics/kinds", () => {
  it("splits the tickets by kind, counts check-ins before and after the start, and the appointments' no-show rate", async () => {
    testClock.set("2026-06-10T09:00:00.000Z");
    const f = await queueFixture("pro");
    const paris = await insertLocation(f.organizationId, "Europe/Paris");
    const serviceId = await insertService(f.organizationId, paris);
    const headers = { "X-Organization-Id": f.organizationId };
    const queueId = expectOk(
      await call("POST", "/v1/business/queues", { token: f.owner.token, headers, body: { serviceId, name: "Clinic" } }),
      201,
    ).id;
    const { key } = await createApiKey(f.owner, f.organizationId, ["admin"]);
    const start = Date.parse("2026-06-10T09:30:00.000Z");
    const book = () => bookAppointment({ auth: { token: f.owner.token }, serviceId, locationId: paris, startAt: start });
    const [early1, early2, late, missed] = [await book(), await book(), await book(), await book()];
    expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { apiKey: key, body: {} }), 201);
    expectOk(await call("POST", `/v1/queues/${queueId}/operator-join`, { apiKey: key, body: {} }), 201);
    testClock.set(start - 10 * MIN);
    for (const a of [early1, early2]) expectOk(await call("POST", `/v1/appointments/${a.id}/check-in`, { apiKey: key }), 201);
    testClock.set(start + 5 * MIN);
    expectOk(await call("POST", `/v1/appointments/${late.id}/check-in`, { apiKey: key }), 201);
    // The first in line (a walk-in) is called and served.
    testClock.set(start + 6 * MIN);
    expectOk(await call("POST", `/v1/queues/${queueId}/call-next`, { apiKey: key }));
    testClock.set(start + 20 * MIN);
    await sweep(start + 20 * MIN); // `missed` is past start + 10 min of grace: a no-show
    await settle(queueId);
    expect(missed.id).toMatch(/^apt_/);

    const figures = expectOk(await call("GET", `/v1/analytics/kinds?from=2026-06-10&to=2026-06-11&queueId=${queueId}`, { apiKey: key }));
    expect(figures.walkIn).toMatchObject({ created: 2 });
    expect(figures.appointment).toMatchObject({ created: 3 });
    expect(figures.walkIn.created + figures.appointment.created).toBe(5);
    expect(figures.punctuality).toEqual({ checkedIn: 3, beforeStart: 2, afterStart: 1, meanMinutesFromStart: -5 });
    expect(figures.appointments).toEqual({ booked: 0, checkedIn: 3, noShow: 1, cancelled: 0, noShowRate: 0.25 });

    const starter = await queueFixture("starter");
    const starterKey = (await createApiKey(starter.owner, starter.organizationId, ["read:analytics"])).key;
    expectError(await call("GET", "/v1/analytics/kinds?from=2026-06-10&to=2026-06-11", { apiKey: starterKey }), 402, "PLAN_REQUIRED");
  });
});
