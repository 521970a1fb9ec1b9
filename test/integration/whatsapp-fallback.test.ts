import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { call, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { queueFixture, registerUser, type Fixture } from "../helpers/fixtures";
import { capture, deliveriesOf, eventsOf, feedEvents, smsUsed, type Captured } from "../helpers/notifications";
import { randomMobile, TWILIO, TWILIO_FROM } from "../helpers/twilio";

// Issue 45, the SMS fallback (docs/notifications.md, "Falling back to SMS"): a customer who chose
// WhatsApp gets a message that WhatsApp could not carry (Meta's 4xx or 5xx, or free text outside
// the 24-hour window) by SMS instead, once, under the same event; the delivery log shows both.
// Meta's Cloud API and Twilio's are fakes behind the fetch spy, each request's body kept.

afterEach(() => vi.restoreAllMocks());

const META = "https://graph.test";
const CONFIG: Partial<Env> = { ...TWILIO, WHATSAPP_TOKEN: "EAAG-test-token", WHATSAPP_API_BASE_URL: META };

interface Providers {
  meta: any[];
  sms: { to: string; from: string | null; body: string }[];
}

/** Meta answers with `metaAnswer` (status and JSON body); Twilio accepts every SMS. */
function fakeProviders(metaAnswer: { status: number; body: unknown }): Providers {
  const out: Providers = { meta: [], sms: [] };
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (request.url.startsWith(`${META}/`)) {
      out.meta.push(await request.json());
      return Response.json(metaAnswer.body, { status: metaAnswer.status });
    }
    if (request.url.startsWith("https://twilio.test/")) {
      const form = new URLSearchParams(await request.text());
      out.sms.push({ to: form.get("To")!, from: form.get("From"), body: form.get("Body")! });
      return Response.json({ sid: `SM${out.sms.length}`, status: "queued" }, { status: 201 });
    }
    throw new TypeError(`unexpected fetch ${request.url}`);
  });
  return out;
}

const META_REFUSAL = {
  status: 400,
  body: { error: { message: "(#131026) Message undeliverable", type: "OAuthException", code: 131026, fbtrace_id: "A1b2" } },
};
const META_DOWN = { status: 503, body: { error: { message: "Service temporarily unavailable", code: 2 } } };

async function connect(f: Fixture, templates: Record<string, string>): Promise<string> {
  const phoneNumberId = String(100_000_000_000 + Math.floor(Math.random() * 899_999_999_999));
  expectOk(
    await call("PUT", `/v1/organizations/${f.organizationId}/whatsapp`, {
      token: f.owner.token,
      body: { phoneNumberId, phoneNumber: "+2250700000001", templates },
    }),
  );
  return phoneNumberId;
}

async function joinByWhatsapp(f: Fixture, phone: string) {
  const customer = await registerUser({ accountType: "customer", language: "fr" });
  const ticket = expectOk(
    await call("POST", `/v1/queues/${f.queueId}/join`, {
      token: customer.token,
      body: { phone, notifyBy: "whatsapp", language: "fr" },
      headers: { "CF-Connecting-IP": `198.51.100.${Math.floor(Math.random() * 250) + 1}` },
    }),
    201,
  );
  await settle(f.queueId);
  return ticket;
}

/** The queue's events since the last look, fed to the consumer with both providers configured. */
async function notify(captured: Captured, f: Fixture) {
  const events = await eventsOf(captured, f.queueId);
  await feedEvents(events, CONFIG);
  return { events, rows: (await deliveriesOf(events.map((e) => e.id))).filter((d) => d.channel !== "in_app") };
}

const log = async (f: Fixture) =>
  expectOk(await call("GET", `/v1/organizations/${f.organizationId}/notification-deliveries`, { token: f.owner.token })) as any[];

