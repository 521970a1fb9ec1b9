import { createExecutionContext, createMessageBatch, env, getQueueResult, SELF } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import worker from "../../src/index";
import { now } from "../../src/lib/clock";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { sweep } from "../helpers/cron";
import { addMember, createApiKey, createOrganization, createQueueFixture, registerUser, type QueueFixture } from "../helpers/fixtures";

// Intake questions (docs/visits.md): a service's questions, answered at every entry channel,
// kept on the ticket, edited by staff, in the export, in webhooks without the personal ones,
// and erased with the visitor's personal data by retention.

const DAY = 86_400_000;

// The room's events, captured as they leave its outbox (the EVENTS queue), replayed below
// through the real consumer to see the webhook bodies.
const sent: DomainEventMessage[] = [];
const realSendBatch = env.EVENTS.sendBatch;
beforeAll(() => {
  env.EVENTS.sendBatch = async (messages) => {
    for (const m of messages) sent.push(m.body as DomainEventMessage);
    return undefined as never;
  };
});
afterAll(() => {
  env.EVENTS.sendBatch = realSendBatch;
});

const FIELDS = [
  {
    key: "reason",
    label: { fr: "Motif", en: "Reason" },
    type: "select",
    options: [
      { value: "passport", label: { fr: "Passeport", en: "Passport" } },
      { value: "lost_card", label: { fr: "Carte perdue", en: "Lost card" } },
    ],
    required: "at_join",
  },
  { key: "account", label: { fr: "Compte", en: "Account" }, type: "text", personal: true },
  { key: "birth", label: { fr: "Naissance", en: "Birth date" }, type: "date", personal: true },
  { key: "people", label: { fr: "Personnes", en: "People" }, type: "number" },
];

type Setup = QueueFixture & { admin: string; widget: string; customer: { token: string } };

async function setup(): Promise<Setup> {
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "retail" });
  const f = await createQueueFixture(owner, org.id);
  const admin = (await createApiKey(owner, org.id, ["admin"])).key;
  const widget = (await createApiKey(owner, org.id, ["widget"])).key;
  expectOk(await call("PUT", `/v1/services/${f.serviceId}/intake`, { apiKey: admin, body: { fields: FIELDS } }));
  return { ...f, admin, widget, customer: await registerUser({ accountType: "customer" }) };
}

/** Every entry channel that takes answers: the join as that channel sends it. */
type Join = (intake: Record<string, unknown> | undefined) => Promise<any>;
function channels(s: Setup): Record<"api" | "walkIn" | "widget" | "kiosk" | "remote", Join> {
  const body = (intake: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}) => ({
    ...extra,
    ...(intake === undefined ? {} : { intake }),
  });
  return {
    api: (intake) => call("POST", `/v1/queues/${s.queueId}/join`, { token: s.customer.token, body: body(intake) }),
    walkIn: (intake) => call("POST", `/v1/queues/${s.queueId}/operator-join`, { apiKey: s.admin, body: body(intake) }),
    // The widget and the kiosk page both join through the widget route with a widget key.
    widget: (intake) => call("POST", `/v1/widget/queue/${s.queueId}/join`, { apiKey: s.widget, body: body(intake) }),
    kiosk: (intake) => call("POST", `/v1/widget/queue/${s.queueId}/join`, { apiKey: s.widget, body: body(intake, { partySize: 2 }) }),
    remote: async (intake) => {
      // A customer may have one live ticket per queue in remote join: a new one each time.
      const customer = await registerUser({ accountType: "customer" });
      return call("POST", `/v1/remote-join/${s.queueId}/start`, {
        token: customer.token,
        body: body(intake, { latitude: 48.8566, longitude: 2.3532 }),
      });
    },
  };
}

const ticketOf = (res: any, status = 201) => {
  const data = expectOk(res, status);
  return data.ticket ?? data;
};

