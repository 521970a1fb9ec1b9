import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk } from "../helpers/api";
import { insertService } from "../helpers/catalog";
import { addMember, addQueue, queueFixture, registerUser } from "../helpers/fixtures";
import { alterTail } from "../helpers/credentials";

describe("POST /v1/queues/{id}/join", () => {
  it("creates a full ticket record with position and estimate", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const t = expectOk(
      await call("POST", `/v1/queues/${f.queueId}/join`, {
        token: customer.token,
        body: { partySize: 3, phone: "+33612345678", language: "fr" },
      }),
      201,
    );
    expect(t).toMatchObject({
      queueId: f.queueId,
      serviceId: f.serviceId,
      organizationId: f.organizationId,
      userId: customer.id,
      number: 1,
      displayCode: "A-001",
      status: "waiting",
      partySize: 3,
      isPriority: false,
      isGhostMode: false,
      visitorName: null,
      assignedToId: null,
      calledAt: null,
      servedAt: null,
      position: 1,
      estimatedWaitMinutes: 5,
      presentAt: null,
      servingAt: null,
      skipReason: null,
      recoveredFromId: null,
      transferredToId: null,
      source: "app",
    });
    expect(t.id).toMatch(/^tkt_/);
    expect(t).not.toHaveProperty("phone");
    const second = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
    expect(second).toMatchObject({ number: 2, displayCode: "A-002", position: 2, partySize: 1, estimatedWaitMinutes: 10 });
  });

  it.each([
    ["a wrong type", { partySize: "2" }, "partySize"],
    ["a party out of range", { partySize: 0 }, "partySize"],
    ["a party too large", { partySize: 51 }, "partySize"],
    ["an unknown field", { isGhostMode: true }, "isGhostMode"],
    ["a bad phone", { phone: "call me" }, "phone"],
    ["an unknown language", { language: "xx" }, "language"],
  ])("refuses %s", async (_label, body, field) => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    expectError(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body }), 400, "VALIDATION_ERROR", field);
  });

  it("needs a session, an existing queue and an active service", async () => {
    const f = await queueFixture("pro");
    expectError(await call("POST", `/v1/queues/${f.queueId}/join`), 401, "AUTHENTICATION_ERROR");
    const customer = await registerUser({ accountType: "customer" });
    expectError(await call("POST", "/v1/queues/que_00000000000000000000/join", { token: customer.token }), 404, "NOT_FOUND");
    await env.DB.prepare("UPDATE services SET status = 'inactive' WHERE id = ?").bind(f.serviceId).run();
    const res = await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token });
    expectError(res, 409, "QUEUE_CLOSED");
    expect(res.body.error.details.reason).toBe("service_inactive");
  });

  it("refuses a party that does not fit (QUEUE_FULL) and counts waiting + called", async () => {
    const f = await queueFixture("pro", { maxCapacity: 5 });
    const customer = await registerUser({ accountType: "customer" });
    expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: { partySize: 3 } }), 201);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    const full = await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: { partySize: 3 } });
    expectError(full, 409, "QUEUE_FULL");
    expect(full.body.error.details).toMatchObject({ maxCapacity: 5, used: 3 });
    expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: { partySize: 2 } }), 201);
  });

  it("stops at 50 tickets a month on starter (ghost tickets count), gives refused units back, and resets next month", async () => {
    testClock.set("2026-03-31T23:00:00.000Z");
    const f = await queueFixture("starter");
    const customer = await registerUser({ accountType: "customer" });
    await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token: f.owner.token, body: { status: "paused" } });
    expectError(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 409, "QUEUE_PAUSED");
    await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token: f.owner.token, body: { status: "active" } });
    const results = await Promise.all(
      Array.from({ length: 55 }, (_, i) =>
        i % 2 === 0
          ? call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token })
          : call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(50);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expectError(r, 403, "QUOTA_EXCEEDED");
      expect(r.body.error.details).toEqual({ limit: 50, used: 50, resetsAt: "2026-04-01T00:00:00.000Z" });
    }
    testClock.set("2026-04-01T00:00:00.000Z");
    expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
  });
});

