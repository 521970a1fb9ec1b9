// The demo data for local development, as idempotent SQL (INSERT OR IGNORE with fixed ids):
// running it again changes nothing. The demo queue is not in it: a queue and its room are
// created together by the API's own createQueue (ensureDemoQueue, run by scripts/dev.mjs once
// the Worker is up, through the dev Worker's /__dev/demo-queue so it gets its documented id),
// so the demo's room is configured exactly as any other.
import { pbkdf2Sync, createHash } from "node:crypto";

const ITERATIONS = 100_000;

function passwordHash(password, saltText) {
  const salt = Buffer.from(saltText.padEnd(16, "-").slice(0, 16));
  const hash = pbkdf2Sync(password, salt, ITERATIONS, 32, "sha256");
  return `pbkdf2_sha256$${ITERATIONS}$${salt.toString("base64")}$${hash.toString("base64")}`;
}

export const DEMO = {
  organization: { id: "org_d3m00000000000000000", name: "Demo Bank", slug: "demo-bank" },
  owner: {
    id: "usr_d3m0wner000000000000",
    email: "owner@demo.example",
    password: "demo-owner-password",
    firstName: "Olivia",
    lastName: "Owner",
  },
  operator: {
    id: "usr_d3m0p3rat0r000000000",
    email: "operator@demo.example",
    password: "demo-operator-password",
    firstName: "Oscar",
    lastName: "Operator",
  },
  // Signed with the development TOKEN_SECRET (DEVELOPMENT_TOKEN_SECRET, src/lib/credentials.ts).
  apiKey: {
    id: "key_d3m0k3y0000000000000",
    value: "qk_live_d3m0k3y0d3m0k3y0d3m0k3y0d3m0k3y0d3m0k3y0425da9cb21993fe76dd98937c7f325a8",
    name: "Demo admin key",
  },
  // A publishable key (permission `widget`) for the kiosk and the display board's URLs, signed the same way.
  widgetKey: {
    id: "key_d3m0w1dg3t0000000000",
    value: "qk_live_d3m0w1dgd3m0w1dgd3m0w1dgd3m0w1dgd3m0w1dg9dcd71261df46fc9c529303218e67575",
    name: "Demo kiosk and board",
  },
  // The counters of the demo location, created through the API by ensureDemoDesks.
  desks: [{ name: "Guichet 1" }, { name: "Guichet 2" }],
  location: {
    id: "loc_d3m0par1s00000000000",
    name: "Demo Bank Opéra",
    address: "1 place de l'Opéra, 75009 Paris",
    latitude: 48.8708,
    longitude: 2.3319,
    timezone: "Europe/Paris",
  },
  service: { id: "svc_d3m0s3rv1c3000000000", name: "Guichet", serviceTypeId: "st_bank_teller" },
  // What a clerk picks when completing a ticket (docs/desks.md), so "complete with an outcome" can be shown;
  // in French, like the rest of the Paris demo (the codes stay the integrator's English identifiers).
  outcomes: [
    { code: "deposit_made", label: "Dépôt effectué" },
    { code: "card_replaced", label: "Carte remplacée" },
    { code: "referred", label: "Orienté vers un conseiller" },
  ],
  // The id the documentation's examples name (src/http/openapi-examples.ts).
  queue: { id: "que_d3m0q000000000000000", name: "Accueil" },
};

/** The demo keys answer in the current API version (CURRENT_API_VERSION, src/domain/api-versions.ts; a test checks they agree). */
export const DEMO_API_VERSION = "2026-11-28";

const q = (v) => (v === null ? "NULL" : typeof v === "number" ? String(v) : `'${String(v).replaceAll("'", "''")}'`);