describe("PUT/GET /v1/services/{serviceId}/intake", () => {
  it("keeps the questions, shows them to operators and the widget, refuses a malformed definition by field", async () => {
    const s = await setup();
    const got = expectOk(await call("GET", `/v1/services/${s.serviceId}/intake`, { token: s.owner.token }));
    expect(got.fields.map((f: any) => [f.key, f.required, f.personal])).toEqual([
      ["reason", "at_join", false],
      ["account", "never", true],
      ["birth", "never", true],
      ["people", "never", false],
    ]);
    const viaWidget = expectOk(await call("GET", `/v1/widget/queue/${s.queueId}/intake`, { apiKey: s.widget }));
    expect(viaWidget.fields).toEqual(got.fields);

    const operator = await addMember(s.owner, s.organizationId, "operator");
    expectOk(await call("GET", `/v1/services/${s.serviceId}/intake`, { token: operator.token }));
    expectError(
      await call("PUT", `/v1/services/${s.serviceId}/intake`, { token: operator.token, body: { fields: [] } }),
      403,
      "AUTHORIZATION_ERROR",
    );

    const put = (fields: unknown[]) => call("PUT", `/v1/services/${s.serviceId}/intake`, { apiKey: s.admin, body: { fields } });
    expectError(await put([FIELDS[1], FIELDS[1]]), 400, "VALIDATION_ERROR", "fields.1.key");
    expectError(await put([{ ...FIELDS[0], options: undefined }]), 400, "VALIDATION_ERROR", "fields.0.options");
    expectError(
      await put([{ ...FIELDS[1], options: [{ value: "x", label: { fr: "x", en: "x" } }] }]),
      400,
      "VALIDATION_ERROR",
      "fields.0.options",
    );
    expectError(await put([{ ...FIELDS[1], type: "colour" }]), 400, "VALIDATION_ERROR");
    expectError(await put([{ ...FIELDS[1], key: "Bad Key" }]), 400, "VALIDATION_ERROR");
    // Unchanged by the refusals.
    expect(expectOk(await call("GET", `/v1/services/${s.serviceId}/intake`, { apiKey: s.admin })).fields).toHaveLength(4);
  });
});

describe("answers at join, through every entry channel", () => {
  it("refuses a missing required answer, a select outside its options and an unknown key, naming the field; keeps good answers", async () => {
    const s = await setup();
    for (const [name, join] of Object.entries(channels(s))) {
      const missing = await join({ account: "FR76 1234" });
      expectError(missing, 400, "VALIDATION_ERROR", "intake.reason");
      expect(missing.body.error.details.reason, name).toBe("is required");

      const none = await join(undefined);
      expectError(none, 400, "VALIDATION_ERROR", "intake.reason");

      const outside = await join({ reason: "haircut" });
      expectError(outside, 400, "VALIDATION_ERROR", "intake.reason");
      expect(outside.body.error.details.reason).toContain("passport");

      const several = await join({ reason: "haircut", birth: "2026-02-30", people: "three", colour: "red" });
      expectError(several, 400, "VALIDATION_ERROR", "intake.reason");
      expect(several.body.error.details.issues.map((i: any) => i.field)).toEqual([
        "intake.reason",
        "intake.birth",
        "intake.people",
        "intake.colour",
      ]);

      const ticket = ticketOf(await join({ reason: "passport", account: "FR76 1234", people: 2 }));
      expect(ticket.intake, name).toEqual({ reason: "passport", account: "FR76 1234", people: 2 });
      // The operator's view of the ticket carries the answers too.
      expect(expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { apiKey: s.admin })).intake).toEqual(ticket.intake);
    }
  });

  it("a QR scan gives no answers: a service with a required question refuses it, naming the question", async () => {
    const s = await setup();
    const qr = expectOk(await call("POST", "/v1/qr-tokens", { apiKey: s.admin, body: { purpose: "queue_join", queueId: s.queueId } }), 201);
    const res = await call("POST", "/v1/qr/scan", {
      token: s.customer.token,
      body: { token: qr.token, latitude: 48.8566, longitude: 2.3522 },
    });
    expectError(res, 400, "VALIDATION_ERROR", "intake.reason");
  });
});

describe("PATCH /v1/tickets/{ticketId}/intake", () => {
  it("lets staff change and clear answers, checked like a join; the owner cannot; a required answer is not cleared", async () => {
    const s = await setup();
    const ticket = ticketOf(await channels(s).api({ reason: "passport", account: "FR76 1234" }));
    const patch = (answers: Record<string, unknown>, auth: Record<string, string> = { apiKey: s.admin }) =>
      call("PATCH", `/v1/tickets/${ticket.id}/intake`, { ...auth, body: { answers } });

    const changed = expectOk(await patch({ reason: "lost_card", account: null, people: 3 }));
    expect(changed.intake).toEqual({ reason: "lost_card", people: 3 });
    expect(expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { token: s.customer.token })).intake).toEqual({
      reason: "lost_card",
      people: 3,
    });

    expectError(await patch({ reason: null }), 400, "VALIDATION_ERROR", "intake.reason");
    expectError(await patch({ people: "many" }), 400, "VALIDATION_ERROR", "intake.people");
    expectError(await patch({ colour: "red" }), 400, "VALIDATION_ERROR", "intake.colour");
    // The owner is no member: the ticket's queue is not theirs to operate (404, never revealing more).
    expectError(await patch({ people: 1 }, { token: s.customer.token }), 404, "NOT_FOUND");
    expect(expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { apiKey: s.admin })).intake).toEqual({ reason: "lost_card", people: 3 });
  });
});

