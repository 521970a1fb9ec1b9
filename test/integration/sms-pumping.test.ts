import worker from "../../src/index";
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, queueFixture, type Fixture } from "../helpers/fixtures";
import { capture, eventsOf, feedEvents, inbox, type Captured } from "../helpers/notifications";
import { fakeTwilio, TWILIO } from "../helpers/twilio";

// Issue 26, SMS pumping: what a published widget key lets an attacker spend. Every SMS goes to a
// fake Twilio; the bodies it receives are the SMS the organization pays for.

let captured: Captured | undefined;
afterEach(() => {
  captured?.restore();
  captured = undefined;
  vi.restoreAllMocks();
});

/** The fake Twilio (test/helpers/twilio.ts): every SMS it accepted, with its recipient. */
const twilio = fakeTwilio;

/**
 * The run was 1,000 joins; 100 prove the same cap (10 per address) nine times over, and
 * each join costs about 0.1 s in the test pool on a loaded machine (1,000 took over 3 minutes).
 */
const JOINS_FROM_ONE_ADDRESS = 100;

/** A French mobile of the +33 60 range (all of it is allocated to mobiles). */
const randomMobile = () => `+3360${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;

function widgetJoin(f: Fixture, key: string, phone: string, address: string) {
  return call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: key, body: { phone }, headers: { "CF-Connecting-IP": address } });
}

/** The business's own SMS through the Worker's fetch handler, with the fake Twilio configured. */
async function businessSms(f: Fixture, phone: string) {
  const request = new Request("https://api.test/v1/notifications/sms", {
    method: "POST",
    headers: { Authorization: `Bearer ${f.owner.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ phone, message: "Votre commande est prête", purpose: "announcement" }),
  });
  const ctx = createExecutionContext();
  const res = await worker.fetch!(request as any, { ...env, ...TWILIO } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: (await res.json()) as any };
}

async function policy(f: Fixture, body: Record<string, unknown>) {
  return expectOk(await call("PATCH", `/v1/organizations/${f.organizationId}/sms-policy`, { token: f.owner.token, body }));
}

describe("SMS pumping through a published widget key (issue 26)", () => {
  it("random numbers, one number, premium ranges: at most the documented caps are texted; the business's own SMS still go out; the owner is told at 80 %", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    await policy(f, { allowedCountries: ["FR"] });
    const defaults = expectOk(await call("GET", `/v1/organizations/${f.organizationId}/sms-policy`, { token: f.owner.token }));
    expect(defaults).toMatchObject({
      perPhonePerDay: 3,
      perAddressPerDay: 10,
      perWidgetKeyPerDay: 300,
      perTicket: 4,
      dailyCeiling: 100,
      businessReservePercent: 20,
      alertAtPercent: 80,
      today: { sent: 0, publicLimit: 80 },
    });

    // 1. One address, 1,000 joins with random numbers: 10 are SMS-enabled, the rest refused before any ticket.
    // Sent 50 at a time, as a script would: the counting is exact under concurrency.
    const statuses: number[] = [];
    for (let wave = 0; wave < JOINS_FROM_ONE_ADDRESS / 10; wave++) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => widgetJoin(f, key, randomMobile(), "198.51.100.7")));
      for (const res of answers) {
        statuses.push(res.status);
        if (res.status === 429) expect(res.body.error.details).toMatchObject({ field: "phone", cap: "perAddressPerDay", limit: 10 });
      }
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(JOINS_FROM_ONE_ADDRESS - 10);

    // 2. One number, from 20 addresses: 3 joins.
    const one = "+33611111111";
    const oneNumber: number[] = [];
    for (let i = 0; i < 20; i++) oneNumber.push((await widgetJoin(f, key, one, `203.0.113.${i + 1}`)).status);
    expect(oneNumber.filter((s) => s === 201)).toHaveLength(3);
    const refused = await widgetJoin(f, key, one, "203.0.113.99");
    expectError(refused, 429, "API_RATE_LIMIT_EXCEEDED", "phone");
    expect(refused.body.error.details.cap).toBe("perPhonePerDay");

    // 3. Premium, satellite, personal-number and other countries' ranges: 400 naming phone, nothing counted.
    for (const premium of ["+88213000001", "+97912345678", "+19005551234", "+33899123456", "+447012345678", "+2250701020304"]) {
      expectError(await widgetJoin(f, key, premium, "192.0.2.50"), 400, "VALIDATION_ERROR", "phone");
    }

    // 4. A botnet: a new address and a new number each time, past the day's public share (80 of 100).
    for (let i = 0; i < 75; i++) expect((await widgetJoin(f, key, randomMobile(), `10.1.${i}.1`)).status).toBe(201);

    const sent = twilio();
    await feedEvents(await eventsOf(captured, f.queueId), TWILIO);
    // 10 + 3 + 75 = 88 tickets asked for an SMS; the day's public share is 80.
    expect(sent).toHaveLength(80);
    expect(sent.filter((s) => s.to === one)).toHaveLength(3);

    // The owner heard once that the day reached 80 % of its ceiling.
    const alerts = (await inbox(f.owner.id)).filter((n) => n.type === "sms.ceiling_warning");
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.body).toContain("80 of the 100 SMS");

    // The business's own SMS draw on the reserve the public could not touch.
    for (let i = 0; i < 3; i++) {
      const own = await businessSms(f, "+33622222222");
      expect(own.status, JSON.stringify(own.body)).toBe(201);
      expect(own.body.data.status).toBe("sent");
    }
    expect(sent).toHaveLength(83);
    expect(sent.at(-1)).toMatchObject({ to: "+33622222222", body: "Votre commande est prête" });
    expect((await inbox(f.owner.id)).filter((n) => n.type === "sms.ceiling_warning")).toHaveLength(1);
    const today = expectOk(await call("GET", `/v1/organizations/${f.organizationId}/sms-policy`, { token: f.owner.token })).today;
    expect(today).toMatchObject({ sent: 83, publicLimit: 80 });
  }, 180_000);

  it("a ticket gets at most perTicket SMS, and a number whose first SMS failed gets no later one", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    await policy(f, { perTicket: 1 });
    expectOk(await widgetJoin(f, key, "+33611223344", "192.0.2.10"), 201);
    expectOk(await widgetJoin(f, key, "+33655667788", "192.0.2.11"), 201);
    /** Every SMS the provider was asked to send, refused or not. */
    const sent: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (_input: RequestInfo | URL, init?: RequestInit) => {
      const to = new URLSearchParams(String(init?.body)).get("To")!;
      sent.push(to);
      if (to === "+33655667788") return Response.json({ code: 21614, message: "not a mobile number" }, { status: 400 });
      return Response.json({ sid: "SM1" }, { status: 201 });
    });
    await feedEvents(await eventsOf(captured, f.queueId), TWILIO);
    expect(sent.sort()).toEqual(["+33611223344", "+33655667788"]);

    // The first ticket is called: it had its one SMS.
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    await feedEvents(await eventsOf(captured, f.queueId), TWILIO);
    expect(sent.sort()).toEqual(["+33611223344", "+33655667788"]);

    // With room per ticket, the second is called: its number never received a first message.
    await policy(f, { perTicket: 5 });
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    await feedEvents(await eventsOf(captured, f.queueId), TWILIO);
    expect(sent.sort()).toEqual(["+33611223344", "+33655667788"]);
  });
});
