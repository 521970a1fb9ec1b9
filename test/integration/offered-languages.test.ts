import { afterEach, describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, createOrganization, createQueueFixture, queueFixture, registerUser } from "../helpers/fixtures";
import { capture, smsSent, type Captured } from "../helpers/notifications";
import { randomMobile } from "../helpers/twilio";
import { LANGUAGES } from "../../src/domain/languages";

// Issue 42: each organization lists the languages it offers (docs/languages.md). The pages' language
// switch (widget info, kiosk, the status page's place) shows only those; a join in a language the
// business does not offer gets its default language, never an error; an unknown code is refused
// naming the field.

let captured: Captured | undefined;
afterEach(() => {
  captured?.restore();
  captured = undefined;
});

/** The whole catalogue, in its order (French and English first, then by code). */
const ALL = LANGUAGES;
let addressNo = 0;
const nextAddress = () => `198.51.100.${10 + (++addressNo % 200)}`;

const patch = (token: string, organizationId: string, body: Record<string, unknown>) =>
  call("PATCH", `/v1/organizations/${organizationId}`, { token, body });

describe("an organization's languages", () => {
  it("offers the whole catalogue until set; the record, widget info, the kiosk and a ticket's place then list only its languages, in the catalogue's order", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "other" });
    const f = await createQueueFixture(owner, org.id);
    const widget = await createApiKey(owner, org.id, ["widget"]);

    expect(expectOk(await call("GET", `/v1/organizations/${org.id}`, { token: owner.token })).languages).toEqual(ALL);
    expect(expectOk(await call("GET", `/v1/widget/organization/${org.id}/info`, { apiKey: widget.key })).languages).toEqual(ALL);

    const updated = expectOk(await patch(owner.token, org.id, { languages: ["ar", "fr"], defaultLanguage: "fr" }));
    expect(updated.languages).toEqual(["fr", "ar"]);
    expect(updated.defaultLanguage).toBe("fr");

    const info = expectOk(await call("GET", `/v1/widget/organization/${org.id}/info`, { apiKey: widget.key }));
    expect([info.languages, info.defaultLanguage]).toEqual([["fr", "ar"], "fr"]);
    const kiosk = expectOk(await call("GET", `/v1/widget/locations/${f.locationId}/kiosk`, { apiKey: widget.key }));
    expect([kiosk.languages, kiosk.defaultLanguage]).toEqual([["fr", "ar"], "fr"]);
    const ticket = expectOk(
      await call("POST", `/v1/widget/queue/${f.queueId}/join`, {
        apiKey: widget.key,
        body: { language: "ar" },
        headers: { "CF-Connecting-IP": nextAddress() },
      }),
      201,
    );
    const place = expectOk(
      await call("GET", `/v1/widget/tickets/${ticket.id}/place`, { headers: { "X-Ticket-Token": ticket.ticketToken } }),
    );
    expect([place.languages, place.defaultLanguage]).toEqual([["fr", "ar"], "fr"]);

    // null offers the whole catalogue again.
    expect(expectOk(await patch(owner.token, org.id, { languages: null })).languages).toEqual(ALL);
  });

  it("refuses an unknown code, a repeated one, an empty list, and a list without the default language, naming the field", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "other" });
    expectError(await patch(owner.token, org.id, { languages: ["fr", "xx"] }), 400, "VALIDATION_ERROR", "languages.1");
    expectError(await patch(owner.token, org.id, { languages: "fr" }), 400, "VALIDATION_ERROR", "languages");
    expectError(await patch(owner.token, org.id, { languages: ["en", "en"] }), 400, "VALIDATION_ERROR", "languages");
    expectError(await patch(owner.token, org.id, { languages: [] }), 400, "VALIDATION_ERROR", "languages");
    // The organization's default is English: a list without it is refused.
    const without = await patch(owner.token, org.id, { languages: ["fr", "es"] });
    expectError(without, 400, "VALIDATION_ERROR", "languages");
    expect(without.body.error.details.reason).toContain("defaultLanguage (en)");
    // Both at once is fine; then a default outside the list is refused naming defaultLanguage.
    expectOk(await patch(owner.token, org.id, { languages: ["fr", "es"], defaultLanguage: "es" }));
    expectError(await patch(owner.token, org.id, { defaultLanguage: "en" }), 400, "VALIDATION_ERROR", "defaultLanguage");
    const after = expectOk(await call("GET", `/v1/organizations/${org.id}`, { token: owner.token }));
    expect([after.languages, after.defaultLanguage]).toEqual([["fr", "es"], "es"]);
    // Only its own managers may set them: to anyone else the organization does not exist.
    const stranger = await registerUser();
    expectError(await patch(stranger.token, org.id, { languages: ["fr", "es"] }), 404, "NOT_FOUND");
  });
});

describe("a join in a language the business does not offer", () => {
  it("gets the organization's default language (its SMS is French), while an offered language is kept (Arabic)", async () => {
    captured = capture();
    const f = await queueFixture("pro");
    expectOk(await patch(f.owner.token, f.organizationId, { languages: ["fr", "ar"], defaultLanguage: "fr" }));
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const join = (language: string) =>
      call("POST", `/v1/widget/queue/${f.queueId}/join`, {
        apiKey: key,
        body: { phone: randomMobile(), language },
        headers: { "CF-Connecting-IP": nextAddress() },
      });
    const spanish = expectOk(await join("es"), 201);
    const arabic = expectOk(await join("ar"), 201);
    expect([spanish.position, arabic.position]).toEqual([1, 2]);
    const bodies = (await smsSent(captured, f.queueId)).map((m) => m.body);
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toMatch(/^Vous êtes en attente pour Main line, position 1/);
    expect(bodies[1]).toMatch(/^أنت في طابور Main line، الترتيب 2/);
    // A code outside the catalogue is still refused, naming the field.
    expectError(await join("xx"), 400, "VALIDATION_ERROR", "language");
  });
});