describe("operator-join and vip-ticket", () => {
  it("create ghost tickets owned by the operator; VIPs go first in arrival order", async () => {
    const f = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    const regular = expectOk(
      await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: operator.token, body: { visitorName: "Ann", partySize: 2 } }),
      201,
    );
    expect(regular).toMatchObject({
      userId: operator.id,
      isGhostMode: true,
      isPriority: false,
      visitorName: "Ann",
      partySize: 2,
      source: "operator",
      position: 1,
    });
    const vip1 = expectOk(await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { token: operator.token }), 201);
    const vip2 = expectOk(
      await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { token: operator.token, body: { visitorName: "Bob" } }),
      201,
    );
    expect(vip1).toMatchObject({ isPriority: true, isGhostMode: true, source: "vip", position: 1 });
    expect(vip2.position).toBe(2);
    expect(expectOk(await call("GET", `/v1/tickets/${regular.id}`, { token: operator.token })).position).toBe(3);
    expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token })).id).toBe(vip1.id);
  });

  it("refuse customers, unknown fields and bad sizes", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    expectError(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: customer.token }), 404, "NOT_FOUND");
    expectError(
      await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { token: f.owner.token, body: { isPriority: false } }),
      400,
      "VALIDATION_ERROR",
      "isPriority",
    );
    expectError(
      await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { token: f.owner.token, body: { partySize: -1 } }),
      400,
      "VALIDATION_ERROR",
      "partySize",
    );
    expectError(
      await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: { visitorName: 5 } }),
      400,
      "VALIDATION_ERROR",
      "visitorName",
    );
  });
});

describe("call-next input", () => {
  it("accepts the queue's serviceId and refuses another, unknown fields, and non-operators", async () => {
    const f = await queueFixture("pro");
    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    const other = await insertService(f.organizationId);
    expectError(
      await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: { serviceId: other } }),
      400,
      "VALIDATION_ERROR",
      "serviceId",
    );
    expectError(
      await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: { serviceId: 1 } }),
      400,
      "VALIDATION_ERROR",
      "serviceId",
    );
    expectError(
      await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: { next: true } }),
      400,
      "VALIDATION_ERROR",
      "next",
    );
    const customer = await registerUser();
    expectError(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: customer.token }), 404, "NOT_FOUND");
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: { serviceId: f.serviceId } }));
  });
});

