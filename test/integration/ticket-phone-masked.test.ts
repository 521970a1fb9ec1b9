import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { now } from "../../src/lib/clock";
import { ROOM_KEEP_MS } from "../../src/queue-room/archive";
import { call, expectOk } from "../helpers/api";
import { room, settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { createApiKey, queueFixture, registerUser, walkIn } from "../helpers/fixtures";

// Issue 27, the console's card: a ticket shows staff the visitor's phone masked, never the number.

const FULL = /\+?33 ?6 ?12 ?34 ?56 ?78|612345678/;

describe("phoneMasked on the ticket", () => {
  it("masks the visitor's phone on every read of the ticket: the join, the ticket, the queue's list, and once archived, D1", async () => {
    testClock.set("2026-04-03T08:00:00.000Z");
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const joined = await call("POST", `/v1/queues/${f.queueId}/join`, {
      token: customer.token,
      body: { phone: "+33612345678", language: "fr" },
    });
    const t = expectOk(joined, 201);
    expect(t.phoneMasked).toBe("+33 6 •• •• •• 78");
    expect(JSON.stringify(joined.body)).not.toMatch(FULL);

    const read = await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token });
    expect(expectOk(read).phoneMasked).toBe("+33 6 •• •• •• 78");
    expect(JSON.stringify(read.body)).not.toMatch(FULL);
    const list = await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting`, { token: f.owner.token });
    expect(expectOk(list).map((x: any) => [x.id, x.phoneMasked])).toEqual([[t.id, "+33 6 •• •• •• 78"]]);
    expect(JSON.stringify(list.body)).not.toMatch(FULL);

    // A walk-in gives no phone.
    const walk = await walkIn(f.owner, f.queueId);
    expect((walk as { phoneMasked?: string | null }).phoneMasked).toBeNull();

    // Finished and past the room's keep window, the ticket is read from D1: still masked.
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    expectOk(await call("POST", `/v1/tickets/${t.id}/serve`, { token: f.owner.token }));
    expectOk(await call("POST", `/v1/tickets/${t.id}/complete`, { token: f.owner.token }));
    await settle(f.queueId);
    // A key reads it later: a session would have gone idle meanwhile.
    const key = await createApiKey(f.owner as any, f.organizationId, ["read"]);
    testClock.advance(ROOM_KEEP_MS + 3_600_000);
    for (let i = 0; i < 100; i++) {
      const r = await room(f.queueId).command({ verb: "archiveFinished", at: now() });
      if (r.more) continue;
      const left = await runInDurableObject(room(f.queueId), (_o, state) =>
        state.storage.sql.exec("SELECT id FROM tickets WHERE id = ?", t.id).toArray(),
      );
      if (left.length === 0) break;
      await runDurableObjectAlarm(room(f.queueId));
    }
    const gone = await runInDurableObject(room(f.queueId), (_o, state) =>
      state.storage.sql.exec("SELECT id FROM tickets WHERE id = ?", t.id).toArray(),
    );
    expect(gone).toEqual([]);
    const archived = await call("GET", `/v1/tickets/${t.id}`, { apiKey: key.key });
    expect(expectOk(archived)).toMatchObject({ id: t.id, status: "served", phoneMasked: "+33 6 •• •• •• 78" });
    expect(JSON.stringify(archived.body)).not.toMatch(FULL);
  });
});
