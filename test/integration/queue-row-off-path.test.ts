import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { addMember, createCatalog, queueFixture, registerUser } from "../helpers/fixtures";
import { adminKeyOf, ownerWithOrganization, runCron, subscription, upgradeThroughSandbox } from "../helpers/billing";
import { testClock } from "../helpers/clock";
import { expectLogs } from "../helpers/console";
import { meter } from "../helpers/meter";
import { insertPreviousFormatSession, meterBindings } from "../helpers/credentials";
import { settle } from "../helpers/catalog";

// Issue 43, the queue row off the join's path (docs/hot-path.md): a join and a call-next use the
// queue row this isolate read recently, so the credential batch reads no queue; the room decides
// status, capacity and the rules, and refuses a join whose row is older than the rules it holds.

const REASON = {
  key: "reason",
  label: { fr: "Motif", en: "Reason" },
  type: "select",
  options: [{ value: "passport", label: { fr: "Passeport", en: "Passport" } }],
  required: "at_join",
};

const join = (token: string, queueId: string, body: Record<string, unknown> = {}) =>
  call("POST", `/v1/queues/${queueId}/join`, { token, body });

describe("a join's D1 statements", () => {
  it("fall by one once the isolate has read the queue: the batch reads the session, its user and the role, no queue (tokens of the previous format)", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    // Tokens without their user's id (issued until issue 43) are judged by the D1 batch.
    const customerToken = await insertPreviousFormatSession(customer.id);
    const ownerToken = await insertPreviousFormatSession(f.owner.id);
    const { cost, reset } = meter();
    // The credential batch is the request's first D1 round trip; the room's own drains come after.
    const batches = vi.mocked(env.DB.batch).mock.calls;
    const credentialBatch = async (request: () => Promise<unknown>) => {
      const from = batches.length;
      await request();
      return batches[from]![0].length;
    };

    // The first: the queue row and the role through it are read with the credential.
    expect(await credentialBatch(async () => expectOk(await join(customerToken, f.queueId), 201))).toBe(4);
    expect(await credentialBatch(async () => expectOk(await join(customerToken, f.queueId), 201))).toBe(3);
    // call-next too: the owner's batch is the session, its user and the role in the organization.
    reset();
    expect(
      await credentialBatch(async () => expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: ownerToken }))),
    ).toBe(3);
    expect(cost.rooms).toBe(1);
  });

  it("are none once the user's object holds the session (tokens carrying their user, issue 43): the object, then the room", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    // Counted at the Worker's own bindings (the room's drains use its own).
    const meter = meterBindings();
    // The first join reads the queue row (beside the object's call), then the object's rows
    // (session, user, memberships: one batch), handed back to it.
    expectOk(await meter.call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: {} }), 201);
    expect(meter.count.d1).toBeGreaterThan(0);
    meter.reset();
    expectOk(await meter.call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: {} }), 201);
    expect(meter.count).toEqual({ d1: 0, objects: 2, rooms: 1 });
    // call-next: the owner's object was warmed by the catalog requests.
    meter.reset();
    expectOk(await meter.call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} }));
    expect(meter.count).toEqual({ d1: 0, objects: 2, rooms: 1 });
  });
});