describe("answers follow the visitor", () => {
  it("a transfer to another queue and a rejoin recovery keep the answers, personal ones included", async () => {
    const s = await setup();
    const other = expectOk(
      await call("POST", "/v1/business/queues", {
        apiKey: s.admin,
        body: { serviceId: s.serviceId, name: unique("q") },
      }),
      201,
    );
    const answers = { reason: "lost_card", account: "FR76 9999" };
    const ticket = ticketOf(await channels(s).walkIn(answers));
    const moved = expectOk(
      await call("POST", `/v1/tickets/${ticket.id}/transfer-queue`, { apiKey: s.admin, body: { targetQueueId: other.id } }),
    );
    const newId = moved.transferredToId ?? moved.id;
    const admitted = expectOk(await call("GET", `/v1/tickets/${newId}`, { apiKey: s.admin }));
    expect(admitted.queueId).toBe(other.id);
    expect(admitted.intake).toEqual(answers);

    expectOk(await call("POST", `/v1/queues/${other.id}/call-next`, { apiKey: s.admin }));
    expectOk(await call("POST", `/v1/tickets/${newId}/skip-absent`, { apiKey: s.admin, body: { reason: "absent" } }));
    const recovered = expectOk(await call("POST", `/v1/tickets/${newId}/recover`, { apiKey: s.admin, body: { recoveryOption: "rejoin" } }));
    expect(recovered.id).not.toBe(newId);
    expect(recovered.intake).toEqual(answers);
  });
});

