import { describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk } from "../helpers/api";
import { addMember, queueFixture } from "../helpers/fixtures";

// The calendar's effect on the queue engine (CONTRACT §6): breaks keep operators from calling,
// closures keep customers from joining, and both end at the occurrence's end instant.

const START = "2026-05-04T10:00:00.000Z";
const END = "2026-05-04T10:30:00.000Z";

async function createEvent(token: string, organizationId: string, body: Record<string, unknown>) {
  return expectOk(await call("POST", `/v1/calendar/organization/${organizationId}`, { token, body }), 201);
}

describe("calendar effects on the queue", () => {
  it("refuses call-next to an operator on a break until the break ends, and calls nobody meanwhile", async () => {
    testClock.set("2026-05-04T09:00:00.000Z");
    const f = await queueFixture();
    const operator = await addMember(f.owner, f.organizationId, "operator");
    const colleague = await addMember(f.owner, f.organizationId, "operator");
    await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: operator.token, body: { visitorName: "Walk-in" } });
    const event = await createEvent(f.owner.token, f.organizationId, {
      title: "Coffee break",
      eventType: "break",
      startDate: START,
      endDate: END,
      attendees: [operator.id],
    });

    testClock.set("2026-05-04T10:29:59.999Z");
    const refused = await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token, body: {} });
    expectError(refused, 409, "OPERATOR_UNAVAILABLE");
    expect(refused.body.error.details).toMatchObject({ eventId: event.id, until: END });
    const waiting = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting`, { token: f.owner.token }));
    expect(waiting).toHaveLength(1);

    // A colleague not named in the break may still call.
    const other = await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: colleague.token, body: {} });
    expect(expectOk(other).assignedToId).toBe(colleague.id);

    await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: colleague.token, body: {} });
    testClock.set(END);
    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token, body: {} }));
    expect(called.status).toBe("called");
    expect(called.assignedToId).toBe(operator.id);
  });

  it("an organization-wide break (no attendees) blocks every operator", async () => {
    testClock.set("2026-05-04T09:00:00.000Z");
    const f = await queueFixture();
    const operator = await addMember(f.owner, f.organizationId, "operator");
    await createEvent(f.owner.token, f.organizationId, { title: "Staff meeting", eventType: "break", startDate: START, endDate: END });
    testClock.set("2026-05-04T10:05:00.000Z");
    expectError(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token, body: {} }), 409, "OPERATOR_UNAVAILABLE");
  });

  it("a shift or appointment does not block anyone", async () => {
    testClock.set("2026-05-04T09:00:00.000Z");
    const f = await queueFixture();
    const operator = await addMember(f.owner, f.organizationId, "operator");
    await createEvent(f.owner.token, f.organizationId, {
      title: "Morning shift",
      eventType: "shift",
      startDate: START,
      endDate: END,
      attendees: [operator.id],
    });
    await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: operator.token, body: {} });
    testClock.set("2026-05-04T10:05:00.000Z");
    expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token, body: {} })).status).toBe("called");
  });

  it("a closure of the service refuses joins with QUEUE_CLOSED (reason closure) until it ends", async () => {
    testClock.set("2026-05-04T09:00:00.000Z");
    const f = await queueFixture();
    const event = await createEvent(f.owner.token, f.organizationId, {
      title: "Inventory",
      eventType: "closure",
      serviceId: f.serviceId,
      startDate: START,
      endDate: END,
    });
    testClock.set("2026-05-04T10:10:00.000Z");
    const refused = await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: {} });
    expectError(refused, 409, "QUEUE_CLOSED");
    expect(refused.body.error.details).toMatchObject({ reason: "closure", eventId: event.id, until: END });
    testClock.set(END);
    const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: {} }), 201);
    expect(ticket.status).toBe("waiting");
  });
});
