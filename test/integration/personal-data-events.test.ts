import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import type { WebhookDeliveryMessage } from "../../src/domain/webhooks";
import { WEBHOOKS_QUEUE } from "../../src/jobs/webhook-deliveries";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, queueFixture, type Fixture } from "../helpers/fixtures";
import { capture, eventsOf, feed, feedEvents, type Captured } from "../helpers/notifications";
import { fakeInternet } from "../helpers/outbound";

// Issue 40, "personal data only where asked": from version 2026-11-28 a webhook delivery and
// GET /v1/events carry the visitor's phone masked as the console shows it, unless the
// subscription opted in (owner/admin, audited) or the key has read:personal_data; a reader
// pinned to an older version keeps the payload it always had.

const PHONE = "+33698765432";
const MASKED = "+33 6 •• •• •• 32";
const HOOK_HOST = "hooks.receiver.com";

let captured: Captured | null = null;
afterEach(() => captured?.restore());

const queued: WebhookDeliveryMessage[] = [];
const stubQueue = {
  send: async (body: WebhookDeliveryMessage) => void queued.push(body),
  sendBatch: async (messages: { body: WebhookDeliveryMessage }[]) => void queued.push(...messages.map((m) => m.body)),
};

/** A walk-in with a phone, and the real events its room produced. */
async function walkInWithPhone(f: Fixture): Promise<DomainEventMessage[]> {
  captured = capture();
  expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: { phone: PHONE } }), 201);
  const events = await eventsOf(captured, f.queueId);
  expect(events.some((e) => e.data.phone === PHONE)).toBe(true);
  return events;
}

/** Each subscription's receiver, by path: what it received, parsed. */
function receivers(): Map<string, any[]> {
  const got = new Map<string, any[]>();
  fakeInternet(
    { [HOOK_HOST]: { A: ["93.184.216.34"] } },
    Object.fromEntries(
      ["/plain", "/opted-in", "/old"].map((path) => [
        `https://${HOOK_HOST}${path}`,
        async (req: Request) => {
          got.set(path, [...(got.get(path) ?? []), await req.json()]);
          return new Response("ok");
        },
      ]),
    ),
  );
  return got;
}

