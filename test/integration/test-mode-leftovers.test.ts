import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { sweep } from "../helpers/cron";
import { testModeSides } from "../helpers/fixtures";

// A twin's rows written after its reset (a retired room's late drain, the EVENTS consumer) are
// swept by the cron every ten minutes (src/test-mode/leftovers.ts), and only those.

async function recordEvent(organizationId: string, id: string): Promise<void> {
  await env.DB.prepare(
    "INSERT INTO organization_events (id, organization_id, type, payload, recorded_at) VALUES (?, ?, 'ticket.created', '{}', ?)",
  )
    .bind(id, organizationId, Date.now())
    .run();
}

async function eventIds(): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT id FROM organization_events WHERE id LIKE 'evt_leftover_%' ORDER BY id").all<{
    id: string;
  }>();
  return results.map((r) => r.id);
}

describe("the twins' leftover pass", () => {
  it("deletes a reset twin's late rows on a ten-minute mark, and nothing of a live twin or a live organization", async () => {
    const s = await testModeSides();
    expectOk(await call("POST", "/v1/test/reset", { apiKey: s.testKey }));
    const current = expectOk(await call("GET", "/v1/business/queues", { apiKey: s.testKey }));
    const currentTwinId = (await env.DB.prepare("SELECT organization_id FROM queues WHERE id = ?").bind(current[0].id).first<{
      organization_id: string;
    }>())!.organization_id;
    expect(currentTwinId).not.toBe(s.twinId);

    // What a retired room or the consumer may still write for the old twin after its reset.
    await recordEvent(s.twinId, "evt_leftover_1_old_twin");
    await recordEvent(currentTwinId, "evt_leftover_2_current_twin");
    await recordEvent(s.liveId, "evt_leftover_3_live");

    const mark = Date.now() - (Date.now() % 600_000);
    await sweep(mark + 60_000); // not a ten-minute mark: the pass does not run
    expect(await eventIds()).toEqual(["evt_leftover_1_old_twin", "evt_leftover_2_current_twin", "evt_leftover_3_live"]);
    await sweep(mark);
    expect(await eventIds()).toEqual(["evt_leftover_2_current_twin", "evt_leftover_3_live"]);
  });
});
