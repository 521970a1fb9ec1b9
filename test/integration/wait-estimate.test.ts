import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { addMember, createApiKey, queueFixture, type Fixture, walkIn } from "../helpers/fixtures";

// The estimate as the API answers it (docs/wait-estimate.md): the queue's default before
// there is history, a range beside every estimatedWaitMinutes, and never 0 with anyone ahead.

const START = "2026-03-02T09:00:00.000Z";

async function queue(f: Fixture): Promise<any> {
  return expectOk(await call("GET", `/v1/queues/${f.queueId}`, { token: f.owner.token }));
}

async function waiting(f: Fixture): Promise<any[]> {
  return expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting`, { token: f.owner.token }));
}

describe("the queue's default time per service", () => {
  it("is set at creation and by PATCH, shown on the queue, and sets the estimate before any history", async () => {
    testClock.set(START);
    const f = await queueFixture("pro", { defaultServiceMinutes: 8 });
    expect(await queue(f)).toMatchObject({ defaultServiceMinutes: 8, estimatedWaitMinutes: 0, estimatedWaitRange: { low: 0, high: 0 } });
    await walkIn(f.owner, f.queueId);
    await walkIn(f.owner, f.queueId);
    const third = await walkIn(f.owner, f.queueId);
    expect(third).toMatchObject({ position: 3, estimatedWaitMinutes: 24, estimatedWaitRange: { low: 14, high: 34 } });
    expect(await queue(f)).toMatchObject({ waitingCount: 3, estimatedWaitMinutes: 24, estimatedWaitRange: { low: 14, high: 34 } });
    const widget = expectOk(await call("GET", `/v1/widget/queue/${f.queueId}/status`));
    expect(widget).toMatchObject({ estimatedWaitMinutes: 24, estimatedWaitRange: { low: 14, high: 34 } });

    const patched = expectOk(
      await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: { defaultServiceMinutes: 2 } }),
    );
    expect(patched).toMatchObject({ defaultServiceMinutes: 2, estimatedWaitMinutes: 6 });
    expect((await waiting(f)).map((t) => t.estimatedWaitMinutes)).toEqual([2, 4, 6]);
    // The room is the authority; the D1 row follows (a room rebuilt from it keeps the setting).
    expect((await queue(f)).defaultServiceMinutes).toBe(2);
    const listed = expectOk(
      await call("GET", "/v1/business/queues", { token: f.owner.token, headers: { "X-Organization-Id": f.organizationId } }),
    );
    expect(listed.find((q: any) => q.id === f.queueId).defaultServiceMinutes).toBe(2);
  });

  it("defaults to 5 minutes and refuses what is not 1 to 240 whole minutes", async () => {
    const f = await queueFixture();
    expect((await queue(f)).defaultServiceMinutes).toBe(5);
    for (const bad of [0, 241, 2.5, "5", null]) {
      const res = await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: { defaultServiceMinutes: bad } });
      expectError(res, 400, "VALIDATION_ERROR", "defaultServiceMinutes");
      const created = await call("POST", "/v1/business/queues", {
        token: f.owner.token,
        body: { serviceId: f.serviceId, name: "Bad default", defaultServiceMinutes: bad },
      });
      expectError(created, 400, "VALIDATION_ERROR", "defaultServiceMinutes");
    }
  });
});

describe("the estimate never reads 0 with someone ahead", () => {
  it("two quick calls after opening (the reported '~0 min' with 3 waiting) keep the default pace", async () => {
    testClock.set(START);
    const f = await queueFixture();
    for (let i = 0; i < 5; i++) await walkIn(f.owner, f.queueId);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    testClock.advance(4_000);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    testClock.advance(5_000);
    const q = await queue(f);
    expect(q).toMatchObject({ waitingCount: 3, estimatedWaitMinutes: 15 });
    for (const t of await waiting(f)) {
      expect(t.estimatedWaitMinutes).toBeGreaterThanOrEqual(1);
      expect(t.estimatedWaitRange.low).toBeGreaterThanOrEqual(1);
      expect(t.estimatedWaitRange.low).toBeLessThanOrEqual(t.estimatedWaitMinutes);
      expect(t.estimatedWaitRange.high).toBeGreaterThanOrEqual(t.estimatedWaitMinutes);
    }
  });

  it("a run of fast calls (every 31 s) still shows at least a minute to each waiting ticket, on every answer", async () => {
    testClock.set(START);
    const f = await queueFixture();
    const widgetKey = (await createApiKey(f.owner, f.organizationId, ["widget"])).key;
    for (let i = 0; i < 12; i++) await walkIn(f.owner, f.queueId);
    for (let i = 0; i < 10; i++) {
      expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
      testClock.advance(31_000);
    }
    const line = await waiting(f);
    expect(line.map((t) => t.position)).toEqual([1, 2]);
    for (const t of line) expect(t.estimatedWaitMinutes).toBeGreaterThanOrEqual(1);
    const one = expectOk(await call("GET", `/v1/tickets/${line[0].id}`, { token: f.owner.token }));
    expect(one.estimatedWaitMinutes).toBeGreaterThanOrEqual(1);
    expect(one.estimatedWaitRange.low).toBeGreaterThanOrEqual(1);
    expect((await queue(f)).estimatedWaitMinutes).toBeGreaterThanOrEqual(1);
    expect(expectOk(await call("GET", `/v1/widget/queue/${f.queueId}/status`)).estimatedWaitMinutes).toBeGreaterThanOrEqual(1);
    const joined = expectOk(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: widgetKey, body: {} }), 201);
    expect(joined.position).toBe(3);
    expect(joined.estimatedWaitMinutes).toBeGreaterThanOrEqual(1);
    expect(joined.estimatedWaitRange.low).toBeGreaterThanOrEqual(1);
    // Called tickets wait for no one: no estimate, no range.
    const called = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?status=called`, { token: f.owner.token }));
    expect(called[0]).toMatchObject({ position: null, estimatedWaitMinutes: null, estimatedWaitRange: null });
  });
});

