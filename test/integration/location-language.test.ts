import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, createOrganization, createQueueFixture, registerUser, type QueueFixture } from "../helpers/fixtures";
import { capture, smsSent, type Captured } from "../helpers/notifications";
import { randomMobile } from "../helpers/twilio";

// Issue 42: each location has a default language (docs/languages.md). A visitor who chose none
// gets it on every channel (its SMS, the kiosk, the status page); a language the organization does
// not offer falls back to it, never to an error. It must be one the organization offers.

let captured: Captured | undefined;
afterEach(() => {
  captured?.restore();
  captured = undefined;
});

let addressNo = 0;
const nextAddress = () => `198.51.100.${20 + (++addressNo % 200)}`;

async function branch(): Promise<QueueFixture & { widget: string }> {
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "other" });
  const f = await createQueueFixture(owner, org.id);
  const { key } = await createApiKey(owner, org.id, ["widget"]);
  return { ...f, widget: key };
}

const patchLocation = (f: QueueFixture, body: Record<string, unknown>) =>
  call("PATCH", `/v1/locations/${f.locationId}`, { token: f.owner.token, body });

/** The organization's default is French and it offers `languages`; the location's default is `locationDefault`. */
async function frenchOffering(f: QueueFixture, languages: string[], locationDefault: string): Promise<void> {
  expectOk(
    await call("PATCH", `/v1/organizations/${f.organizationId}`, { token: f.owner.token, body: { languages, defaultLanguage: "fr" } }),
  );
  expectOk(await patchLocation(f, { defaultLanguage: locationDefault }));
}

const widgetJoin = (f: { queueId: string; widget: string }, body: Record<string, unknown>) =>
  call("POST", `/v1/widget/queue/${f.queueId}/join`, {
    apiKey: f.widget,
    body: { phone: randomMobile(), ...body },
    headers: { "CF-Connecting-IP": nextAddress() },
  });