describe("GET /v1/tickets/{id}, cancel by owner, lists", () => {
  it("lets the owner and members read, hides it from strangers, 404s bad ids", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
    expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: customer.token })).id).toBe(t.id);
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: operator.token })).id).toBe(t.id);
    const stranger = await registerUser();
    expectError(await call("GET", `/v1/tickets/${t.id}`, { token: stranger.token }), 404, "NOT_FOUND");
    expectError(await call("GET", "/v1/tickets/tkt_nope", { token: customer.token }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/tickets/${alterTail(t.id)}`, { token: f.owner.token }), 404, "NOT_FOUND");
    expectError(await call("POST", `/v1/tickets/${t.id}/serve`, { token: customer.token }), 404, "NOT_FOUND");
    expectError(await call("POST", `/v1/tickets/${t.id}/cancel`, { token: stranger.token }), 404, "NOT_FOUND");
    expect(expectOk(await call("POST", `/v1/tickets/${t.id}/cancel`, { token: customer.token })).status).toBe("cancelled");
  });

  it("lists a queue's tickets by status with pagination", async () => {
    const f = await queueFixture("pro");
    for (let i = 0; i < 3; i++) await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token });
    const vip = expectOk(await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { token: f.owner.token }), 201);
    const waiting = await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting&limit=2`, { token: f.owner.token });
    expect(expectOk(waiting).map((t: any) => t.position)).toEqual([1, 2]);
    expect(waiting.body.data[0].id).toBe(vip.id);
    // A page read by number also names the cursors to read on from (issue #32, src/http/cursor.ts).
    expect(waiting.body.meta).toEqual({
      total: 4,
      page: 1,
      limit: 2,
      hasMore: true,
      nextCursor: waiting.body.data[1].id,
      previousCursor: null,
    });
    const second = await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting&limit=2&page=2`, { token: f.owner.token });
    expect(expectOk(second).map((t: any) => [t.number, t.position])).toEqual([
      [2, 3],
      [3, 4],
    ]);
    expect(second.body.meta).toEqual({
      total: 4,
      page: 2,
      limit: 2,
      hasMore: false,
      nextCursor: null,
      previousCursor: second.body.data[0].id,
    });
    const byNumber = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets`, { token: f.owner.token }));
    expect(byNumber.map((t: any) => [t.number, t.position])).toEqual([
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 1],
    ]);
    await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token });
    expect(
      expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?status=called`, { token: f.owner.token })).map((t: any) => t.id),
    ).toEqual([vip.id]);
    expect((await call("GET", `/v1/queues/${f.queueId}/tickets`, { token: f.owner.token })).body.meta.total).toBe(4);
    expectError(
      await call("GET", `/v1/queues/${f.queueId}/tickets?status=gone`, { token: f.owner.token }),
      400,
      "VALIDATION_ERROR",
      "status",
    );
    expectError(await call("GET", `/v1/queues/${f.queueId}/tickets?page=0`, { token: f.owner.token }), 400, "VALIDATION_ERROR", "page");
    const customer = await registerUser();
    expectError(await call("GET", `/v1/queues/${f.queueId}/tickets`, { token: customer.token }), 404, "NOT_FOUND");
  });

  it("clear cancels waiting and called tickets; archive keeps tickets readable", async () => {
    const f = await queueFixture("pro");
    const a = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token });
    await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token });
    expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/clear`, { token: f.owner.token }))).toEqual({ cancelled: 2 });
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expectError(await call("POST", `/v1/queues/${f.queueId}/clear`, { token: operator.token }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("POST", `/v1/queues/${f.queueId}/archive`, { token: operator.token }), 403, "AUTHORIZATION_ERROR");
    expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/archive`, { token: f.owner.token })).archivedAt).not.toBeNull();
    expect(expectOk(await call("GET", `/v1/tickets/${a.id}`, { token: f.owner.token })).status).toBe("cancelled");
    expectError(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 409, "QUEUE_CLOSED");
  });
});

describe("transfers: input", () => {
  it("refuses another organization's queue, the same queue, non-operators as targets and bad bodies", async () => {
    const f = await queueFixture("pro");
    const stranger = await queueFixture("pro");
    const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    const post = (path: string, body: unknown) => call("POST", `/v1/tickets/${t.id}/${path}`, { token: f.owner.token, body });
    expectError(await post("transfer-queue", { targetQueueId: stranger.queueId }), 404, "NOT_FOUND", "targetQueueId");
    expectError(await post("transfer-queue", { targetQueueId: f.queueId }), 400, "VALIDATION_ERROR", "targetQueueId");
    expectError(await post("transfer-queue", {}), 400, "VALIDATION_ERROR", "targetQueueId");
    expectError(
      await post("transfer-queue", { targetQueueId: await addQueue(f), prioritize: "yes" }),
      400,
      "VALIDATION_ERROR",
      "prioritize",
    );
    await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token });
    const customer = await registerUser();
    expectError(await post("transfer", { targetOperatorId: customer.id }), 400, "VALIDATION_ERROR", "targetOperatorId");
    expectError(await post("transfer", { targetOperatorId: 7 }), 400, "VALIDATION_ERROR", "targetOperatorId");
    expectError(await post("skip-absent", { reason: "" }), 400, "VALIDATION_ERROR", "reason");
    expectError(await post("recover", { recoveryOption: "undo" }), 400, "VALIDATION_ERROR", "recoveryOption");
  });

  it("a transfer refused by the target leaves the ticket callable in the source", async () => {
    const f = await queueFixture("pro");
    const target = await addQueue(f);
    await call("PATCH", `/v1/business/queues/${target}/status`, { token: f.owner.token, body: { status: "closed" } });
    const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    expectError(
      await call("POST", `/v1/tickets/${t.id}/transfer-queue`, { token: f.owner.token, body: { targetQueueId: target } }),
      409,
      "QUEUE_CLOSED",
    );
    expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })).id).toBe(t.id);
  });
});
