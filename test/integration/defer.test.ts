import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { randomMobile, replyOf, twilioPost } from "../helpers/twilio";
import { createApiKey, queueFixture, registerUser, walkIn } from "../helpers/fixtures";

// Issue 45, a later turn on request (docs/visits.md, defer): not called before `until`, then at
// its place among those still waiting; `places` back; the queue's bounds; who may ask.

afterEach(() => vi.restoreAllMocks());

const T0 = Date.parse("2026-03-20T10:00:00.000Z");
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

async function eventsOf(queueId: string, act: () => Promise<void>): Promise<DomainEventMessage[]> {
  await settle(queueId);
  const sent: DomainEventMessage[] = [];
  vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
    for (const m of messages) sent.push(m.body as DomainEventMessage);
    return undefined as never;
  });
  await act();
  await settle(queueId);
  vi.restoreAllMocks();
  return sent;
}

describe("POST /v1/tickets/{ticketId}/defer", () => {
  it("is not called before `until`, then takes its place among those still waiting; the answer carries the new estimate", async () => {
    testClock.set(T0);
    const f = await queueFixture("pro");
    const customer = await registerUser();
    const mine = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: {} }), 201);
    const [a, b, c] = [await walkIn(f.owner, f.queueId), await walkIn(f.owner, f.queueId), await walkIn(f.owner, f.queueId)];
    let deferred: any;
    const events = await eventsOf(f.queueId, async () => {
      deferred = expectOk(await call("POST", `/v1/tickets/${mine.id}/defer`, { token: customer.token, body: { until: at(20) } }));
    });
    expect(deferred).toMatchObject({ status: "waiting", deferredUntil: at(20), deferCount: 1, position: 1 });
    expect(deferred.estimatedWaitMinutes).toBeGreaterThanOrEqual(20);
    expect(events.find((e) => e.type === "ticket.deferred")!.data).toMatchObject({ until: at(20), places: null, deferCount: 1 });

    const callNext = async () => expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} })).id;
    expect(await callNext()).toBe(a.id);
    testClock.set(at(19));
    expect(await callNext()).toBe(b.id);
    testClock.set(at(20));
    // Its time came: it stands where its place puts it, ahead of C who joined after it.
    expect(await callNext()).toBe(mine.id);
    expect(await callNext()).toBe(c.id);
  });

  it("bounds: maxDeferMinutes (422 DEFER_TOO_FAR), maxDefers (409 DEFER_LIMIT_REACHED), past or both (400), not waiting (409)", async () => {
    testClock.set(T0);
    const f = await queueFixture("pro");
    const patched = expectOk(
      await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: { maxDeferMinutes: 30, maxDefers: 2 } }),
    );
    expect(patched).toMatchObject({ maxDeferMinutes: 30, maxDefers: 2 });
    const customer = await registerUser();
    const mine = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: {} }), 201);
    for (let i = 0; i < 4; i++) await walkIn(f.owner, f.queueId);
    const defer = (body: unknown) => call("POST", `/v1/tickets/${mine.id}/defer`, { token: customer.token, body });

    const far = await defer({ until: at(31) });
    expectError(far, 422, "DEFER_TOO_FAR", "until");
    expect(far.body.error.details).toMatchObject({ maxDeferMinutes: 30, latest: at(30) });
    expectError(await defer({ until: at(-1) }), 400, "VALIDATION_ERROR", "until");
    expectError(await defer({ until: at(5), places: 2 }), 400, "VALIDATION_ERROR", "places");
    expectError(await defer({}), 400, "VALIDATION_ERROR", "until");
    expectError(await defer({ places: 0 }), 400, "VALIDATION_ERROR", "places");

    const moved = expectOk(await defer({ places: 2 }));
    expect(moved).toMatchObject({ position: 3, deferCount: 1, deferredUntil: null });
    expect(expectOk(await defer({ until: at(30) }))).toMatchObject({ deferCount: 2, deferredUntil: at(30) });
    const limit = await defer({ places: 1 });
    expectError(limit, 409, "DEFER_LIMIT_REACHED", "places");
    expect(limit.body.error.details).toMatchObject({ defers: 2, maxDefers: 2 });

    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} }));
    const notWaiting = await call("POST", `/v1/tickets/${called.id}/defer`, { token: f.owner.token, body: { places: 1 } });
    expectError(notWaiting, 409, "INVALID_STATE");
    expect(notWaiting.body.error.details).toMatchObject({ status: "called", allowed: ["waiting"], reason: "ticket_not_waiting" });
  });

  it("the owner and staff may ask; another customer or a read-only key may not; the widget visitor with the ticket's token", async () => {
    testClock.set(T0);
    const f = await queueFixture("pro");
    const customer = await registerUser();
    const mine = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: {} }), 201);
    await walkIn(f.owner, f.queueId);
    const path = `/v1/tickets/${mine.id}/defer`;
    const stranger = await registerUser();
    expectError(await call("POST", path, { token: stranger.token, body: { until: at(10) } }), 404, "NOT_FOUND");
    const readOnly = await createApiKey(f.owner as any, f.organizationId, ["read"]);
    expectError(await call("POST", path, { apiKey: readOnly.key, body: { until: at(10) } }), 403, "AUTHORIZATION_ERROR");
    expect(expectOk(await call("POST", path, { token: f.owner.token, body: { until: at(10) } })).deferCount).toBe(1);

    const widgetKey = (await createApiKey(f.owner as any, f.organizationId, ["widget"])).key;
    const joined = expectOk(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: widgetKey, body: {} }), 201);
    const widgetPath = `/v1/widget/tickets/${joined.id}/defer`;
    // The status page learns the queue's bounds with the ticket's place, to offer only what is allowed.
    const place = await call("GET", `/v1/widget/tickets/${joined.id}/place`, { headers: { "X-Ticket-Token": joined.ticketToken } });
    expect(expectOk(place).defer).toEqual({ maxMinutes: 60, maxDefers: 2 });
    expectError(await call("POST", widgetPath, { body: { until: at(15) } }), 404, "NOT_FOUND");
    expectError(
      await call("POST", widgetPath, { body: { until: at(15) }, headers: { "X-Ticket-Token": "A".repeat(43) } }),
      404,
      "NOT_FOUND",
    );
    const seen = expectOk(await call("POST", widgetPath, { body: { until: at(15) }, headers: { "X-Ticket-Token": joined.ticketToken } }));
    expect(seen).toMatchObject({ ticketId: joined.id, status: "waiting", deferredUntil: at(15), deferCount: 1 });
    expect(seen.estimatedWaitMinutes).toBeGreaterThanOrEqual(15);
  });
});

describe("RETARD 15 / LATE 15 by SMS", () => {
  it("defers the sender's ticket by that many minutes; a bare LATE still steps back", async () => {
    for (const text of ["RETARD 15", "late 15 min"]) {
      testClock.set(T0);
      const f = await queueFixture("pro");
      const phone = randomMobile();
      const customer = await registerUser({ accountType: "customer" });
      const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: { phone } }), 201);
      await settle(f.queueId);
      const other = await walkIn(f.owner, f.queueId);
      const reply = replyOf(await twilioPost({ From: phone, Body: text }));
      expect(reply).toMatch(text.startsWith("RETARD") ? /pas avant 15 min/ : /next 15 min/);
      const after = expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { token: f.owner.token }));
      expect(after).toMatchObject({ deferredUntil: at(15), deferCount: 1 });
      expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} })).id).toBe(other.id);
      // Past the queue's maximum (60 by default): refused, nothing moves.
      expect(replyOf(await twilioPost({ From: phone, Body: text.replace("15", "90") }))).toMatch(/60/);
      expect(expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { token: f.owner.token })).deferCount).toBe(1);
    }
  });
});
