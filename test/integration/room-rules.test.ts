import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { findQueue } from "../../src/tickets/queues";
import { callNext, issueTicket } from "../../src/tickets/tickets";
import { call, expectError, expectOk } from "../helpers/api";
import { adminKeyOf, ownerWithOrganization, runCron, subscription, upgradeThroughSandbox } from "../helpers/billing";
import { testClock } from "../helpers/clock";
import { addMember, addQueue, createApiKey, createCatalog, queueFixture } from "../helpers/fixtures";
import { depsOf } from "../../src/http/deps";

// The room holds the rules a join and a call-next check (docs/room-rules.md): every change is
// in the room before it is answered, a copy past its window is refreshed from D1, and the
// organization's monthly ticket quota is exact across its queues (its ledger object).

const DAY = 86_400_000;

async function setTicketCount(organizationId: string, period: string, used: number) {
  await env.DB.prepare(
    `INSERT INTO usage_counters (organization_id, period, metric, used) VALUES (?, ?, 'tickets', ?)
     ON CONFLICT (organization_id, period, metric) DO UPDATE SET used = excluded.used`,
  )
    .bind(organizationId, period, used)
    .run();
}

/** A walk-in, with a session token or (for tests that move the clock past a session's life) an API key's options. */
async function walkIn(auth: string | { apiKey: string }, queueId: string) {
  return call("POST", `/v1/queues/${queueId}/operator-join`, { ...(typeof auth === "string" ? { token: auth } : auth), body: {} });
}

async function createEvent(token: string, organizationId: string, body: Record<string, unknown>) {
  return expectOk(await call("POST", `/v1/calendar/organization/${organizationId}`, { token, body }), 201);
}

