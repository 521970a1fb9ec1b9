import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { queueFixture, registerUser, type Fixture } from "../helpers/fixtures";
import { customerText, randomMobile, replyOf, TWILIO_FROM, twilioPost } from "../helpers/twilio";

// Issue 44: a customer's text belongs to the business the conversation is with. Another business
// (or anyone with its published widget key) can join its own queue with someone else's number;
// that must never route the customer's answers, STATUT or ANNULER to it. And each provider
// message acts once: a replayed signed request changes nothing.

afterEach(() => vi.restoreAllMocks());

const randomAddress = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}`;

async function joinWithPhone(f: Fixture, phone: string) {
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

const ticketNow = async (f: Fixture, id: string) => expectOk(await call("GET", `/v1/tickets/${id}`, { token: f.owner.token }));
const conversation = async (f: Fixture, id: string) =>
  expectOk(await call("GET", `/v1/tickets/${id}/messages`, { token: f.owner.token })) as any[];
const nameOf = async (f: Fixture) =>
  (await env.DB.prepare("SELECT name FROM organizations WHERE id = ?").bind(f.organizationId).first<{ name: string }>())!.name;

/** The menu's number for this organization: "… 1 Name, 2 Other (A-001)". */
function optionOf(menu: string, name: string): string {
  const m = new RegExp(`(\\d+) ${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(`).exec(menu);
  expect(m, menu).not.toBeNull();
  return m![1]!;
}

async function renamed(f: Fixture, name: string): Promise<void> {
  expectOk(await call("PATCH", `/v1/organizations/${f.organizationId}`, { token: f.owner.token, body: { name } }));
}

describe("inbound texts reach only the business the conversation is with (issue 44)", () => {
  it("B's ticket with A's customer's number gets none of the customer's replies to A's number, nor acts on STATUT/ANNULER", async () => {
    const a = await queueFixture("pro");
    const b = await queueFixture("pro");
    const aNumber = `+3375${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
    await env.DB.prepare("INSERT INTO sms_senders (number, organization_id, created_at) VALUES (?, ?, ?)")
      .bind(aNumber, a.organizationId, Date.now())
      .run();
    const phone = randomMobile();
    const atA = await joinWithPhone(a, phone);
    // B joins later with the same number: the newest live ticket of that number is B's.
    const atB = await joinWithPhone(b, phone);

    expect(await customerText(phone, "Voici mon IBAN FR76 3000 6000 0112 3456 7890 189", aNumber)).toContain(atA.displayCode);
    expect((await conversation(a, atA.id)).map((m) => m.body)).toContain("Voici mon IBAN FR76 3000 6000 0112 3456 7890 189");
    expect(await conversation(b, atB.id)).toEqual([]);

    const status = await customerText(phone, "STATUT", aNumber);
    expect(status).toContain("n°1 dans la file");
    expect(await customerText(phone, "ANNULER", aNumber)).toMatch(/annulé/);
    expect((await ticketNow(a, atA.id)).status).toBe("cancelled");
    expect((await ticketNow(b, atB.id)).status).toBe("waiting");
    expect(await conversation(b, atB.id)).toEqual([]);
  });

  it("on the shared number, a customer with live tickets at A and B is asked which, and nothing acts until they answer", async () => {
    const a = await queueFixture("pro");
    const b = await queueFixture("pro");
    await renamed(a, `Boulangerie ${Math.floor(Math.random() * 1e6)}`);
    await renamed(b, `Mairie ${Math.floor(Math.random() * 1e6)}`);
    const phone = randomMobile();
    const atA = await joinWithPhone(a, phone);
    const atB = await joinWithPhone(b, phone);

    const menu = (await customerText(phone, "Voici mon IBAN FR76 3000 6000"))!;
    expect(menu).toMatch(/plusieurs endroits/);
    expect(menu).toContain(await nameOf(a));
    expect(menu).toContain(await nameOf(b));
    expect(await conversation(a, atA.id)).toEqual([]);
    expect(await conversation(b, atB.id)).toEqual([]);

    // The answer sends the held text to A only.
    expect(await customerText(phone, optionOf(menu, await nameOf(a)))).toContain(atA.displayCode);
    expect((await conversation(a, atA.id)).map((m) => m.body)).toContain("Voici mon IBAN FR76 3000 6000");
    expect(await conversation(b, atB.id)).toEqual([]);

    // The choice holds for the conversation: STATUT and ANNULER act on A's ticket, never B's.
    expect(await customerText(phone, "STATUT")).toContain("n°1 dans la file");
    expect(await customerText(phone, "ANNULER")).toMatch(/annulé/);
    expect((await ticketNow(a, atA.id)).status).toBe("cancelled");
    expect((await ticketNow(b, atB.id)).status).toBe("waiting");
    expect(await conversation(b, atB.id)).toEqual([]);
  });

  it("ANNULER sent to the shared number with tickets at A and B cancels neither before the customer answers", async () => {
    const a = await queueFixture("pro");
    const b = await queueFixture("pro");
    const phone = randomMobile();
    const atA = await joinWithPhone(a, phone);
    const atB = await joinWithPhone(b, phone);
    const menu = (await customerText(phone, "ANNULER"))!;
    expect(menu).toMatch(/plusieurs endroits/);
    expect((await ticketNow(a, atA.id)).status).toBe("waiting");
    expect((await ticketNow(b, atB.id)).status).toBe("waiting");
    expect(await customerText(phone, optionOf(menu, await nameOf(b)).replace(/^/, " "))).toMatch(/annulé/);
    expect((await ticketNow(a, atA.id)).status).toBe("waiting");
    expect((await ticketNow(b, atB.id)).status).toBe("cancelled");
  });

  it("a ticket cancelled in its room but not yet in the projection is not matched", async () => {
    const a = await queueFixture("pro");
    const phone = randomMobile();
    const ticket = await joinWithPhone(a, phone);
    expectOk(await call("POST", `/v1/tickets/${ticket.id}/cancel`, { token: a.owner.token }));
    // No settle: the projection may still say waiting; the room decides.
    expect(await customerText(phone, "STATUT")).toMatch(/Aucun ticket/);
  });

  it("STOP on the shared number opts the number out of every organization that texted it", async () => {
    const a = await queueFixture("pro");
    const b = await queueFixture("pro");
    const phone = randomMobile();
    const atA = await joinWithPhone(a, phone);
    const atB = await joinWithPhone(b, phone);
    expect(await customerText(phone, "STOP")).toMatch(/plus de messages|no more messages/);
    for (const [f, t] of [
      [a, atA],
      [b, atB],
    ] as const) {
      const res = await call("POST", `/v1/tickets/${t.id}/messages`, { token: f.owner.token, body: { text: "Bonjour" } });
      expectError(res, 409, "CONFLICT");
      expect(res.body.error.details.reason).toBe("opted_out");
    }
  });
});

