import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { queueFixture, walkIn } from "../helpers/fixtures";

// The organization's ledger writes its ticket count to D1 a moment after a join. When the
// organization is deleted in that moment, the count has nowhere to go: the write must end
// there, not fail the foreign key and retry every five seconds for ever.

describe("the ledger of a deleted organization", () => {
  it("drops the pending count instead of retrying a write that can never succeed", async () => {
    const f = await queueFixture("pro");
    await walkIn({ token: f.owner.token }, f.queueId);
    const ledger = env.ORG_LEDGER.getByName(f.organizationId);
    expect(await runInDurableObject(ledger, (_o, state) => state.storage.getAlarm())).not.toBeNull();

    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}`, { token: f.owner.token }));
    await runDurableObjectAlarm(ledger);

    const after = await runInDurableObject(ledger, async (_o, state) => ({
      alarm: await state.storage.getAlarm(),
      behind: state.storage.sql.exec("SELECT period FROM ticket_periods WHERE used != flushed").toArray().length,
    }));
    expect(after).toEqual({ alarm: null, behind: 0 });
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM usage_counters WHERE organization_id = ?")
      .bind(f.organizationId)
      .first<{ n: number }>();
    expect(rows?.n).toBe(0);
  });
});
