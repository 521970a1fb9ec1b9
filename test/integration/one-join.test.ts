import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, queueFixture, registerUser, type Fixture } from "../helpers/fixtures";

// Issue 36, "one join": every channel that takes a phone goes through one join, and the SMS units
// a number, an address and a widget key are allowed a day are taken only for a join that is
// accepted. Before, the units were taken first and kept when the join was then refused: three
// typos at a kiosk and that number got no SMS until the next day.

const REQUIRED_REASON = [{ key: "reason", label: { fr: "Motif", en: "Reason" }, type: "text", required: "at_join", personal: false }];

async function setUp(): Promise<Fixture & { widget: string; admin: string }> {
  const f = await queueFixture("pro");
  const { key: widget } = await createApiKey(f.owner, f.organizationId, ["widget"]);
  const { key: admin } = await createApiKey(f.owner, f.organizationId, ["admin"]);
  // One SMS-enabled join per number, per address and per widget key a day: any unit kept by a
  // refused join shows as a 429 on the next good one.
  expectOk(
    await call("PATCH", `/v1/organizations/${f.organizationId}/sms-policy`, {
      token: f.owner.token,
      body: { perPhonePerDay: 1, perAddressPerDay: 1, perWidgetKeyPerDay: 1 },
    }),
  );
  return { ...f, widget, admin };
}

const PHONE = "+33612345678";
const ADDRESS = "203.0.113.7";

describe("One join: SMS units only for an accepted join (issue 36)", () => {
  it("three refused kiosk joins (a missing answer, a paused queue, a full queue) leave the number's, the address's and the key's allowance untouched", async () => {
    const f = await setUp();
    const kioskJoin = (body: Record<string, unknown>) =>
      call("POST", `/v1/widget/queue/${f.queueId}/join`, {
        apiKey: f.widget,
        body: { phone: PHONE, ...body },
        headers: { "CF-Connecting-IP": ADDRESS },
      });

    // 1. A required question left unanswered.
    expectOk(await call("PUT", `/v1/services/${f.serviceId}/intake`, { apiKey: f.admin, body: { fields: REQUIRED_REASON } }));
    expectError(await kioskJoin({}), 400, "VALIDATION_ERROR", "intake.reason");

    // 2. The queue paused.
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { apiKey: f.admin, body: { status: "paused" } }));
    expectError(await kioskJoin({ intake: { reason: "passport" } }), 409, "QUEUE_PAUSED");
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { apiKey: f.admin, body: { status: "active" } }));

    // 3. The queue full: capacity 1, taken by a walk-in without a phone.
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { apiKey: f.admin, body: { maxCapacity: 1 } }));
    expectOk(
      await call("POST", `/v1/queues/${f.queueId}/operator-join`, { apiKey: f.admin, body: { intake: { reason: "walk-in" } } }),
      201,
    );
    expectError(await kioskJoin({ intake: { reason: "passport" } }), 409, "QUEUE_FULL");
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { apiKey: f.admin, body: { maxCapacity: null } }));

    // The number, the address and the key still have their one SMS-enabled join of the day.
    const joined = expectOk(await kioskJoin({ intake: { reason: "passport" } }), 201);
    expect(joined.status).toBe("waiting");
    // ...and only one: the caps still hold for an accepted join.
    expectError(await kioskJoin({ intake: { reason: "again" } }), 429, "API_RATE_LIMIT_EXCEEDED", "phone");
  });

  it("a customer's refused join in the app gives its units back too", async () => {
    const f = await setUp();
    const customer = await registerUser();
    const join = (body: Record<string, unknown>) =>
      call("POST", `/v1/queues/${f.queueId}/join`, {
        token: customer.token,
        body: { phone: PHONE, ...body },
        headers: { "CF-Connecting-IP": ADDRESS },
      });
    expectOk(await call("PUT", `/v1/services/${f.serviceId}/intake`, { apiKey: f.admin, body: { fields: REQUIRED_REASON } }));
    expectError(await join({}), 400, "VALIDATION_ERROR", "intake.reason");
    expectError(await join({ partySize: 1 }), 400, "VALIDATION_ERROR", "intake.reason");
    const ticket = expectOk(await join({ intake: { reason: "loan" } }), 201);
    expect(ticket.status).toBe("waiting");
    expectError(await join({ intake: { reason: "again" } }), 429, "API_RATE_LIMIT_EXCEEDED", "phone");
  });
});
