import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { keyPermissions, roleAllows, type Permission, type Role } from "../../src/domain/permissions";
import { type ApiResponse, call, expectError, expectOk, unique } from "../helpers/api";
import { addMember, createApiKey, createCatalog, createOrganization, registerUser, type TestUser } from "../helpers/fixtures";
import { fakeInternet } from "../helpers/outbound";

// The role and key-permission matrix: every route that acts inside an organization, tried by
// every role and by keys of each permission value; allowed or 403 exactly as the table in
// src/domain/permissions.ts says. Later areas append rows to ROUTES.
//
// Rows run in groups of ROWS_PER_FIXTURE, each group on its own organization, so what a row
// leaves behind (tickets in the queue, members, keys, events) stays with its group. The last
// rows used to cost 25x the first (403 s for the file): not that, but every SELF.fetch of a
// file costing more than the one before; `call` now hands requests to the Worker's handler
// directly (test/helpers/api.ts), and a row costs the same wherever it sits (50 s in all).

interface Fixture {
  org: { id: string };
  users: Record<Role, TestUser>;
  keys: Record<KeyKind, string>;
  locationId: string;
  serviceId: string;
  queueId: string;
}

const KEY_KINDS = ["read", "write", "admin", "widget"] as const;
type KeyKind = (typeof KEY_KINDS)[number];

/** Made fresh for each call: things a call may consume (a member to change, a key to revoke). */
type Extra = Record<string, string>;

interface RouteCase {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: (f: Fixture, x: Extra) => string;
  body?: (f: Fixture, x: Extra) => unknown;
  /** "member": any member of the organization; otherwise a permission of src/domain/permissions.ts. */
  permission: Permission | "member";
  /** What a key needs, when it differs from `permission`: "anyButWidget" = every key but a widget-only one. */
  keyPermission?: Permission | "anyButWidget" | readonly Permission[];
  prepare?: (f: Fixture) => Promise<Extra>;
  /** The allowed call destroys the fixture (delete, transfer): the row gets its own organization. */
  destructive?: boolean;
  /**
   * The allowed call leaves work running behind it (an enabled webhook: every later event of its
   * organization would be delivered, and retried, to a host that never answers): the row gets
   * its own organization, which no later row touches.
   */
  isolated?: boolean;
}

/** Rows sharing one fixture; small enough that what they leave behind never weighs on a row. */
const ROWS_PER_FIXTURE = 8;

async function makeFixture(): Promise<Fixture> {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  const users = { owner } as Record<Role, TestUser>;
  for (const role of ["admin", "manager", "operator"] as const) {
    users[role] = await registerUser();
    await addMember(owner, org.id, role, users[role]);
  }
  const keys = {} as Record<KeyKind, string>;
  for (const kind of KEY_KINDS) keys[kind] = (await createApiKey(owner, org.id, [kind])).key;
  // On pro, so that every allowed creation is allowed by the plan too.
  await env.DB.prepare("UPDATE subscriptions SET plan = 'pro' WHERE organization_id = ?").bind(org.id).run();
  return { org, users, keys, ...(await createCatalog(owner, org.id)) };
}

async function newTicket(f: Fixture): Promise<Extra> {
  const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.users.owner.token, body: {} }), 201);
  return { ticketId: ticket.id };
}

async function newLocation(f: Fixture): Promise<Extra> {
  const body = { organizationId: f.org.id, name: unique("loc"), address: "2 rue", latitude: 45, longitude: 4 };
  return { locationId: expectOk(await call("POST", "/v1/locations", { token: f.users.owner.token, body }), 201).id };
}

async function newMember(f: Fixture): Promise<Extra> {
  const user = await registerUser();
  await addMember(f.users.owner, f.org.id, "operator", user);
  return { userId: user.id };
}

