import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { now } from "../../src/lib/clock";
import { testClock } from "../helpers/clock";
import { HAND_OFF_TIMEOUT_MS } from "../../src/queue-room/queue-room";
import { call, expectError, expectOk } from "../helpers/api";
import { room, settle } from "../helpers/catalog";
import { registerUser, addQueue, queueFixture } from "../helpers/fixtures";

describe("concurrency", () => {
  it("40 concurrent joins get 40 distinct numbers 1..40 and positions 1..40", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const results = await Promise.all(Array.from({ length: 40 }, () => call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token })));
    const numbers = results.map((r) => expectOk(r, 201).number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const list = await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting&limit=100`, { token: f.owner.token });
    expect(expectOk(list).map((t: any) => t.position)).toEqual(numbers);
  });

  it("45 concurrent call-next on 40 waiting tickets call 40 distinct tickets and answer 5 QUEUE_EMPTY", async () => {
    const f = await queueFixture("pro");
    await Promise.all(Array.from({ length: 40 }, () => call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token })));
    const results = await Promise.all(Array.from({ length: 45 }, () => call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })));
    const ok = results.filter((r) => r.status === 200).map((r) => r.body.data.id);
    expect(new Set(ok).size).toBe(40);
    const refused = results.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(5);
    for (const r of refused) expectError(r, 409, "QUEUE_EMPTY");
  });

  it("a transfer racing call-next on the same ticket leaves exactly one live ticket", async () => {
    const f = await queueFixture("pro");
    const target = await addQueue(f);
    for (let round = 0; round < 5; round++) {
      const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
      const [moved, called] = await Promise.all([
        call("POST", `/v1/tickets/${t.id}/transfer-queue`, { token: f.owner.token, body: { targetQueueId: target, prioritize: false } }),
        call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }),
      ]);
      const source = expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token }));
      const liveInTarget = expectOk(await call("GET", `/v1/queues/${target}/tickets?status=waiting&limit=100`, { token: f.owner.token })).filter(
        (x: any) => x.id === moved.body.data?.id,
      );
      const sourceLive = ["waiting", "called", "serving"].includes(source.status);
      expect(Number(sourceLive) + liveInTarget.length).toBe(1);
      if (moved.status === 200) {
        expect(source).toMatchObject({ status: "cancelled", transferredToId: moved.body.data.id });
      }
      if (called.status === 200 && called.body.data.id === t.id && moved.status === 200) {
        // called first, then moved: transfer is allowed from called, so the ticket lives in the target
        expect(source.status).toBe("cancelled");
      }
      await call("POST", `/v1/queues/${f.queueId}/clear`, { token: f.owner.token });
      await call("POST", `/v1/queues/${target}/clear`, { token: f.owner.token });
    }
  });

  it("concurrent transfers of one ticket to two queues leave one live ticket", async () => {
    const f = await queueFixture("pro");
    const a = await addQueue(f);
    const b = await addQueue(f);
    const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    const results = await Promise.all([
      call("POST", `/v1/tickets/${t.id}/transfer-queue`, { token: f.owner.token, body: { targetQueueId: a } }),
      call("POST", `/v1/tickets/${t.id}/transfer-queue`, { token: f.owner.token, body: { targetQueueId: b } }),
    ]);
    const live = [];
    for (const q of [f.queueId, a, b]) live.push(...expectOk(await call("GET", `/v1/queues/${q}/tickets?status=waiting`, { token: f.owner.token })));
    expect(live).toHaveLength(1);
    expect(results.some((r) => r.status === 200)).toBe(true);
  });

  // A Worker that fails between reserving a hand-off and completing it (a crash, a lost RPC)
  // is simulated by calling the rooms' RPCs directly and then stopping.
  describe("a hand-off left open", () => {
    async function reserved() {
      testClock.set("2026-05-04T09:00:00.000Z");
      const f = await queueFixture("pro");
      const target = await addQueue(f);
      const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
      await settle(f.queueId);
      const reservation = await room(f.queueId).reserveTransfer(t.id, target, now());
      expect(reservation.ok).toBe(true);
      return { f, target, t, reservation: reservation.ok ? reservation.value : null };
    }

    it("is released by the room's alarm when the target never admitted it: the ticket is callable again", async () => {
      const { f, t } = await reserved();
      expectError(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }), 409, "QUEUE_EMPTY");
      expectError(await call("POST", `/v1/tickets/${t.id}/cancel`, { token: f.owner.token }), 409, "INVALID_STATE");
      // Half-way the alarm leaves it open and comes back for the rest of the delay (30 s of
      // real time away, so it only runs when the test runs it).
      testClock.advance(HAND_OFF_TIMEOUT_MS / 2);
      expect(await runDurableObjectAlarm(room(f.queueId))).toBe(true);
      expectError(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }), 409, "QUEUE_EMPTY");
      testClock.advance(HAND_OFF_TIMEOUT_MS / 2);
      expect(await runDurableObjectAlarm(room(f.queueId))).toBe(true);
      expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })).id).toBe(t.id);
    });

    it("completes when the target had admitted it: one live ticket, in the target", async () => {
      const { f, target, t, reservation } = await reserved();
      const admitted = await room(target).admitTransferred(reservation!.snapshot, false, now());
      expect(admitted.ok).toBe(true);
      const newId = admitted.ok ? admitted.value.id : "";
      testClock.advance(HAND_OFF_TIMEOUT_MS);
      await runDurableObjectAlarm(room(f.queueId));
      const source = expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token }));
      expect(source).toMatchObject({ status: "cancelled", transferredToId: newId });
      const waiting = expectOk(await call("GET", `/v1/queues/${target}/tickets?status=waiting`, { token: f.owner.token }));
      expect(waiting.map((x: any) => x.id)).toEqual([newId]);
    });

    it("is refused by the target once abandoned, so a late admission cannot duplicate the ticket", async () => {
      const { f, target, t, reservation } = await reserved();
      testClock.advance(HAND_OFF_TIMEOUT_MS);
      await runDurableObjectAlarm(room(f.queueId));
      const late = await room(target).admitTransferred(reservation!.snapshot, false, now());
      expect(late.ok).toBe(false);
      expect(expectOk(await call("GET", `/v1/queues/${target}/tickets`, { token: f.owner.token }))).toEqual([]);
      expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token })).status).toBe("waiting");
    });
  });
});