describe("a change reaches the room before the next join or call-next", () => {
  it("a service's status: inactive refuses the next join at once, active again takes it", async () => {
    testClock.set("2026-05-04T09:00:00.000Z");
    const f = await queueFixture();
    expectOk(await walkIn(f.owner.token, f.queueId), 201); // the room holds the rules now

    expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { status: "inactive" } }));
    const refused = await walkIn(f.owner.token, f.queueId);
    expectError(refused, 409, "QUEUE_CLOSED");
    expect(refused.body.error.details).toEqual({ reason: "service_inactive", serviceStatus: "inactive" });

    expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token: f.owner.token, body: { status: "active" } }));
    expectOk(await walkIn(f.owner.token, f.queueId), 201);
  });

  it("a closure created refuses the next join; deleted, the next join is taken", async () => {
    testClock.set("2026-05-04T09:00:00.000Z");
    const f = await queueFixture();
    expectOk(await walkIn(f.owner.token, f.queueId), 201);

    const closure = await createEvent(f.owner.token, f.organizationId, {
      title: "Inventory",
      eventType: "closure",
      serviceId: f.serviceId,
      startDate: "2026-05-04T08:30:00.000Z",
      endDate: "2026-05-04T12:00:00.000Z",
    });
    const refused = await walkIn(f.owner.token, f.queueId);
    expectError(refused, 409, "QUEUE_CLOSED");
    expect(refused.body.error.details).toEqual({ reason: "closure", eventId: closure.id, until: "2026-05-04T12:00:00.000Z" });

    expectOk(await call("DELETE", `/v1/calendar/${closure.id}`, { token: f.owner.token }));
    expectOk(await walkIn(f.owner.token, f.queueId), 201);
  });

  it("an operator's break refuses the next call-next (a queue's and a desk's); its end moved back, the next call is made", async () => {
    testClock.set("2026-05-04T09:00:00.000Z");
    const f = await queueFixture();
    const operator = await addMember(f.owner, f.organizationId, "operator");
    for (let i = 0; i < 3; i++) expectOk(await walkIn(f.owner.token, f.queueId), 201);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token, body: {} }));

    const pause = await createEvent(f.owner.token, f.organizationId, {
      title: "Coffee",
      eventType: "break",
      attendees: [operator.id],
      startDate: "2026-05-04T08:55:00.000Z",
      endDate: "2026-05-04T09:15:00.000Z",
    });
    const refused = await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token, body: {} });
    expectError(refused, 409, "OPERATOR_UNAVAILABLE");
    expect(refused.body.error.details).toEqual({ eventId: pause.id, until: "2026-05-04T09:15:00.000Z" });

    // At a desk over the same queue: the room answering the head refuses the same way.
    const locationId = expectOk(
      await call("POST", "/v1/locations", {
        token: f.owner.token,
        body: { organizationId: f.organizationId, name: "Desk hall", address: "1 rue", latitude: 48.85, longitude: 2.35 },
      }),
      201,
    ).id;
    const desk = expectOk(
      await call("POST", `/v1/locations/${locationId}/desks`, { token: f.owner.token, body: { name: "Guichet 1", queueIds: [f.queueId] } }),
      201,
    );
    expectOk(await call("POST", `/v1/desks/${desk.id}/open`, { token: operator.token }));
    const atDesk = await call("POST", `/v1/desks/${desk.id}/call-next`, { token: operator.token, body: {} });
    expectError(atDesk, 409, "OPERATOR_UNAVAILABLE");
    expect(atDesk.body.error.details).toEqual({ eventId: pause.id, until: "2026-05-04T09:15:00.000Z" });

    // The break is cut short (it ended a minute ago): the very next call is made.
    expectOk(await call("PATCH", `/v1/calendar/${pause.id}`, { token: f.owner.token, body: { endDate: "2026-05-04T08:59:00.000Z" } }));
    expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token, body: {} })).status).toBe("called");
    expect(expectOk(await call("POST", `/v1/desks/${desk.id}/call-next`, { token: operator.token, body: {} })).status).toBe("called");
  });

  it("a plan change: the upgrade lifts the quota for the next join; the fall back to starter brings it back", async () => {
    testClock.set("2026-03-20T10:00:00.000Z");
    const { owner, org } = await ownerWithOrganization();
    const { queueId } = await createCatalog(owner, org.id);
    const queue = { id: queueId };
    const admin = adminKeyOf(org.id);
    await setTicketCount(org.id, "2026-03", 50);
    const full = await walkIn(admin, queue.id);
    expectError(full, 403, "QUOTA_EXCEEDED");
    expect(full.body.error.details).toEqual({ limit: 50, used: 50, resetsAt: "2026-04-01T00:00:00.000Z" });

    await upgradeThroughSandbox(owner, org.id);
    expectOk(await walkIn(admin, queue.id), 201);

    // Cancelled: pro until the period ends, then the sweep moves the organization to starter.
    expectOk(await call("POST", `/v1/billing/subscription/${org.id}/cancel`, { ...adminKeyOf(org.id), body: {} }));
    const end = Date.parse((await subscription(owner, org.id)).currentPeriodEnd);
    testClock.set(end + 60_000);
    const month = new Date(end).toISOString().slice(0, 7);
    await setTicketCount(org.id, month, 60);
    expectOk(await walkIn(admin, queue.id), 201); // still pro: the sweep has not run
    await runCron(end + 60_000);
    expect((await subscription(owner, org.id)).plan).toBe("starter");
    const back = await walkIn(admin, queue.id);
    expectError(back, 403, "QUOTA_EXCEEDED");
    expect(back.body.error.details).toMatchObject({ limit: 50, used: 61 });
  });
});

describe("the organization's monthly ticket quota", () => {
  it("is exact at its boundary over two queues: 30 concurrent joins with 20 units left make exactly 20 tickets", async () => {
    testClock.set("2026-06-10T10:00:00.000Z");
    const f = await queueFixture("pro");
    const second = await addQueue(f);
    await setTicketCount(f.organizationId, "2026-06", 49_980);

    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => walkIn(f.owner.token, i % 2 === 0 ? f.queueId : second)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(20);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(10);
    for (const r of refused) {
      expectError(r, 403, "QUOTA_EXCEEDED");
      expect(r.body.error.details).toEqual({ limit: 50_000, used: 50_000, resetsAt: "2026-07-01T00:00:00.000Z" });
    }
    const lines = await Promise.all(
      [f.queueId, second].map(async (q) =>
        expectOk(await call("GET", `/v1/queues/${q}/tickets?status=waiting&limit=100`, { token: f.owner.token })),
      ),
    );
    expect(lines[0].length + lines[1].length).toBe(20);

    const usage = expectOk(await call("GET", `/v1/billing/usage/${f.organizationId}`, { token: f.owner.token }));
    expect(usage.tickets).toEqual({ used: 50_000, limit: 50_000, resetsAt: "2026-07-01T00:00:00.000Z" });
    const row = await env.DB.prepare(
      "SELECT used FROM usage_counters WHERE organization_id = ? AND period = '2026-06' AND metric = 'tickets'",
    )
      .bind(f.organizationId)
      .first<{ used: number }>();
    expect(row?.used).toBe(50_000);
  });

  it("gives a unit back when the room refuses the join after taking it, so another queue still gets it", async () => {
    testClock.set("2026-06-10T10:00:00.000Z");
    const f = await queueFixture("pro", { maxCapacity: 1 });
    const second = await addQueue(f);
    await setTicketCount(f.organizationId, "2026-06", 49_998);
    expectOk(await walkIn(f.owner.token, f.queueId), 201);
    expectError(await walkIn(f.owner.token, f.queueId), 409, "QUEUE_FULL");
    expectOk(await walkIn(f.owner.token, second), 201);
    const last = await walkIn(f.owner.token, second);
    expectError(last, 403, "QUOTA_EXCEEDED");
    expect(last.body.error.details).toMatchObject({ limit: 50_000, used: 50_000 });
  });
});

