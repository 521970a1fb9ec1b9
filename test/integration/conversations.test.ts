import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { addMember, queueFixture, registerUser, walkIn } from "../helpers/fixtures";
import { customerText as textUs, fakeTwilio, randomMobile, throughWorker } from "../helpers/twilio";

// Issue 30, staff answers: POST /v1/tickets/{ticketId}/messages texts the customer through the
// SMS provider (a fake Twilio behind a fetch spy); GET is the conversation both ways.

afterEach(() => vi.restoreAllMocks());

const twilio = fakeTwilio;

/** A request through the Worker with the Twilio configuration, waited on to the end. */
async function withTwilio(method: string, path: string, token: string, body?: unknown) {
  const res = await throughWorker(
    new Request(`https://api.test${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    }),
  );
  return { status: res.status, headers: res.headers, body: res.body };
}

async function customerText(from: string, body: string) {
  await textUs(from, body);
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
    expect(sent.map(({ to, body }) => ({ to, body }))).toEqual([{ to: phone, body: "Pas de souci, nous gardons votre place." }]);
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
