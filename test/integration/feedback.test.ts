import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import type { WebhookDeliveryMessage } from "../../src/domain/webhooks";
import worker from "../../src/index";
import { WEBHOOKS_QUEUE } from "../../src/jobs/webhook-deliveries";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { createApiKey, queueFixture, registerUser, type Fixture } from "../helpers/fixtures";
import { capture, smsSent } from "../helpers/notifications";
import { fakeInternet } from "../helpers/outbound";
import { customerText, randomMobile } from "../helpers/twilio";

// The customer's verdict (issue 45, docs/visits.md): a score 1–5 and a comment with the ticket's
// token, once, after served, within 7 days; an SMS reply of one digit; the analytics read back;
// ticket.feedback_low to webhooks.

afterEach(() => vi.restoreAllMocks());

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

interface Widget extends Fixture {
  widgetKey: string;
}

async function widgetFixture(): Promise<Widget> {
  const f = await queueFixture("pro");
  return { ...f, widgetKey: (await createApiKey(f.owner, f.organizationId, ["widget"])).key };
}

let ip = 0;
const address = () => `203.0.113.${(ip = (ip % 250) + 1)}`;

async function join(f: Widget): Promise<{ id: string; ticketToken: string; displayCode: string }> {
  return expectOk(
    await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: f.widgetKey, body: {}, headers: { "CF-Connecting-IP": address() } }),
    201,
  );
}

/** Called, served and completed by the owner (the ticket must be the next one). */
async function serveNext(f: Fixture, ticketId: string) {
  expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token })).id).toBe(ticketId);
  expectOk(await call("POST", `/v1/tickets/${ticketId}/serve`, { token: f.owner.token }));
  expectOk(await call("POST", `/v1/tickets/${ticketId}/complete`, { token: f.owner.token }));
}

function give(ticketId: string, token: string | undefined, body: unknown) {
  const headers: Record<string, string> = { "CF-Connecting-IP": address() };
  if (token !== undefined) headers["X-Ticket-Token"] = token;
  return call("POST", `/v1/widget/tickets/${ticketId}/feedback`, { headers, body });
}

function state(ticketId: string, token: string) {
  return call("GET", `/v1/widget/tickets/${ticketId}/feedback`, { headers: { "X-Ticket-Token": token, "CF-Connecting-IP": address() } });
}