describe("WhatsApp → SMS fallback", () => {
  it("Meta refuses the template (4xx): the same message goes once by SMS, recorded beside the failed WhatsApp delivery", async () => {
    const captured = capture();
    const f = await queueFixture("pro");
    await connect(f, { joined: "ticket_joined" });
    const phone = randomMobile();
    const providers = fakeProviders(META_REFUSAL);
    const ticket = await joinByWhatsapp(f, phone);
    const { events, rows } = await notify(captured, f);

    expect(providers.meta.length).toBe(1);
    expect(providers.meta[0]).toMatchObject({ to: phone.slice(1), type: "template", template: { name: "ticket_joined" } });
    const whatsapp = rows.find((r) => r.channel === "whatsapp")!;
    const payload = JSON.parse(whatsapp.payload);
    // The SMS is the text the WhatsApp message carried, to the same number, from the SMS sender.
    expect(providers.sms).toEqual([{ to: phone, from: TWILIO_FROM, body: `${payload.title}: ${payload.body}` }]);
    expect(`${payload.title}: ${payload.body}`).toContain(ticket.displayCode);
    expect(rows.map((r) => [r.channel, r.status, r.provider, r.event_id])).toEqual([
      ["whatsapp", "failed", "whatsapp", events[0]!.id],
      ["sms", "sent", "twilio", events[0]!.id],
    ]);
    expect(whatsapp.provider_response).toMatch(/^400 .*131026.* → sent by SMS instead$/);
    // One message, one unit of the month's allowance.
    expect(await smsUsed(f.organizationId)).toBe(1);
    // The delivery log names the fallback.
    const listed = (await log(f)).filter((d) => d.eventId === events[0]!.id && d.channel !== "in_app");
    expect(listed.map((d) => [d.channel, d.status, d.fallbackFrom])).toEqual([
      ["sms", "sent", "whatsapp"],
      ["whatsapp", "failed", null],
    ]);

    // The event delivered again (the queue is at least once): nothing is sent again.
    await feedEvents(events, CONFIG);
    expect(providers.meta.length).toBe(1);
    expect(providers.sms.length).toBe(1);
    captured.restore();
  });

  it("Meta is down (5xx): no WhatsApp retry, the SMS goes at once", async () => {
    const captured = capture();
    const f = await queueFixture("pro");
    await connect(f, { joined: "ticket_joined", called: "ticket_called" });
    const phone = randomMobile();
    const providers = fakeProviders(META_DOWN);
    const ticket = await joinByWhatsapp(f, phone);
    await notify(captured, f);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    const { rows } = await notify(captured, f);

    expect(providers.meta.map((m) => m.template.name)).toEqual(["ticket_joined", "ticket_called"]);
    expect(providers.sms.length).toBe(2);
    expect(providers.sms[1]!.to).toBe(phone);
    expect(providers.sms[1]!.body).toContain(ticket.displayCode);
    expect(rows.map((r) => [r.channel, r.status])).toEqual([
      ["whatsapp", "failed"],
      ["sms", "sent"],
    ]);
    expect(captured.retries).toEqual([]);
    expect(await smsUsed(f.organizationId)).toBe(2);
    captured.restore();
  });

  it("free text outside the 24-hour window (no approved template) goes by SMS instead", async () => {
    const captured = capture();
    const f = await queueFixture("pro");
    await connect(f, {});
    const phone = randomMobile();
    const providers = fakeProviders({ status: 200, body: { messages: [{ id: "wamid.x" }] } });
    const ticket = await joinByWhatsapp(f, phone);
    const { rows } = await notify(captured, f);

    expect(providers.meta).toEqual([]);
    expect(rows.map((r) => [r.channel, r.status, r.provider])).toEqual([
      ["whatsapp", "failed", "policy"],
      ["sms", "sent", "twilio"],
    ]);
    expect(rows[0].provider_response).toMatch(/^WHATSAPP_WINDOW_CLOSED.* → sent by SMS instead$/);
    expect(providers.sms.map((s) => s.to)).toEqual([phone]);
    expect(providers.sms[0]!.body).toContain(ticket.displayCode);
    captured.restore();
  });

  it("a WhatsApp message that went is not sent by SMS as well", async () => {
    const captured = capture();
    const f = await queueFixture("pro");
    await connect(f, { joined: "ticket_joined" });
    const providers = fakeProviders({ status: 200, body: { messages: [{ id: "wamid.x" }] } });
    await joinByWhatsapp(f, randomMobile());
    const { rows } = await notify(captured, f);
    expect(providers.meta.length).toBe(1);
    expect(providers.sms).toEqual([]);
    expect(rows.map((r) => [r.channel, r.status])).toEqual([["whatsapp", "sent"]]);
    captured.restore();
  });
});
