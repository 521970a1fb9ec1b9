import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import { render } from "../../src/domain/notification-templates";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { createApiKey, queueFixture } from "../helpers/fixtures";

// The operator's verbs on one ticket beyond the spec's (docs/desks.md): recall, return to the line.

async function calledTicket(f: { owner: { token: string }; queueId: string }, counter = "Guichet 2"): Promise<any> {
  expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: {} }), 201);
  return expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: { counter } }));
}

describe("recall", () => {
  it("announces a called ticket again: no state change, recallCount + 1, event ticket.recalled with the counter", async () => {
    const f = await queueFixture("pro");
    testClock.set("2026-03-20T10:00:00.000Z");
    const ticket = await calledTicket(f);
    await settle(f.queueId);
    testClock.advance(20_000);
    const sent: DomainEventMessage[] = [];
    const spy = vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
      for (const m of messages) sent.push(m.body as DomainEventMessage);
      return undefined as never;
    });
    let recalled: any;
    try {
      recalled = expectOk(await call("POST", `/v1/tickets/${ticket.id}/recall`, { token: f.owner.token }));
      await settle(f.queueId);
    } finally {
      spy.mockRestore();
    }
    expect(recalled).toMatchObject({ id: ticket.id, status: "called", calledAt: ticket.calledAt, recallCount: 1, counter: "Guichet 2" });
    expect(typeof recalled.recalledAt).toBe("string");
    expect(sent.map((e) => e.type)).toEqual(["ticket.recalled"]);
    expect(sent[0]!.data).toMatchObject({ recallCount: 1, counter: "Guichet 2", displayCode: ticket.displayCode });
    // The display board sees a new announcement of the code: it flashes it again.
    const board = expectOk(await call("GET", `/v1/widget/organization/${f.organizationId}/display-board`, { token: f.owner.token }));
    const queue = board.queues.find((q: any) => q.queueId === f.queueId);
    expect(queue.called[0]).toMatchObject({ displayCode: ticket.displayCode, counter: "Guichet 2", calledAt: recalled.recalledAt });
    expect(recalled.recalledAt).not.toBe(ticket.calledAt);
    expect(render("ticket.recalled", "en", { code: "A-042", counter: "Guichet 2", queue: "Main" }).body).toBe(
      "Ticket A-042: please come forward now to Guichet 2 (Main).",
    );
  });

  it("allows 3 recalls per call (409 RECALL_LIMIT_REACHED beyond); a new call starts again at 0", async () => {
    const f = await queueFixture("pro");
    const ticket = await calledTicket(f);
    for (let i = 1; i <= 3; i++) {
      expect(expectOk(await call("POST", `/v1/tickets/${ticket.id}/recall`, { token: f.owner.token })).recallCount).toBe(i);
    }
    const beyond = await call("POST", `/v1/tickets/${ticket.id}/recall`, { token: f.owner.token });
    expectError(beyond, 409, "RECALL_LIMIT_REACHED");
    expect(beyond.body.error.details).toMatchObject({ recallCount: 3, limit: 3 });
    // Skipped then restored, then called again: the count starts again.
    expectOk(await call("POST", `/v1/tickets/${ticket.id}/skip-absent`, { token: f.owner.token, body: {} }));
    expectOk(await call("POST", `/v1/tickets/${ticket.id}/recover`, { token: f.owner.token, body: { recoveryOption: "restore" } }));
    const again = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} }));
    expect(again).toMatchObject({ id: ticket.id, recallCount: 0, recalledAt: null });
  });

  it("refuses a ticket that is not called (409 INVALID_STATE with allowed), a key without QUEUE_OPERATE (403), another organization (404)", async () => {
    const f = await queueFixture("pro");
    const waiting = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: {} }), 201);
    const res = await call("POST", `/v1/tickets/${waiting.id}/recall`, { token: f.owner.token });
    expectError(res, 409, "INVALID_STATE");
    expect(res.body.error.details).toMatchObject({ status: "waiting", allowed: ["called"] });
    const called = await calledTicket(f);
    const readOnly = await createApiKey(f.owner, f.organizationId, ["read"]);
    expectError(await call("POST", `/v1/tickets/${called.id}/recall`, { apiKey: readOnly.key }), 403, "AUTHORIZATION_ERROR");
    const other = await queueFixture("pro");
    expectError(await call("POST", `/v1/tickets/${called.id}/recall`, { token: other.owner.token }), 404, "NOT_FOUND");
    expect(expectOk(await call("GET", `/v1/tickets/${called.id}`, { token: f.owner.token })).recallCount).toBe(0);
  });
});

