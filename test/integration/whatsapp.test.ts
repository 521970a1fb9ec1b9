import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { addMember, queueFixture, registerUser, type Fixture } from "../helpers/fixtures";
import { capture, deliveriesOf, eventsOf, feedEvents, type Captured } from "../helpers/notifications";
import { randomMobile, throughWorker } from "../helpers/twilio";

// Issue 45, WhatsApp (docs/notifications.md, docs/conversations.md): Meta's Cloud API is a fake
// behind the fetch spy (every request it received, body as JSON); Meta's webhooks to us are
// signed here as Meta signs them (HMAC-SHA256 of the raw body with the app secret, hex).

afterEach(() => vi.restoreAllMocks());

const META = "https://graph.test";
const APP_SECRET = "whatsapp-app-secret-for-tests";
const VERIFY_TOKEN = "whatsapp-verify-token-for-tests";
const WHATSAPP: Partial<Env> = {
  WHATSAPP_TOKEN: "EAAG-test-token",
  WHATSAPP_API_BASE_URL: META,
  WHATSAPP_APP_SECRET: APP_SECRET,
  WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
};
const INBOUND = "https://api.test/v1/inbound/whatsapp";

interface MetaRequest {
  url: string;
  authorization: string | null;
  body: any;
}

/** The fake Cloud API: every message it accepted. Any other outbound fetch fails the test. */
function fakeMeta(): MetaRequest[] {
  const received: MetaRequest[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(`${META}/`)) throw new TypeError(`unexpected fetch ${request.url}`);
    received.push({ url: request.url, authorization: request.headers.get("Authorization"), body: await request.json() });
    return Response.json({ messaging_product: "whatsapp", contacts: [], messages: [{ id: `wamid.out${received.length}` }] });
  });
  return received;
}

const newPhoneNumberId = () => String(100_000_000_000 + Math.floor(Math.random() * 899_999_999_999));

async function connect(f: Fixture, templates: Record<string, string> = {}): Promise<string> {
  const phoneNumberId = newPhoneNumberId();
  expectOk(
    await call("PUT", `/v1/organizations/${f.organizationId}/whatsapp`, {
      token: f.owner.token,
      body: { phoneNumberId, phoneNumber: "+2250700000001", templates },
    }),
  );
  return phoneNumberId;
}