describe("POST /v1/widget/tickets/{ticketId}/feedback", () => {
  it("only after served, only with the ticket's token, once; the comment follows the stored-text rules", async () => {
    const f = await widgetFixture();
    const mine = await join(f);
    const other = await join(f);

    expectError(await give(mine.id, mine.ticketToken, { score: 5 }), 409, "INVALID_STATE");
    expect(expectOk(await state(mine.id, mine.ticketToken))).toMatchObject({ status: "not_served", feedback: null });
    await serveNext(f, mine.id);

    expectError(await give(mine.id, undefined, { score: 5 }), 404, "NOT_FOUND");
    expectError(await give(mine.id, other.ticketToken, { score: 5 }), 404, "NOT_FOUND");
    expectError(await give(mine.id, "x".repeat(44), { score: 5 }), 404, "NOT_FOUND");
    expectError(await give(mine.id, mine.ticketToken, { score: 6 }), 400, "VALIDATION_ERROR", "score");
    expectError(await give(mine.id, mine.ticketToken, { score: 0 }), 400, "VALIDATION_ERROR", "score");
    expectError(await give(mine.id, mine.ticketToken, { score: 4.5 }), 400, "VALIDATION_ERROR", "score");
    expectError(await give(mine.id, mine.ticketToken, { score: 5, comment: "ok\u202Egnp.exe" }), 400, "VALIDATION_ERROR", "comment");
    expectError(await give(mine.id, mine.ticketToken, { score: 5, comment: "x".repeat(1001) }), 400, "VALIDATION_ERROR", "comment");
    expectError(await give(mine.id, mine.ticketToken, { score: 5, status: "served" }), 400, "VALIDATION_ERROR");
    expect(expectOk(await state(mine.id, mine.ticketToken))).toMatchObject({ status: "open", feedback: null });

    const given = expectOk(await give(mine.id, mine.ticketToken, { score: 5, comment: "  Rapide et aimable.\nMerci  " }), 201);
    expect(given).toEqual({
      ticketId: mine.id,
      score: 5,
      comment: "Rapide et aimable.\nMerci",
      channel: "widget",
      servedAt: expect.stringMatching(/^\d{4}-/),
      createdAt: expect.stringMatching(/^\d{4}-/),
    });
    expectError(await give(mine.id, mine.ticketToken, { score: 1 }), 409, "FEEDBACK_ALREADY_GIVEN");
    expect(expectOk(await state(mine.id, mine.ticketToken))).toMatchObject({ status: "given", feedback: { score: 5 } });
    // The served ticket's token opens its verdict only: the ticket's read stays 404 (the token died for it).
    expectError(await call("GET", `/v1/widget/tickets/${mine.id}`, { headers: { "X-Ticket-Token": mine.ticketToken } }), 404, "NOT_FOUND");
    // A cancelled ticket has no verdict to give: its token is gone.
    expectOk(await call("POST", `/v1/widget/tickets/${other.id}/cancel`, { headers: { "X-Ticket-Token": other.ticketToken } }));
    expectError(await give(other.id, other.ticketToken, { score: 3 }), 404, "NOT_FOUND");
  });

  it("within 7 days of the service (the test clock): after, 410 FEEDBACK_WINDOW_CLOSED", async () => {
    const f = await widgetFixture();
    const served = Date.parse("2026-11-02T10:00:00.000Z");
    testClock.set(served - 10 * MINUTE);
    const late = await join(f);
    const inTime = await join(f);
    testClock.set(served);
    await serveNext(f, late.id);
    await serveNext(f, inTime.id);

    testClock.set(served + 7 * DAY - MINUTE);
    expect(expectOk(await state(inTime.id, inTime.ticketToken))).toMatchObject({
      status: "open",
      closesAt: new Date(served + 7 * DAY).toISOString(),
    });
    expectOk(await give(inTime.id, inTime.ticketToken, { score: 4 }), 201);
    testClock.set(served + 7 * DAY + MINUTE);
    expect(expectOk(await state(late.id, late.ticketToken))).toMatchObject({ status: "closed" });
    const refused = await give(late.id, late.ticketToken, { score: 4 });
    expectError(refused, 410, "FEEDBACK_WINDOW_CLOSED");
    expect(refused.body.error.details).toEqual({
      servedAt: new Date(served).toISOString(),
      closedAt: new Date(served + 7 * DAY).toISOString(),
    });
  });
});