export function seedSql(at = Date.UTC(2026, 0, 1)) {
  const { organization: org, owner, operator, apiKey, widgetKey, location: loc, service: svc } = DEMO;
  const monthStart = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1);
  const monthEnd = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1);
  const users = [owner, operator].map(
    (u) =>
      `INSERT OR IGNORE INTO users (id, email, password_hash, first_name, last_name, account_type, role, language, sms_notifications, ticket_reminders, created_at, updated_at) VALUES (${q(u.id)}, ${q(u.email)}, ${q(passwordHash(u.password, u.id))}, ${q(u.firstName)}, ${q(u.lastName)}, 'business', 'user', 'en', 1, 1, ${at}, ${at});`,
  );
  return [
    ...users,
    `INSERT OR IGNORE INTO organizations (id, name, slug, type, description, default_language, created_at, updated_at) VALUES (${q(org.id)}, ${q(org.name)}, ${q(org.slug)}, 'banking', 'The demo organization of npm run dev', 'fr', ${at}, ${at});`,
    `INSERT OR IGNORE INTO members (organization_id, user_id, role, created_at, updated_at) VALUES (${q(org.id)}, ${q(owner.id)}, 'owner', ${at}, ${at});`,
    `INSERT OR IGNORE INTO members (organization_id, user_id, role, created_at, updated_at) VALUES (${q(org.id)}, ${q(operator.id)}, 'operator', ${at}, ${at});`,
    `INSERT OR IGNORE INTO subscriptions (organization_id, plan, billing_interval, status, currency, current_period_start, current_period_end, cancel_at_period_end, created_at, updated_at) VALUES (${q(org.id)}, 'starter', 'monthly', 'active', 'EUR', ${monthStart}, ${monthEnd}, 0, ${at}, ${at});`,
    // The demo key is signed with the development TOKEN_SECRET (src/lib/credentials.ts); a local
    // database seeded before keys were signed gets it replaced, not kept.
    `INSERT INTO api_keys (id, organization_id, name, lookup_prefix, key_hash, last4, permissions, created_by_id, created_at, signed, api_version) VALUES (${q(apiKey.id)}, ${q(org.id)}, ${q(apiKey.name)}, ${q(apiKey.value.slice(8, 16))}, ${q(createHash("sha256").update(apiKey.value).digest("hex"))}, ${q(apiKey.value.slice(-4))}, '["admin"]', ${q(owner.id)}, ${at}, 1, ${q(DEMO_API_VERSION)}) ON CONFLICT (id) DO UPDATE SET key_hash = excluded.key_hash, last4 = excluded.last4, signed = 1, api_version = excluded.api_version;`,
    `INSERT INTO api_keys (id, organization_id, name, lookup_prefix, key_hash, last4, permissions, created_by_id, created_at, signed, api_version) VALUES (${q(DEMO.widgetKey.id)}, ${q(org.id)}, ${q(DEMO.widgetKey.name)}, ${q(DEMO.widgetKey.value.slice(8, 16))}, ${q(createHash("sha256").update(DEMO.widgetKey.value).digest("hex"))}, ${q(DEMO.widgetKey.value.slice(-4))}, '["widget"]', ${q(owner.id)}, ${at}, 1, ${q(DEMO_API_VERSION)}) ON CONFLICT (id) DO UPDATE SET key_hash = excluded.key_hash, last4 = excluded.last4, signed = 1, api_version = excluded.api_version;`,
    `INSERT OR IGNORE INTO locations (id, organization_id, name, address, latitude, longitude, timezone, created_at, updated_at) VALUES (${q(loc.id)}, ${q(org.id)}, ${q(loc.name)}, ${q(loc.address)}, ${loc.latitude}, ${loc.longitude}, ${q(loc.timezone)}, ${at}, ${at});`,
    `INSERT OR IGNORE INTO services (id, organization_id, name, description, service_type_id, is_virtual, status, created_at, updated_at) VALUES (${q(svc.id)}, ${q(org.id)}, ${q(svc.name)}, 'Dépôts, retraits et virements', ${q(svc.serviceTypeId)}, 0, 'active', ${at}, ${at});`,
    `INSERT OR IGNORE INTO service_locations (service_id, location_id) VALUES (${q(svc.id)}, ${q(loc.id)});`,
    ...DEMO.outcomes.map(
      (o) =>
        `INSERT OR IGNORE INTO service_outcomes (service_id, organization_id, code, label, created_at) VALUES (${q(svc.id)}, ${q(org.id)}, ${q(o.code)}, ${q(o.label)}, ${at});`,
    ),
    ...demoProSql(monthStart),
  ].join("\n");
}

