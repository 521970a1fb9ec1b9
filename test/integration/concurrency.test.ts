import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { now } from "../../src/lib/clock";
import { testClock } from "../helpers/clock";
import { HAND_OFF_TIMEOUT_MS } from "../../src/queue-room/queue-room";
import { call, expectError, expectOk } from "../helpers/api";
import { room, settle } from "../helpers/catalog";
import { addQueue, queueFixture, registerUser } from "../helpers/fixtures";
import { expectLogs } from "../helpers/console";

describe("concurrency", () => {
  it("40 concurrent joins get 40 distinct numbers 1..40 and positions 1..40", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const results = await Promise.all(
      Array.from({ length: 40 }, () => call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token })),
    );
    const numbers = results.map((r) => expectOk(r, 201).number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    const list = await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting&limit=100`, { token: f.owner.token });
    expect(expectOk(list).map((t: any) => t.position)).toEqual(numbers);
  });

  it("45 concurrent call-next on 40 waiting tickets call 40 distinct tickets and answer 5 QUEUE_EMPTY", async () => {
    const f = await queueFixture("pro");
    await Promise.all(Array.from({ length: 40 }, () => call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token })));
    const results = await Promise.all(
      Array.from({ length: 45 }, () => call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })),
    );
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
      const liveInTarget = expectOk(
        await call("GET", `/v1/queues/${target}/tickets?status=waiting&limit=100`, { token: f.owner.token }),
      ).filter((x: any) => x.id === moved.body.data?.id);
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
    for (const q of [f.queueId, a, b])
      live.push(...expectOk(await call("GET", `/v1/queues/${q}/tickets?status=waiting`, { token: f.owner.token })));
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
      const reservation = await room(f.queueId).command({ verb: "reserveTransfer", ticketId: t.id, targetQueueId: target, at: now() });
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
      const admitted = await room(target).command({
        verb: "admitTransferred",
        snapshot: reservation!.snapshot,
        prioritize: false,
        at: now(),
      });
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
      const late = await room(target).command({ verb: "admitTransferred", snapshot: reservation!.snapshot, prioritize: false, at: now() });
      expect(late.ok).toBe(false);
      expect(expectOk(await call("GET", `/v1/queues/${target}/tickets`, { token: f.owner.token }))).toEqual([]);
      expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token })).status).toBe("waiting");
    });

    it("once settled, the same ticket can still be transferred to the same target", async () => {
      const { f, target, t } = await reserved();
      testClock.advance(HAND_OFF_TIMEOUT_MS);
      await runDurableObjectAlarm(room(f.queueId));
      const moved = expectOk(
        await call("POST", `/v1/tickets/${t.id}/transfer-queue`, { token: f.owner.token, body: { targetQueueId: target } }),
      );
      expect(moved).toMatchObject({ queueId: target, status: "waiting", source: "transfer" });
      expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token }))).toMatchObject({
        status: "cancelled",
        transferredToId: moved.id,
      });
    });

    it("one target that fails does not stop the others from settling, and the alarm stays armed", async () => {
      const { f, target, t } = await reserved();
      const healthy = await addQueue(f);
      const other = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
      expect((await room(f.queueId).command({ verb: "reserveTransfer", ticketId: other.id, targetQueueId: healthy, at: now() })).ok).toBe(
        true,
      );
      // The first target's storage is broken, so every call into it throws (and the room warns).
      expectLogs("warn", /no such table: admissions/);
      await runInDurableObject(room(target), (_object, state) => state.storage.sql.exec("DROP TABLE admissions"));
      testClock.advance(HAND_OFF_TIMEOUT_MS);
      await runDurableObjectAlarm(room(f.queueId));
      // The healthy hand-off was settled: its ticket is back in the line and callable.
      expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })).id).toBe(other.id);
      // The broken one stays open, and the alarm comes back for it later (not in a tight loop).
      expectError(await call("POST", `/v1/tickets/${t.id}/cancel`, { token: f.owner.token }), 409, "INVALID_STATE");
      await settle(f.queueId);
      let alarm: number | null = null;
      for (let i = 0; i < 50 && alarm === null; i++) {
        alarm = await runInDurableObject(room(f.queueId), (_object, state) => state.storage.getAlarm());
        if (alarm === null) await new Promise((r) => setTimeout(r, 20));
      }
      expect(alarm).toBeGreaterThan(Date.now() + 10_000);
    });
  });

  // clear and archive never cancel a ticket another queue may still admit: its hand-off is
  // settled with the target first.
  describe("clear and archive with a hand-off open", () => {
    async function reservedAndAdmitted(admit: boolean) {
      testClock.set("2026-05-04T09:00:00.000Z");
      const f = await queueFixture("pro");
      const target = await addQueue(f);
      const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
      const reservation = await room(f.queueId).command({ verb: "reserveTransfer", ticketId: t.id, targetQueueId: target, at: now() });
      if (!reservation.ok) throw new Error("not reserved");
      let admittedId: string | null = null;
      if (admit) {
        const admitted = await room(target).command({
          verb: "admitTransferred",
          snapshot: reservation.value.snapshot,
          prioritize: false,
          at: now(),
        });
        if (!admitted.ok) throw new Error("not admitted");
        admittedId = admitted.value.id;
      }
      return { f, target, t, snapshot: reservation.value.snapshot, admittedId };
    }

    it("archive leaves a hand-off it cannot settle open; once settled, the ticket ends cancelled in the archived queue", async () => {
      const { f, target, t } = await reservedAndAdmitted(false);
      // The target's storage is broken until re-created below (the room warns meanwhile).
      expectLogs("warn", /no such table: admissions/);
      await runInDurableObject(room(target), (_object, state) => state.storage.sql.exec("DROP TABLE admissions"));
      expectOk(await call("POST", `/v1/queues/${f.queueId}/archive`, { token: f.owner.token }));
      // Not cancelled while the target may still admit it.
      expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token })).status).toBe("waiting");
      await runInDurableObject(room(target), (_object, state) =>
        state.storage.sql.exec("CREATE TABLE admissions (hand_off_id TEXT PRIMARY KEY, ticket_id TEXT)"),
      );
      testClock.advance(HAND_OFF_TIMEOUT_MS);
      await runDurableObjectAlarm(room(f.queueId));
      expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token }))).toMatchObject({
        status: "cancelled",
        transferredToId: null,
      });
    });

    for (const action of ["clear", "archive"] as const) {
      it(`${action}: a ticket the target already admitted ends as transferred, not ${action === "clear" ? "cleared" : "archived"}`, async () => {
        const { f, target, t, admittedId } = await reservedAndAdmitted(true);
        expectOk(await call("POST", `/v1/queues/${f.queueId}/${action}`, { token: f.owner.token }));
        expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token }))).toMatchObject({
          status: "cancelled",
          transferredToId: admittedId,
        });
        const waiting = expectOk(await call("GET", `/v1/queues/${target}/tickets?status=waiting`, { token: f.owner.token }));
        expect(waiting.map((x: any) => x.id)).toEqual([admittedId]);
      });

      it(`${action}: a ticket the target has not admitted is cancelled and the target will never admit it`, async () => {
        const { f, target, t, snapshot } = await reservedAndAdmitted(false);
        expectOk(await call("POST", `/v1/queues/${f.queueId}/${action}`, { token: f.owner.token }));
        expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token }))).toMatchObject({
          status: "cancelled",
          transferredToId: null,
        });
        const late = await room(target).command({ verb: "admitTransferred", snapshot: snapshot, prioritize: false, at: now() });
        expect(late.ok).toBe(false);
        expect(expectOk(await call("GET", `/v1/queues/${target}/tickets`, { token: f.owner.token }))).toEqual([]);
      });
    }
  });
});