describe("a location's default language", () => {
  it("is set at creation or by PATCH, read back, cleared by null, and must be one the organization offers (400 naming defaultLanguage)", async () => {
    const f = await branch();
    const token = f.owner.token;
    const before = expectOk(await call("GET", `/v1/business/locations`, { token, headers: { "X-Organization-Id": f.organizationId } }));
    expect(before[0].defaultLanguage).toBeNull();

    expect(expectOk(await patchLocation(f, { defaultLanguage: "es" })).defaultLanguage).toBe("es");
    const created = expectOk(
      await call("POST", "/v1/locations", {
        token,
        body: {
          organizationId: f.organizationId,
          name: "Casablanca",
          address: "2 Bd Anfa",
          latitude: 33.59,
          longitude: -7.62,
          defaultLanguage: "ar",
        },
      }),
      201,
    );
    expect(created.defaultLanguage).toBe("ar");

    // Outside the catalogue, or not offered by the organization: refused, naming the field.
    expectError(await patchLocation(f, { defaultLanguage: "xx" }), 400, "VALIDATION_ERROR", "defaultLanguage");
    expectOk(await call("PATCH", `/v1/organizations/${f.organizationId}`, { token, body: { languages: ["fr", "en", "es"] } }));
    const refused = await patchLocation(f, { defaultLanguage: "pt" });
    expectError(refused, 400, "VALIDATION_ERROR", "defaultLanguage");
    expect(refused.body.error.details.reason).toContain("fr, en, es");
    expectError(
      await call("POST", "/v1/locations", {
        token,
        body: {
          organizationId: f.organizationId,
          name: "Lisboa",
          address: "Rua Augusta",
          latitude: 38.71,
          longitude: -9.14,
          defaultLanguage: "pt",
        },
      }),
      400,
      "VALIDATION_ERROR",
      "defaultLanguage",
    );
    // Still Spanish after the refusals; null gives the organization's back.
    const search = expectOk(await call("GET", `/v1/locations/search?organizationId=${f.organizationId}&q=Main`, { token }));
    expect(search[0].defaultLanguage).toBe("es");
    expect(expectOk(await patchLocation(f, { defaultLanguage: null })).defaultLanguage).toBeNull();
  });

  it("speaks to a visitor who chose none on every channel: a widget join's and a clerk's walk-in's SMS are Spanish, the kiosk and the ticket's place open in Spanish", async () => {
    captured = capture();
    const f = await branch();
    expectOk(await patchLocation(f, { defaultLanguage: "es" }));

    const kiosk = expectOk(await call("GET", `/v1/widget/locations/${f.locationId}/kiosk`, { apiKey: f.widget }));
    expect(kiosk.defaultLanguage).toBe("es");

    const ticket = expectOk(await widgetJoin(f, {}), 201);
    const place = expectOk(
      await call("GET", `/v1/widget/tickets/${ticket.id}/place`, { headers: { "X-Ticket-Token": ticket.ticketToken } }),
    );
    expect(place.defaultLanguage).toBe("es");

    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: { phone: randomMobile() } }), 201);
    // A visitor's own choice still wins.
    expectOk(await widgetJoin(f, { language: "fr" }), 201);

    const bodies = (await smsSent(captured, f.queueId)).map((m) => m.body);
    expect(bodies).toHaveLength(3);
    expect(bodies[0]).toMatch(/^Está en la fila de Main queue, posición 1/);
    expect(bodies[1]).toMatch(/^Está en la fila de Main queue, posición 2/);
    expect(bodies[2]).toMatch(/^Vous êtes en attente pour Main queue, position 3/);
  });

  it("takes a language the organization does not offer; once it stops offering the location's default, the organization's default is used, never an error", async () => {
    captured = capture();
    const f = await branch();
    const token = f.owner.token;
    await frenchOffering(f, ["fr", "ar", "pt"], "ar");
    // Spanish is not offered: the location's Arabic, not the organization's French.
    expectOk(await widgetJoin(f, { language: "es" }), 201);

    // The organization drops Arabic: the location's default is no longer offered, so its own French.
    expectOk(await call("PATCH", `/v1/organizations/${f.organizationId}`, { token, body: { languages: ["fr", "pt"] } }));
    expectOk(await widgetJoin(f, { language: "es" }), 201);
    expect(expectOk(await call("GET", `/v1/widget/locations/${f.locationId}/kiosk`, { apiKey: f.widget })).defaultLanguage).toBe("fr");

    const bodies = (await smsSent(captured, f.queueId)).map((m) => m.body);
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toMatch(/^أنت في طابور Main queue، الترتيب 1/);
    expect(bodies[1]).toMatch(/^Vous êtes en attente pour Main queue, position 2/);
  });

  it("is read once per isolate for a run of joins (issue 43), and a change through the API applies to the very next join", async () => {
    captured = capture();
    const f = await branch();
    const token = f.owner.token;
    await frenchOffering(f, ["fr", "es", "de"], "es");
    const join = async () => expectOk(await widgetJoin(f, {}), 201);
    await join();
    // The facts are kept: the next join reads neither the organization's row nor the service's locations.
    // Every statement the join prepares, on the binding or on the request's D1 session (http/d1-sessions.ts).
    const prepared: string[] = [];
    const prepare = env.DB.prepare.bind(env.DB);
    const withSession = env.DB.withSession.bind(env.DB);
    const spies = [
      vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
        prepared.push(query);
        return prepare(query);
      }),
      vi.spyOn(env.DB, "withSession").mockImplementation((constraint) => {
        const session = withSession(constraint);
        const prepareOnSession = session.prepare.bind(session);
        session.prepare = (query: string) => {
          prepared.push(query);
          return prepareOnSession(query);
        };
        return session;
      }),
    ];
    try {
      await join();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    // It did reach D1 (the SMS guard's counters, the ticket's projection): the spies see the session's statements.
    expect(prepared.length).toBeGreaterThan(0);
    expect(prepared.filter((q) => /from "service_locations"/.test(q))).toEqual([]);
    expect(prepared.filter((q) => /select "default_language", "languages" from "organizations"/.test(q))).toEqual([]);
    // Each change through the API forgets them: the location's default, the organization's
    // languages (German no longer offered: the organization's French), the service's locations.
    expectOk(await patchLocation(f, { defaultLanguage: "de" }));
    await join();
    expectOk(await call("PATCH", `/v1/organizations/${f.organizationId}`, { token, body: { languages: ["fr", "es"] } }));
    await join();
    const annex = expectOk(
      await call("POST", "/v1/locations", {
        token,
        body: {
          organizationId: f.organizationId,
          name: "Annex",
          address: "2 rue de la Paix",
          latitude: 48.86,
          longitude: 2.33,
          timezone: "Europe/Paris",
          defaultLanguage: "es",
        },
      }),
      201,
    );
    expectOk(await call("PATCH", `/v1/services/${f.serviceId}`, { token, body: { locationIds: [annex.id] } }));
    await join();

    const bodies = (await smsSent(captured, f.queueId)).map((m) => m.body);
    expect(bodies).toHaveLength(5);
    expect(bodies[0]).toMatch(/^Está en la fila/);
    expect(bodies[1]).toMatch(/^Está en la fila/);
    expect(bodies[2]).toMatch(/^Sie sind in der Warteschlange/);
    expect(bodies[3]).toMatch(/^Vous êtes en attente/);
    expect(bodies[4]).toMatch(/^Está en la fila/);
  });
});
