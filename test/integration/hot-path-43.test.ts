import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { sql } from "drizzle-orm";
import { database } from "../../src/db/client";
import { apiKeyQuery, apiKeySubscriptionQuery } from "../../src/http/credentials/api-keys";
import { queueQuery, sessionRoleInQueueQuery } from "../../src/http/credentials/queues";
import { sessionQuery, sessionUserQuery } from "../../src/http/credentials/sessions";
import { call, expectOk } from "../helpers/api";
import { captureEvents } from "../helpers/events";
import { room, settle } from "../helpers/catalog";
import { createApiKey, queueFixture, registerUser } from "../helpers/fixtures";

// Issue 43, the hot path cut: the credential lookup's statements are prepared once per binding
// (not rebuilt through the query builder per request), and a join announces "almost your turn"
// to nobody (a new ticket moves nobody forward), while a change that moves the line still does.

/** The SQL text of every statement the credential lookup batches. */
function credentialStatements(): string[] {
  const db = database(env.DB);
  const p = sql.placeholder("x");
  return [
    sessionQuery(db, p),
    sessionUserQuery(db, p),
    queueQuery(db, p),
    sessionRoleInQueueQuery(db, p, p),
    apiKeyQuery(db, p),
    apiKeySubscriptionQuery(db, p),
  ].map((q) => q.toSQL().sql);
}

describe("the credential lookup's statements", () => {
  it("are prepared once per binding: later requests, session or key, only bind their values", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const { key } = await createApiKey(f.owner, f.organizationId);
    const requests = async () => {
      const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
      expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { token: customer.token }));
      expectOk(await call("GET", `/v1/queues/${f.queueId}`, { apiKey: key }));
      expectOk(await call("GET", "/v1/auth/me", { token: customer.token }));
      expectOk(await call("POST", `/v1/tickets/${ticket.id}/cancel`, { token: customer.token }));
    };
    await requests(); // the first use with this binding prepares them
    const prepared: string[] = [];
    const prepare = env.DB.prepare.bind(env.DB);
    const spy = vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
      prepared.push(query);
      return prepare(query);
    });
    const batch = vi.spyOn(env.DB, "batch");
    try {
      await requests();
    } finally {
      spy.mockRestore();
    }
    const credential = new Set(credentialStatements());
    expect(prepared.filter((q) => credential.has(q))).toEqual([]);
    // They did run: the key's batch (key, subscription, queue) and the cancel's queue row (a
    // ticket's read uses the row the join left in this isolate). The sessions' own rows are
    // held by their user's object by now (issue 43): none.
    const ran = batch.mock.calls.flatMap(([statements]) => statements).length;
    expect(ran).toBeGreaterThanOrEqual(4);
    batch.mockRestore();
  });

  it("still refuses what it refused: a revoked key, a caller outside the queue's organization", async () => {
    const f = await queueFixture("pro");
    const { key, id } = await createApiKey(f.owner, f.organizationId);
    expectOk(await call("GET", `/v1/queues/${f.queueId}`, { apiKey: key }));
    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}/api-keys/${id}`, { token: f.owner.token }));
    expect((await call("GET", `/v1/queues/${f.queueId}`, { apiKey: key })).body.error.code).toBe("KEY_REVOKED");
    const stranger = await registerUser({ accountType: "business" });
    expect((await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: stranger.token })).status).toBe(404);
  });
});

async function outboxTypes(queueId: string): Promise<string[]> {
  return runInDurableObject(room(queueId), (_object, state) =>
    state.storage.sql
      .exec<{ message: string }>("SELECT message FROM outbox ORDER BY seq")
      .toArray()
      .map((r) => (JSON.parse(r.message) as { type: string }).type),
  );
}

describe("almost your turn, after a join", () => {
  it("a join at the back announces nothing (no outbox row, no event); a call that moves the line announces the one who reached 3 ahead", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const walkIns: string[] = [];
    for (let i = 0; i < 5; i++)
      walkIns.push(expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201).id);
    await settle(f.queueId);
    const events = captureEvents();
    try {
      const joined = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
      expect(joined.position).toBe(6);
      // No announcement row was written with the join (the drain may already have sent its own).
      expect((await outboxTypes(f.queueId)).filter((t) => t !== "ticket.created")).toEqual([]);
      await settle(f.queueId);
      expect(events.sent.map((e) => e.type)).toEqual(["ticket.created"]);

      // A VIP walk-in goes ahead of everyone: the others move back, nobody is newly near the front.
      events.sent.length = 0;
      expectOk(await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { token: f.owner.token }), 201);
      await settle(f.queueId);
      expect(events.sent.filter((e) => e.type === "ticket.almost_called")).toEqual([]);

      // Two calls move the line forward: the fifth walk-in, then... the joiner stays behind.
      events.sent.length = 0;
      await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }); // the VIP
      await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }); // walk-in 1
      await settle(f.queueId);
      const almost = events.sent.filter((e) => e.type === "ticket.almost_called");
      // Walk-ins 2..5 are now 0..3 ahead: walk-in 5 (3 ahead) is the one who reached the front.
      expect(almost.map((e) => e.ticketId)).toEqual([walkIns[4]]);

      // A ticket leaving from the front moves the joiner to 3 ahead: announced.
      events.sent.length = 0;
      expectOk(await call("POST", `/v1/tickets/${walkIns[1]}/cancel`, { token: f.owner.token }));
      await settle(f.queueId);
      expect(events.sent.filter((e) => e.type === "ticket.almost_called").map((e) => e.ticketId)).toEqual([joined.id]);
    } finally {
      events.restore();
    }
  });

  it("a join near the front is not announced (already there), and a join into a long line reads the same ticket back", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    await settle(f.queueId);
    const events = captureEvents();
    try {
      const first = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
      expect(first).toMatchObject({ position: 1, status: "waiting" });
      await settle(f.queueId);
      expect(events.sent.map((e) => e.type)).toEqual(["ticket.created"]);
      // The answer of the join is the ticket as a read sees it.
      const read = expectOk(await call("GET", `/v1/tickets/${first.id}`, { token: customer.token }));
      expect(read).toMatchObject({ id: first.id, position: 1, displayCode: first.displayCode, status: "waiting" });
    } finally {
      events.restore();
    }
  });
});