describe("a copy past its window", () => {
  it("is refreshed from D1: a closure ten days ahead still refuses joins once that day comes", async () => {
    testClock.set("2026-05-04T09:00:00.000Z");
    const f = await queueFixture();
    const key = { apiKey: (await createApiKey(f.owner, f.organizationId, ["admin"])).key };
    expectOk(await walkIn(key, f.queueId), 201);
    const closure = await createEvent(f.owner.token, f.organizationId, {
      title: "Renovation",
      eventType: "closure",
      serviceId: f.serviceId,
      startDate: "2026-05-14T08:00:00.000Z",
      endDate: "2026-05-14T18:00:00.000Z",
    });
    expectOk(await walkIn(key, f.queueId), 201);

    testClock.set(Date.parse("2026-05-04T09:00:00.000Z") + 10 * DAY);
    const refused = await walkIn(key, f.queueId);
    expectError(refused, 409, "QUEUE_CLOSED");
    expect(refused.body.error.details).toEqual({ reason: "closure", eventId: closure.id, until: "2026-05-14T18:00:00.000Z" });
  });
});

describe("D1 round trips on the hot path", () => {
  /** env with a D1 that counts what is sent to it: one statement or one batch is one round trip. */
  function counting(): { env: Env; trips: () => number } {
    let trips = 0;
    const wrapStatement = (stmt: D1PreparedStatement): D1PreparedStatement =>
      new Proxy(stmt, {
        get(target, prop) {
          const value = Reflect.get(target, prop, target);
          if (typeof value !== "function") return value;
          if (prop === "bind") return (...args: unknown[]) => wrapStatement(value.apply(target, args));
          if (prop === "run" || prop === "all" || prop === "first" || prop === "raw") {
            return (...args: unknown[]) => {
              trips += 1;
              return value.apply(target, args);
            };
          }
          return value.bind(target);
        },
      });
    const db = new Proxy(env.DB, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop === "prepare") return (query: string) => wrapStatement(target.prepare(query));
        if (prop === "batch")
          return (statements: D1PreparedStatement[]) => {
            trips += 1;
            return target.batch(statements);
          };
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return { env: { ...(env as Env), DB: db }, trips: () => trips };
  }

  it("a join and a call-next read no rule and write no quota in D1 once the room holds its copy", async () => {
    testClock.set("2026-05-04T09:00:00.000Z");
    const f = await queueFixture();
    const operator = await addMember(f.owner, f.organizationId, "operator");
    await createEvent(f.owner.token, f.organizationId, {
      title: "Later break",
      eventType: "break",
      attendees: [operator.id],
      startDate: "2026-05-04T15:00:00.000Z",
      endDate: "2026-05-04T15:30:00.000Z",
    });
    // The event was pushed to the room of the queue that existed then; a queue created after it
    // has no copy until its first command.
    const fresh = await findQueue(depsOf(env as Env), await addQueue(f));
    const queue = await findQueue(depsOf(env as Env), f.queueId);
    const input = {
      userId: operator.id,
      partySize: 1,
      isPriority: false,
      isGhostMode: true,
      visitorName: null,
      phone: null,
      language: null,
      source: "operator" as const,
    };
    const at = Date.parse("2026-05-04T09:00:00.000Z");

    // The first join of a room with no copy loads it: one D1 batch.
    const first = counting();
    await issueTicket(depsOf(first.env), fresh, input, at);
    expect(first.trips()).toBe(1);
    const again = counting();
    await issueTicket(depsOf(again.env), fresh, input, at);
    expect(again.trips()).toBe(0);

    const join = counting();
    await issueTicket(depsOf(join.env), queue, input, at + 1);
    expect(join.trips()).toBe(0);

    const next = counting();
    await callNext(depsOf(next.env), queue, operator.id, operator.id, at + 2);
    expect(next.trips()).toBe(0);
  });
});
