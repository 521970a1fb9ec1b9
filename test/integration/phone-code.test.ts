import worker from "../../src/index";
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { call, expectError, expectOk, type ApiResponse } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { addMember, addQueue, createApiKey, queueFixture, registerUser, type Fixture } from "../helpers/fixtures";
import { capture, eventsOf, feedEvents, type Captured } from "../helpers/notifications";
import { fakeTwilio, TWILIO } from "../helpers/twilio";

// Issue 26, the part left unbuilt: where the organization requires it, a visitor's number is
// proven by a one-time code before it is texted anything else. Every SMS goes to a fake Twilio:
// the code is read from the body the provider received, as the visitor would read it.

let captured: Captured | undefined;
afterEach(() => {
  captured?.restore();
  captured = undefined;
  vi.restoreAllMocks();
  testClock.reset();
});

/** The fake Twilio (test/helpers/twilio.ts): every SMS it accepted, with its recipient. */
const twilio = fakeTwilio;

/** A request answered by the Worker with the fake Twilio configured (the code is texted during the request). */
async function viaTwilio(
  method: string,
  path: string,
  opts: { body?: unknown; token?: string; apiKey?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.apiKey) headers["X-API-Key"] = opts.apiKey;
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const request = new Request(`https://api.test${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const ctx = createExecutionContext();
  const res = await worker.fetch!(request as any, { ...env, ...TWILIO } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, headers: res.headers, body: await res.json() };
}

let addressNo = 0;
/** Each join from its own address: the per-address cap is not what these tests are about. */
const nextAddress = () => `198.51.100.${++addressNo}`;

function widgetJoin(f: Fixture, key: string, phone: string) {
  return viaTwilio("POST", `/v1/widget/queue/${f.queueId}/join`, {
    apiKey: key,
    body: { phone },
    headers: { "CF-Connecting-IP": nextAddress() },
  });
}

const verify = (ticketId: string, code: string, auth: { ticketToken?: string; token?: string }) =>
  viaTwilio("POST", `/v1/tickets/${ticketId}/phone-verification`, {
    body: { code },
    token: auth.token,
    headers: auth.ticketToken ? { "X-Ticket-Token": auth.ticketToken } : {},
  });

const resend = (ticketId: string, auth: { ticketToken?: string; token?: string }) =>
  viaTwilio("POST", `/v1/tickets/${ticketId}/phone-verification/resend`, {
    token: auth.token,
    headers: auth.ticketToken ? { "X-Ticket-Token": auth.ticketToken } : {},
  });

async function policy(f: Fixture, body: Record<string, unknown>) {
  return expectOk(await call("PATCH", `/v1/organizations/${f.organizationId}/sms-policy`, { token: f.owner.token, body }));
}

/** The 6-digit code of a code message. */
function codeIn(body: string): string {
  const m = /(\d{6})/.exec(body);
  expect(m, body).not.toBeNull();
  return m![1]!;
}

/** A 6-digit code that is not `code`. */
const wrong = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

/** The delivery log's SMS rows of the organization, oldest first. */
async function smsLog(f: Fixture): Promise<any[]> {
  const rows = expectOk(
    await call("GET", `/v1/organizations/${f.organizationId}/notification-deliveries?limit=100`, { token: f.owner.token }),
  ) as any[];
  return rows.filter((r) => r.channel === "sms").reverse();
}

async function callNext(f: Fixture) {
  const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
  await feedEvents(await eventsOf(captured!, f.queueId), TWILIO);
  return ticket;
}

describe("requirePhoneCode on the SMS policy", () => {
  it("is false by default, set by PATCH, and null puts it back to the default", async () => {
    const f = await queueFixture("pro");
    const path = `/v1/organizations/${f.organizationId}/sms-policy`;
    expect(expectOk(await call("GET", path, { token: f.owner.token })).requirePhoneCode).toBe(false);
    expect((await policy(f, { requirePhoneCode: true })).requirePhoneCode).toBe(true);
    expect(expectOk(await call("GET", path, { token: f.owner.token })).requirePhoneCode).toBe(true);
    expect((await policy(f, { requirePhoneCode: null })).requirePhoneCode).toBe(false);
    expectError(
      await call("PATCH", path, { token: f.owner.token, body: { requirePhoneCode: "yes" } }),
      400,
      "VALIDATION_ERROR",
      "requirePhoneCode",
    );
  });
});

describe("A one-time code proves a visitor's number (issue 26)", () => {
  it("the join texts only a code; an unverified ticket's call is dropped; the right code opens the later messages", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    await policy(f, { requirePhoneCode: true });
    const sent = twilio();

    const first = expectOk(await widgetJoin(f, key, "+33611000001"), 201);
    expect(first.phoneVerification.status).toBe("pending");
    expect(Date.parse(first.phoneVerification.expiresAt)).toBeGreaterThan(Date.now() + 9 * 60_000);
    const second = expectOk(await widgetJoin(f, key, "+33611000002"), 201);
    // The join's own events ("ticket.created") go through the notifier: no SMS of theirs.
    await feedEvents(await eventsOf(captured, f.queueId), TWILIO);

    // One SMS per number, each a code in the organization's language (English by default).
    expect(sent.map((s) => s.to)).toEqual(["+33611000001", "+33611000002"]);
    expect(sent[0]!.body).toMatch(/^Your code: \d{6}\b/);
    expect(sent[0]!.body).not.toContain("You are in line");
    const code = codeIn(sent[0]!.body);
    const created = (await smsLog(f)).filter((r) => r.type === "ticket.created");
    expect(created).toHaveLength(2);
    for (const r of created) {
      expect(r).toMatchObject({ status: "failed", provider: "policy" });
      expect(r.providerResponse).toBe("SMS_REFUSED: the number was not verified");
    }

    // Only the code's MAC is kept; the delivery log keeps the message without the code.
    const stored = await env.DB.prepare("SELECT code_hash FROM phone_verifications WHERE ticket_id = ?")
      .bind(first.id)
      .first<{ code_hash: string }>();
    expect(stored!.code_hash).toMatch(/^[0-9a-f]{32}$/);
    const logged = (await smsLog(f)).filter((r) => r.type === "phone.code");
    expect(logged.map((r) => r.status)).toEqual(["sent", "sent"]);
    const payloads = await env.DB.prepare("SELECT payload FROM notification_deliveries WHERE organization_id = ? AND type = 'phone.code'")
      .bind(f.organizationId)
      .all<{ payload: string }>();
    expect(payloads.results).toHaveLength(2);
    for (const p of payloads.results) expect(p.payload).not.toContain(code);

    // Its status page reads where the number stands.
    const before = await viaTwilio("GET", `/v1/tickets/${first.id}/phone-verification`, {
      headers: { "X-Ticket-Token": first.ticketToken },
    });
    expect(expectOk(before)).toEqual({ ticketId: first.id, ...first.phoneVerification });

    // A wrong code: 400 naming `code`, 4 attempts left.
    const bad = await verify(first.id, wrong(code), { ticketToken: first.ticketToken });
    expectError(bad, 400, "VALIDATION_ERROR", "code");
    expect(bad.body.error.details.attemptsLeft).toBe(4);
    // The right one: verified; again: still verified.
    const good = expectOk(await verify(first.id, code, { ticketToken: first.ticketToken }));
    expect(good).toMatchObject({ ticketId: first.id, status: "verified" });
    expect(expectOk(await verify(first.id, code, { ticketToken: first.ticketToken })).status).toBe("verified");
    const after = await viaTwilio("GET", `/v1/tickets/${first.id}/phone-verification`, {
      headers: { "X-Ticket-Token": first.ticketToken },
    });
    expect(expectOk(after)).toEqual({ ticketId: first.id, status: "verified", expiresAt: null });

    // The verified ticket is called: its "called" SMS goes out.
    await callNext(f);
    expect(sent).toHaveLength(3);
    expect(sent[2]!.to).toBe("+33611000001");
    expect(sent[2]!.body).toContain("It's your turn");

    // The unverified one is called: nothing is texted, the delivery log says why.
    await callNext(f);
    expect(sent).toHaveLength(3);
    const called = (await smsLog(f)).filter((r) => r.type === "ticket.called");
    expect(called.map((r) => r.status)).toEqual(["sent", "failed"]);
    expect(called[1]).toMatchObject({ provider: "policy", providerResponse: "SMS_REFUSED: the number was not verified" });
    expect(second.phoneVerification.status).toBe("pending");
  });

  it("five wrong codes kill the code; a new code must be asked for, and it works", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    await policy(f, { requirePhoneCode: true });
    const sent = twilio();
    const t = expectOk(await widgetJoin(f, key, "+33611000003"), 201);
    const code = codeIn(sent[0]!.body);
    const left: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await verify(t.id, wrong(code), { ticketToken: t.ticketToken });
      expectError(res, 400, "VALIDATION_ERROR", "code");
      left.push(res.body.error.details.attemptsLeft);
    }
    expect(left).toEqual([4, 3, 2, 1, 0]);
    // Dead: even the right code is refused, with what to do.
    const dead = await verify(t.id, code, { ticketToken: t.ticketToken });
    expectError(dead, 409, "INVALID_STATE");
    expect(dead.body.error.details).toMatchObject({ status: "expired", reason: "too_many_attempts" });
    expect(dead.body.error.message).toContain("resend");

    const again = expectOk(await resend(t.id, { ticketToken: t.ticketToken }));
    expect(again.status).toBe("pending");
    expect(sent).toHaveLength(2);
    const fresh = codeIn(sent[1]!.body);
    expect(expectOk(await verify(t.id, fresh, { ticketToken: t.ticketToken })).status).toBe("verified");
  });

  it("resend sends a new code and counts against the per-ticket cap (429 past it)", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    await policy(f, { requirePhoneCode: true, perTicket: 2 });
    const sent = twilio();
    const t = expectOk(await widgetJoin(f, key, "+33611000004"), 201);
    expect(sent).toHaveLength(1);
    const old = codeIn(sent[0]!.body);
    expect(expectOk(await resend(t.id, { ticketToken: t.ticketToken })).status).toBe("pending");
    expect(sent).toHaveLength(2);
    const fresh = codeIn(sent[1]!.body);
    const capped = await resend(t.id, { ticketToken: t.ticketToken });
    expectError(capped, 429, "API_RATE_LIMIT_EXCEEDED");
    expect(capped.body.error.details.reason).toContain("this ticket had its 2 SMS");
    expect(sent).toHaveLength(2);
    // The refused resend changed nothing: the last code sent still works (the first one no longer).
    if (old !== fresh) expectError(await verify(t.id, old, { ticketToken: t.ticketToken }), 400, "VALIDATION_ERROR", "code");
    expect(expectOk(await verify(t.id, fresh, { ticketToken: t.ticketToken })).status).toBe("verified");
  });

  it("a code older than 10 minutes is refused: ask for a new one", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    await policy(f, { requirePhoneCode: true });
    const sent = twilio();
    testClock.set("2026-11-26T09:00:00.000Z");
    const t = expectOk(await widgetJoin(f, key, "+33611000005"), 201);
    expect(t.phoneVerification.expiresAt).toBe("2026-11-26T09:10:00.000Z");
    testClock.set("2026-11-26T09:10:00.001Z");
    const late = await verify(t.id, codeIn(sent[0]!.body), { ticketToken: t.ticketToken });
    expectError(late, 409, "INVALID_STATE");
    expect(late.body.error.details).toMatchObject({ status: "expired", reason: "expired" });
    const read = await viaTwilio("GET", `/v1/tickets/${t.id}/phone-verification`, { headers: { "X-Ticket-Token": t.ticketToken } });
    expect(expectOk(read)).toEqual({ ticketId: t.id, status: "expired", expiresAt: null });
  });

  it("another visitor's token cannot verify this ticket (404); its owner's session and staff with QUEUE_OPERATE can", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    await policy(f, { requirePhoneCode: true });
    const sent = twilio();
    const mine = expectOk(await widgetJoin(f, key, "+33611000006"), 201);
    const other = expectOk(await widgetJoin(f, key, "+33611000007"), 201);
    const code = codeIn(sent[0]!.body);
    expectError(await verify(mine.id, code, { ticketToken: other.ticketToken }), 404, "NOT_FOUND");
    expectError(await verify(mine.id, code, {}), 401, "AUTHENTICATION_ERROR");
    expectError(await resend(mine.id, { ticketToken: other.ticketToken }), 404, "NOT_FOUND");
    expectError(
      await viaTwilio("GET", `/v1/tickets/${mine.id}/phone-verification`, { headers: { "X-Ticket-Token": other.ticketToken } }),
      404,
      "NOT_FOUND",
    );
    // A stranger's session: the ticket does not exist for them.
    const stranger = await registerUser({ accountType: "customer" });
    expectError(await verify(mine.id, code, { token: stranger.token }), 404, "NOT_FOUND");
    // An operator of the organization verifies for the visitor at the desk.
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expect(expectOk(await verify(mine.id, code, { token: operator.token })).status).toBe("verified");

    // A customer's own join (a session): the code goes out in the ticket's language, the owner verifies.
    const customer = await registerUser({ accountType: "customer", language: "fr" });
    const joined = await viaTwilio("POST", `/v1/queues/${f.queueId}/join`, {
      token: customer.token,
      body: { phone: "+33611000008" },
      headers: { "CF-Connecting-IP": nextAddress() },
    });
    const ticket = expectOk(joined, 201);
    expect(ticket.phoneVerification.status).toBe("pending");
    expect(sent.at(-1)!.to).toBe("+33611000008");
    expect(sent.at(-1)!.body).toMatch(/^Votre code : \d{6}\b/);
    const theirs = codeIn(sent.at(-1)!.body);
    expectError(await verify(ticket.id, theirs, { token: stranger.token }), 404, "NOT_FOUND");
    expect(expectOk(await verify(ticket.id, theirs, { token: customer.token })).status).toBe("verified");
  });

  it("a ticket moved to another queue keeps its number's standing: unverified stays silent, verified is texted", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const other = await addQueue(f);
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    await policy(f, { requirePhoneCode: true });
    const sent = twilio();
    const unproven = expectOk(await widgetJoin(f, key, "+33611000010"), 201);
    const proven = expectOk(await widgetJoin(f, key, "+33611000011"), 201);
    const code = codeIn(sent.find((s) => s.to === "+33611000011")!.body);
    expect(expectOk(await verify(proven.id, code, { ticketToken: proven.ticketToken })).status).toBe("verified");
    for (const t of [unproven, proven]) {
      expectOk(await call("POST", `/v1/tickets/${t.id}/transfer-queue`, { token: f.owner.token, body: { targetQueueId: other } }));
    }
    await feedEvents(await eventsOf(captured, f.queueId), TWILIO);
    await feedEvents(await eventsOf(captured, other), TWILIO);
    const before = sent.length;
    // The moved tickets are new tickets of the other queue: the first called is the unproven number's.
    for (let i = 0; i < 2; i++) {
      expectOk(await call("POST", `/v1/queues/${other}/call-next`, { token: f.owner.token }));
      await feedEvents(await eventsOf(captured, other), TWILIO);
    }
    const called = sent.slice(before).filter((s) => s.body.includes("It's your turn"));
    expect(called.map((s) => s.to)).toEqual(["+33611000011"]);
  });

  it("the setting off keeps today's behaviour: no code, the join's message goes out", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const sent = twilio();
    const t = expectOk(await widgetJoin(f, key, "+33611000009"), 201);
    expect(t.phoneVerification).toEqual({ status: "none", expiresAt: null });
    expect(sent).toHaveLength(0);
    await feedEvents(await eventsOf(captured, f.queueId), TWILIO);
    // (Rooms of earlier tests may still drain their events into the capture: only this number counts.)
    const mine = sent.filter((s) => s.to === "+33611000009");
    expect(mine).toHaveLength(1);
    expect(mine[0]!.body).toContain("You are in line for Main line");
    expectError(await verify(t.id, "123456", { ticketToken: t.ticketToken }), 409, "INVALID_STATE");
    // A join without a phone has nothing to verify either.
    const bare = expectOk(
      await viaTwilio("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: key, headers: { "CF-Connecting-IP": nextAddress() } }),
      201,
    );
    expect(bare.phoneVerification).toEqual({ status: "none", expiresAt: null });
  });

  it("a clerk's walk-in with a phone gets no code: staff vouch for the person, the join's and the call's SMS go out", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    await policy(f, { requirePhoneCode: true });
    const clerk = await addMember(f.owner, f.organizationId, "operator");
    const sent = twilio();
    for (const verb of ["operator-join", "vip-ticket"]) {
      const phone = verb === "operator-join" ? "+33611000021" : "+33611000022";
      const t = expectOk(
        await viaTwilio("POST", `/v1/queues/${f.queueId}/${verb}`, {
          token: clerk.token,
          body: { phone, visitorName: "Awa" },
          headers: { "CF-Connecting-IP": nextAddress() },
        }),
        201,
      );
      expect(sent.filter((s) => s.to === phone)).toEqual([]);
      await feedEvents(await eventsOf(captured, f.queueId), TWILIO);
      const mine = sent.filter((s) => s.to === phone);
      expect(mine.map((s) => s.body).join("\n")).not.toMatch(/Your code/);
      expect(mine).toHaveLength(1);
      expect(mine[0]!.body).toContain("You are in line");
      // No code to give back on this ticket: it is already vouched for.
      expect(expectOk(await viaTwilio("GET", `/v1/tickets/${t.id}/phone-verification`, { token: clerk.token })).status).toBe("verified");
    }
    // Called: the VIP first; its "your turn" SMS goes out.
    await callNext(f);
    expect(sent.filter((s) => s.to === "+33611000022").map((s) => s.body)[1]).toContain("It's your turn");
  });

  it("a widget on any page may call the verification routes (CORS, as the widget routes)", async () => {
    const res = await call("OPTIONS", "/v1/tickets/tkt_0123456789abcdefghjk/phone-verification", {
      headers: {
        Origin: "https://shop.example.com",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "X-Ticket-Token",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(res.headers.get("Access-Control-Allow-Headers")).toContain("X-Ticket-Token");
    const resend = await call("OPTIONS", "/v1/tickets/tkt_0123456789abcdefghjk/phone-verification/resend", {
      headers: { Origin: "https://shop.example.com", "Access-Control-Request-Method": "POST" },
    });
    expect(resend.status).toBe(204);
  });
});