const ROUTES: RouteCase[] = [
  { method: "GET", path: (f) => `/v1/organizations/${f.org.id}`, permission: "member", keyPermission: "anyButWidget" },
  { method: "PATCH", path: (f) => `/v1/organizations/${f.org.id}`, body: () => ({ description: unique("d") }), permission: "ORG_MANAGE" },
  { method: "DELETE", path: (f) => `/v1/organizations/${f.org.id}`, permission: "ORG_DELETE", destructive: true },
  {
    method: "POST",
    path: (f) => `/v1/organizations/${f.org.id}/transfer-ownership`,
    body: (f) => ({ newOwnerId: f.users.admin.id }),
    permission: "ORG_TRANSFER",
    destructive: true,
  },
  { method: "GET", path: (f) => `/v1/organizations/${f.org.id}/members`, permission: "member", keyPermission: "ORG_MANAGE" },
  {
    method: "POST",
    path: (f) => `/v1/organizations/${f.org.id}/members`,
    body: (_f, x) => ({ email: x.email, role: "operator" }),
    permission: "ORG_MANAGE",
    prepare: async () => ({ email: (await registerUser()).email }),
  },
  {
    method: "PATCH",
    path: (f, x) => `/v1/organizations/${f.org.id}/members/${x.userId}`,
    body: () => ({ role: "manager" }),
    permission: "ORG_MANAGE",
    prepare: newMember,
  },
  { method: "DELETE", path: (f, x) => `/v1/organizations/${f.org.id}/members/${x.userId}`, permission: "ORG_MANAGE", prepare: newMember },
  { method: "GET", path: (f) => `/v1/organizations/${f.org.id}/api-keys`, permission: "ORG_MANAGE" },
  { method: "POST", path: (f) => `/v1/organizations/${f.org.id}/api-keys`, body: () => ({ name: "matrix" }), permission: "ORG_MANAGE" },
  {
    method: "DELETE",
    path: (f, x) => `/v1/organizations/${f.org.id}/api-keys/${x.keyId}`,
    permission: "ORG_MANAGE",
    prepare: async (f) => ({ keyId: (await createApiKey(f.users.owner, f.org.id)).id }),
  },
  // Catalog
  {
    method: "POST",
    path: () => "/v1/locations",
    body: (f) => ({ organizationId: f.org.id, name: unique("loc"), address: "x", latitude: 1, longitude: 1 }),
    permission: "LOCATION_MANAGE",
  },
  { method: "GET", path: () => "/v1/business/locations", permission: "SERVICE_VIEW" },
  { method: "PATCH", path: (f) => `/v1/locations/${f.locationId}`, body: () => ({ name: unique("n") }), permission: "LOCATION_MANAGE" },
  { method: "DELETE", path: (_f, x) => `/v1/locations/${x.locationId}`, permission: "LOCATION_MANAGE", prepare: newLocation },
  {
    method: "POST",
    path: () => "/v1/services",
    body: (f) => ({ name: unique("svc"), locationIds: [f.locationId], serviceTypeId: "st_bank_teller" }),
    permission: "SERVICE_MANAGE",
  },
  { method: "GET", path: () => "/v1/business/services", permission: "SERVICE_VIEW" },
  { method: "GET", path: (f) => `/v1/services/${f.serviceId}`, permission: "SERVICE_VIEW" },
  { method: "PATCH", path: (f) => `/v1/services/${f.serviceId}`, body: () => ({ description: unique("d") }), permission: "SERVICE_MANAGE" },
  { method: "GET", path: (f) => `/v1/services/organization/search?organizationId=${f.org.id}`, permission: "SERVICE_VIEW" },
  { method: "GET", path: () => "/v1/business/dashboard", permission: "ANALYTICS_VIEW" },
  { method: "GET", path: () => "/v1/analytics/summary?from=2026-01-01&to=2026-01-31", permission: "ANALYTICS_VIEW" },
  {
    method: "GET",
    path: (f) => `/v1/analytics/operators?from=2026-01-01&to=2026-01-31&queueId=${f.queueId}`,
    permission: "ANALYTICS_VIEW",
  },
  {
    method: "GET",
    path: (f) => `/v1/analytics/heatmap?from=2026-01-01&to=2026-01-31&locationId=${f.locationId}`,
    permission: "ANALYTICS_VIEW",
  },
  {
    method: "GET",
    path: (f) => `/v1/analytics/estimates?from=2026-01-01&to=2026-01-31&serviceId=${f.serviceId}`,
    permission: "ANALYTICS_VIEW",
  },
  {
    method: "GET",
    path: (f) => `/v1/analytics/export.csv?from=2026-01-01&to=2026-01-31&queueId=${f.queueId}`,
    permission: "ANALYTICS_VIEW",
  },
  // Queues and tickets
  {
    method: "POST",
    path: () => "/v1/business/queues",
    body: (f) => ({ serviceId: f.serviceId, name: unique("q") }),
    permission: "QUEUE_MANAGE",
  },
  { method: "GET", path: () => "/v1/business/queues", permission: "QUEUE_VIEW" },
  {
    method: "PATCH",
    path: (f) => `/v1/business/queues/${f.queueId}/status`,
    body: () => ({ status: "active" }),
    permission: "QUEUE_MANAGE",
  },
  {
    method: "PATCH",
    path: (f) => `/v1/business/queues/${f.queueId}`,
    body: () => ({ description: "Renamed" }),
    permission: "QUEUE_MANAGE",
  },
  { method: "GET", path: (f) => `/v1/queues/${f.queueId}/tickets`, permission: "QUEUE_VIEW" },
  { method: "POST", path: (f) => `/v1/queues/${f.queueId}/operator-join`, body: () => ({}), permission: "QUEUE_OPERATE" },
  { method: "POST", path: (f) => `/v1/queues/${f.queueId}/vip-ticket`, body: () => ({}), permission: "QUEUE_OPERATE" },
  { method: "POST", path: (f) => `/v1/queues/${f.queueId}/call-next`, body: () => ({}), permission: "QUEUE_OPERATE", prepare: newTicket },
  { method: "POST", path: (_f, x) => `/v1/tickets/${x.ticketId}/cancel`, permission: "QUEUE_OPERATE", prepare: newTicket },
  { method: "POST", path: (f) => `/v1/queues/${f.queueId}/clear`, permission: "QUEUE_MANAGE" },
  // Calendar
  { method: "GET", path: () => "/v1/business/calendar", permission: "CALENDAR_VIEW" },
  { method: "GET", path: () => "/v1/business/calendar/availability", permission: "CALENDAR_VIEW" },
  {
    method: "POST",
    path: (f) => `/v1/calendar/organization/${f.org.id}`,
    body: () => ({ title: "Shift", eventType: "shift", startDate: "2030-01-01T09:00:00Z", endDate: "2030-01-01T17:00:00Z" }),
    permission: "CALENDAR_MANAGE",
  },
  // Entry channels
  { method: "POST", path: () => "/v1/qr-tokens", body: (f) => ({ purpose: "queue_join", queueId: f.queueId }), permission: "QUEUE_MANAGE" },
  { method: "GET", path: () => "/v1/qr-tokens", permission: "QUEUE_VIEW" },
  {
    method: "POST",
    path: () => "/v1/nfc/tags",
    body: (f) => ({ nfcId: unique("tag"), queueId: f.queueId, locationName: "Door", latitude: 48.85, longitude: 2.35 }),
    permission: "QUEUE_MANAGE",
  },
  // Widget: any member or key may read; joining needs the widget permission or QUEUE_OPERATE.
  { method: "GET", path: (f) => `/v1/widget/organization/${f.org.id}/info`, permission: "member" },
  { method: "GET", path: (f) => `/v1/widget/organization/${f.org.id}/display-board`, permission: "member" },
  {
    method: "POST",
    path: (f) => `/v1/widget/queue/${f.queueId}/join`,
    body: () => ({}),
    permission: "QUEUE_OPERATE",
    keyPermission: ["WIDGET", "QUEUE_OPERATE"],
  },
  {
    method: "POST",
    path: (f) => `/v1/queues/${f.queueId}/eligibility`,
    body: () => ({ latitude: 48.85, longitude: 2.35 }),
    permission: "member",
    keyPermission: "QUEUE_VIEW",
  },
  {
    method: "POST",
    path: (_f, x) => `/v1/remote-join/${x.ticketId}/confirm`,
    body: () => ({ method: "manual" }),
    permission: "QUEUE_OPERATE",
    prepare: newRemoteJoin,
  },
  { method: "GET", path: (_f, x) => `/v1/remote-join/${x.ticketId}`, permission: "QUEUE_VIEW", prepare: newRemoteJoin },
  // Billing (issue 13): owners and admins; keys read with read:analytics and change with admin.
  { method: "GET", path: (f) => `/v1/billing/subscription/${f.org.id}`, permission: "ORG_MANAGE", keyPermission: "ANALYTICS_VIEW" },
  { method: "PATCH", path: (f) => `/v1/billing/subscription/${f.org.id}`, body: () => ({ plan: "enterprise" }), permission: "ORG_MANAGE" },
  {
    method: "POST",
    path: (f) => `/v1/billing/subscription/${f.org.id}/cancel`,
    body: () => ({ reason: "roles test" }),
    permission: "ORG_MANAGE",
  },
  { method: "GET", path: (f) => `/v1/billing/usage/${f.org.id}`, permission: "ORG_MANAGE", keyPermission: "ANALYTICS_VIEW" },
  { method: "GET", path: (f) => `/v1/billing/usage/${f.org.id}/history`, permission: "ORG_MANAGE", keyPermission: "ANALYTICS_VIEW" },
  {
    method: "POST",
    path: () => "/v1/billing/fedapay/checkout",
    body: (f) => ({ organizationId: f.org.id, plan: "enterprise", billingInterval: "monthly", returnUrl: "https://shop.example.com/back" }),
    permission: "ORG_MANAGE",
  },
  // Domain verification (ORG_MANAGE) and webhooks (WEBHOOK_MANAGE: manage:webhooks, admin keys, owner and admin)
  { method: "POST", path: () => "/v1/business/verification/generate-token", permission: "ORG_MANAGE" },
  { method: "GET", path: () => "/v1/business/verification/status", permission: "ORG_MANAGE" },
  {
    method: "POST",
    path: () => "/v1/business/verification/verify",
    body: () => ({ domain: "matrix-shop.com", method: "dns" }),
    permission: "ORG_MANAGE",
    prepare: async () => (fakeInternet(), {}),
  },
  { method: "GET", path: (f) => `/v1/organizations/${f.org.id}/webhooks`, permission: "WEBHOOK_MANAGE" },
  {
    method: "POST",
    path: (f) => `/v1/organizations/${f.org.id}/webhooks`,
    body: () => ({ url: "https://hooks.matrix-shop.com/in", events: ["*"] }),
    permission: "WEBHOOK_MANAGE",
    prepare: async () => (fakeInternet({ "hooks.matrix-shop.com": { A: ["93.184.216.34"] } }), {}),
    isolated: true,
  },
  {
    method: "GET",
    path: (f, x) => `/v1/organizations/${f.org.id}/webhooks/${x.webhookId}`,
    permission: "WEBHOOK_MANAGE",
    prepare: seededWebhook,
  },
  {
    method: "PATCH",
    path: (f, x) => `/v1/organizations/${f.org.id}/webhooks/${x.webhookId}`,
    body: () => ({ description: unique("d") }),
    permission: "WEBHOOK_MANAGE",
    prepare: seededWebhook,
  },
  {
    method: "DELETE",
    path: (f, x) => `/v1/organizations/${f.org.id}/webhooks/${x.webhookId}`,
    permission: "WEBHOOK_MANAGE",
    prepare: seededWebhook,
  },
  {
    method: "GET",
    path: (f, x) => `/v1/organizations/${f.org.id}/webhooks/${x.webhookId}/deliveries`,
    permission: "WEBHOOK_MANAGE",
    prepare: seededWebhook,
  },
  {
    method: "POST",
    path: (f, x) => `/v1/organizations/${f.org.id}/webhooks/${x.webhookId}/rotate-secret`,
    permission: "WEBHOOK_MANAGE",
    prepare: seededWebhook,
  },
  {
    method: "POST",
    path: (f, x) => `/v1/organizations/${f.org.id}/webhooks/${x.webhookId}/test`,
    permission: "WEBHOOK_MANAGE",
    prepare: seededWebhook,
  },
  {
    method: "POST",
    path: (f, x) => `/v1/organizations/${f.org.id}/webhooks/${x.webhookId}/deliveries/${x.deliveryId}/redeliver`,
    permission: "WEBHOOK_MANAGE",
    prepare: seededWebhook,
  },
  // Notifications: a business's SMS (any operating member; keys that operate or manage), delivery records (ORG_MANAGE)
  {
    method: "POST",
    path: () => "/v1/notifications/sms",
    body: () => ({ phone: "+33612345678", message: "Hello", purpose: "announcement" }),
    permission: "QUEUE_OPERATE",
    keyPermission: ["QUEUE_OPERATE", "ORG_MANAGE"],
  },
  { method: "GET", path: (f) => `/v1/organizations/${f.org.id}/notification-deliveries`, permission: "ORG_MANAGE" },
  // Desks (close and call-next depend on who holds the desk: test/integration/desks.test.ts)
  {
    method: "POST",
    path: (f) => `/v1/locations/${f.locationId}/desks`,
    body: (f) => ({ name: unique("Guichet "), queueIds: [f.queueId] }),
    permission: "QUEUE_MANAGE",
  },
  { method: "GET", path: (f) => `/v1/locations/${f.locationId}/desks`, permission: "QUEUE_OPERATE" },
  { method: "GET", path: (_f, x) => `/v1/desks/${x.deskId}`, permission: "QUEUE_OPERATE", prepare: newDesk },
  {
    method: "PATCH",
    path: (_f, x) => `/v1/desks/${x.deskId}`,
    body: () => ({ name: unique("G") }),
    permission: "QUEUE_MANAGE",
    prepare: newDesk,
  },
  { method: "DELETE", path: (_f, x) => `/v1/desks/${x.deskId}`, permission: "QUEUE_MANAGE", prepare: newDesk },
  // Each caller opens one desk only in this table (one desk per operator).
  { method: "POST", path: (_f, x) => `/v1/desks/${x.deskId}/open`, permission: "QUEUE_OPERATE", prepare: newDesk },
  // The operator's verbs (docs/desks.md: hold, resume, outcomes, step back; a ticket's owner may step back too: ticket-verbs.test.ts)
  {
    method: "POST",
    path: (_f, x) => `/v1/tickets/${x.ticketId}/hold`,
    body: () => ({}),
    permission: "QUEUE_OPERATE",
    prepare: ticketIn("called"),
  },
  { method: "POST", path: (_f, x) => `/v1/tickets/${x.ticketId}/resume`, permission: "QUEUE_OPERATE", prepare: ticketIn("held") },
  {
    method: "POST",
    path: (_f, x) => `/v1/tickets/${x.ticketId}/complete`,
    body: () => ({ note: "matrix" }),
    permission: "QUEUE_OPERATE",
    prepare: ticketIn("serving"),
  },
  {
    method: "POST",
    path: (_f, x) => `/v1/tickets/${x.ticketId}/step-back`,
    body: () => ({ places: 1 }),
    permission: "QUEUE_OPERATE",
    prepare: async (f) => {
      const first = await newTicket(f);
      await newTicket(f);
      return first;
    },
  },
  {
    method: "POST",
    path: (f) => `/v1/services/${f.serviceId}/outcomes`,
    body: () => ({ code: unique("oc"), label: "Matrix" }),
    permission: "SERVICE_MANAGE",
  },
  { method: "GET", path: (f) => `/v1/services/${f.serviceId}/outcomes`, permission: "SERVICE_VIEW" },
  { method: "DELETE", path: (f, x) => `/v1/services/${f.serviceId}/outcomes/${x.code}`, permission: "SERVICE_MANAGE", prepare: newOutcome },
];

