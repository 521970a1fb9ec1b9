// Where every file under src/ goes when the code is grouped by area (issue #36).
// Paths are relative to the repository root. A file not named here keeps its path, except
// under src/routes/ and src/services/, which must be mapped: an unknown file there is mapped by
// the longest known name it starts with (e.g. services/tickets-foo.ts goes where
// services/tickets.ts goes) and listed; a file no rule maps at all stops the move (see move.mjs).

/** area → { routes: [old basenames in src/routes], services: [old basenames in src/services] } */
export const AREAS = {
  identity: {
    why: "accounts, sessions, organizations, members, invitations, API keys, domain verification",
    routes: ["auth", "organizations", "members", "invitations", "api-keys", "verification"],
    services: ["users", "members", "invitations", "api-keys", "organizations", "verification"],
  },
  audit: { why: "the sealed audit log", routes: ["audit"], services: ["audit"] },
  catalog: {
    why: "locations, services, service outcomes, the location scope of a member",
    routes: ["locations", "services", "service-outcomes"],
    services: ["locations", "services", "service-outcomes", "location-scope"],
  },
  calendar: { why: "opening hours, closures, operator availability", routes: ["calendar"], services: ["calendar", "availability"] },
  appointments: { why: "bookable slots", routes: ["appointments"], services: ["appointments", "appointments-slots"] },
  tickets: {
    why: "queues and tickets: join, call, moves, transfers, remote join, intake answers, the rooms' client",
    routes: ["queues", "tickets", "ticket-moves", "remote-join", "intake"],
    services: [
      "queues",
      "tickets",
      "joins",
      "queue-rooms",
      "previous-call",
      "visitor-tickets",
      "remote-join",
      "room-rules",
      "quota",
      "intake",
    ],
  },
  visits: {
    why: "what hangs on one visitor's ticket: labels, receipts, phone verification, visitor push",
    routes: ["labels", "receipts", "phone-verification", "visitor-push"],
    services: ["labels", "receipts", "phone-verification"],
  },
  desks: { why: "desks and the floor view", routes: ["desks", "floor"], services: ["desks", "floor"] },
  widget: {
    why: "public channels: the embeddable widget, the display board, the kiosk",
    routes: ["widget", "embed", "kiosk"],
    services: ["widget", "kiosk"],
  },
  entry: {
    why: "QR tokens and NFC tags: entry by scan",
    routes: ["qr", "nfc"],
    services: ["qr-tokens", "qr-images", "nfc-tags", "entry-scans", "channel-targets"],
  },
  conversations: {
    why: "inbound SMS and ticket messages",
    routes: ["inbound", "ticket-messages"],
    services: ["inbound", "inbound-status", "conversations"],
  },
  notifications: {
    why: "in-app, push, SMS and web-push notifications; the SMS allowance and opt-outs",
    routes: ["notifications", "sms-policy"],
    services: ["notifications", "notification-delivery", "sms-guard", "opt-outs"],
  },
  webhooks: {
    why: "webhook subscriptions, the organization's event stream, publishing domain events",
    routes: ["webhooks", "events"],
    services: ["webhooks", "event-stream", "domain-events"],
  },
  billing: {
    why: "plans, subscriptions, checkouts, usage and the API-call quota",
    routes: ["billing", "billing-webhooks"],
    services: ["billing", "billing-events", "usage"],
  },
  analytics: {
    why: "dashboard, analytics and exports",
    routes: ["analytics", "analytics-export", "dashboard"],
    services: ["analytics", "analytics-aggregates", "analytics-export", "analytics-scope", "dashboard", "ticket-stats"],
  },
  "api-reference": { why: "the API document, its reference page and the error-code catalogue", routes: ["docs", "errors"], services: [] },
};

/** Single files that leave their folder. */
export const FILES = {
  // Shared zod schemas of requests and records: cross-cutting, imported by every area's routers.
  "src/routes/schemas.ts": "src/http/schemas.ts",
  // The credential stores the authentication middleware reads (http must not import an area).
  "src/services/sessions.ts": "src/http/credentials/sessions.ts",
  "src/services/api-key-auth.ts": "src/http/credentials/api-keys.ts",
  // Middleware that belongs to one area; app.ts mounts it through the area's index.ts.
  "src/http/queue-access.ts": "src/tickets/queue-access.ts",
  "src/http/api-quota.ts": "src/billing/api-quota.ts",
  "src/http/key-usage.ts": "src/identity/key-usage.ts",
};

/**
 * Declarations moved verbatim out of an area file into http/credentials/ (the lookups the
 * authentication middleware batches); the area file imports and re-exports them, so its other
 * importers do not change. Paths are the NEW paths (applied after the files moved).
 */
export const EXTRACTIONS = [
  { from: "src/tickets/queues.ts", to: "src/http/credentials/queues.ts", names: ["QueueRow", "queueQuery", "sessionRoleInQueueQuery"] },
  { from: "src/identity/members.ts", to: "src/http/credentials/memberships.ts", names: ["defaultOrganizationOf"] },
];

function table() {
  const t = new Map(Object.entries(FILES));
  for (const [area, { routes, services }] of Object.entries(AREAS)) {
    for (const r of routes) t.set(`src/routes/${r}.ts`, `src/${area}/${r}.routes.ts`);
    for (const s of services) t.set(`src/services/${s}.ts`, `src/${area}/${s}.ts`);
  }
  return t;
}
export const TABLE = table();

/**
 * The new path of `oldPath` and how it was found: "rule", "same" (keeps its path),
 * "fallback" (by name prefix) or "unmapped" (null path).
 */
export function mapPath(oldPath) {
  if (TABLE.has(oldPath)) return { path: TABLE.get(oldPath), how: "rule" };
  const m = /^src\/(routes|services)\/(.+)$/.exec(oldPath);
  if (!m) return { path: oldPath, how: "same" };
  const [, dir, rest] = m;
  const base = rest.replace(/\.(ts|tsx)$/, "");
  let best = null;
  for (const [from, to] of TABLE) {
    const fm = new RegExp(`^src/${dir}/(.+)\\.ts$`).exec(from);
    if (!fm) continue;
    const known = fm[1];
    if ((base === known || base.startsWith(known + "-") || base.startsWith(known + ".")) && (!best || known.length > best.known.length)) {
      best = { known, to };
    }
  }
  if (!best) return { path: null, how: "unmapped" };
  const folder = best.to.slice(0, best.to.lastIndexOf("/"));
  const ext = rest.slice(base.length);
  return { path: `${folder}/${base}${dir === "routes" ? ".routes" : ""}${ext}`, how: "fallback" };
}