describe("return to the line", () => {
  async function line(f: { owner: { token: string }; queueId: string }): Promise<string[]> {
    const res = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets?status=waiting&limit=50`, { token: f.owner.token }));
    return res.map((t: any) => t.id);
  }

  it("puts a called or serving ticket first, last or after a waiting ticket; it is waiting again with no operator or desk", async () => {
    const f = await queueFixture("pro");
    const join = async () => expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: {} }), 201);
    const t1 = await join();
    const [t2, t3, t4] = [await join(), await join(), await join()];
    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: { counter: "G1" } }));
    expect(called.id).toBe(t1.id);

    const last = expectOk(await call("POST", `/v1/tickets/${t1.id}/return`, { token: f.owner.token, body: { position: "last" } }));
    expect(last).toMatchObject({ status: "waiting", assignedToId: null, calledAt: null, counter: null, deskId: null, position: 4 });
    expect(await line(f)).toEqual([t2.id, t3.id, t4.id, t1.id]);
    // A later join still comes after it.
    const t5 = await join();
    expect(await line(f)).toEqual([t2.id, t3.id, t4.id, t1.id, t5.id]);

    const c2 = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} }));
    expect(c2.id).toBe(t2.id);
    expectOk(await call("POST", `/v1/tickets/${t2.id}/serve`, { token: f.owner.token }));
    const after = await call("POST", `/v1/tickets/${t2.id}/return`, {
      token: f.owner.token,
      body: { position: "after", afterTicketId: t3.id },
    });
    expect(expectOk(after).position).toBe(2);
    expect(await line(f)).toEqual([t3.id, t2.id, t4.id, t1.id, t5.id]);

    const c3 = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} }));
    expect(c3.id).toBe(t3.id);
    expectOk(await call("POST", `/v1/tickets/${t3.id}/return`, { token: f.owner.token, body: { position: "first" } }));
    expect(await line(f)).toEqual([t3.id, t2.id, t4.id, t1.id, t5.id]);
    // Twice "after" the same ticket: the later one goes right behind it, ahead of the earlier.
    const c4 = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} }));
    expectOk(
      await call("POST", `/v1/tickets/${c4.id}/return`, { token: f.owner.token, body: { position: "after", afterTicketId: t5.id } }),
    );
    expect(await line(f)).toEqual([t2.id, t4.id, t1.id, t5.id, t3.id]);
  });

  it("refuses a waiting ticket (409 INVALID_STATE with allowed), a bad anchor, a key without QUEUE_OPERATE, another organization", async () => {
    const f = await queueFixture("pro");
    const waiting = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: {} }), 201);
    const res = await call("POST", `/v1/tickets/${waiting.id}/return`, { token: f.owner.token, body: { position: "first" } });
    expectError(res, 409, "INVALID_STATE");
    expect(res.body.error.details).toMatchObject({ status: "waiting", allowed: ["called", "serving"] });
    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} }));
    expectError(
      await call("POST", `/v1/tickets/${called.id}/return`, { token: f.owner.token, body: { position: "after" } }),
      400,
      "VALIDATION_ERROR",
      "afterTicketId",
    );
    const other = await queueFixture("pro");
    const foreign = expectOk(await call("POST", `/v1/queues/${other.queueId}/operator-join`, { token: other.owner.token, body: {} }), 201);
    expectError(
      await call("POST", `/v1/tickets/${called.id}/return`, {
        token: f.owner.token,
        body: { position: "after", afterTicketId: foreign.id },
      }),
      404,
      "NOT_FOUND",
    );
    const readOnly = await createApiKey(f.owner, f.organizationId, ["read"]);
    expectError(
      await call("POST", `/v1/tickets/${called.id}/return`, { apiKey: readOnly.key, body: { position: "last" } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(
      await call("POST", `/v1/tickets/${called.id}/return`, { token: other.owner.token, body: { position: "last" } }),
      404,
      "NOT_FOUND",
    );
    expect(expectOk(await call("GET", `/v1/tickets/${called.id}`, { token: f.owner.token })).status).toBe("called");
  });
});