/** A ticket of the fixture's queue in `state`: the owner calls the front of the line (whichever ticket that is). */
function ticketIn(state: "called" | "serving" | "held") {
  return async (f: Fixture): Promise<Extra> => {
    await newTicket(f);
    const owner = f.users.owner.token;
    const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: owner, body: {} }));
    if (state === "serving") expectOk(await call("POST", `/v1/tickets/${called.id}/serve`, { token: owner }));
    if (state === "held") expectOk(await call("POST", `/v1/tickets/${called.id}/hold`, { token: owner, body: {} }));
    return { ticketId: called.id };
  };
}

async function newOutcome(f: Fixture): Promise<Extra> {
  const body = { code: unique("oc"), label: "Matrix" };
  expectOk(await call("POST", `/v1/services/${f.serviceId}/outcomes`, { token: f.users.owner.token, body }), 201);
  return { code: body.code };
}

async function newDesk(f: Fixture): Promise<Extra> {
  const body = { name: unique("Guichet "), queueIds: [f.queueId] };
  return { deskId: expectOk(await call("POST", `/v1/locations/${f.locationId}/desks`, { token: f.users.owner.token, body }), 201).id };
}

/** A disabled webhook and one finished delivery, written to D1 (creating one through the API needs DNS). */
async function seededWebhook(f: Fixture): Promise<Extra> {
  const suffix = () => crypto.randomUUID().replace(/-/g, "").slice(0, 20);
  const webhookId = `whk_${suffix()}`;
  const deliveryId = `dlv_${suffix()}`;
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO webhooks (id, organization_id, url, events, enabled, secret, created_at, updated_at) VALUES (?, ?, 'https://hooks.matrix-shop.com/in', '[\"*\"]', 0, 'whsec_AAAA', 0, 0)",
    ).bind(webhookId, f.org.id),
    env.DB.prepare(
      "INSERT INTO webhook_deliveries (id, webhook_id, organization_id, event_id, event_type, payload, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'ticket.called', '{}', 'succeeded', 0, 0)",
    ).bind(deliveryId, webhookId, f.org.id, `evt_${suffix()}`),
  ]);
  return { webhookId, deliveryId };
}