describe("webhook deliveries", () => {
  it("carry the masked phone and no full phone without the opt-in; the opt-in (owner, audited) and an old-version subscription get it", async () => {
    const f = await queueFixture("pro");
    await env.DB.prepare("UPDATE subscriptions SET plan = 'enterprise' WHERE organization_id = ?").bind(f.organizationId).run();
    const hooks = `/v1/organizations/${f.organizationId}/webhooks`;
    const got = receivers();
    const plain = expectOk(
      await call("POST", hooks, { token: f.owner.token, body: { url: `https://${HOOK_HOST}/plain`, events: ["*"] } }),
      201,
    );
    expect(plain).toMatchObject({ includePersonalData: false, apiVersion: "2026-11-28" });
    const optedIn = expectOk(
      await call("POST", hooks, {
        token: f.owner.token,
        body: { url: `https://${HOOK_HOST}/opted-in`, events: ["*"], includePersonalData: true },
      }),
      201,
    );
    expect(optedIn.includePersonalData).toBe(true);
    const old = expectOk(
      await call("POST", hooks, {
        token: f.owner.token,
        headers: { "Queue-Version": "2026-11-26" },
        body: { url: `https://${HOOK_HOST}/old`, events: ["*"] },
      }),
      201,
    );
    expect(old.apiVersion).toBe("2026-11-26");

    // A manage:webhooks key may subscribe, but not to personal data.
    const { key } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks"]);
    expectError(
      await call("POST", hooks, { apiKey: key, body: { url: `https://${HOOK_HOST}/plain`, events: ["*"], includePersonalData: true } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(
      await call("PATCH", `${hooks}/${plain.id}`, { apiKey: key, body: { includePersonalData: true } }),
      403,
      "AUTHORIZATION_ERROR",
    );

    // The opt-in is in the audit log, with who set it.
    const audit = expectOk(
      await call("GET", `/v1/organizations/${f.organizationId}/audit-events?entityId=${optedIn.id}`, { token: f.owner.token }),
    );
    expect(audit).toEqual([
      expect.objectContaining({
        action: "webhook.created",
        actor: { type: "user", id: f.owner.id },
        changes: expect.objectContaining({ includePersonalData: { before: null, after: true } }),
      }),
    ]);

    const events = await walkInWithPhone(f);
    await feedEvents(events, { WEBHOOKS: stubQueue } as never);
    await feed(WEBHOOKS_QUEUE, queued.splice(0));

    const created = (path: string) => got.get(path)!.find((p) => p.type === "ticket.created");
    expect(created("/plain").data.phoneMasked).toBe(MASKED);
    expect(created("/plain").data).not.toHaveProperty("phone");
    expect(JSON.stringify(got.get("/plain"))).not.toContain(PHONE.slice(3));
    expect(created("/opted-in").data.phone).toBe(PHONE);
    expect(created("/old").data.phone).toBe(PHONE);
    expect(created("/old").data).not.toHaveProperty("phoneMasked");

    // Moving the old subscription to the current version gives it the new payload.
    expectOk(await call("PATCH", `${hooks}/${old.id}`, { token: f.owner.token, body: { apiVersion: "2026-11-28" } }));
    got.clear();
    await feedEvents(await walkInWithPhone(f), { WEBHOOKS: stubQueue } as never);
    await feed(WEBHOOKS_QUEUE, queued.splice(0));
    expect(created("/old").data.phoneMasked).toBe(MASKED);
    expect(JSON.stringify(got.get("/old"))).not.toContain(PHONE.slice(3));
  });
});

describe("GET /v1/events", () => {
  it("reads the masked phone without read:personal_data, the full one with it; a key pinned to an older version keeps the old payload", async () => {
    const f = await queueFixture("pro");
    await feedEvents(await walkInWithPhone(f));
    const { key: current } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks"]);
    const { key: personal } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks", "read:personal_data"]);
    const { key: admin } = await createApiKey(f.owner, f.organizationId, ["admin"]);
    const { key: pinned, id: pinnedId } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks"]);
    await env.DB.prepare("UPDATE api_keys SET api_version = '2026-11-26' WHERE id = ?").bind(pinnedId).run();

    const created = async (auth: { apiKey?: string; token?: string }, headers: Record<string, string> = {}) => {
      const list = expectOk(await call("GET", "/v1/events?types=ticket.created", { ...auth, headers }));
      expect(list).toHaveLength(1);
      return list[0].data;
    };
    for (const reader of [{ apiKey: current }, { apiKey: admin }, { token: f.owner.token }]) {
      const data = await created(reader);
      expect(data.phoneMasked).toBe(MASKED);
      expect(data).not.toHaveProperty("phone");
    }
    expect((await created({ apiKey: personal })).phone).toBe(PHONE);
    const old = await created({ apiKey: pinned });
    expect(old.phone).toBe(PHONE);
    expect(old).not.toHaveProperty("phoneMasked");
    // The pinned key moves by asking for the new version.
    expect((await created({ apiKey: pinned }, { "Queue-Version": "2026-11-28" })).phoneMasked).toBe(MASKED);
  });
});

describe("the event store (organization_events)", () => {
  it("holds no full phone in D1: the masked payload plus the sealed fields, opened for an opted-in reader; erasure blanks both", async () => {
    const f = await queueFixture("pro");
    const events = await walkInWithPhone(f);
    const ticketId = events.find((e) => e.type === "ticket.created")!.ticketId!;
    await feedEvents(events);

    // A raw read of the table: the phone masked in the payload, the full number nowhere in clear.
    const raw = await env.DB.prepare("SELECT type, payload, personal_sealed FROM organization_events WHERE organization_id = ?")
      .bind(f.organizationId)
      .all<{ type: string; payload: string; personal_sealed: string | null }>();
    const created = raw.results.find((r) => r.type === "ticket.created")!;
    expect(JSON.parse(created.payload).data).toMatchObject({ phoneMasked: MASKED, ticketId });
    expect(JSON.parse(created.payload).data).not.toHaveProperty("phone");
    expect(created.personal_sealed).toMatch(/^sbx1\./);
    expect(JSON.stringify(raw.results)).not.toContain(PHONE.slice(3));

    // A reader that opted in (read:personal_data) gets the full number back from the sealed column.
    const { key: personal } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks", "read:personal_data"]);
    const { key: plain } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks"]);
    const read = async (apiKey: string) => expectOk(await call("GET", "/v1/events?types=ticket.created", { apiKey }))[0].data;
    expect(await read(personal)).toMatchObject({ phone: PHONE, ticketId });
    expect(await read(personal)).not.toHaveProperty("phoneMasked");
    expect(await read(plain)).toMatchObject({ phoneMasked: MASKED });
    expect(JSON.stringify(await read(plain))).not.toContain(PHONE.slice(3));

    // The person's export holds their events with their own number.
    const exported = expectOk(
      await call("POST", `/v1/organizations/${f.organizationId}/data-subjects/export`, { token: f.owner.token, body: { phone: PHONE } }),
    );
    expect(exported.events.find((e: any) => e.type === "ticket.created").payload.data.phone).toBe(PHONE);

    // Erased: neither the masked number nor the sealed one is left, for any reader.
    expectOk(await call("POST", `/v1/tickets/${ticketId}/cancel`, { token: f.owner.token }));
    expectOk(
      await call("POST", `/v1/organizations/${f.organizationId}/data-subjects/erase`, { token: f.owner.token, body: { phone: PHONE } }),
    );
    const after = await env.DB.prepare("SELECT payload, personal_sealed FROM organization_events WHERE organization_id = ?")
      .bind(f.organizationId)
      .all<{ payload: string; personal_sealed: string | null }>();
    expect(after.results.length).toBeGreaterThan(0);
    for (const row of after.results) {
      expect(row.personal_sealed).toBeNull();
      expect(row.payload).not.toContain(MASKED);
      expect(row.payload).not.toContain(PHONE.slice(3));
    }
    const afterRead = await read(personal);
    expect(afterRead.phone ?? null).toBeNull();
    expect(JSON.stringify(afterRead)).not.toContain(PHONE.slice(3));
  });

  it("an event without a phone seals its null phone once per isolate (the same text for each); a phone is sealed apart each time", async () => {
    const f = await queueFixture("pro");
    captured = capture();
    for (let i = 0; i < 3; i++)
      expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: {} }), 201);
    for (let i = 0; i < 2; i++)
      expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: { phone: PHONE } }), 201);
    await feedEvents(await eventsOf(captured, f.queueId));
    const raw = await env.DB.prepare(
      "SELECT payload, personal_sealed FROM organization_events WHERE organization_id = ? AND type = 'ticket.created' ORDER BY seq",
    )
      .bind(f.organizationId)
      .all<{ payload: string; personal_sealed: string }>();
    const sealed = raw.results.map((r) => r.personal_sealed);
    expect(sealed).toHaveLength(5);
    for (const text of sealed) expect(text).toMatch(/^sbx1\./);
    // The three without a phone: one sealed text; the two with: two texts, neither the other's.
    expect(new Set(sealed.slice(0, 3)).size).toBe(1);
    expect(new Set(sealed.slice(2)).size).toBe(3);
    const { key } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks", "read:personal_data"]);
    const read = expectOk(await call("GET", "/v1/events?types=ticket.created", { apiKey: key })).map((e: any) => e.data.phone);
    expect(read).toEqual([null, null, null, PHONE, PHONE]);
  });
});
