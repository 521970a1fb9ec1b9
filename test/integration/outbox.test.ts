import worker from "../../src/index";
import { createExecutionContext, createMessageBatch, env, getQueueResult, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import { testClock } from "../helpers/clock";
import { ticketFigures } from "../../src/analytics/ticket-stats";
import { call, expectOk } from "../helpers/api";
import { outboxSize, room, settle } from "../helpers/catalog";
import { queueFixture, registerUser } from "../helpers/fixtures";
import { batchWrites } from "../../src/db/prepared";
import { ticketsUpsert } from "../../src/queue-room/projection";
import { configuredOf, readRoom, type Configured, type TicketRow } from "../../src/queue-room/store";
import { expectLogs } from "../helpers/console";
import { sweep } from "../helpers/cron";
import { depsOf } from "../../src/http/deps";

/** The room's own rows for a ticket, as the drain reads them. */
async function roomRows(queueId: string, ticketId: string): Promise<{ cfg: Configured; ticket: TicketRow }> {
  return runInDurableObject(room(queueId), (_object, state) => {
    const cfg = configuredOf(readRoom(state.storage.sql));
    if (cfg === null) throw new Error("room not configured");
    return { cfg, ticket: state.storage.sql.exec<TicketRow>("SELECT * FROM tickets WHERE id = ?", ticketId).one() };
  });
}

async function projected(ticketId: string) {
  return env.DB.prepare("SELECT status, version, display_code, called_at FROM tickets WHERE id = ?").bind(ticketId).first<any>();
}

describe("outbox → D1 projection and EVENTS", () => {
  it("projects every change with a growing version, and a replayed older state never wins", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
    await settle(f.queueId);
    const first = await projected(t.id);
    expect(first).toMatchObject({ status: "waiting", display_code: "A-001" });
    const older = await roomRows(f.queueId, t.id);
    await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token });
    await call("POST", `/v1/tickets/${t.id}/serve`, { token: f.owner.token });
    await settle(f.queueId);
    const later = await projected(t.id);
    expect(later.status).toBe("serving");
    expect(later.version).toBeGreaterThan(first.version);
    // An at-least-once replay of the first state, through the drain's own upsert, must not
    // move the projection backwards.
    const [replay] = await batchWrites(env.DB, [ticketsUpsert(older.cfg, [older.ticket])]);
    expect(replay?.meta.changes).toBe(0);
    expect(await projected(t.id)).toEqual(later);
  });

  it("a drain's tickets are projected by one statement, each row as the room holds it: texts, numbers, flags and nulls", async () => {
    const f = await queueFixture("pro");
    const op = { token: f.owner.token };
    const ids = [
      expectOk(
        await call("POST", `/v1/queues/${f.queueId}/operator-join`, { ...op, body: { visitorName: 'Zoë "Z" O\'Neil', partySize: 3 } }),
        201,
      ).id,
      expectOk(await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { ...op, body: { phone: "+33698765432", language: "fr" } }), 201)
        .id,
      expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { ...op, body: {} }), 201).id,
    ];
    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, op));
    expect(called.id).toBe(ids[1]);
    // The drain's batch, as D1 receives it: the statements' texts.
    const batched: string[] = [];
    const batch = env.DB.batch.bind(env.DB);
    const spy = vi.spyOn(env.DB, "batch").mockImplementation((statements: D1PreparedStatement[]) => {
      for (const st of statements) batched.push(String(Reflect.get(st, "statement")));
      return batch(statements);
    });
    try {
      await settle(f.queueId);
    } finally {
      spy.mockRestore();
    }
    expect(batched.filter((q) => /^insert into "tickets"/i.test(q))).toHaveLength(1);
    // And the analytics: one statement moves the hour's figures for every ticket of the drain.
    expect(batched.filter((q) => /update "analytics_hourly"/i.test(q))).toHaveLength(1);
    for (const id of ids) {
      const { cfg, ticket } = await roomRows(f.queueId, id);
      const row = await env.DB.prepare(
        "SELECT number, display_code, status, party_size, is_priority, visitor_name, phone, called_at, assigned_to_id, version, organization_id, queue_id FROM tickets WHERE id = ?",
      )
        .bind(id)
        .first<Record<string, unknown>>();
      expect(row).toEqual({
        number: ticket.number,
        display_code: `${cfg.letter}-${String(ticket.number).padStart(3, "0")}`,
        status: ticket.status,
        party_size: ticket.party_size,
        is_priority: ticket.is_priority,
        visitor_name: ticket.visitor_name,
        phone: ticket.phone === null ? null : ticket.phone.replace(/[\s().-]/g, ""),
        called_at: ticket.called_at,
        assigned_to_id: ticket.assigned_to_id,
        version: ticket.version,
        organization_id: f.organizationId,
        queue_id: f.queueId,
      });
    }
    const first = await env.DB.prepare("SELECT visitor_name, party_size, typeof(number) AS t FROM tickets WHERE id = ?")
      .bind(ids[0])
      .first();
    expect(first).toEqual({ visitor_name: 'Zoë "Z" O\'Neil', party_size: 3, t: "integer" });
  });

  it("a drain only binds its statements: the ticket upsert and the aggregates' are built and prepared once, not per drain", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
    await settle(f.queueId);
    const prepared: string[] = [];
    const prepare = env.DB.prepare.bind(env.DB);
    const spy = vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
      prepared.push(query);
      return prepare(query);
    });
    try {
      expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
      await settle(f.queueId);
    } finally {
      spy.mockRestore();
    }
    expect(await projected(t.id)).toMatchObject({ status: "called" });
    const drainShapes = /^\s*(insert into "?(tickets|analytics_ticket_facts|analytics_hourly)"?|update "?analytics_hourly"?)\s/i;
    expect(prepared.filter((q) => drainShapes.test(q))).toEqual([]);
  });

  it("sends each event to EVENTS once per drain, with the DomainEventMessage shape", async () => {
    const f = await queueFixture("pro");
    const sent: DomainEventMessage[] = [];
    const spy = vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
      for (const m of messages) sent.push(m.body as DomainEventMessage);
      return undefined as never;
    });
    try {
      await settle(f.queueId);
      sent.length = 0;
      const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, { token: f.owner.token }), 201);
      await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token });
      await settle(f.queueId);
    } finally {
      spy.mockRestore();
    }
    const types = sent.map((e) => e.type);
    expect(types).toEqual(["ticket.created", "ticket.called"]);
    for (const e of sent) {
      expect(e.id).toMatch(/^evt_/);
      expect(e).toMatchObject({ organizationId: f.organizationId, queueId: f.queueId });
      expect(e.data.isGhostMode).toBe(true);
    }
    expect(new Set(sent.map((e) => e.id)).size).toBe(sent.length);
  });

  it("keeps events in the outbox when delivery fails, and delivers them on the next alarm", async () => {
    const f = await queueFixture("pro");
    await settle(f.queueId);
    const attempts: DomainEventMessage[][] = [];
    const reported = expectLogs("warn", /outbox delivery failed.*queue down/);
    const spy = vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
      attempts.push([...messages].map((m) => m.body as DomainEventMessage));
      if (attempts.length === 1) throw new Error("queue down");
      return undefined as never;
    });
    let ticketId: string;
    try {
      ticketId = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201).id;
      await settle(f.queueId);
    } finally {
      spy.mockRestore();
    }
    const [failed, ...retried] = attempts;
    const created = failed!.find((e) => e.type === "ticket.created" && e.ticketId === ticketId);
    expect(created).toBeDefined();
    // The very event of the failed attempt (same id, so consumers de-duplicate) went out on a later alarm.
    expect(retried.flat()).toContainEqual(created);
    expect(await outboxSize(f.queueId)).toBe(0);
    // The failed attempt was reported once, as a warning the room retries after.
    expect(reported).toHaveLength(1);
  });

  it("emits capacity_warning at 80% and almost_called when a ticket comes within 3 of the front", async () => {
    const f = await queueFixture("pro", { maxCapacity: 10 });
    const sent: DomainEventMessage[] = [];
    const spy = vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
      for (const m of messages) sent.push(m.body as DomainEventMessage);
      return undefined as never;
    });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(
          expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: { partySize: 2 } }), 201).id,
        );
      await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token });
      await settle(f.queueId);
      expect(sent.filter((e) => e.type === "queue.capacity_warning")).toHaveLength(1);
      const almost = sent.filter((e) => e.type === "ticket.almost_called");
      expect(almost.map((e) => e.ticketId)).toEqual([ids[4]]);
    } finally {
      spy.mockRestore();
    }
  });

  it("emits queue.long_wait once when a joiner's wait reaches an hour, and again only after it fell back", async () => {
    const f = await queueFixture("pro");
    const sent: DomainEventMessage[] = [];
    const spy = vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
      for (const m of messages) sent.push(m.body as DomainEventMessage);
      return undefined as never;
    });
    const longWaits = () => sent.filter((e) => e.type === "queue.long_wait" && e.queueId === f.queueId);
    const walkIn = async () => expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    try {
      // No call history yet: 5 minutes a ticket, so the 12th waiting ticket faces 60 minutes.
      for (let i = 0; i < 11; i++) expect((await walkIn()).estimatedWaitMinutes).toBeLessThan(60);
      await settle(f.queueId);
      expect(longWaits()).toEqual([]);
      const twelfth = await walkIn();
      expect(twelfth.estimatedWaitMinutes).toBe(60);
      await walkIn();
      await settle(f.queueId);
      expect(longWaits().map((e) => e.data)).toEqual([expect.objectContaining({ estimatedWaitMinutes: 60, position: 12 })]);
      // Cleared, the next joiner waits 5 minutes: the episode ends; a new one is reported.
      await call("POST", `/v1/queues/${f.queueId}/clear`, { token: f.owner.token });
      await walkIn();
      for (let i = 0; i < 11; i++) await walkIn();
      await settle(f.queueId);
      expect(longWaits()).toHaveLength(2);
    } finally {
      spy.mockRestore();
    }
  });

  it("the consumer acks every message", async () => {
    const batch = createMessageBatch<DomainEventMessage>("queue-service-events", [
      {
        id: "m1",
        timestamp: new Date(),
        attempts: 1,
        body: { id: "evt_x", type: "ticket.created", organizationId: "org_x", queueId: null, ticketId: null, occurredAt: "", data: {} },
      },
    ]);
    const ctx = createExecutionContext();
    await worker.queue!(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual(["m1"]);
  });
});