/** A customer's remote join in the fixture's queue: only the organization's operators act on it. */
async function newRemoteJoin(f: Fixture): Promise<Extra> {
  const user = await registerUser({ accountType: "customer" });
  const res = await call("POST", `/v1/remote-join/${f.queueId}/start`, { token: user.token, body: { latitude: 48.85, longitude: 2.35 } });
  return { ticketId: expectOk(res, 201).ticket.id };
}

type Caller = { label: string; auth: { token: string } | { apiKey: string }; allowed: (route: RouteCase) => boolean };

function callers(f: Fixture): Caller[] {
  // Keys first and the owner last: the owner's allowed call may delete or hand over the organization.
  const keyCallers: Caller[] = KEY_KINDS.map((kind) => ({
    label: `${kind} key`,
    auth: { apiKey: f.keys[kind] },
    allowed: (route) => {
      const needed = route.keyPermission ?? route.permission;
      if (needed === "anyButWidget") return kind !== "widget";
      if (needed === "member") return true;
      if (typeof needed !== "string") return needed.some((p) => keyPermissions([kind]).has(p));
      return keyPermissions([kind]).has(needed);
    },
  }));
  const roleCallers: Caller[] = (["operator", "manager", "admin", "owner"] as const).map((role) => ({
    label: role,
    auth: { token: f.users[role].token },
    allowed: (route) => route.permission === "member" || roleAllows(role, route.permission),
  }));
  return [...keyCallers, ...roleCallers];
}

