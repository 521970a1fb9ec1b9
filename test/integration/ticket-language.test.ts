import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, queueFixture } from "../helpers/fixtures";
import { capture, smsSent, type Captured } from "../helpers/notifications";

// Issue 39: the ticket's language end to end (the kiosk and the widget send the language the
// visitor chose; the SMS speaks it), and the clerk's walk-in that takes the customer's phone.

let captured: Captured | undefined;
afterEach(() => {
  captured?.restore();
  captured = undefined;
  vi.restoreAllMocks();
});

let addressNo = 0;
const nextAddress = () => `203.0.113.${++addressNo}`;

/** The SMS bodies the events gave rise to (the outbox provider keeps each on its delivery row). */
const smsBodies = async (queueId: string) => (await smsSent(captured!, queueId)).map((m) => m.body);

describe("the ticket's language", () => {
  it("a widget (kiosk) join with language fr is texted in French, with en in English, whatever the organization's default", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    for (const [language, phone, expected] of [
      ["fr", "+33612340101", /^Vous êtes en attente pour /],
      ["en", "+33612340102", /^You are in line for /],
    ] as const) {
      const t = expectOk(
        await call("POST", `/v1/widget/queue/${f.queueId}/join`, {
          apiKey: key,
          body: { phone, language },
          headers: { "CF-Connecting-IP": nextAddress() },
        }),
        201,
      );
      const bodies = await smsBodies(f.queueId);
      expect(bodies, `${language}: ${t.displayCode}`).toHaveLength(1);
      expect(bodies[0]).toMatch(expected);
    }
  });

  it("a clerk's walk-in takes the customer's phone and language: the SMS goes out (a walk-in without a phone stays silent)", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: { visitorName: "Silent" } }), 201);
    expect(await smsBodies(f.queueId)).toEqual([]);
    const t = expectOk(
      await call("POST", `/v1/queues/${f.queueId}/operator-join`, {
        token: f.owner.token,
        body: { visitorName: "Awa", phone: "+33612340103", language: "fr" },
        headers: { "CF-Connecting-IP": nextAddress() },
      }),
      201,
    );
    expect(t.isGhostMode).toBe(true);
    expect(t.phoneMasked).toBe("+33 6 •• •• •• 03");
    const bodies = await smsBodies(f.queueId);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toMatch(/^Vous êtes en attente pour /);
    const vip = expectOk(
      await call("POST", `/v1/queues/${f.queueId}/vip-ticket`, {
        token: f.owner.token,
        body: { phone: "+33612340104", language: "en" },
        headers: { "CF-Connecting-IP": nextAddress() },
      }),
      201,
    );
    expect(vip.isPriority).toBe(true);
    expect(await smsBodies(f.queueId)).toEqual([expect.stringMatching(/^You are in line for /)]);
  });

  it("a walk-in's phone is checked as a widget join's: a landline is refused naming phone", async () => {
    const f = await queueFixture("pro");
    const res = await call("POST", `/v1/queues/${f.queueId}/operator-join`, {
      token: f.owner.token,
      body: { phone: "+33145678901" },
      headers: { "CF-Connecting-IP": nextAddress() },
    });
    expectError(res, 400, "VALIDATION_ERROR", "phone");
  });
});
