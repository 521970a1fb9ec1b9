import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { acceptInvitation, queueFixture, registerUser, type Fixture, type TestUser } from "../helpers/fixtures";
import { randomMobile, throughWorker, TWILIO, TWILIO_FROM } from "../helpers/twilio";

// Issue 45, the staff side of a conversation (docs/conversations.md): the ticket's messages both
// ways, in order, and the clerk's answer by the channel the customer uses — WhatsApp free text
// inside the 24-hour window, else SMS — for staff of the ticket's location only. Meta's and
// Twilio's APIs are fakes behind the fetch spy; Meta's webhook is signed here as Meta signs it.

afterEach(() => vi.restoreAllMocks());

const META = "https://graph.test";
const APP_SECRET = "whatsapp-app-secret-for-tests";
const CONFIG: Partial<Env> = { ...TWILIO, WHATSAPP_TOKEN: "EAAG-test-token", WHATSAPP_API_BASE_URL: META, WHATSAPP_APP_SECRET: APP_SECRET };

interface Providers {
  meta: any[];
  sms: { to: string; from: string | null; body: string }[];
}

function fakeProviders(): Providers {
  const out: Providers = { meta: [], sms: [] };
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (request.url.startsWith(`${META}/`)) {
      out.meta.push(await request.json());
      return Response.json({ messaging_product: "whatsapp", messages: [{ id: `wamid.out${out.meta.length}` }] });
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

async function connect(f: Fixture): Promise<string> {
  const phoneNumberId = String(100_000_000_000 + Math.floor(Math.random() * 899_999_999_999));
  expectOk(
    await call("PUT", `/v1/organizations/${f.organizationId}/whatsapp`, {
      token: f.owner.token,
      body: { phoneNumberId, phoneNumber: "+2250700000001", templates: { joined: "ticket_joined" } },
    }),
  );
  return phoneNumberId;
}

async function join(f: Fixture, phone: string, notifyBy: "sms" | "whatsapp") {
  const customer = await registerUser({ accountType: "customer", language: "fr" });
  const ticket = expectOk(
    await call("POST", `/v1/queues/${f.queueId}/join`, {
      token: customer.token,
      body: { phone, notifyBy, language: "fr" },
      headers: { "CF-Connecting-IP": `198.51.100.${Math.floor(Math.random() * 250) + 1}` },
    }),
    201,
  );
  await settle(f.queueId);
  return ticket;
}

/** The customer's WhatsApp message, posted and signed as Meta does. */
async function customerWrites(phoneNumberId: string, from: string, body: string) {
  const raw = JSON.stringify({
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
              messages: [
                { from: from.slice(1), id: `wamid.${crypto.randomUUID()}`, timestamp: "1764300000", type: "text", text: { body } },
              ],
            },
          },
        ],
      },
    ],
  });
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(APP_SECRET), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(raw)));
  const signature = `sha256=${Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("")}`;
  const res = await throughWorker(
    new Request("https://api.test/v1/inbound/whatsapp", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Hub-Signature-256": signature },
      body: raw,
    }),
    CONFIG,
  );
  expect(res.status, res.text).toBe(200);
}

/** The staff's routes, through the Worker with both providers configured. */
async function staff(user: TestUser, method: "GET" | "POST", ticketId: string, text?: string) {
  const res = await throughWorker(
    new Request(`https://api.test/v1/tickets/${ticketId}/messages`, {
      method,
      headers: { Authorization: `Bearer ${user.token}`, ...(text ? { "Content-Type": "application/json" } : {}) },
      ...(text ? { body: JSON.stringify({ text }) } : {}),
    }),
    CONFIG,
  );
  return { status: res.status, body: res.body, headers: res.headers };
}

/** A second location of the organization, with its own service and queue. */
async function otherLocation(f: Fixture): Promise<{ locationId: string }> {
  const location = expectOk(
    await call("POST", "/v1/locations", {
      token: f.owner.token,
      body: { organizationId: f.organizationId, name: "Annexe", address: "2 rue de l'Annexe", latitude: 45.76, longitude: 4.84 },
    }),
    201,
  );
  return { locationId: location.id };
}

