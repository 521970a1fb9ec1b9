import { afterEach, describe, expect, it, vi } from "vitest";
import { twilioSignature } from "../../src/providers/twilio-inbound";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { AUTH_TOKEN, INBOUND_URL as URL_SIGNED, randomMobile, replyOf, twilioPost } from "../helpers/twilio";
import { addQueue, queueFixture, registerUser, walkIn, type Fixture } from "../helpers/fixtures";

// Issue 30, inbound SMS: Twilio posts a customer's text, signed as Twilio signs it; the text
// acts on the sender's newest live ticket, and the TwiML answer carries the reply.

afterEach(() => vi.restoreAllMocks());

const randomAddress = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}`;

/** A customer's ticket with this phone, through the customer join; the projection drained. */
async function customerTicket(f: Fixture, phone: string, queueId = f.queueId) {
  const customer = await registerUser({ accountType: "customer" });
  const ticket = expectOk(
    await call("POST", `/v1/queues/${queueId}/join`, {
      token: customer.token,
      body: { phone },
      headers: { "CF-Connecting-IP": randomAddress() },
    }),
    201,
  );
  await settle(queueId);
  return ticket;
}

const ticketNow = async (f: Fixture, id: string) => expectOk(await call("GET", `/v1/tickets/${id}`, { token: f.owner.token }));

describe("Twilio's signature", () => {
  it("matches Twilio's documented example (URL with query, five parameters, token 12345)", async () => {
    const params = new URLSearchParams({
      CallSid: "CA1234567890ABCDE",
      Caller: "+12349013030",
      Digits: "1234",
      From: "+12349013030",
      To: "+18005551212",
    });
    expect(await twilioSignature("12345", "https://mycompany.com/myapp.php?foo=1&bar=2", params)).toBe("0/KCTR6DLpKmkAf8muzZqo1nDgQ=");
  });

  it("a forged or missing signature is refused and changes nothing; a real one acts", async () => {
    const f = await queueFixture("pro");
    const phone = randomMobile();
    const ticket = await customerTicket(f, phone);

    const forged = await twilioPost({ From: phone, Body: "ICI" }, { signature: "bm90IHR3aWxpbydzIHNpZ25hdHVyZQ==" });
    expectError({ status: forged.status, body: forged.body, headers: new Headers() }, 400, "VALIDATION_ERROR", "X-Twilio-Signature");
    const missing = await twilioPost({ From: phone, Body: "ICI" }, { signature: null });
    expectError({ status: missing.status, body: missing.body, headers: new Headers() }, 400, "VALIDATION_ERROR", "X-Twilio-Signature");
    // Signed with another account's token: refused as well.
    const form = new URLSearchParams({ From: phone, Body: "ICI" });
    const other = await twilioPost({ From: phone, Body: "ICI" }, { signature: await twilioSignature("another-token", URL_SIGNED, form) });
    expect(other.status).toBe(400);
    expect((await ticketNow(f, ticket.id)).presentAt).toBeNull();
    expect(expectOk(await call("GET", `/v1/tickets/${ticket.id}/messages`, { token: f.owner.token }))).toEqual([]);

    const real = await twilioPost({ From: phone, Body: "ICI" });
    expect(replyOf(real)).toContain(ticket.displayCode);
    expect((await ticketNow(f, ticket.id)).presentAt).not.toBeNull();
  });

  it("without TWILIO_AUTH_TOKEN outside production (the local stand-in), an unsigned text acts and the reply is printed", async () => {
    const f = await queueFixture("pro");
    const phone = randomMobile();
    const ticket = await customerTicket(f, phone);
    const printed: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void printed.push(String(line)));
    const reply = replyOf(await twilioPost({ From: phone, Body: "STATUT" }, { signature: null, over: { TWILIO_AUTH_TOKEN: undefined } }));
    expect(reply).toContain("n°1 dans la file");
    expect(printed.map((l) => JSON.parse(l))).toContainEqual({
      conversation: "reply",
      channel: "sms",
      to: phone,
      action: "status",
      body: reply,
    });
    expect(ticket.status).toBe("waiting");
  });

  it("in production, no TWILIO_AUTH_TOKEN means no inbound SMS (503), even unsigned", async () => {
    const res = await twilioPost(
      { From: randomMobile(), Body: "HELP" },
      { signature: null, over: { ENVIRONMENT: "production", TWILIO_AUTH_TOKEN: undefined } },
    );
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("PROVIDER_UNAVAILABLE");
  });
});

describe("keywords, in French and English, case and accents ignored", () => {
  it("HERE / ici marks the sender's newest live ticket present, not an older one nor another number's", async () => {
    for (const text of ["HERE", " ici !"]) {
      const f = await queueFixture("pro");
      const phone = randomMobile();
      const older = await customerTicket(f, phone);
      const newer = await customerTicket(f, phone, await addQueue(f));
      const someoneElse = await customerTicket(f, randomMobile());
      const reply = replyOf(await twilioPost({ From: phone, Body: text }));
      expect(reply).toContain(newer.displayCode);
      expect(reply).toMatch(text === "HERE" ? /know you are here/ : /vous êtes là/);
      expect((await ticketNow(f, newer.id)).presentAt).not.toBeNull();
      expect((await ticketNow(f, older.id)).presentAt).toBeNull();
      expect((await ticketNow(f, someoneElse.id)).presentAt).toBeNull();
    }
  });

  it("LATE / Retard lets three people pass (the room's step back, once)", async () => {
    for (const text of ["late", "Retard"]) {
      const f = await queueFixture("pro");
      const phone = randomMobile();
      const ticket = await customerTicket(f, phone);
      for (let i = 0; i < 4; i++) await walkIn(f.owner, f.queueId);
      const reply = replyOf(await twilioPost({ From: phone, Body: text }));
      expect(reply).toMatch(text === "late" ? /3 people will pass/ : /3 personnes passeront/);
      const after = await ticketNow(f, ticket.id);
      expect(after.steppedBackPlaces).toBe(3);
      expect(after.position).toBe(4);
      // Twice is refused by the room: the answer says so, nothing moves.
      expect(replyOf(await twilioPost({ From: phone, Body: text }))).toMatch(text === "late" ? /cannot be done/ : /impossible/);
      expect((await ticketNow(f, ticket.id)).position).toBe(4);
    }
  });

  it("CANCEL / annuler cancels the ticket", async () => {
    for (const text of ["Cancel", "ANNULER"]) {
      const f = await queueFixture("pro");
      const phone = randomMobile();
      const ticket = await customerTicket(f, phone);
      const reply = replyOf(await twilioPost({ From: phone, Body: text }));
      expect(reply).toMatch(text === "Cancel" ? /is cancelled/ : /est annulé/);
      expect((await ticketNow(f, ticket.id)).status).toBe("cancelled");
    }
  });

  it("STATUS / statut answers the position and the estimate", async () => {
    for (const text of ["status", "STATUT"]) {
      const f = await queueFixture("pro");
      await walkIn(f.owner, f.queueId);
      const phone = randomMobile();
      const ticket = await customerTicket(f, phone);
      const view = await ticketNow(f, ticket.id);
      const reply = replyOf(await twilioPost({ From: phone, Body: text }));
      expect(view.position).toBe(2);
      expect(reply).toContain(text === "status" ? "number 2 in line" : "n°2 dans la file");
      expect(reply).toContain(`${view.estimatedWaitMinutes} min`);
    }
  });

  it("HELP / Aide lists the keywords in the sender's language", async () => {
    const f = await queueFixture("pro");
    const phone = randomMobile();
    await customerTicket(f, phone);
    expect(replyOf(await twilioPost({ From: phone, Body: "HELP" }))).toMatch(/Reply HERE when you arrive/);
    expect(replyOf(await twilioPost({ From: phone, Body: "aide" }))).toMatch(/Répondez ICI à votre arrivée/);
  });

  it("an unknown number gets the help text; a short code or premium sender gets nothing", async () => {
    expect(replyOf(await twilioPost({ From: randomMobile(), Body: "Bonjour" }))).toMatch(/Aucun ticket pour ce numéro/);
    expect(replyOf(await twilioPost({ From: "+12025550143", Body: "hello" }))).toMatch(/We found no ticket/);
    expect(replyOf(await twilioPost({ From: "38201", Body: "STATUS" }))).toBeNull();
    expect(replyOf(await twilioPost({ From: "+33899123456", Body: "STATUS" }))).toBeNull();
  });

  it("anything else is a message on the ticket, in its conversation with our answers", async () => {
    const f = await queueFixture("pro");
    const phone = randomMobile();
    const ticket = await customerTicket(f, phone);
    const reply = replyOf(await twilioPost({ From: phone, Body: "Je suis garé devant, j'arrive dans 5 min" }));
    // No keyword tells the language: the organization's default (en).
    expect(reply).toMatch(/passed to the staff/);
    const messages = expectOk(await call("GET", `/v1/tickets/${ticket.id}/messages`, { token: f.owner.token }));
    expect(messages).toMatchObject([
      { direction: "in", channel: "sms", body: "Je suis garé devant, j'arrive dans 5 min", keyword: null, status: "received" },
      { direction: "out", channel: "sms", body: reply, authorId: null, status: "sent" },
    ]);
    expect((await ticketNow(f, ticket.id)).status).toBe("waiting");
  });

  it("a signed form without From is a clear 400 naming it", async () => {
    const noFrom = await twilioPost({ Body: "HERE" });
    expectError({ status: noFrom.status, body: noFrom.body, headers: new Headers() }, 400, "VALIDATION_ERROR", "From");
  });
});
