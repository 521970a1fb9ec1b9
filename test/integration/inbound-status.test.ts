import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { twilioSignature } from "../../src/providers/twilio-inbound";
import { call, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { queueFixture, registerUser } from "../helpers/fixtures";
import { fakeTwilio, randomMobile as randomPhone, throughWorker, TWILIO as TWILIO_CONFIG } from "../helpers/twilio";

// Issue 30, delivery status: each SMS goes out with a StatusCallback (PUBLIC_BASE_URL set);
// Twilio's signed reports move the delivery forward (sent → delivered, or → failed), never back.

const TWILIO: Partial<Env> = { ...TWILIO_CONFIG, PUBLIC_BASE_URL: "https://api.test" };
const randomMobile = randomPhone;

afterEach(() => vi.restoreAllMocks());

const twilio = fakeTwilio;

async function worker$(request: Request) {
  const res = await throughWorker(request, TWILIO);
  return { status: res.status, body: res.body };
}

async function report(callbackUrl: string, status: string, signature?: string) {
  const form = new URLSearchParams({ MessageSid: "SM1", MessageStatus: status, AccountSid: "AC123" });
  return worker$(
    new Request(callbackUrl, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Twilio-Signature": signature ?? (await twilioSignature(TWILIO.TWILIO_AUTH_TOKEN!, callbackUrl, form)),
      },
      body: form.toString(),
    }),
  );
}

async function staffAnswer() {
  const f = await queueFixture("pro");
  const customer = await registerUser({ accountType: "customer" });
  const phone = randomMobile();
  const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: { phone } }), 201);
  await settle(f.queueId);
  const sent = twilio();
  const res = await worker$(
    new Request(`https://api.test/v1/tickets/${ticket.id}/messages`, {
      method: "POST",
      headers: { Authorization: `Bearer ${f.owner.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ text: "Guichet 4, c'est à vous dans 2 minutes." }),
    }),
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(sent).toHaveLength(1);
  const callbackUrl = sent[0]!.statusCallback!;
  expect(callbackUrl).toMatch(/^https:\/\/api\.test\/v1\/inbound\/sms\/twilio\/status\?delivery=/);
  const state = async () => {
    const conversation = expectOk(await call("GET", `/v1/tickets/${ticket.id}/messages`, { token: f.owner.token }));
    return conversation.at(-1).status;
  };
  return { f, callbackUrl, state, deliveryEventId: res.body.data.deliveryEventId as string };
}

describe("Twilio's delivery reports (issue 30)", () => {
  it("move a delivery sent → delivered, shown in the conversation and the delivery listing; a late 'sent' does not take it back", async () => {
    const { f, callbackUrl, state, deliveryEventId } = await staffAnswer();
    expect(await state()).toBe("sent");
    expect((await report(callbackUrl, "queued")).body.data).toEqual({ state: "queued", applied: false });
    expect((await report(callbackUrl, "delivered")).body.data).toEqual({ state: "delivered", applied: true });
    expect(await state()).toBe("delivered");
    expect((await report(callbackUrl, "sent")).body.data).toEqual({ state: "sent", applied: false });
    expect(await state()).toBe("delivered");
    const listed = expectOk(
      await call("GET", `/v1/organizations/${f.organizationId}/notification-deliveries?status=delivered`, { token: f.owner.token }),
    );
    expect(listed.map((d: any) => d.eventId)).toEqual([deliveryEventId]);
  });

  it("an undelivered report marks it failed; a forged report is refused and changes nothing", async () => {
    const { callbackUrl, state } = await staffAnswer();
    const forged = await report(callbackUrl, "failed", "Zm9yZ2VkIHNpZ25hdHVyZQ==");
    expect(forged.status).toBe(400);
    expect(forged.body.error).toMatchObject({ code: "VALIDATION_ERROR", details: { field: "X-Twilio-Signature" } });
    expect(await state()).toBe("sent");
    // The same report signed for another delivery's URL does not verify here.
    const other = callbackUrl.replace(/delivery=[^&]+/, "delivery=someone-else");
    const form = new URLSearchParams({ MessageSid: "SM1", MessageStatus: "failed", AccountSid: "AC123" });
    expect((await report(callbackUrl, "failed", await twilioSignature(TWILIO.TWILIO_AUTH_TOKEN!, other, form))).status).toBe(400);
    expect(await state()).toBe("sent");

    expect((await report(callbackUrl, "undelivered")).body.data).toEqual({ state: "failed", applied: true });
    expect(await state()).toBe("failed");
    const unknown = await report(callbackUrl, "teleported");
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.field).toBe("MessageStatus");
  });
});