describe("no-show sweep", () => {
  it("expires due called tickets once, emits expired + no_show, and a second run changes nothing", async () => {
    testClock.set("2026-06-01T09:00:00.000Z");
    const f = await queueFixture("pro");
    const a = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    const b = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token });
    testClock.advance(2 * 60_000);
    await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token });
    await settle(f.queueId);
    const deadline = await env.DB.prepare("SELECT due_at FROM room_deadlines WHERE queue_id = ?")
      .bind(f.queueId)
      .first<{ due_at: number }>();
    expect(deadline?.due_at).toBe(Date.parse("2026-06-01T09:05:00.000Z"));

    const sent: DomainEventMessage[] = [];
    const spy = vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
      for (const m of messages) sent.push(m.body as DomainEventMessage);
      return undefined as never;
    });
    try {
      await sweep(Date.parse("2026-06-01T09:05:00.000Z"));
      await settle(f.queueId);
      await sweep(Date.parse("2026-06-01T09:05:30.000Z"));
      await settle(f.queueId);
    } finally {
      spy.mockRestore();
    }
    expect(expectOk(await call("GET", `/v1/tickets/${a.id}`, { token: f.owner.token })).status).toBe("expired");
    expect(expectOk(await call("GET", `/v1/tickets/${b.id}`, { token: f.owner.token })).status).toBe("called");
    expect(sent.map((e) => e.type)).toEqual(["ticket.expired", "ticket.no_show"]);
    const next = await env.DB.prepare("SELECT due_at FROM room_deadlines WHERE queue_id = ?").bind(f.queueId).first<{ due_at: number }>();
    expect(next?.due_at).toBe(Date.parse("2026-06-01T09:07:00.000Z"));
    await sweep(Date.parse("2026-06-01T09:07:00.000Z"));
    await settle(f.queueId);
    expect(expectOk(await call("GET", `/v1/tickets/${b.id}`, { token: f.owner.token })).status).toBe("expired");
    expect(await env.DB.prepare("SELECT due_at FROM room_deadlines WHERE queue_id = ?").bind(f.queueId).first()).toBeNull();
  });
});

