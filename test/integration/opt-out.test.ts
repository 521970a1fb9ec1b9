import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { queueFixture, registerUser } from "../helpers/fixtures";
import { AUTH_TOKEN, twilioPost } from "../helpers/twilio";
import { capture, deliveriesOf, eventsOf, feedEvents, type Captured } from "../helpers/notifications";

// Issue 30, STOP and START: a number that sent STOP to an organization gets no SMS and no push
// about its tickets there (nor the business's own SMS, nor a staff answer) until it sends START.

const randomMobile = () => `+3362${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;

let captured: Captured | undefined;
afterEach(() => {
  captured?.restore();
  captured = undefined;
  vi.restoreAllMocks();
});

/** The customer's text, Twilio-signed; answers the TwiML. */
async function text(from: string, body: string): Promise<string> {
  const res = await twilioPost({ From: from, Body: body }, { over: { TWILIO_AUTH_TOKEN: AUTH_TOKEN } });
  expect(res.status).toBe(200);
  return res.text;
}

const channelsOf = (rows: any[]) => rows.map((r) => r.channel).sort();

describe("STOP / ARRET and START (issue 30)", () => {
  it("STOP silences SMS and push about the ticket; START brings them back", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const phone = randomMobile();
    const customer = await registerUser({ accountType: "customer" });
    expectOk(
      await call("POST", "/v1/push/register", { token: customer.token, body: { platform: "android", fcmToken: unique("fcm") } }),
      201,
    );
    const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: { phone } }), 201);
    const joined = await eventsOf(captured, f.queueId);
    await feedEvents(joined);
    // The join's message went out on every channel (so later SMS to this number are allowed).
    expect(channelsOf(await deliveriesOf(joined.map((e) => e.id)))).toEqual(["in_app", "push", "sms"]);

    expect(await text(phone, "Arrêt")).toMatch(/ne recevrez plus/);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    const called = await eventsOf(captured, f.queueId);
    expect(called.map((e) => e.type)).toContain("ticket.called");
    await feedEvents(called);
    const silenced = (await deliveriesOf(called.map((e) => e.id))).filter(
      (r) => r.event_id === called.find((e) => e.type === "ticket.called")!.id,
    );
    expect(channelsOf(silenced)).toEqual(["in_app"]);

    // Neither the business's own SMS nor a staff answer reaches the number.
    expectError(
      await call("POST", "/v1/notifications/sms", {
        token: f.owner.token,
        body: { phone, message: "Votre dossier est prêt", purpose: "announcement" },
      }),
      409,
      "CONFLICT",
      "phone",
    );
    const reply = await call("POST", `/v1/tickets/${ticket.id}/messages`, { token: f.owner.token, body: { text: "Guichet 2" } });
    expectError(reply, 409, "CONFLICT");
    expect(reply.body.error.details.reason).toBe("opted_out");

    expect(await text(phone, "start")).toMatch(/Messages are back on/);
    expectOk(await call("POST", `/v1/tickets/${ticket.id}/recall`, { token: f.owner.token }));
    const recalled = await eventsOf(captured, f.queueId);
    await feedEvents(recalled);
    const back = (await deliveriesOf(recalled.map((e) => e.id))).filter(
      (r) => r.event_id === recalled.find((e) => e.type === "ticket.recalled")!.id,
    );
    expect(channelsOf(back)).toEqual(["in_app", "push", "sms"]);
  });

  it("is kept per organization: a STOP about one business's ticket leaves another's messages on", async () => {
    const a = await queueFixture("pro");
    const b = await queueFixture("pro");
    const phone = randomMobile();
    const customer = await registerUser({ accountType: "customer" });
    expectOk(await call("POST", `/v1/queues/${a.queueId}/join`, { token: customer.token, body: { phone } }), 201);
    await settle(a.queueId);
    await text(phone, "STOP");
    const rows = await env.DB.prepare("SELECT organization_id, channel FROM opt_outs WHERE phone = ?").bind(phone).all<any>();
    expect(rows.results).toEqual([{ organization_id: a.organizationId, channel: "sms" }]);
    expectOk(
      await call("POST", "/v1/notifications/sms", { token: b.owner.token, body: { phone, message: "Bonjour", purpose: "announcement" } }),
      201,
    );
  });
});
