import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { INBOUND_WINDOW_MS } from "../../src/conversations/inbound-limits";
import { call, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { queueFixture, registerUser, type Fixture } from "../helpers/fixtures";
import { randomMobile, replyOf, throughWorker, TWILIO, twilioPost } from "../helpers/twilio";

// Issue 45, inbound limits (docs/conversations.md): a flood from one number, or into one
// organization, is taken (200) but acts on nothing and is answered with nothing past the limit;
// another number, another organization, are not touched. The limits are lowered through their
// configuration so a test needs a handful of messages, not hundreds; the clock is pinned at the
// start of a window so a flood never straddles two.

afterEach(() => {
  vi.restoreAllMocks();
  testClock.reset();
});

const randomAddress = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}`;

function startOfNextWindow(): void {
  testClock.set(Math.ceil(Date.now() / INBOUND_WINDOW_MS) * INBOUND_WINDOW_MS + 1_000);
}

async function customerTicket(f: Fixture, phone: string) {
  const customer = await registerUser({ accountType: "customer" });
  const ticket = expectOk(
    await call("POST", `/v1/queues/${f.queueId}/join`, {
      token: customer.token,
      body: { phone },
      headers: { "CF-Connecting-IP": randomAddress() },
    }),
    201,
  );
  await settle(f.queueId);
  return ticket;
}

async function ownNumber(f: Fixture): Promise<string> {
  const number = `+3375${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
  await env.DB.prepare("INSERT INTO sms_senders (number, organization_id, created_at) VALUES (?, ?, ?)")
    .bind(number, f.organizationId, Date.now())
    .run();
  return number;
}

const ticketNow = async (f: Fixture, id: string) => expectOk(await call("GET", `/v1/tickets/${id}`, { token: f.owner.token }));
const conversation = async (f: Fixture, id: string) =>
  expectOk(await call("GET", `/v1/tickets/${id}/messages`, { token: f.owner.token })) as any[];

const text = (from: string, body: string, over: Partial<Env>, to?: string) =>
  twilioPost({ From: from, Body: body, ...(to ? { To: to } : {}) }, { over: { ...TWILIO, ...over } });

describe("inbound limits", () => {
  it("a number past its limit is answered with nothing and acts on nothing; another number of the same business is unaffected", async () => {
    const f = await queueFixture("pro");
    const flooder = randomMobile();
    const other = randomMobile();
    const ticket = await customerTicket(f, flooder);
    const neighbour = await customerTicket(f, other);
    startOfNextWindow();
    const over = { INBOUND_LIMIT_PER_NUMBER: "3" };

    for (let i = 0; i < 3; i++) expect(replyOf(await text(flooder, "STATUT", over))).toMatch(new RegExp(`^${ticket.displayCode} : `));
    // Past the limit: Twilio is answered (it must not retry), with an empty TwiML, and the cancel does not act.
    const refused = await text(flooder, "ANNULER", over);
    expect(replyOf(refused)).toBeNull();
    expect((await ticketNow(f, ticket.id)).status).toBe("waiting");
    expect((await conversation(f, ticket.id)).length).toBe(6);

    // Another number of the same business still acts and is answered.
    expect(replyOf(await text(other, "ANNULER", over))).toBe(`${neighbour.displayCode} : votre ticket est annulé.`);
    expect((await ticketNow(f, neighbour.id)).status).toBe("cancelled");

    // STOP is honoured even past the limit (silently): a refusal of our texts is never lost.
    expect(replyOf(await text(flooder, "STOP", over))).toBeNull();
    const optOut = await env.DB.prepare("SELECT COUNT(*) AS n FROM opt_outs WHERE organization_id = ? AND phone = ?")
      .bind(f.organizationId, flooder)
      .first<{ n: number }>();
    expect(optOut?.n).toBe(1);

    // The next window: the number is heard again.
    testClock.advance(INBOUND_WINDOW_MS);
    expect(replyOf(await text(flooder, "AIDE", over))).not.toBeNull();
  });

  it("a business past its limit hears nothing more from any number; another business is unaffected", async () => {
    const a = await queueFixture("pro");
    const b = await queueFixture("pro");
    const aNumber = await ownNumber(a);
    const bNumber = await ownNumber(b);
    const phones = [randomMobile(), randomMobile(), randomMobile()];
    const tickets = [];
    for (const phone of phones) tickets.push(await customerTicket(a, phone));
    const atB = await customerTicket(b, phones[2]!);
    startOfNextWindow();
    const over = { INBOUND_LIMIT_PER_ORGANIZATION: "2" };

    expect(replyOf(await text(phones[0]!, "STATUT", over, aNumber))).not.toBeNull();
    expect(replyOf(await text(phones[1]!, "STATUT", over, aNumber))).not.toBeNull();
    // A third number into A: A's limit is reached, nothing acts.
    expect(replyOf(await text(phones[2]!, "ANNULER", over, aNumber))).toBeNull();
    expect((await ticketNow(a, tickets[2]!.id)).status).toBe("waiting");
    expect(await conversation(a, tickets[2]!.id)).toEqual([]);

    // The same number into B: B's own count, acted on and answered.
    expect(replyOf(await text(phones[2]!, "ANNULER", over, bNumber))).toBe(`${atB.displayCode} : votre ticket est annulé.`);
    expect((await ticketNow(b, atB.id)).status).toBe("cancelled");
  });

  it("USSD: a number past its limit gets the busy screen and no ticket; another number joins", async () => {
    const f = await queueFixture("pro");
    const serviceCode = `*384*${Math.floor(Math.random() * 1e6)}#`;
    const { secret } = expectOk(
      await call("PUT", `/v1/organizations/${f.organizationId}/ussd`, { token: f.owner.token, body: { serviceCode } }),
    );
    startOfNextWindow();
    const over = { INBOUND_LIMIT_PER_NUMBER: "2" };
    const dial = async (phoneNumber: string, input: string) => {
      const res = await throughWorker(
        new Request(`https://api.test/v1/inbound/ussd?secret=${secret}`, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", "CF-Connecting-IP": randomAddress() },
          body: new URLSearchParams({ sessionId: `ATUid_${crypto.randomUUID()}`, serviceCode, phoneNumber, text: input }).toString(),
        }),
        over,
      );
      expect(res.status, res.text).toBe(200);
      return res.text;
    };
    const flooder = `+22507${String(Math.floor(Math.random() * 1e8)).padStart(8, "0")}`;
    expect(await dial(flooder, "")).toMatch(/^CON /);
    expect(await dial(flooder, "1")).toMatch(/^CON /);
    const busy = await dial(flooder, "1*1");
    expect(busy).toMatch(/^END (Trop de demandes|Too many requests)/);
    expect(busy.length).toBeLessThanOrEqual(160);
    await settle(f.queueId);
    const listing = async () => expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets`, { token: f.owner.token })) as any[];
    expect(await listing()).toEqual([]);

    const other = `+22507${String(Math.floor(Math.random() * 1e8)).padStart(8, "0")}`;
    expect(await dial(other, "1*1")).toMatch(/^END Ticket /);
    await settle(f.queueId);
    expect((await listing()).length).toBe(1);
  });
});