/**
 * The demo organization is on pro, paid through the sandbox provider (one yearly payment from
 * the start of this month, recorded as a checkout, its provider event and a paid invoice), so a
 * new user can try every feature. The sandbox renews it at the end of the year.
 */
function demoProSql(periodStart) {
  const org = DEMO.organization.id;
  const d = new Date(periodStart);
  const periodEnd = Date.UTC(d.getUTCFullYear() + 1, d.getUTCMonth(), 1);
  const checkoutId = "chk_d3m0pr00000000000000";
  const amount = 29_000; // pro, yearly, EUR (src/domain/plans.ts PRICES)
  return [
    `INSERT OR IGNORE INTO billing_checkouts (id, organization_id, provider, provider_ref, plan, billing_interval, currency, amount, status, url, return_url, created_at, expires_at, completed_at) VALUES (${q(checkoutId)}, ${q(org)}, 'sandbox', ${q(checkoutId)}, 'pro', 'yearly', 'EUR', ${amount}, 'completed', NULL, NULL, ${periodStart}, ${periodStart}, ${periodStart});`,
    `INSERT OR IGNORE INTO billing_events (provider, event_id, type, organization_id, received_at) VALUES ('sandbox', 'sbx_evt_d3m0pr0', 'checkout.paid', ${q(org)}, ${periodStart});`,
    `INSERT OR IGNORE INTO invoices (id, organization_id, provider, provider_ref, checkout_id, plan, billing_interval, amount, currency, status, period_start, period_end, created_at, paid_at) VALUES ('inv_d3m0pr00000000000000', ${q(org)}, 'sandbox', 'sbx_inv_d3m0pr0', ${q(checkoutId)}, 'pro', 'yearly', ${amount}, 'EUR', 'paid', ${periodStart}, ${periodEnd}, ${periodStart}, ${periodStart});`,
    // Only a demo still on the free plan it was created with (a fresh database, or one a user cancelled) is put back on pro.
    `UPDATE subscriptions SET plan = 'pro', billing_interval = 'yearly', status = 'active', currency = 'EUR', current_period_start = ${periodStart}, current_period_end = ${periodEnd}, cancel_at_period_end = 0, provider = 'sandbox', provider_subscription_id = 'sbx_sub_d3m0pr0', scheduled_plan = NULL, grace_until = NULL, last_event_at = ${periodStart} WHERE organization_id = ${q(org)} AND plan = 'starter';`,
  ];
}

/**
 * The demo queue under its documented id, created by the dev Worker (scripts/dev-worker.ts,
 * the API's createQueue with that id) unless it exists: idempotent like the SQL above.
 * Answers the queue record.
 */
export async function ensureDemoQueue(base) {
  const created = await fetch(`${base}/__dev/demo-queue`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ id: DEMO.queue.id, organizationId: DEMO.organization.id, serviceId: DEMO.service.id, name: DEMO.queue.name }),
  });
  const body = await created.json();
  if (!created.ok) throw new Error(`creating the demo queue failed: ${created.status} ${JSON.stringify(body)}`);
  return body.data;
}

/**
 * The demo location's desks (DEMO.desks, each calling the demo queue), created through the API
 * with the demo admin key unless the location has desks already: idempotent. Answers the desks.
 */
export async function ensureDemoDesks(base) {
  const headers = { "X-API-Key": DEMO.apiKey.value, "Content-Type": "application/json" };
  const url = `${base}/v1/locations/${DEMO.location.id}/desks`;
  const listed = await (await fetch(url, { headers })).json();
  if (!listed.success) throw new Error(`listing the demo desks failed: ${JSON.stringify(listed.error)}`);
  if (listed.data.length > 0) return listed.data;
  const made = [];
  for (const desk of DEMO.desks) {
    const body = await (
      await fetch(url, { method: "POST", headers, body: JSON.stringify({ name: desk.name, queueIds: [DEMO.queue.id] }) })
    ).json();
    if (!body.success) throw new Error(`creating the demo desk ${desk.name} failed: ${JSON.stringify(body.error)}`);
    made.push(body.data);
  }
  return made;
}
