import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { room, settle, talliedJoinsPending } from "../helpers/catalog";
import { addQueue, createApiKey, queueFixture, setPlan, walkIn } from "../helpers/fixtures";
import { QuotaTally } from "../../src/queue-room/quota-tally";
import type { TalliedJoins } from "../../src/queue-room/ports";

// Issue 43: under an unlimited plan a join has no quota to be refused by, so it does not wait
// for the organization's ledger. The room counts it in the join's own transaction and reports
// the count with its drain; each report is numbered and applied once (src/queue-room/quota-tally.ts).

const MONTH = "2026-03";

function ledgerOf(organizationId: string) {
  return env.ORG_LEDGER.getByName(organizationId);
}

async function ledgerState(organizationId: string) {
  return runInDurableObject(ledgerOf(organizationId), (_o, state) => ({
    used: state.storage.sql.exec<{ used: number }>("SELECT used FROM ticket_periods WHERE period = ?", MONTH).toArray()[0]?.used ?? 0,
    reports: state.storage.sql.exec<{ room: string; seq: number }>("SELECT room, seq FROM room_reports ORDER BY room").toArray(),
  }));
}

describe("joins under an unlimited plan", () => {
  it("are counted by their rooms and reported with the drain: the ledger and the usage count each join once", async () => {
    testClock.set("2026-03-10T10:00:00.000Z");
    const f = await queueFixture("pro");
    await setPlan(f.organizationId, "enterprise");
    const second = await addQueue(f);
    await Promise.all([
      ...Array.from({ length: 3 }, () => walkIn({ token: f.owner.token }, f.queueId)),
      ...Array.from({ length: 2 }, () => walkIn({ token: f.owner.token }, second)),
    ]);
    await settle(f.queueId);
    await settle(second);

    const ledger = await ledgerState(f.organizationId);
    expect(ledger.used).toBe(5);
    // Each room reported through its numbered reports (a join that took a unit would leave none).
    expect(ledger.reports.map((r) => r.room).sort()).toEqual([f.queueId, second].sort());
    const { key } = await createApiKey(f.owner, f.organizationId, ["admin"]);
    const usage = expectOk(await call("GET", `/v1/billing/usage/${f.organizationId}`, { apiKey: key }));
    expect(usage.tickets).toMatchObject({ used: 5, limit: null });
  });

  it("the ledger applies a report sent again (its answer lost) once", async () => {
    testClock.set("2026-03-10T10:00:00.000Z");
    const f = await queueFixture("pro");
    const ledger = ledgerOf(f.organizationId);
    await ledger.record(f.organizationId, "que_tally_room", 1, [{ period: MONTH, joins: 2 }]);
    await ledger.record(f.organizationId, "que_tally_room", 1, [{ period: MONTH, joins: 2 }]);
    expect((await ledgerState(f.organizationId)).used).toBe(2);
    await ledger.record(f.organizationId, "que_tally_room", 2, [{ period: MONTH, joins: 3 }]);
    expect(await ledgerState(f.organizationId)).toEqual({ used: 5, reports: [{ room: "que_tally_room", seq: 2 }] });
  });

  it("a room keeps the report the ledger did not acknowledge and sends the same one next; later joins wait for the next report", async () => {
    const f = await queueFixture("pro");
    await walkIn({ token: f.owner.token }, f.queueId);
    await settle(f.queueId);
    const sent = await runInDurableObject(room(f.queueId), async (_instance, state) => {
      const tally = new QuotaTally(state.storage.sql, (fn) => state.storage.transactionSync(fn));
      const reports: { seq: number; counts: TalliedJoins[] }[] = [];
      tally.count(MONTH);
      tally.count(MONTH);
      await expect(tally.report(() => Promise.reject(new Error("ledger unreachable")))).rejects.toThrow("ledger unreachable");
      const keptAfterFailure = tally.pending();
      tally.count(MONTH);
      await tally.report(async (seq, counts) => void reports.push({ seq, counts }));
      await tally.report(async (seq, counts) => void reports.push({ seq, counts }));
      await tally.report(async (seq, counts) => void reports.push({ seq, counts }));
      return { keptAfterFailure, reports, pending: tally.pending() };
    });
    expect(sent.keptAfterFailure).toBe(true);
    expect(sent.reports).toHaveLength(2);
    expect(sent.reports[0]!.counts).toEqual([{ period: MONTH, joins: 2 }]);
    expect(sent.reports[1]).toEqual({ seq: sent.reports[0]!.seq + 1, counts: [{ period: MONTH, joins: 1 }] });
    expect(sent.pending).toBe(false);
  });

  it("a plan that gains a limit: each room sends its counts before it acknowledges the new rules", async () => {
    testClock.set("2026-03-10T10:00:00.000Z");
    const f = await queueFixture("pro");
    await setPlan(f.organizationId, "enterprise");
    await walkIn({ token: f.owner.token }, f.queueId);
    await settle(f.queueId);
    expect((await ledgerState(f.organizationId)).used).toBe(1);
    // Joins the room counted under the unlimited plan, their report not sent yet (no drain armed).
    await runInDurableObject(room(f.queueId), (_instance, state) => {
      state.storage.sql.exec("INSERT INTO quota_tally (period, joins) VALUES (?, 7)", MONTH);
    });
    await setPlan(f.organizationId, "pro");
    // Any rule change pushes the rules, the plan's limit with them, to the rooms it concerns.
    const blend = { appointmentsFirstFromMinutes: 5, walkInMaxWaitMinutes: 30 };
    expectOk(await call("PUT", `/v1/business/queues/${f.queueId}/blend`, { token: f.owner.token, body: blend }));
    expect((await ledgerState(f.organizationId)).used).toBe(8);
    expect(await talliedJoinsPending(f.queueId)).toBe(0);
  });

  it("a room reports the joins it counted before its first take under a limit", async () => {
    testClock.set("2026-03-10T10:00:00.000Z");
    const f = await queueFixture("pro");
    await walkIn({ token: f.owner.token }, f.queueId);
    await settle(f.queueId);
    const before = (await ledgerState(f.organizationId)).used;
    // Joins the room counted while the plan was unlimited, not reported yet (no drain armed).
    await runInDurableObject(room(f.queueId), (_instance, state) => {
      state.storage.sql.exec("INSERT INTO quota_tally (period, joins) VALUES (?, 7)", MONTH);
    });
    await walkIn({ token: f.owner.token }, f.queueId);
    expect((await ledgerState(f.organizationId)).used).toBe(before + 7 + 1);
  });
});
