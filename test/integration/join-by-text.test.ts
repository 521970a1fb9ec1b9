import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { queueFixture, walkIn, type Fixture } from "../helpers/fixtures";
import { customerText, fakeTwilio, randomMobile } from "../helpers/twilio";

// Issue 45: a queue's smsKeyword texted to the organization's number takes a ticket through the
// one join (capacity and the rest refuse as anywhere), answered with the code and the place.

afterEach(() => vi.restoreAllMocks());

async function ownNumber(f: Fixture): Promise<string> {
  const number = `+3375${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
  await env.DB.prepare("INSERT INTO sms_senders (number, organization_id, created_at) VALUES (?, ?, ?)")
    .bind(number, f.organizationId, Date.now())
    .run();
  return number;
}

const keyword = () => `MAIRIE${Math.floor(Math.random() * 1e6)}`;
const setKeyword = (f: Fixture, smsKeyword: string | null, queueId = f.queueId) =>
  call("PATCH", `/v1/business/queues/${queueId}`, { token: f.owner.token, body: { smsKeyword } });
const listing = async (f: Fixture) => expectOk(await call("GET", `/v1/queues/${f.queueId}/tickets`, { token: f.owner.token })) as any[];

describe("join by text (issue 45)", () => {
  it("the keyword is validated, stored in upper case, unique in the organization", async () => {
    const f = await queueFixture("pro");
    const word = keyword();
    expect(expectOk(await setKeyword(f, word.toLowerCase())).smsKeyword).toBe(word);
    for (const bad of ["ICI", "stop", "1ABC", "two words", "A"])
      expectError(await setKeyword(f, bad), 400, "VALIDATION_ERROR", "smsKeyword");
    const other = expectOk(
      await call("POST", "/v1/business/queues", { token: f.owner.token, body: { serviceId: f.serviceId, name: "Other" } }),
      201,
    );
    expectError(await setKeyword(f, word, other.id), 409, "CONFLICT", "smsKeyword");
    expect(expectOk(await setKeyword(f, null)).smsKeyword).toBeNull();
  });

  it("the keyword to the organization's number takes a ticket (source sms), answered with its code and place; again: the same ticket", async () => {
    fakeTwilio();
    const f = await queueFixture("pro");
    const number = await ownNumber(f);
    const word = keyword();
    expectOk(await setKeyword(f, word));
    const phone = randomMobile();
    const reply = (await customerText(phone, ` ${word.toLowerCase()} `, number))!;
    await settle(f.queueId);
    const tickets = await listing(f);
    expect(tickets).toHaveLength(1);
    expect(tickets[0].source).toBe("sms");
    expect(reply).toContain(tickets[0].displayCode);
    expect(reply).toMatch(/number 1 in line/);
    const again = (await customerText(phone, `JOIN ${word}`, number))!;
    expect(again).toContain(tickets[0].displayCode);
    await settle(f.queueId);
    expect(await listing(f)).toHaveLength(1);
    const messages = expectOk(await call("GET", `/v1/tickets/${tickets[0].id}/messages`, { token: f.owner.token })) as any[];
    expect(messages[0]).toMatchObject({ direction: "in", channel: "sms" });
  });

  it("a full queue refuses the join by text with a reply and no ticket; another organization's keyword does not join through this number", async () => {
    fakeTwilio();
    const f = await queueFixture("pro", { maxCapacity: 1 });
    const g = await queueFixture("pro");
    const number = await ownNumber(f);
    const word = keyword();
    const gWord = keyword();
    expectOk(await setKeyword(f, word));
    expectOk(await setKeyword(g, gWord));
    await walkIn(f.owner, f.queueId);
    expect(await customerText(randomMobile(), word, number)).toMatch(/the line is full/);
    expect(await customerText(randomMobile(), gWord, number)).toMatch(/Aucun ticket/);
    await settle(f.queueId);
    await settle(g.queueId);
    expect(await listing(f)).toHaveLength(1);
    expect(await listing(g)).toHaveLength(0);
  });
});