async function memberAt(f: Fixture, role: string, locationIds: string[]): Promise<TestUser> {
  const user = await registerUser();
  expectOk(
    await call("POST", `/v1/organizations/${f.organizationId}/members`, {
      token: f.owner.token,
      body: { email: user.email, role, locationIds },
    }),
    202,
  );
  await acceptInvitation(user, f.organizationId);
  return user;
}

describe("the staff side of a conversation", () => {
  it("a WhatsApp customer who wrote today is answered by WhatsApp free text; the conversation lists everything in order", async () => {
    const f = await queueFixture("pro");
    const phoneNumberId = await connect(f);
    const phone = randomMobile();
    const providers = fakeProviders();
    const ticket = await join(f, phone, "whatsapp");
    await customerWrites(phoneNumberId, phone, "Je serai là dans 10 minutes, c'est bon ?");

    const reply = await staff(f.owner, "POST", ticket.id, "Oui, pas de souci, à tout à l'heure.");
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    expect(reply.body.data).toMatchObject({ direction: "out", channel: "whatsapp", status: "sent", authorId: f.owner.id });
    // Meta got the free text from the organization's number; no SMS left.
    expect(providers.meta.at(-1)).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: phone.slice(1),
      type: "text",
      text: { preview_url: false, body: "Oui, pas de souci, à tout à l'heure." },
    });
    expect(providers.sms).toEqual([]);

    const listed = await staff(f.owner, "GET", ticket.id);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((m: any) => [m.direction, m.channel, m.authorId === f.owner.id, m.status])).toEqual([
      ["in", "whatsapp", false, "received"],
      ["out", "whatsapp", false, "sent"],
      ["out", "whatsapp", true, "sent"],
    ]);
    expect(listed.body.data[0].body).toBe("Je serai là dans 10 minutes, c'est bon ?");
    expect(listed.body.data[2].body).toBe("Oui, pas de souci, à tout à l'heure.");
  });

  it("a WhatsApp customer whose window is not open is answered by SMS", async () => {
    const f = await queueFixture("pro");
    await connect(f);
    const phone = randomMobile();
    const providers = fakeProviders();
    const ticket = await join(f, phone, "whatsapp");
    const reply = await staff(f.owner, "POST", ticket.id, "Votre dossier est prêt.");
    expect(reply.status, JSON.stringify(reply.body)).toBe(201);
    expect(reply.body.data).toMatchObject({ channel: "sms", status: "sent" });
    expect(providers.sms).toEqual([{ to: phone, from: TWILIO_FROM, body: "Votre dossier est prêt." }]);
    expect(providers.meta).toEqual([]);
  });

  it("staff of another location cannot read nor answer the conversation (404, nothing sent); staff of the ticket's location can", async () => {
    const f = await queueFixture("pro");
    const phone = randomMobile();
    const providers = fakeProviders();
    const ticket = await join(f, phone, "sms");
    const elsewhere = await otherLocation(f);
    const outsider = await memberAt(f, "manager", [elsewhere.locationId]);
    const here = await env.DB.prepare("SELECT location_id FROM service_locations WHERE service_id = ?")
      .bind(f.serviceId)
      .first<{ location_id: string }>();
    const insider = await memberAt(f, "operator", [here!.location_id]);

    const read = await staff(outsider, "GET", ticket.id);
    expectError({ status: read.status, body: read.body, headers: read.headers }, 404, "NOT_FOUND");
    const write = await staff(outsider, "POST", ticket.id, "Bonjour");
    expectError({ status: write.status, body: write.body, headers: write.headers }, 404, "NOT_FOUND");
    expect(providers.sms).toEqual([]);

    expect((await staff(insider, "POST", ticket.id, "Bonjour")).status).toBe(201);
    expect(providers.sms.map((s) => s.body)).toEqual(["Bonjour"]);
    const listed = await staff(insider, "GET", ticket.id);
    expect(listed.body.data.map((m: any) => [m.direction, m.channel, m.body])).toEqual([["out", "sms", "Bonjour"]]);
  });
});