describe("a ticket's read (GET /v1/tickets/{id})", () => {
  it("reads no D1 once the isolate holds its queue's row and the user's object the session: the object, then the room", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const ticket = expectOk<{ id: string }>(await join(customer.token, f.queueId), 201);
    const meter = meterBindings();
    // The owner's and the customer's reads, each with the row the join left in this isolate.
    const mine = expectOk<{ id: string; status: string }>(await meter.call("GET", `/v1/tickets/${ticket.id}`, { token: customer.token }));
    expect(mine).toMatchObject({ id: ticket.id, status: "waiting" });
    expect(meter.count).toEqual({ d1: 0, objects: 2, rooms: 1 });
    meter.reset();
    expectOk(await meter.call("GET", `/v1/tickets/${ticket.id}`, { token: f.owner.token }));
    expect(meter.count).toEqual({ d1: 0, objects: 2, rooms: 1 });
  });

  it("answers 404 once its service is deleted, though the isolate still keeps the queue's row", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const ticket = expectOk<{ id: string }>(await join(customer.token, f.queueId), 201);
    expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { token: customer.token }));
    expectOk(await call("DELETE", `/v1/services/${f.serviceId}`, { token: f.owner.token }));
    await settle(f.queueId);
    const history = await env.DB.prepare("SELECT status FROM tickets WHERE id = ?").bind(ticket.id).first<{ status: string }>();
    expect(history?.status).toBe("cancelled");
    // The cancelled ticket is still in D1's history (analytics), but its queue is gone: not found, for both.
    expectError(await call("GET", `/v1/tickets/${ticket.id}`, { token: customer.token }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/tickets/${ticket.id}`, { token: f.owner.token }), 404, "NOT_FOUND");
  });
});

describe("the room decides what the kept row would not show", () => {
  it("status and capacity: changed, the very next join is refused; changed back, it is taken", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    expectOk(await join(customer.token, f.queueId), 201); // the isolate keeps the row now

    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token: f.owner.token, body: { status: "paused" } }));
    expectError(await join(customer.token, f.queueId), 409, "QUEUE_PAUSED");
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token: f.owner.token, body: { status: "closed" } }));
    expectError(await join(customer.token, f.queueId), 409, "QUEUE_CLOSED");
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token: f.owner.token, body: { status: "active" } }));
    expectOk(await join(customer.token, f.queueId), 201);

    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: { maxCapacity: 2 } }));
    expectError(await join(customer.token, f.queueId), 409, "QUEUE_FULL");
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: { maxCapacity: 3 } }));
    expectOk(await join(customer.token, f.queueId), 201);
  });

  it("a rule change (the service made inactive) refuses the very next join", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    expectOk(await join(customer.token, f.queueId), 201);
    expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { status: "inactive" } }));
    expectError(await join(customer.token, f.queueId), 409, "QUEUE_CLOSED");
  });

  it("an intake question added: the kept row says none, the room says it is older; the next join without the answer is refused", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    expectOk(await join(customer.token, f.queueId), 201); // kept: intakeQuestions 0
    expectOk(await call("PUT", `/v1/services/${f.serviceId}/intake`, { token: f.owner.token, body: { fields: [REASON] } }));

    const refused = await join(customer.token, f.queueId);
    expectError(refused, 400, "VALIDATION_ERROR");
    expect(refused.body.error.details.field).toBe("intake.reason");
    expectOk(await join(customer.token, f.queueId, { intake: { reason: "passport" } }), 201);
  });

  it("a removed operator's next call-next is refused though the row is kept", async () => {
    const f = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token }));
    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}/members/${operator.id}`, { token: f.owner.token }));
    expect((await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token })).status).toBe(404);
  });
});

/** The room binding refuses `applyRules` (every other command goes through); answers the restore. */
function unreachableRules(): () => void {
  const get = env.QUEUE_ROOM.get.bind(env.QUEUE_ROOM);
  const spy = vi.spyOn(env.QUEUE_ROOM, "get").mockImplementation((id) => {
    const stub = get(id);
    return new Proxy(stub, {
      get(target, prop) {
        if (prop === "command")
          return (command: { verb: string }) =>
            command.verb === "applyRules" ? Promise.reject(new Error("room unreachable")) : target.command(command as never);
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  });
  return () => spy.mockRestore();
}

describe("a rule change is answered only once every room holds it", () => {
  it("a room that cannot be reached: the change answers 503 CHANGE_NOT_CONFIRMED with Retry-After, naming its queue; sent again, it is acknowledged and applies", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    expectOk(await join(customer.token, f.queueId), 201);

    let unacknowledged;
    const restore = unreachableRules();
    try {
      unacknowledged = await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { status: "inactive" } });
    } finally {
      restore();
    }
    expectError(unacknowledged, 503, "CHANGE_NOT_CONFIRMED");
    expect(unacknowledged.body.error.details.queueIds).toEqual([f.queueId]);
    expect(unacknowledged.headers.get("Retry-After")).toBe("1");

    expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { status: "inactive" } }));
    expectError(await join(customer.token, f.queueId), 409, "QUEUE_CLOSED");
  });

  it("the minute sweep: an unconfirmed push for one organization falling to starter does not stop the next one's", async () => {
    testClock.set("2026-03-10T12:00:00.000Z");
    const orgs = [];
    for (let i = 0; i < 2; i++) {
      const { owner, org } = await ownerWithOrganization();
      await createCatalog(owner, org.id);
      await upgradeThroughSandbox(owner, org.id);
      expectOk(await call("POST", `/v1/billing/subscription/${org.id}/cancel`, { ...adminKeyOf(org.id), body: {} }));
      orgs.push({ owner, org });
    }
    testClock.set("2026-04-10T12:00:30.000Z");
    const logged = expectLogs("warn", /fell to starter, rooms unconfirmed/);
    const restore = unreachableRules();
    try {
      await runCron(Date.parse("2026-04-10T12:00:30.000Z"));
    } finally {
      restore();
    }
    for (const { owner, org } of orgs) expect((await subscription(owner, org.id)).plan).toBe("starter");
    expect(logged).toHaveLength(2);
  });
});