/** Names the table's rows with their path templates. */
const PLACEHOLDERS = {
  org: { id: "{organizationId}" },
  locationId: "{locationId}",
  serviceId: "{serviceId}",
  queueId: "{queueId}",
} as Fixture;
const PLACEHOLDER_EXTRA: Extra = new Proxy({}, { get: (_target, name) => `{${String(name)}}` });

function expectAllowed(res: ApiResponse, label: string): void {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBeGreaterThanOrEqual(200);
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
}

/** The table cut into consecutive groups of ROWS_PER_FIXTURE rows, in order. */
function rowGroups(): RouteCase[][] {
  const groups: RouteCase[][] = [];
  for (let i = 0; i < ROUTES.length; i += ROWS_PER_FIXTURE) groups.push(ROUTES.slice(i, i + ROWS_PER_FIXTURE));
  return groups;
}

function rowName(route: RouteCase): string {
  return `${route.method} ${route.path(PLACEHOLDERS, PLACEHOLDER_EXTRA)}`;
}

describe("roles and key permissions", () => {
  describe.each(rowGroups().map((rows, i) => [`rows ${i * ROWS_PER_FIXTURE + 1}-${i * ROWS_PER_FIXTURE + rows.length}`, rows] as const))(
    "%s",
    (_group, rows) => {
      let shared: Fixture;
      // ~15 requests (4 accounts, members, keys, a catalog): well over the default 30 s on the
      // shared, loaded machine.
      beforeAll(async () => {
        shared = await makeFixture();
      }, 120_000);

      it.each(rows.map((route) => [rowName(route), route] as const))(
        "%s",
        async (_name, route) => {
          const f = route.destructive || route.isolated ? await makeFixture() : shared;
          for (const caller of callers(f)) {
            const extra = route.prepare ? await route.prepare(f) : {};
            const body = route.body?.(f, extra);
            const res = await call(route.method, route.path(f, extra), { ...caller.auth, ...(body === undefined ? {} : { body }) });
            if (caller.allowed(route)) expectAllowed(res, caller.label);
            else expectError(res, 403, "AUTHORIZATION_ERROR");
          }
        },
        // A row is 8 callers, each maybe preparing a ticket in a state (made, called, served, held):
        // up to 40 requests, a few seconds alone; on the shared machine with every engineer's
        // runs beside it (load average ~20 on 2 cores) the ticket rows took up to 120 s.
        240_000,
      );
    },
  );
});