describe("retire and ticket figures", () => {
  it("retire cancels live tickets and refuses everything afterwards", async () => {
    const f = await queueFixture("pro");
    const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    await room(f.queueId).command({ verb: "retire", at: Date.now() });
    await room(f.queueId).command({ verb: "retire", at: Date.now() });
    await settle(f.queueId);
    expect((await projected(t.id)).status).toBe("cancelled");
    const refused = await room(f.queueId).query({ question: "ticket", ticketId: t.id, at: Date.now() });
    expect(refused).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
    expect(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token })).toMatchObject({ status: 404 });
  });

  it("ticketFigures counts today's tickets by status and averages waits from the projection", async () => {
    testClock.set("2026-07-01T08:00:00.000Z");
    const f = await queueFixture("pro");
    const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token });
    testClock.advance(4 * 60_000);
    await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token });
    await call("POST", `/v1/tickets/${t.id}/serve`, { token: f.owner.token });
    testClock.advance(6 * 60_000);
    await call("POST", `/v1/tickets/${t.id}/complete`, { token: f.owner.token });
    await settle(f.queueId);
    const figures = await ticketFigures(depsOf(env), f.organizationId, Date.parse("2026-07-01T12:00:00.000Z"));
    expect(figures.today.byStatus).toMatchObject({ served: 1, waiting: 1, called: 0 });
    expect(figures.averageWaitMinutes).toBe(4);
    expect(figures.averageServiceMinutes).toBe(6);
  });
});