describe("each provider message acts once (issue 44)", () => {
  it("a replayed signed request (same MessageSid) answers 200 and changes nothing", async () => {
    const f = await queueFixture("pro");
    const phone = randomMobile();
    const older = await joinWithPhone(f, phone);
    const newer = await joinWithPhone(f, phone);
    const sid = `SM${crypto.randomUUID().replace(/-/g, "")}`;

    expect(replyOf(await twilioPost({ MessageSid: sid, From: phone, Body: "ANNULER" }))).toMatch(/annulé/);
    expect((await ticketNow(f, newer.id)).status).toBe("cancelled");
    const replay = await twilioPost({ MessageSid: sid, From: phone, Body: "ANNULER" });
    expect(replyOf(replay)).toBeNull();
    expect((await ticketNow(f, older.id)).status).toBe("waiting");
    expect(await conversation(f, older.id)).toEqual([]);

    const text = `SM${crypto.randomUUID().replace(/-/g, "")}`;
    replyOf(await twilioPost({ MessageSid: text, From: phone, Body: "Je serai là à 10h" }));
    replyOf(await twilioPost({ MessageSid: text, From: phone, Body: "Je serai là à 10h" }));
    expect((await conversation(f, older.id)).filter((m) => m.direction === "in")).toHaveLength(1);
  });

  it("a signed inbound text without MessageSid is a 400 naming it", async () => {
    const res = await twilioPost({ From: randomMobile(), Body: "AIDE", MessageSid: "" });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe("MessageSid");
  });
});

describe("stored inbound texts follow the text rules (CONTRACT §10, issue 44)", () => {
  it("NUL, bidi overrides and lone surrogates are dropped and a 10 kB text is cut", async () => {
    const f = await queueFixture("pro");
    const phone = randomMobile();
    const ticket = await joinWithPhone(f, phone);
    replyOf(await twilioPost({ From: phone, Body: "abc\u0000\u202Egnp.exe\uD800 ok" }));
    replyOf(await twilioPost({ From: phone, Body: "x".repeat(10_000) }));
    const bodies = (await conversation(f, ticket.id)).filter((m) => m.direction === "in").map((m) => m.body as string);
    expect(bodies[0]).toMatch(/^abcgnp\.exe\uFFFD? ok$/);
    expect(bodies[1]!.length).toBe(1_600);
  });
});

void TWILIO_FROM;