describe("answers beyond the ticket: webhooks, export, retention", () => {
  it("webhooks carry the open answers only; the export carries all; retention erases the personal ones in D1", async () => {
    testClock.set("2026-03-10T09:00:00.000Z");
    const s = await setup();
    const hook = expectOk(
      await call("POST", `/v1/organizations/${s.organizationId}/webhooks`, {
        apiKey: s.admin,
        body: { url: "https://hooks.receiver.com/x", events: ["ticket.created", "ticket.intake_updated"] },
      }),
      201,
    );
    const before = sent.length;
    const ticket = ticketOf(await channels(s).walkIn({ reason: "passport", account: "FR76 1234", birth: "1990-04-01" }));
    expectOk(await call("PATCH", `/v1/tickets/${ticket.id}/intake`, { apiKey: s.admin, body: { answers: { people: 2 } } }));
    await settle(s.queueId);
    const events = sent.slice(before).filter((e) => e.ticketId === ticket.id);
    expect(events.map((e) => e.type)).toEqual(["ticket.created", "ticket.intake_updated"]);
    expect(events[0]!.data.intake).toEqual({ reason: "passport" });
    expect(events[1]!.data.intake).toEqual({ reason: "passport", people: 2 });
    expect(JSON.stringify(events)).not.toMatch(/FR76|1990-04-01/);

    // Through the real consumer: the stored webhook bodies have the open answers and no personal one.
    const batch = createMessageBatch(
      "queue-service-events",
      events.map((e, i) => ({ id: `m${i}${unique()}`, timestamp: new Date(), attempts: 1, body: e })),
    );
    const ctx = createExecutionContext();
    const stub = { send: async () => undefined, sendBatch: async () => undefined };
    await worker.queue(batch as MessageBatch<any>, { ...env, WEBHOOKS: stub } as unknown as typeof env, ctx);
    await getQueueResult(batch, ctx);
    const stored = await env.DB.prepare("SELECT event_type, payload FROM webhook_deliveries WHERE webhook_id = ? ORDER BY event_type")
      .bind(hook.id)
      .all<{ event_type: string; payload: string }>();
    expect(stored.results.map((r) => r.event_type)).toEqual(["ticket.created", "ticket.intake_updated"]);
    expect(JSON.parse(stored.results[0]!.payload).data.intake).toEqual({ reason: "passport" });
    expect(stored.results.map((r) => r.payload).join()).not.toMatch(/FR76|1990-04-01/);

    // The CSV export: staff's record, every answer.
    const res = await SELF.fetch(`https://api.test/v1/analytics/export.csv?from=2026-03-10&to=2026-03-11&queueId=${s.queueId}`, {
      headers: { "X-API-Key": s.admin },
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const [header, row] = text
      .replace(/^\uFEFF/, "")
      .trim()
      .split("\r\n");
    // Columns are only ever added at the end (the appointment's columns came after these).
    const columns = header!.split(",");
    expect(columns.indexOf("labels")).toBe(columns.indexOf("intake") + 1);
    expect(row).toContain(`"{""reason"":""passport"",""people"":2,""account"":""FR76 1234"",""birth"":""1990-04-01""}"`);

    // Retention (90 days by default): the personal answers go, the open ones stay.
    const d1 = () => env.DB.prepare("SELECT intake, intake_personal FROM tickets WHERE id = ?").bind(ticket.id).first<any>();
    expect(await d1()).toEqual({
      intake: '{"reason":"passport","people":2}',
      intake_personal: '{"account":"FR76 1234","birth":"1990-04-01"}',
    });
    testClock.advance(91 * DAY);
    await sweep(now());
    expect(await d1()).toEqual({ intake: '{"reason":"passport","people":2}', intake_personal: null });
  });
});

describe("at_serve questions (issue 45)", () => {
  it("refuses start-serving and completion (409 INTAKE_REQUIRED naming the fields) until staff answered them", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "retail" });
    const f = await createQueueFixture(owner, org.id);
    const admin = (await createApiKey(owner, org.id, ["admin"])).key;
    const fields = [
      { key: "reason", label: { fr: "Motif", en: "Reason" }, type: "text", required: "never" },
      { key: "file_number", label: { fr: "Dossier", en: "File number" }, type: "text", required: "at_serve" },
      { key: "id_checked", label: { fr: "Pièce vue", en: "ID checked" }, type: "consent", required: "at_serve", personal: true },
    ];
    expectOk(await call("PUT", `/v1/services/${f.serviceId}/intake`, { apiKey: admin, body: { fields } }));
    // The join does not need them.
    const joined = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { apiKey: admin, body: {} }), 201);
    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { apiKey: admin, body: {} }));
    expect(called.id).toBe(joined.id);

    const serve = () => call("POST", `/v1/tickets/${joined.id}/serve`, { apiKey: admin });
    const refused = await serve();
    expectError(refused, 409, "INTAKE_REQUIRED", "intake.file_number");
    expect(refused.body.error.details.missing).toEqual(["intake.file_number", "intake.id_checked"]);
    expect(expectOk(await call("GET", `/v1/tickets/${joined.id}`, { apiKey: admin })).status).toBe("called");

    // One answered: the other is still named.
    expectOk(await call("PATCH", `/v1/tickets/${joined.id}/intake`, { apiKey: admin, body: { answers: { file_number: "D-1234" } } }));
    const still = await serve();
    expectError(still, 409, "INTAKE_REQUIRED", "intake.id_checked");
    expect(still.body.error.details.missing).toEqual(["intake.id_checked"]);

    expectOk(await call("PATCH", `/v1/tickets/${joined.id}/intake`, { apiKey: admin, body: { answers: { id_checked: true } } }));
    expect(expectOk(await serve()).status).toBe("serving");

    // Cleared while serving: completion refuses until it is given again.
    expectOk(await call("PATCH", `/v1/tickets/${joined.id}/intake`, { apiKey: admin, body: { answers: { file_number: null } } }));
    const complete = () => call("POST", `/v1/tickets/${joined.id}/complete`, { apiKey: admin, body: {} });
    const notDone = await complete();
    expectError(notDone, 409, "INTAKE_REQUIRED", "intake.file_number");
    expect(notDone.body.error.details.missing).toEqual(["intake.file_number"]);
    expectOk(await call("PATCH", `/v1/tickets/${joined.id}/intake`, { apiKey: admin, body: { answers: { file_number: "D-1234" } } }));
    expect(expectOk(await complete()).status).toBe("served");
  });

  it("a service without at_serve questions serves and completes as before", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "retail" });
    const f = await createQueueFixture(owner, org.id);
    const admin = (await createApiKey(owner, org.id, ["admin"])).key;
    const fields = [{ key: "reason", label: { fr: "Motif", en: "Reason" }, type: "text", required: "never" }];
    expectOk(await call("PUT", `/v1/services/${f.serviceId}/intake`, { apiKey: admin, body: { fields } }));
    const joined = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { apiKey: admin, body: {} }), 201);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { apiKey: admin, body: {} }));
    expect(expectOk(await call("POST", `/v1/tickets/${joined.id}/serve`, { apiKey: admin })).status).toBe("serving");
    expect(expectOk(await call("POST", `/v1/tickets/${joined.id}/complete`, { apiKey: admin, body: {} })).status).toBe("served");
  });
});