const randomAddress = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}`;

async function joinByWhatsapp(f: Fixture, phone: string): Promise<any> {
  const customer = await registerUser({ accountType: "customer", language: "fr" });
  const ticket = expectOk(
    await call("POST", `/v1/queues/${f.queueId}/join`, {
      token: customer.token,
      body: { phone, notifyBy: "whatsapp", language: "fr" },
      headers: { "CF-Connecting-IP": randomAddress() },
    }),
    201,
  );
  expect(ticket.notifyBy).toBe("whatsapp");
  await settle(f.queueId);
  return ticket;
}

/** Meta's signature of a raw body, computed independently of the service's code. */
async function metaSignature(raw: string, secret = APP_SECRET): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(raw)));
  return `sha256=${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** A webhook as Meta posts it: one customer message to the business number `phoneNumberId`. */
function webhook(phoneNumberId: string, from: string, message: Record<string, unknown>): string {
  return JSON.stringify({
    object: "whatsapp_business_account",
    entry: [
      {
        id: "102290129340398",
        changes: [
          {
            field: "messages",
            value: {
              messaging_product: "whatsapp",
              metadata: { display_phone_number: "2250700000001", phone_number_id: phoneNumberId },
              contacts: [{ profile: { name: "Awa" }, wa_id: from.slice(1) }],
              messages: [{ from: from.slice(1), id: `wamid.${crypto.randomUUID()}`, timestamp: "1764300000", ...message }],
            },
          },
        ],
      },
    ],
  });
}

const textMessage = (body: string) => ({ type: "text", text: { body } });

async function postToUs(raw: string, signature?: string | null) {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  const sig = signature === undefined ? await metaSignature(raw) : signature;
  if (sig !== null) headers["X-Hub-Signature-256"] = sig;
  return throughWorker(new Request(INBOUND, { method: "POST", headers, body: raw }), WHATSAPP);
}

const ticketNow = async (f: Fixture, id: string) => expectOk(await call("GET", `/v1/tickets/${id}`, { token: f.owner.token }));
const conversation = async (f: Fixture, id: string) =>
  expectOk(await call("GET", `/v1/tickets/${id}/messages`, { token: f.owner.token })) as any[];
const queueName = async (f: Fixture) => expectOk(await call("GET", `/v1/queues/${f.queueId}`, { token: f.owner.token })).name as string;

/** The room's events since the last look, fed to the notification consumer with WhatsApp configured. */
async function notify(captured: Captured, f: Fixture) {
  const events = await eventsOf(captured, f.queueId);
  await feedEvents(events, WHATSAPP);
  return (await deliveriesOf(events.map((e) => e.id))).filter((d) => d.channel !== "in_app");
}

const text = (to: string, body: string) => ({
  messaging_product: "whatsapp",
  recipient_type: "individual",
  to: to.slice(1),
  type: "text",
  text: { preview_url: false, body },
});

describe("WhatsApp outbound (Meta's Cloud API)", () => {
  it("a ticket that chose WhatsApp hears of its join and its call through the approved templates, with quick replies", async () => {
    const captured = capture();
    const f = await queueFixture("pro");
    const phoneNumberId = await connect(f, { joined: "ticket_joined", called: "ticket_called" });
    const phone = randomMobile();
    const ticket = await joinByWhatsapp(f, phone);
    const meta = fakeMeta();
    await notify(captured, f);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    const called = await notify(captured, f);

    const name = await queueName(f);
    const expected = (templateName: string) => ({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: phone.slice(1),
      type: "template",
      template: {
        name: templateName,
        language: { code: "fr" },
        components: [
          {
            type: "body",
            parameters: [
              { type: "text", text: ticket.displayCode },
              { type: "text", text: name },
            ],
          },
          { type: "button", sub_type: "quick_reply", index: "0", parameters: [{ type: "payload", payload: "ICI" }] },
          { type: "button", sub_type: "quick_reply", index: "1", parameters: [{ type: "payload", payload: "RETARD" }] },
          { type: "button", sub_type: "quick_reply", index: "2", parameters: [{ type: "payload", payload: "ANNULER" }] },
        ],
      },
    });
    expect(meta.map((r) => r.url)).toEqual([`${META}/v21.0/${phoneNumberId}/messages`, `${META}/v21.0/${phoneNumberId}/messages`]);
    expect(meta.every((r) => r.authorization === "Bearer EAAG-test-token")).toBe(true);
    expect(meta.map((r) => r.body)).toEqual([expected("ticket_joined"), expected("ticket_called")]);
    // Not a single SMS; the delivery is listed under its channel and counted like an SMS.
    expect(called.map((d) => [d.channel, d.status, d.provider])).toEqual([["whatsapp", "sent", "whatsapp"]]);
    const usage = await env.DB.prepare("SELECT used FROM usage_counters WHERE organization_id = ? AND metric = 'sms'")
      .bind(f.organizationId)
      .first<{ used: number }>();
    expect(usage?.used).toBe(2);
    captured.restore();
  });

  it("free text goes only inside the 24-hour window the customer's last message opened", async () => {
    const captured = capture();
    const f = await queueFixture("pro");
    const phoneNumberId = await connect(f, { called: "ticket_called" });
    const meta = fakeMeta();

    // Outside the window: the join's message has no template, so nothing reaches Meta.
    const outside = randomMobile();
    await joinByWhatsapp(f, outside);
    const refused = await notify(captured, f);
    expect(meta).toEqual([]);
    // The message goes by SMS instead (whatsapp-fallback.test.ts; here the SMS outbox stands in).
    expect(refused.map((d) => [d.channel, d.status, d.provider])).toEqual([
      ["whatsapp", "failed", "policy"],
      ["sms", "sent", "outbox"],
    ]);
    expect(refused[0].provider_response).toMatch(/^WHATSAPP_WINDOW_CLOSED/);

    // Inside: the customer wrote first (answered in free text), then joined: the join's message is free text.
    const inside = randomMobile();
    const hello = await postToUs(webhook(phoneNumberId, inside, textMessage("Bonjour")));
    expect(hello.status, hello.text).toBe(200);
    expect(meta.map((r) => r.body)).toEqual([
      text(inside, "Aucun ticket pour ce numéro. Prenez un ticket à l'accueil ou sur notre page, puis répondez AIDE."),
    ]);
    await joinByWhatsapp(f, inside);
    const sent = await notify(captured, f);
    expect(sent.map((d) => [d.channel, d.status])).toEqual([["whatsapp", "sent"]]);
    const stored = JSON.parse(sent[0].payload);
    expect(meta.length).toBe(2);
    expect(meta[1]!.url).toBe(`${META}/v21.0/${phoneNumberId}/messages`);
    expect(meta[1]!.body).toEqual(text(inside, `${stored.title}: ${stored.body}`));
    captured.restore();
  });

  it("without WHATSAPP_TOKEN the outbox stand-in records the message and nothing leaves the Worker", async () => {
    const captured = capture();
    const f = await queueFixture("pro");
    await connect(f, { joined: "ticket_joined" });
    const meta = fakeMeta();
    await joinByWhatsapp(f, randomMobile());
    const events = await eventsOf(captured, f.queueId);
    await feedEvents(events, { WHATSAPP_TOKEN: undefined });
    const rows = (await deliveriesOf(events.map((e) => e.id))).filter((d) => d.channel !== "in_app");
    expect(rows.map((d) => [d.channel, d.status, d.provider])).toEqual([["whatsapp", "sent", "outbox"]]);
    expect(meta).toEqual([]);
    captured.restore();
  });

  it("a customer who joins by WhatsApp (the wa.me link's text) gets the ticket's messages by WhatsApp, and one join confirmation", async () => {
    const captured = capture();
    const f = await queueFixture("pro");
    const phoneNumberId = await connect(f, { joined: "ticket_joined", called: "ticket_called" });
    const word = `MAIRIE${Math.floor(Math.random() * 1e6)}`;
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: { smsKeyword: word } }));
    const phone = randomMobile();
    const meta = fakeMeta();
    const joined = await postToUs(webhook(phoneNumberId, phone, textMessage(`REJOINDRE ${word}`)));
    expect(joined.status, joined.text).toBe(200);
    await settle(f.queueId);
    const [ticket] = expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets`, { token: f.owner.token })) as any[];
    expect(ticket).toMatchObject({ source: "sms", status: "waiting" });
    // The join is answered in the chat, with the code: that is the join's confirmation.
    expect(meta.map((r) => r.body.type)).toEqual(["text"]);
    expect(meta[0]!.body.text.body).toContain(ticket.displayCode);
    // The join's own message (ticket.created) would repeat it: not sent, by WhatsApp nor by SMS.
    expect(await notify(captured, f)).toEqual([]);

    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    const called = await notify(captured, f);
    expect(called.map((d) => [d.channel, d.status, d.provider])).toEqual([["whatsapp", "sent", "whatsapp"]]);
    expect(meta.map((r) => r.body.type)).toEqual(["text", "template"]);
    expect(meta[1]!.body.template.name).toBe("ticket_called");
    expect(meta[1]!.url).toBe(`${META}/v21.0/${phoneNumberId}/messages`);
    captured.restore();
  });

  it("a join chooses WhatsApp only with a phone and a connected number (400 naming the field)", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const join = (body: unknown) =>
      call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body, headers: { "CF-Connecting-IP": randomAddress() } });
    expectError(await join({ phone: randomMobile(), notifyBy: "whatsapp" }), 400, "VALIDATION_ERROR", "notifyBy");
    await connect(f);
    expectError(await join({ notifyBy: "whatsapp" }), 400, "VALIDATION_ERROR", "phone");
    expectError(await join({ phone: randomMobile(), notifyBy: "telegram" }), 400, "VALIDATION_ERROR", "notifyBy");
    expect(expectOk(await join({ phone: randomMobile() }), 201).notifyBy).toBe("sms");
  });
});

describe("WhatsApp configuration and the join link", () => {
  it("owner and admin connect the number; a number of another organization is 409; operators may not; the wa.me link prefills the join text", async () => {
    const a = await queueFixture("pro");
    const b = await queueFixture("pro");
    const phoneNumberId = await connect(a, { called: "ticket_called" });
    const settings = expectOk(await call("GET", `/v1/organizations/${a.organizationId}/whatsapp`, { token: a.owner.token }));
    expect(settings).toMatchObject({
      phoneNumberId,
      phoneNumber: "+2250700000001",
      templates: { joined: null, called: "ticket_called", almostCalled: null, reminder: null },
    });
    expectError(
      await call("PUT", `/v1/organizations/${b.organizationId}/whatsapp`, {
        token: b.owner.token,
        body: { phoneNumberId, phoneNumber: "+2250700000002" },
      }),
      409,
      "CONFLICT",
      "phoneNumberId",
    );
    const operator = await addMember(a.owner, a.organizationId, "operator");
    expectError(await call("GET", `/v1/organizations/${a.organizationId}/whatsapp`, { token: operator.token }), 403, "AUTHORIZATION_ERROR");

    const link = expectOk(await call("GET", `/v1/queues/${a.queueId}/whatsapp-link`, { token: operator.token }));
    expect(link.phoneNumber).toBe("+2250700000001");
    expect(link.url).toBe(`https://wa.me/2250700000001?text=${encodeURIComponent(link.text)}`);
    expect(link.text).toMatch(new RegExp(`^(REJOINDRE|JOIN) ${a.queueId}$`));
    expect(link.smsKeyword).toBeNull();
    // With a join keyword (join by text), the prefilled text is the keyword the inbound message joins with.
    expectOk(await call("PATCH", `/v1/business/queues/${a.queueId}`, { token: a.owner.token, body: { smsKeyword: "mairie" } }));
    const keyed = expectOk(await call("GET", `/v1/queues/${a.queueId}/whatsapp-link`, { token: operator.token }));
    expect(keyed.text).toMatch(/^(REJOINDRE|JOIN) MAIRIE$/);
    expect(keyed.smsKeyword).toBe("MAIRIE");
    expect(keyed.url).toBe(`https://wa.me/2250700000001?text=${encodeURIComponent(keyed.text)}`);
    expectError(await call("GET", `/v1/queues/${b.queueId}/whatsapp-link`, { token: b.owner.token }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/queues/${b.queueId}/whatsapp-link`, { token: a.owner.token }), 404, "NOT_FOUND");
  });
});

describe("WhatsApp inbound webhook (signed by Meta)", () => {
  it("answers Meta's subscription challenge only with the verify token", async () => {
    const get = (query: string) => throughWorker(new Request(`${INBOUND}?${query}`), WHATSAPP);
    const ok = await get(`hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1158201444`);
    expect(ok.status).toBe(200);
    expect(ok.text).toBe("1158201444");
    expect(ok.headers.get("Content-Type")).toMatch(/^text\/plain/);
    expect((await get("hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1158201444")).status).toBe(403);
    expect((await get(`hub.mode=unsubscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`)).status).toBe(403);
    const unset = await throughWorker(new Request(`${INBOUND}?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`), {
      ...WHATSAPP,
      WHATSAPP_VERIFY_TOKEN: undefined,
    });
    expect(unset.status).toBe(403);
  });

  it("a message signed as Meta signs it acts on the customer's ticket and is answered by WhatsApp; a replay acts once", async () => {
    const f = await queueFixture("pro");
    const phoneNumberId = await connect(f);
    const phone = randomMobile();
    const ticket = await joinByWhatsapp(f, phone);
    const meta = fakeMeta();
    const raw = webhook(phoneNumberId, phone, textMessage("STATUT"));
    const first = await postToUs(raw);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toEqual({ received: 1, ignored: 0 });
    expect(meta.map((r) => r.url)).toEqual([`${META}/v21.0/${phoneNumberId}/messages`]);
    const reply = meta[0]!.body.text.body as string;
    expect(reply).toMatch(new RegExp(`^${ticket.displayCode} : vous êtes n°1 dans la file, environ \\S+ min\\.$`));
    expect(meta[0]!.body).toEqual(text(phone, reply));
    expect((await conversation(f, ticket.id)).map((m) => [m.direction, m.channel, m.body])).toEqual([
      ["in", "whatsapp", "STATUT"],
      ["out", "whatsapp", reply],
    ]);

    const replay = await postToUs(raw);
    expect(replay.body.data).toEqual({ received: 0, ignored: 1 });
    expect(meta.length).toBe(1);
    expect((await conversation(f, ticket.id)).length).toBe(2);
  });

  it("a forged or unsigned message is refused and changes nothing", async () => {
    const f = await queueFixture("pro");
    const phoneNumberId = await connect(f);
    const phone = randomMobile();
    const ticket = await joinByWhatsapp(f, phone);
    const meta = fakeMeta();
    const raw = webhook(phoneNumberId, phone, textMessage("ANNULER"));
    const forged = await postToUs(raw, await metaSignature(raw, "not-the-app-secret"));
    expect(forged.status).toBe(401);
    expect(forged.body.error).toMatchObject({
      code: "AUTHENTICATION_ERROR",
      details: { field: "X-Hub-Signature-256", reason: "mismatch" },
    });
    // The signature of another body does not cover this one.
    const tampered = await postToUs(raw, await metaSignature(raw.replace("ANNULER", "STATUT")));
    expect(tampered.status).toBe(401);
    const unsigned = await postToUs(raw, null);
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.error.details.reason).toBe("missing");

    expect((await ticketNow(f, ticket.id)).status).toBe("waiting");
    expect(await conversation(f, ticket.id)).toEqual([]);
    expect(meta).toEqual([]);
    const window = await env.DB.prepare("SELECT COUNT(*) AS n FROM whatsapp_windows WHERE phone = ?").bind(phone).first<{ n: number }>();
    expect(window?.n).toBe(0);

    // The genuine message still acts: nothing of the forged ones took its id.
    expect((await postToUs(raw)).body.data).toEqual({ received: 1, ignored: 0 });
    expect((await ticketNow(f, ticket.id)).status).toBe("cancelled");
  });

  it("the quick reply Cancel of a template cancels the ticket", async () => {
    const f = await queueFixture("pro");
    const phoneNumberId = await connect(f, { called: "ticket_called" });
    const phone = randomMobile();
    const ticket = await joinByWhatsapp(f, phone);
    const meta = fakeMeta();
    const res = await postToUs(
      webhook(phoneNumberId, phone, {
        type: "button",
        context: { from: "2250700000001", id: "wamid.template" },
        button: { payload: "ANNULER", text: "Annuler" },
      }),
    );
    expect(res.body.data).toEqual({ received: 1, ignored: 0 });
    expect((await ticketNow(f, ticket.id)).status).toBe("cancelled");
    expect(meta.map((r) => r.body)).toEqual([text(phone, `${ticket.displayCode} : votre ticket est annulé.`)]);
  });

  it("a message to B's number never reaches A's ticket of the same customer", async () => {
    const a = await queueFixture("pro");
    const b = await queueFixture("pro");
    const aNumber = await connect(a);
    const bNumber = await connect(b);
    const phone = randomMobile();
    const atA = await joinByWhatsapp(a, phone);
    // B's ticket is the newer one; A's number must still only ever reach A's.
    const atB = await joinByWhatsapp(b, phone);
    fakeMeta();

    await postToUs(webhook(aNumber, phone, textMessage("Voici mon IBAN FR76 3000 6000")));
    expect((await conversation(a, atA.id)).map((m) => m.body)).toContain("Voici mon IBAN FR76 3000 6000");
    expect(await conversation(b, atB.id)).toEqual([]);

    await postToUs(webhook(bNumber, phone, textMessage("ANNULER")));
    expect((await ticketNow(b, atB.id)).status).toBe("cancelled");
    expect((await ticketNow(a, atA.id)).status).toBe("waiting");
    expect((await conversation(a, atA.id)).length).toBe(2);

    // A number no organization connected: acknowledged (Meta would retry otherwise), nothing acts.
    const stray = await postToUs(webhook(newPhoneNumberId(), phone, textMessage("ANNULER")));
    expect(stray.body.data).toEqual({ received: 0, ignored: 1 });
    expect((await ticketNow(a, atA.id)).status).toBe("waiting");
  });
});
