import worker from "../../src/index";
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { twilioSignature } from "../../src/providers/twilio-inbound";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { addMember, queueFixture, registerUser, walkIn } from "../helpers/fixtures";

// Issue 30, staff answers: POST /v1/tickets/{ticketId}/messages texts the customer through the
// SMS provider (a fake Twilio behind a fetch spy); GET is the conversation both ways.

const TWILIO: Partial<Env> = {
  SMS_PROVIDER: "twilio",
  TWILIO_ACCOUNT_SID: "AC123",
  TWILIO_AUTH_TOKEN: "twilio-auth-token-for-tests",
  TWILIO_FROM: "+33700000000",
  SMS_BASE_URL: "https://twilio.test",
};
const URL_SIGNED = "https://api.test/v1/inbound/sms/twilio";
const randomMobile = () => `+3361${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;

afterEach(() => vi.restoreAllMocks());

/** The fake Twilio: every SMS it accepted, with its recipient. */
function twilio(): { to: string; body: string }[] {
  const sent: { to: string; body: string }[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    if (!url.startsWith("https://twilio.test/")) throw new TypeError(`unexpected fetch ${url}`);
    const form = new URLSearchParams(String(init?.body));
    sent.push({ to: form.get("To")!, body: form.get("Body")! });
    return Response.json({ sid: `SM${sent.length}`, status: "queued" }, { status: 201 });
  });
  return sent;
}

/** A request through the Worker with the Twilio configuration, waited on to the end. */
async function withTwilio(method: string, path: string, token: string, body?: unknown) {
  const ctx = createExecutionContext();
  const res = await worker.fetch!(
    new Request(`https://api.test${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    }) as any,
    { ...env, ...TWILIO } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

async function customerText(from: string, body: string) {
  const form = new URLSearchParams({ MessageSid: `SM${unique()}`, From: from, To: "+33700000000", Body: body });
  const ctx = createExecutionContext();
  const res = await worker.fetch!(
    new Request(URL_SIGNED, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Twilio-Signature": await twilioSignature(TWILIO.TWILIO_AUTH_TOKEN!, URL_SIGNED, form),
      },
      body: form.toString(),
    }) as any,
    { ...env, ...TWILIO } as Env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  expect(res.status).toBe(200);
}

async function joinedWithPhone(queueId: string, phone: string) {
  const customer = await registerUser({ accountType: "customer" });
  const ticket = expectOk(await call("POST", `/v1/queues/${queueId}/join`, { token: customer.token, body: { phone } }), 201);
  await settle(queueId);
  return ticket;
}

describe("staff answers in a ticket's conversation (issue 30)", () => {
  it("an operator's answer reaches the customer's phone through Twilio and the conversation shows both ways", async () => {
    const f = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    const phone = randomMobile();
    const ticket = await joinedWithPhone(f.queueId, phone);
    await customerText(phone, "Je suis en retard de 10 minutes, est-ce grave ?");

    const sent = twilio();
    const res = await withTwilio("POST", `/v1/tickets/${ticket.id}/messages`, operator.token, {
      text: "Pas de souci, nous gardons votre place.",
    });
    const answer = expectOk({ ...res }, 201);
    expect(sent).toEqual([{ to: phone, body: "Pas de souci, nous gardons votre place." }]);
    expect(answer).toMatchObject({ direction: "out", channel: "sms", authorId: operator.id, status: "sent" });

    const conversation = expectOk(await call("GET", `/v1/tickets/${ticket.id}/messages`, { token: operator.token }));
    expect(conversation.map((m: any) => [m.direction, m.status, m.authorId])).toEqual([
      ["in", "received", null],
      ["out", "sent", null],
      ["out", "sent", operator.id],
    ]);
    expect(conversation[2].body).toBe("Pas de souci, nous gardons votre place.");
    // The answer is a delivery like any other SMS, listed for support.
    const deliveries = expectOk(
      await call("GET", `/v1/organizations/${f.organizationId}/notification-deliveries`, { token: f.owner.token }),
    );
    expect(deliveries.find((d: any) => d.eventId === answer.deliveryEventId)).toMatchObject({ type: "sms.ticket_reply", status: "sent" });
  });

  it("refuses clearly: no phone on the ticket (409 no_phone), empty or control-character text (400), another organization (404), the starter plan (402)", async () => {
    const f = await queueFixture("pro");
    const walkInTicket = await walkIn(f.owner, f.queueId);
    await settle(f.queueId);
    const noPhone = await call("POST", `/v1/tickets/${walkInTicket.id}/messages`, { token: f.owner.token, body: { text: "Bonjour" } });
    expectError(noPhone, 409, "CONFLICT");
    expect(noPhone.body.error.details.reason).toBe("no_phone");

    const ticket = await joinedWithPhone(f.queueId, randomMobile());
    expectError(
      await call("POST", `/v1/tickets/${ticket.id}/messages`, { token: f.owner.token, body: { text: "  " } }),
      400,
      "VALIDATION_ERROR",
      "text",
    );
    expectError(
      await call("POST", `/v1/tickets/${ticket.id}/messages`, { token: f.owner.token, body: { text: "Bonjour\u202Eevil" } }),
      400,
      "VALIDATION_ERROR",
      "text",
    );
    expectError(
      await call("POST", `/v1/tickets/${ticket.id}/messages`, { token: f.owner.token, body: { text: "x", extra: 1 } }),
      400,
      "VALIDATION_ERROR",
    );

    const stranger = await queueFixture("pro");
    expectError(
      await call("POST", `/v1/tickets/${ticket.id}/messages`, { token: stranger.owner.token, body: { text: "Bonjour" } }),
      404,
      "NOT_FOUND",
    );
    expectError(await call("GET", `/v1/tickets/${ticket.id}/messages`, { token: stranger.owner.token }), 404, "NOT_FOUND");

    const starter = await queueFixture("starter");
    const starterTicket = await joinedWithPhone(starter.queueId, randomMobile());
    expectError(
      await call("POST", `/v1/tickets/${starterTicket.id}/messages`, { token: starter.owner.token, body: { text: "Bonjour" } }),
      402,
      "PLAN_REQUIRED",
    );
  });
});
