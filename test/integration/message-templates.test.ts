import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { addMember, addQueue, createApiKey, queueFixture } from "../helpers/fixtures";
import { capture, smsSent, type Captured } from "../helpers/notifications";
import { LANGUAGES } from "../../src/domain/languages";

// Issue 42, "the business's own words": every customer message rewritten per organization and
// per queue, in each language, checked on save, previewed as the customer will read it.

let captured: Captured | undefined;
afterEach(() => {
  captured?.restore();
  captured = undefined;
  vi.restoreAllMocks();
});

let addressNo = 0;
const nextAddress = () => `192.0.2.${++addressNo}`;

/** The SMS the queue's events gave rise to, as the provider receives them (`title: body`). */
const smsBodies = async (queueId: string) => (await smsSent(captured!, queueId)).map((m) => (m.title ? `${m.title}: ${m.body}` : m.body));

const templates = (orgId: string) => `/v1/organizations/${orgId}/message-templates`;

describe("message templates", () => {
  it("a queue's text wins over the organization's, which wins over ours; the SMS says what the preview showed", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    const other = await addQueue(f, { name: "Caisse" });
    const token = f.owner.token;
    const orgText = expectOk(
      await call("PUT", `${templates(f.organizationId)}/ticket.created`, {
        token,
        body: { language: "fr", body: "Bienvenue ! Ticket {code} pour {queue}[, {position}e dans la file]." },
      }),
    );
    expect(orgText).toMatchObject({ key: "ticket.created", language: "fr", queueId: null, source: "organization" });
    expect(orgText.title).toBe("Ticket {code}");
    const queueText = expectOk(
      await call("PUT", `${templates(f.organizationId)}/ticket.created`, {
        token,
        body: { language: "fr", queueId: f.queueId, body: "On s'occupe de vous très vite." },
      }),
    );
    expect(queueText.source).toBe("queue");

    const preview = expectOk(
      await call("POST", `${templates(f.organizationId)}/ticket.created/preview`, { token, body: { language: "fr", queueId: f.queueId } }),
    );
    expect(preview).toMatchObject({
      source: "queue",
      body: "On s'occupe de vous très vite.",
      smsText: "Ticket A012: On s'occupe de vous très vite.",
    });

    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const join = (queueId: string, phone: string, language: string) =>
      call("POST", `/v1/widget/queue/${queueId}/join`, {
        apiKey: key,
        body: { phone, language },
        headers: { "CF-Connecting-IP": nextAddress() },
      });

    const mine = expectOk(await join(f.queueId, "+33612345001", "fr"), 201);
    expect(await smsBodies(f.queueId)).toEqual([preview.smsText.replaceAll("A012", mine.displayCode)]);

    const there = expectOk(await join(other, "+33612345002", "fr"), 201);
    expect(await smsBodies(other)).toEqual([
      `Ticket ${there.displayCode}: Bienvenue ! Ticket ${there.displayCode} pour Caisse, 1e dans la file.`,
    ]);

    // English was not rewritten: ours.
    captured.restore();
    captured = capture();
    expectOk(await join(other, "+33612345003", "en"), 201);
    expect(await smsBodies(other)).toEqual([expect.stringMatching(/^Ticket \S+: You are in line for Caisse, position 2/)]);

    // Back to the organization's text for the queue, and to ours for the organization.
    const reset = expectOk(
      await call("DELETE", `${templates(f.organizationId)}/ticket.created?language=fr&queueId=${f.queueId}`, { token }),
    );
    expect(reset).toMatchObject({ source: "organization", body: orgText.body });
    const ours = expectOk(await call("DELETE", `${templates(f.organizationId)}/ticket.created?language=fr`, { token }));
    expect(ours.source).toBe("default");
    expect(ours.body).toMatch(/^Vous êtes en attente pour \{queue\}/);
  });

  it("refuses unknown variables, a missing required one, and broken brackets, naming the field and the variable", async () => {
    const f = await queueFixture("pro");
    const put = (k: string, body: Record<string, unknown>) =>
      call("PUT", `${templates(f.organizationId)}/${k}`, { token: f.owner.token, body });
    const unknown = await put("ticket.called", { language: "fr", body: "Ticket {code}, allez au {guichet}" });
    expectError(unknown, 400, "VALIDATION_ERROR", "body");
    expect(unknown.body.error.details.variable).toBe("guichet");
    expect(unknown.body.error.message).toContain("{counter}");
    expectError(await put("ticket.called", { language: "fr", title: "{nom}", body: "Ticket {code}" }), 400, "VALIDATION_ERROR", "title");
    const missing = await put("phone.code", { language: "en", body: "Your ticket {code} needs a code" });
    expectError(missing, 400, "VALIDATION_ERROR", "body");
    expect(missing.body.error.details.variable).toBe("otp");
    // Required means printed every time: inside an optional clause it is not (the title counts).
    expectError(
      await put("ticket.called", { language: "en", title: "Now", body: "It's your turn[ {code}]" }),
      400,
      "VALIDATION_ERROR",
      "body",
    );
    expectOk(await put("ticket.called", { language: "en", title: "Ticket {code}", body: "It's your turn[ at {counter}]" }));
    expectError(await put("ticket.called", { language: "en", body: "Ticket {code} [to {counter}" }), 400, "VALIDATION_ERROR", "body");
    expectError(await put("ticket.called", { language: "en", body: "Ticket {code to desk" }), 400, "VALIDATION_ERROR", "body");
    expectError(await put("queue.long_wait", { language: "en", body: "{queue}" }), 400, "VALIDATION_ERROR", "templateKey");
    expectError(await put("ticket.called", { language: "xx", body: "Ticket {code}" }), 400, "VALIDATION_ERROR", "language");
    expectError(await put("ticket.called", { language: "en", body: "   " }), 400, "VALIDATION_ERROR", "body");
    // A draft preview is checked as a save is.
    const draft = await call("POST", `${templates(f.organizationId)}/ticket.called/preview`, {
      token: f.owner.token,
      body: { language: "en", body: "Go to {desk}" },
    });
    expectError(draft, 400, "VALIDATION_ERROR", "body");
    // Nothing was saved.
    const list = expectOk(await call("GET", `${templates(f.organizationId)}?templateKey=ticket.called`, { token: f.owner.token }));
    expect(list.map((t: any) => [t.language, t.source])).toEqual(LANGUAGES.map((l) => [l, l === "en" ? "organization" : "default"]));
  });

  it("counts SMS segments and encoding: GSM-7, an accented capital that forces UCS-2, and 161 characters", async () => {
    const f = await queueFixture("pro");
    const preview = async (body: string) =>
      expectOk(
        await call("POST", `${templates(f.organizationId)}/ticket.called/preview`, {
          token: f.owner.token,
          body: { language: "fr", title: "", body },
        }),
      );
    const plain = await preview("Ticket {code}: come to the desk now");
    expect(plain.sms).toEqual({ encoding: "GSM-7", segments: 1, characters: 33, nonGsmCharacters: [] });
    const accented = await preview("Ticket {code} : À vous, présentez-vous");
    expect(accented.sms).toMatchObject({ encoding: "UCS-2", segments: 1, nonGsmCharacters: ["À"] });
    // 161 characters once {code} is A012: two segments of 153.
    const long = await preview(`Ticket {code} ${"x".repeat(161 - "Ticket A012 ".length)}`);
    expect(long.body).toHaveLength(161);
    expect(long.sms).toMatchObject({ encoding: "GSM-7", segments: 2, characters: 161 });
    // The saved text's cost is shown with it.
    const saved = expectOk(
      await call("PUT", `${templates(f.organizationId)}/ticket.called`, {
        token: f.owner.token,
        body: { language: "fr", title: "", body: "Ticket {code} : À vous[ au {counter}]" },
      }),
    );
    expect(saved.sms.encoding).toBe("UCS-2");
  });

  it("only the organization's managers (ORG_MANAGE) read or write its texts; another organization's queue is unknown", async () => {
    const f = await queueFixture("pro");
    const g = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    const body = { language: "en", body: "Ticket {code}" };
    expectError(
      await call("PUT", `${templates(f.organizationId)}/ticket.called`, { token: operator.token, body }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(await call("GET", templates(f.organizationId), { token: operator.token }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("PUT", `${templates(f.organizationId)}/ticket.called`, { token: g.owner.token, body }), 404, "NOT_FOUND");
    expectError(
      await call("PUT", `${templates(f.organizationId)}/ticket.called`, { token: f.owner.token, body: { ...body, queueId: g.queueId } }),
      404,
      "NOT_FOUND",
    );
    const all = expectOk(await call("GET", templates(f.organizationId), { token: f.owner.token }));
    expect(all.length).toBe(22 * LANGUAGES.length);
    expect(all.every((t: any) => t.source === "default")).toBe(true);
  });
});