describe("an SMS reply of one digit after the visit", () => {
  async function customerTicket(f: Fixture, phone: string) {
    const customer = await registerUser({ accountType: "customer" });
    const ticket = expectOk(
      await call("POST", `/v1/queues/${f.queueId}/join`, {
        token: customer.token,
        body: { phone },
        headers: { "CF-Connecting-IP": address() },
      }),
      201,
    );
    await settle(f.queueId);
    return ticket;
  }

  const feedbackRows = async (ticketId: string) =>
    (await env.DB.prepare("SELECT score, channel FROM ticket_feedback WHERE ticket_id = ?").bind(ticketId).all()).results;

  it('"5" after served is the verdict (once); before served it is a message to the staff', async () => {
    const f = await queueFixture("pro");
    const phone = randomMobile();
    const ticket = await customerTicket(f, phone);
    // While the ticket is live, a digit is a message like any other.
    expect(await customerText(phone, "5")).toMatch(/passed to the staff|transmis/);
    expect(await feedbackRows(ticket.id)).toEqual([]);

    await serveNext(f, ticket.id);
    await settle(f.queueId);
    expect(await customerText(phone, " 5 ")).toMatch(/\(5\/5\)/);
    expect(await feedbackRows(ticket.id)).toEqual([{ score: 5, channel: "sms" }]);
    expect(await customerText(phone, "2")).toMatch(/already|déjà/);
    expect(await feedbackRows(ticket.id)).toEqual([{ score: 5, channel: "sms" }]);
    const messages = expectOk(await call("GET", `/v1/tickets/${ticket.id}/messages`, { token: f.owner.token })) as any[];
    expect(messages.filter((m) => m.direction === "in").map((m) => m.body)).toEqual(["5", " 5 ", "2"]);
  });

  it("the review.request after the service is texted, and asks for the reply 1 to 5", async () => {
    const f = await queueFixture("pro");
    const events = capture();
    const phone = randomMobile();
    const ticket = await customerTicket(f, phone);
    await serveNext(f, ticket.id);
    const texts = await smsSent(events, f.queueId);
    events.restore();
    expect(texts.map((t) => t.title)).toContain("How did we do?");
    expect(texts.find((t) => t.title === "How did we do?")!.body).toMatch(/Reply with a score from 1 \(bad\) to 5 \(excellent\)/);
  });

  it("a text to B's own number never rates A's visit", async () => {
    const a = await queueFixture("pro");
    const b = await queueFixture("pro");
    const bNumber = `+3375${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
    await env.DB.prepare("INSERT INTO sms_senders (number, organization_id, created_at) VALUES (?, ?, ?)")
      .bind(bNumber, b.organizationId, Date.now())
      .run();
    const phone = randomMobile();
    const atA = await customerTicket(a, phone);
    await serveNext(a, atA.id);
    await settle(a.queueId);
    expect(await customerText(phone, "1", bNumber)).not.toMatch(/1\/5/);
    expect(await feedbackRows(atA.id)).toEqual([]);
  });
});

describe("GET /v1/analytics/feedback", () => {
  it("equals a generated history's ratings: totals, wait curve (edges included), hours, service and operator", async () => {
    const f = await widgetFixture();
    // [join (UTC, the queue has no location), wait in minutes, score]; null score: served, not rated.
    const history: [string, number, number | null][] = [
      ["2026-03-10T09:00:00.000Z", 2, 5],
      ["2026-03-10T09:10:00.000Z", 4, 4],
      ["2026-03-10T10:00:00.000Z", 12, 3],
      ["2026-03-10T10:30:00.000Z", 25, 2],
      ["2026-03-10T11:00:00.000Z", 50, 1],
      ["2026-03-10T11:55:00.000Z", 5, 4],
      ["2026-03-10T12:00:00.000Z", 130, 1],
      ["2026-03-10T16:00:00.000Z", 1, null],
      // Joined the day after: outside the range asked.
      ["2026-03-11T09:00:00.000Z", 3, 5],
    ];
    for (const [joinedAt, wait, score] of history) {
      testClock.set(joinedAt);
      const t = await join(f);
      testClock.set(Date.parse(joinedAt) + wait * MINUTE);
      await serveNext(f, t.id);
      testClock.advance(MINUTE);
      if (score !== null) expectOk(await give(t.id, t.ticketToken, { score }), 201);
    }
    testClock.set("2026-03-12T12:00:00.000Z");
    const res = expectOk(await call("GET", "/v1/analytics/feedback?from=2026-03-10&to=2026-03-10", { token: f.owner.token }));
    const figures = (count: number, mean: number | null, d: number[]) => ({
      count,
      mean,
      distribution: { "1": d[0], "2": d[1], "3": d[2], "4": d[3], "5": d[4] },
    });
    // Scores 5, 4, 3, 2, 1, 4, 1: 20 / 7 = 2.857…
    expect(res.totals).toEqual(figures(7, 2.86, [2, 1, 1, 2, 1]));
    expect(res.waitEdgesMinutes).toEqual([0, 5, 10, 15, 20, 30, 45, 60, 90, 120]);
    expect(res.byWait).toEqual([
      { fromMinutes: 0, toMinutes: 5, ...figures(2, 4.5, [0, 0, 0, 1, 1]) }, // 2 and 4 min
      { fromMinutes: 5, toMinutes: 10, ...figures(1, 4, [0, 0, 0, 1, 0]) }, // exactly 5 min: the edge opens the bucket
      { fromMinutes: 10, toMinutes: 15, ...figures(1, 3, [0, 0, 1, 0, 0]) },
      { fromMinutes: 15, toMinutes: 20, ...figures(0, null, [0, 0, 0, 0, 0]) },
      { fromMinutes: 20, toMinutes: 30, ...figures(1, 2, [0, 1, 0, 0, 0]) },
      { fromMinutes: 30, toMinutes: 45, ...figures(0, null, [0, 0, 0, 0, 0]) },
      { fromMinutes: 45, toMinutes: 60, ...figures(1, 1, [1, 0, 0, 0, 0]) },
      { fromMinutes: 60, toMinutes: 90, ...figures(0, null, [0, 0, 0, 0, 0]) },
      { fromMinutes: 90, toMinutes: 120, ...figures(0, null, [0, 0, 0, 0, 0]) },
      { fromMinutes: 120, toMinutes: null, ...figures(1, 1, [1, 0, 0, 0, 0]) },
    ]);
    expect(res.unmeasuredWaits).toBe(0);
    const hours = Object.fromEntries((res.hours as any[]).filter((h) => h.count > 0).map((h) => [h.hour, [h.count, h.mean]]));
    expect(hours).toEqual({ 9: [2, 4.5], 10: [2, 2.5], 11: [2, 2.5], 12: [1, 1] });
    expect(res.hours).toHaveLength(24);
    expect(res.services).toEqual([{ serviceId: f.serviceId, name: expect.any(String), ...figures(7, 2.86, [2, 1, 1, 2, 1]) }]);
    expect(res.operators).toEqual([{ operatorId: f.owner.id, name: expect.any(String), ...figures(7, 2.86, [2, 1, 1, 2, 1]) }]);
    expect(res.desks).toEqual([{ deskId: null, name: null, ...figures(7, 2.86, [2, 1, 1, 2, 1]) }]);

    // The same scope rules as the other analytics: starter is 402.
    await env.DB.prepare("UPDATE subscriptions SET plan = 'starter' WHERE organization_id = ?").bind(f.organizationId).run();
    expectError(await call("GET", "/v1/analytics/feedback", { token: f.owner.token }), 402, "PLAN_REQUIRED");
  });
});

describe("events", () => {
  const HOOK_HOST = "hooks.receiver.com";
  const HOOK_URL = `https://${HOOK_HOST}/verdicts`;

  it("a score of 2 raises ticket.feedback and ticket.feedback_low; the webhook body carries the verdict, signed", async () => {
    const f = await widgetFixture();
    const events = capture();
    const low = await join(f);
    const fine = await join(f);
    await serveNext(f, low.id);
    await serveNext(f, fine.id);
    expectOk(await give(low.id, low.ticketToken, { score: 2, comment: "Trop long." }), 201);
    expectOk(await give(fine.id, fine.ticketToken, { score: 4 }), 201);
    const verdicts = events.take((e) => e.type.startsWith("ticket.feedback"));
    events.restore();
    expect(verdicts.map((e) => [e.type, e.ticketId])).toEqual([
      ["ticket.feedback", low.id],
      ["ticket.feedback_low", low.id],
      ["ticket.feedback", fine.id],
    ]);

    // Fan out to a subscription of ticket.feedback_low only, and deliver to the receiver.
    const received: { headers: Record<string, string>; body: string }[] = [];
    fakeInternet(
      { [HOOK_HOST]: { A: ["93.184.216.34"] } },
      {
        [HOOK_URL]: async (req) => {
          received.push({ headers: Object.fromEntries(req.headers), body: await req.text() });
          return new Response("ok");
        },
      },
    );
    const hook = expectOk(
      await call("POST", `/v1/organizations/${f.organizationId}/webhooks`, {
        token: f.owner.token,
        body: { url: HOOK_URL, events: ["ticket.feedback_low"] },
      }),
      201,
    );
    const queued: WebhookDeliveryMessage[] = [];
    const testEnv = {
      ...env,
      WEBHOOKS: {
        send: async (m: WebhookDeliveryMessage) => void queued.push(m),
        sendBatch: async (ms: { body: WebhookDeliveryMessage }[]) => void queued.push(...ms.map((m) => m.body)),
      },
    } as unknown as typeof env;
    const run = async (queue: string, bodies: unknown[]) => {
      const batch = createMessageBatch(
        queue,
        bodies.map((body) => ({ id: unique("m"), timestamp: new Date(), attempts: 1, body })),
      );
      const ctx = createExecutionContext();
      await worker.queue!(batch as MessageBatch<any>, testEnv, ctx);
      return getQueueResult(batch, ctx);
    };
    await run("queue-service-events", verdicts as DomainEventMessage[]);
    expect(queued).toHaveLength(1);
    await run(WEBHOOKS_QUEUE, queued);
    expect(received).toHaveLength(1);
    const payload = new Webhook(hook.secret).verify(received[0]!.body, received[0]!.headers) as any;
    expect(payload).toMatchObject({
      type: "ticket.feedback_low",
      organizationId: f.organizationId,
      data: {
        queueId: f.queueId,
        ticketId: low.id,
        serviceId: f.serviceId,
        displayCode: low.displayCode,
        score: 2,
        comment: "Trop long.",
        channel: "widget",
        assignedToId: f.owner.id,
        lowScoreMax: 2,
      },
    });
  });
});