describe("the widget's status between changes", () => {
  const status = async (f: Fixture) => expectOk(await call("GET", `/v1/widget/queue/${f.queueId}/status`));

  it("follows the hour's operators as the clock moves, with no change to the line in between", async () => {
    testClock.set(START);
    const f = await queueFixture();
    const second = await addMember(f.owner, f.organizationId, "operator");
    for (let i = 0; i < 6; i++) await walkIn(f.owner, f.queueId);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    testClock.advance(60_000);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: second.token }));
    // Two operators called in the last hour: the default 5 minutes per ticket shared by two.
    testClock.advance(60_000);
    expect(await status(f)).toMatchObject({ waitingCount: 4, estimatedWaitMinutes: 10 });
    expect(await status(f)).toMatchObject({ waitingCount: 4, estimatedWaitMinutes: 10 });
    // 59 minutes after the first call: both still count.
    testClock.advance(57 * 60_000);
    expect(await status(f)).toMatchObject({ estimatedWaitMinutes: 10 });
    // The owner's call leaves the hour: one operator left.
    testClock.advance(60_000);
    expect(await status(f)).toMatchObject({ waitingCount: 4, estimatedWaitMinutes: 20 });
    // Both gone: still one (someone will call).
    testClock.advance(60_000);
    expect(await status(f)).toMatchObject({ estimatedWaitMinutes: 20 });
    // A clock set back (a test, a skewed caller) is answered for its own time.
    testClock.set(Date.parse(START) + 3 * 60_000);
    expect(await status(f)).toMatchObject({ estimatedWaitMinutes: 10 });
  });

  it("shows every change to the line and the queue at once, read after read", async () => {
    testClock.set(START);
    const f = await queueFixture("pro", { defaultServiceMinutes: 4 });
    expect(await status(f)).toMatchObject({ waitingCount: 0, estimatedWaitMinutes: 0, nowServing: [] });
    const first = await walkIn(f.owner, f.queueId);
    expect(await status(f)).toMatchObject({ waitingCount: 1, estimatedWaitMinutes: 4 });
    await walkIn(f.owner, f.queueId);
    expect(await status(f)).toMatchObject({ waitingCount: 2, estimatedWaitMinutes: 8 });
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: { defaultServiceMinutes: 3 } }));
    expect(await status(f)).toMatchObject({ waitingCount: 2, estimatedWaitMinutes: 6 });
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    expect(await status(f)).toMatchObject({ waitingCount: 1, nowServing: [first.displayCode] });
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token: f.owner.token, body: { status: "paused" } }));
    expect(await status(f)).toMatchObject({ status: "paused", waitingCount: 1 });
    expectOk(await call("POST", `/v1/tickets/${first.id}/serve`, { token: f.owner.token }));
    expect(await status(f)).toMatchObject({ nowServing: [first.displayCode] });
    expectOk(await call("POST", `/v1/tickets/${first.id}/complete`, { token: f.owner.token }));
    expect(await status(f)).toMatchObject({ nowServing: [] });
  });
});
