import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { addMember, createApiKey, createCatalog, createOrganization, registerUser, type TestUser } from "../helpers/fixtures";

// Tenant isolation: the owner and an admin key of organization B call every route that takes
// an id of organization A. Every one answers 404 NOT_FOUND, never 403: the caller cannot
// even learn that the id exists. Later areas append rows to ROUTES.

interface Tenant {
  owner: TestUser;
  org: { id: string };
  member: TestUser;
  key: { id: string; key: string };
  locationId: string;
  serviceId: string;
  queueId: string;
  ticketId: string;
  eventId: string;
  qrTokenId: string;
  nfcId: string;
  webhookId: string;
  deliveryId: string;
  deskId: string;
}

interface IsolationCase {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** `a` is the victim organization, `b` the caller's own. */
  path: (a: Tenant, b: Tenant) => string;
  body?: (a: Tenant, b: Tenant) => unknown;
}

const ROUTES: IsolationCase[] = [
  { method: "GET", path: (a) => `/v1/organizations/${a.org.id}` },
  { method: "PATCH", path: (a) => `/v1/organizations/${a.org.id}`, body: () => ({ name: "Hijacked" }) },
  { method: "DELETE", path: (a) => `/v1/organizations/${a.org.id}` },
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/transfer-ownership`, body: (a) => ({ newOwnerId: a.member.id }) },
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/transfer-ownership`, body: (_a, b) => ({ newOwnerId: b.owner.id }) },
  { method: "GET", path: (a) => `/v1/organizations/${a.org.id}/members` },
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/members`, body: (_a, b) => ({ email: b.owner.email, role: "admin" }) },
  { method: "PATCH", path: (a) => `/v1/organizations/${a.org.id}/members/${a.member.id}`, body: () => ({ role: "admin" }) },
  { method: "DELETE", path: (a) => `/v1/organizations/${a.org.id}/members/${a.member.id}` },
  { method: "GET", path: (a) => `/v1/organizations/${a.org.id}/api-keys` },
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/api-keys`, body: () => ({ name: "stolen", permissions: ["admin"] }) },
  { method: "DELETE", path: (a) => `/v1/organizations/${a.org.id}/api-keys/${a.key.id}` },
  // A's ids inside B's own paths: the id is looked up within B only.
  { method: "PATCH", path: (a, b) => `/v1/organizations/${b.org.id}/members/${a.member.id}`, body: () => ({ role: "admin" }) },
  { method: "DELETE", path: (a, b) => `/v1/organizations/${b.org.id}/members/${a.member.id}` },
  { method: "DELETE", path: (a, b) => `/v1/organizations/${b.org.id}/api-keys/${a.key.id}` },
  // Catalog
  {
    method: "POST",
    path: () => "/v1/locations",
    body: (a) => ({ organizationId: a.org.id, name: "x", address: "x", latitude: 1, longitude: 1 }),
  },
  { method: "PATCH", path: (a) => `/v1/locations/${a.locationId}`, body: () => ({ name: "Hijacked" }) },
  { method: "DELETE", path: (a) => `/v1/locations/${a.locationId}` },
  { method: "GET", path: (a) => `/v1/locations/search?organizationId=${a.org.id}&q=a` },
  {
    method: "POST",
    path: () => "/v1/services",
    body: (a) => ({ name: "x", locationIds: [a.locationId], serviceTypeId: "st_other_general" }),
  },
  { method: "GET", path: (a) => `/v1/services/${a.serviceId}` },
  { method: "PATCH", path: (a) => `/v1/services/${a.serviceId}`, body: () => ({ name: "Hijacked" }) },
  { method: "DELETE", path: (a) => `/v1/services/${a.serviceId}` },
  { method: "GET", path: (a) => `/v1/services/organization/search?organizationId=${a.org.id}` },
  // Queues and tickets
  { method: "POST", path: () => "/v1/business/queues", body: (a) => ({ serviceId: a.serviceId, name: "x" }) },
  { method: "PATCH", path: (a) => `/v1/business/queues/${a.queueId}/status`, body: () => ({ status: "closed" }) },
  { method: "PATCH", path: (a) => `/v1/business/queues/${a.queueId}`, body: () => ({ name: "Taken over" }) },
  { method: "GET", path: (a) => `/v1/queues/${a.queueId}/tickets` },
  { method: "POST", path: (a) => `/v1/queues/${a.queueId}/operator-join`, body: () => ({}) },
  { method: "POST", path: (a) => `/v1/queues/${a.queueId}/vip-ticket`, body: () => ({}) },
  { method: "POST", path: (a) => `/v1/queues/${a.queueId}/call-next`, body: () => ({}) },
  { method: "POST", path: (a) => `/v1/queues/${a.queueId}/clear` },
  { method: "POST", path: (a) => `/v1/queues/${a.queueId}/archive` },
  { method: "GET", path: (a) => `/v1/tickets/${a.ticketId}` },
  { method: "POST", path: (a) => `/v1/tickets/${a.ticketId}/serve` },
  { method: "POST", path: (a) => `/v1/tickets/${a.ticketId}/present` },
  { method: "POST", path: (a) => `/v1/tickets/${a.ticketId}/complete` },
  { method: "POST", path: (a) => `/v1/tickets/${a.ticketId}/skip-absent`, body: () => ({ reason: "x" }) },
  { method: "POST", path: (a) => `/v1/tickets/${a.ticketId}/cancel` },
  { method: "POST", path: (a) => `/v1/tickets/${a.ticketId}/recover`, body: () => ({ recoveryOption: "rejoin" }) },
  {
    method: "POST",
    path: (a, b) => `/v1/tickets/${a.ticketId}/transfer-queue`,
    body: (_a, b) => ({ targetQueueId: b.queueId, prioritize: false }),
  },
  { method: "POST", path: (a) => `/v1/tickets/${a.ticketId}/transfer`, body: (_a, b) => ({ targetOperatorId: b.owner.id }) },
  // B's ticket sent into A's queue
  {
    method: "POST",
    path: (_a, b) => `/v1/tickets/${b.ticketId}/transfer-queue`,
    body: (a) => ({ targetQueueId: a.queueId, prioritize: true }),
  },
  // Calendar
  {
    method: "POST",
    path: (a) => `/v1/calendar/organization/${a.org.id}`,
    body: () => ({ title: "x", startDate: "2030-01-01T09:00:00Z", endDate: "2030-01-01T10:00:00Z" }),
  },
  { method: "PATCH", path: (a) => `/v1/calendar/${a.eventId}`, body: () => ({ title: "Hijacked" }) },
  { method: "DELETE", path: (a) => `/v1/calendar/${a.eventId}` },
  // Entry channels
  { method: "POST", path: () => "/v1/qr-tokens", body: (a) => ({ purpose: "queue_join", queueId: a.queueId }) },
  { method: "DELETE", path: (a) => `/v1/qr-tokens/${a.qrTokenId}` },
  {
    method: "POST",
    path: () => "/v1/nfc/tags",
    body: (a) => ({ nfcId: `nfc-${a.org.id}-2`, queueId: a.queueId, locationName: "x", latitude: 1, longitude: 1 }),
  },
  { method: "GET", path: (a) => `/v1/nfc/tags/${a.nfcId}` },
  { method: "PATCH", path: (a) => `/v1/nfc/tags/${a.nfcId}`, body: () => ({ enabled: false }) },
  // Widget (the queue status route is public by design)
  { method: "GET", path: (a) => `/v1/widget/organization/${a.org.id}/info` },
  { method: "GET", path: (a) => `/v1/widget/organization/${a.org.id}/display-board` },
  { method: "POST", path: (a) => `/v1/widget/queue/${a.queueId}/join`, body: () => ({ visitorName: "Intruder" }) },
  { method: "POST", path: (a) => `/v1/remote-join/${a.ticketId}/confirm`, body: () => ({ method: "manual" }) },
  { method: "POST", path: (a) => `/v1/remote-join/${a.ticketId}/location`, body: () => ({ latitude: 48.85, longitude: 2.35 }) },
  { method: "GET", path: (a) => `/v1/remote-join/${a.ticketId}` },
  // Billing (issue 13)
  { method: "GET", path: (a) => `/v1/billing/subscription/${a.org.id}` },
  { method: "PATCH", path: (a) => `/v1/billing/subscription/${a.org.id}`, body: () => ({ plan: "pro" }) },
  { method: "POST", path: (a) => `/v1/billing/subscription/${a.org.id}/cancel`, body: () => ({ reason: "hijack" }) },
  { method: "GET", path: (a) => `/v1/billing/usage/${a.org.id}` },
  { method: "GET", path: (a) => `/v1/billing/usage/${a.org.id}/history` },
  {
    method: "POST",
    path: () => "/v1/billing/fedapay/checkout",
    body: (a) => ({ organizationId: a.org.id, plan: "pro", billingInterval: "monthly", returnUrl: "https://shop.example.com/back" }),
  },
  // Webhooks
  { method: "GET", path: (a) => `/v1/organizations/${a.org.id}/webhooks` },
  {
    method: "POST",
    path: (a) => `/v1/organizations/${a.org.id}/webhooks`,
    body: () => ({ url: "https://hooks.example.com/x", events: ["*"] }),
  },
  { method: "GET", path: (a) => `/v1/organizations/${a.org.id}/webhooks/${a.webhookId}` },
  { method: "PATCH", path: (a) => `/v1/organizations/${a.org.id}/webhooks/${a.webhookId}`, body: () => ({ enabled: false }) },
  { method: "DELETE", path: (a) => `/v1/organizations/${a.org.id}/webhooks/${a.webhookId}` },
  { method: "GET", path: (a) => `/v1/organizations/${a.org.id}/webhooks/${a.webhookId}/deliveries` },
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/webhooks/${a.webhookId}/deliveries/${a.deliveryId}/redeliver` },
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/webhooks/${a.webhookId}/rotate-secret` },
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/webhooks/${a.webhookId}/test` },
  { method: "GET", path: (a, b) => `/v1/organizations/${b.org.id}/webhooks/${a.webhookId}` },
  { method: "PATCH", path: (a, b) => `/v1/organizations/${b.org.id}/webhooks/${a.webhookId}`, body: () => ({ enabled: false }) },
  { method: "DELETE", path: (a, b) => `/v1/organizations/${b.org.id}/webhooks/${a.webhookId}` },
  { method: "GET", path: (a, b) => `/v1/organizations/${b.org.id}/webhooks/${a.webhookId}/deliveries` },
  { method: "POST", path: (a, b) => `/v1/organizations/${b.org.id}/webhooks/${a.webhookId}/rotate-secret` },
  { method: "POST", path: (a, b) => `/v1/organizations/${b.org.id}/webhooks/${a.webhookId}/test` },
  { method: "POST", path: (a, b) => `/v1/organizations/${b.org.id}/webhooks/${b.webhookId}/deliveries/${a.deliveryId}/redeliver` },
  // Notifications (a user's own inbox and devices are tested in notifications.test.ts)
  { method: "GET", path: (a) => `/v1/organizations/${a.org.id}/notification-deliveries` },
  {
    method: "POST",
    path: (a) => `/v1/widget/tickets/${a.ticketId}/push-subscription`,
    body: () => ({ endpoint: "https://push.example/x", keys: { p256dh: `BA${"A".repeat(85)}`, auth: "AAAAAAAAAAAAAAAAAAAAAA" } }),
  },
  // Analytics: another organization's location, service or queue as a filter
  { method: "GET", path: (a) => `/v1/analytics/summary?from=2026-01-01&to=2026-01-31&queueId=${a.queueId}` },
  { method: "GET", path: (a) => `/v1/analytics/operators?from=2026-01-01&to=2026-01-31&serviceId=${a.serviceId}` },
  { method: "GET", path: (a) => `/v1/analytics/heatmap?from=2026-01-01&to=2026-01-31&locationId=${a.locationId}` },
  { method: "GET", path: (a) => `/v1/analytics/estimates?from=2026-01-01&to=2026-01-31&queueId=${a.queueId}` },
  { method: "GET", path: (a) => `/v1/analytics/export.csv?from=2026-01-01&to=2026-01-31&queueId=${a.queueId}` },
  // Desks
  { method: "POST", path: (a) => `/v1/locations/${a.locationId}/desks`, body: (a) => ({ name: "G1", queueIds: [a.queueId] }) },
  { method: "POST", path: (a, b) => `/v1/locations/${b.locationId}/desks`, body: (a) => ({ name: "G1", queueIds: [a.queueId] }) },
  { method: "GET", path: (a) => `/v1/locations/${a.locationId}/desks` },
  { method: "GET", path: (a) => `/v1/desks/${a.deskId}` },
  { method: "PATCH", path: (a) => `/v1/desks/${a.deskId}`, body: () => ({ name: "Hijacked" }) },
  { method: "PATCH", path: (a, b) => `/v1/desks/${b.deskId}`, body: (a) => ({ queueIds: [a.queueId] }) },
  { method: "DELETE", path: (a) => `/v1/desks/${a.deskId}` },
  { method: "POST", path: (a) => `/v1/desks/${a.deskId}/open` },
  { method: "POST", path: (a) => `/v1/desks/${a.deskId}/close` },
  { method: "POST", path: (a) => `/v1/desks/${a.deskId}/call-next` },
  // The operator's verbs (docs/desks.md)
  { method: "POST", path: (a) => `/v1/tickets/${a.ticketId}/hold`, body: () => ({ reason: "x" }) },
  { method: "POST", path: (a) => `/v1/tickets/${a.ticketId}/resume` },
  { method: "POST", path: (a) => `/v1/tickets/${a.ticketId}/step-back`, body: () => ({ places: 1 }) },
  { method: "POST", path: (a) => `/v1/tickets/${a.ticketId}/complete`, body: () => ({ outcome: "done", note: "x" }) },
  { method: "POST", path: (a) => `/v1/services/${a.serviceId}/outcomes`, body: () => ({ code: "stolen", label: "Stolen" }) },
  { method: "GET", path: (a) => `/v1/services/${a.serviceId}/outcomes` },
  { method: "DELETE", path: (a) => `/v1/services/${a.serviceId}/outcomes/done` },
  // A person's data on request (docs/personal-data.md)
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/data-subjects/export`, body: () => ({ phone: "+33612345678" }) },
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/data-subjects/erase`, body: () => ({ phone: "+33612345678" }) },
];

/** A (disabled) webhook and one delivery of it, written straight to D1 (creating one through the API needs DNS). */
async function seedWebhook(organizationId: string): Promise<{ webhookId: string; deliveryId: string }> {
  const suffix = () => crypto.randomUUID().replace(/-/g, "").slice(0, 20);
  const webhookId = `whk_${suffix()}`;
  const deliveryId = `dlv_${suffix()}`;
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO webhooks (id, organization_id, url, events, enabled, secret, created_at, updated_at) VALUES (?, ?, 'https://hooks.example.com/x', '[\"*\"]', 0, 'whsec_AAAA', 0, 0)",
    ).bind(webhookId, organizationId),
    env.DB.prepare(
      "INSERT INTO webhook_deliveries (id, webhook_id, organization_id, event_id, event_type, payload, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'ticket.called', '{}', 'succeeded', 0, 0)",
    ).bind(deliveryId, webhookId, organizationId, `evt_${suffix()}`),
  ]);
  return { webhookId, deliveryId };
}

async function tenant(): Promise<Tenant> {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  const member = await registerUser();
  await addMember(owner, org.id, "operator", member);
  const key = await createApiKey(owner, org.id, ["admin"]);
  // On pro (Business tier, 1,000/min): the table has more rows than the free tier's 60 calls a minute.
  // Business rate tier (1,000/min): the key calls every row in well under a minute.
  await env.DB.prepare("UPDATE subscriptions SET plan = 'pro' WHERE organization_id = ?").bind(org.id).run();
  const token = owner.token;
  const catalog = await createCatalog(owner, org.id);
  const ticket = expectOk(await call("POST", `/v1/queues/${catalog.queueId}/operator-join`, { token, body: {} }), 201);
  const event = expectOk(
    await call("POST", `/v1/calendar/organization/${org.id}`, {
      token,
      body: { title: "Shift", eventType: "shift", startDate: "2030-01-01T09:00:00Z", endDate: "2030-01-01T17:00:00Z" },
    }),
    201,
  );
  const qr = expectOk(await call("POST", "/v1/qr-tokens", { token, body: { purpose: "queue_join", queueId: catalog.queueId } }), 201);
  const nfcId = `nfc-${org.id}`;
  expectOk(
    await call("POST", "/v1/nfc/tags", {
      token,
      body: { nfcId, queueId: catalog.queueId, locationName: "Door", latitude: 48.85, longitude: 2.35 },
    }),
    201,
  );
  const desk = expectOk(
    await call("POST", `/v1/locations/${catalog.locationId}/desks`, { token, body: { name: "Guichet 1", queueIds: [catalog.queueId] } }),
    201,
  );
  expectOk(await call("POST", `/v1/services/${catalog.serviceId}/outcomes`, { token, body: { code: "done", label: "Done" } }), 201);
  return {
    deskId: desk.id,
    owner,
    org,
    member,
    key,
    ...catalog,
    ticketId: ticket.id,
    eventId: event.id,
    qrTokenId: qr.id,
    nfcId,
    ...(await seedWebhook(org.id)),
  };
}

describe("tenant isolation", () => {
  let a: Tenant;
  let b: Tenant;
  beforeAll(async () => {
    a = await tenant();
    b = await tenant();
  });

  it.each(ROUTES.map((route, i) => [i, route.method, route] as const))(
    "row %i (%s) answers 404 to another organization's session and key",
    async (_i, _m, route) => {
      for (const auth of [{ token: b.owner.token }, { apiKey: b.key.key }]) {
        const body = route.body?.(a, b);
        const res = await call(route.method, route.path(a, b), { ...auth, ...(body === undefined ? {} : { body }) });
        expectError(res, 404, "NOT_FOUND");
      }
    },
  );

  it("left organization A exactly as it was", async () => {
    const org = expectOk(await call("GET", `/v1/organizations/${a.org.id}`, { token: a.owner.token }));
    expect(org.name).toBe("Test organization");
    const members = expectOk(await call("GET", `/v1/organizations/${a.org.id}/members`, { token: a.owner.token }));
    expect(members.map((m: any) => [m.userId, m.role]).sort()).toEqual(
      [
        [a.owner.id, "owner"],
        [a.member.id, "operator"],
      ].sort(),
    );
    const keys = expectOk(await call("GET", `/v1/organizations/${a.org.id}/api-keys`, { token: a.owner.token }));
    expect(keys.map((k: any) => k.id)).toEqual([a.key.id]);
    const ticket = expectOk(await call("GET", `/v1/tickets/${a.ticketId}`, { token: a.owner.token }));
    expect(ticket.status).toBe("waiting");
    const queue = expectOk(await call("GET", `/v1/queues/${a.queueId}`, { token: a.owner.token }));
    expect([queue.status, queue.waitingCount]).toEqual(["active", 1]);
    expectOk(await call("GET", `/v1/services/${a.serviceId}`, { token: a.owner.token }));
    expect(expectOk(await call("GET", `/v1/nfc/tags/${a.nfcId}`, { token: a.owner.token })).status).toBe("enabled");
    const bMembers = await env.DB.prepare("SELECT count(*) AS n FROM members WHERE organization_id = ?")
      .bind(b.org.id)
      .first<{ n: number }>();
    expect(bMembers?.n).toBe(2);
  });
});
