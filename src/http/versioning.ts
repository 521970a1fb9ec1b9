import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { API_VERSIONS, CURRENT_API_VERSION, FIRST_API_VERSION, isApiVersion, isBefore, type ApiVersion } from "../domain/api-versions";
import type { AppEnv } from "./context";
import { validationError } from "./errors";
import { answerHeader } from "./answer-headers";

// Dated versions (issue #32; docs/changelog.md). The routes always answer in the current
// shape; this is the one layer that turns an answer back into an older version's shape, one
// "down" step per change, applied newest first. A future renamed field is one more entry of
// CHANGES, not a branch in a route.

export const VERSION_HEADER = "Queue-Version";

interface Change {
  /** The version that introduced the change: requests in any earlier version get `down` applied. */
  version: ApiVersion;
  describe: string;
  /** Does this answer carry the changed shape? (method, route pattern, status) */
  applies(method: string, path: string, status: number): boolean;
  /** The answer's body as the version before `version` had it. */
  down(body: any): any;
}

const TICKET_LIST = /^\/v1\/queues\/[^/]+\/tickets$/;

/** Every other paged list (issue #41): the cursor pages came to them on 2026-11-28. */
const CURSOR_LISTS = [
  "/v1/organizations",
  "/v1/qr-tokens",
  "/v1/nfc/tags",
  "/v1/business/calendar/availability",
  "/v1/business/locations",
  "/v1/locations/search",
  "/v1/services/organization/search",
  "/v1/business/services",
  "/v1/business/queues",
  "/v1/organizations/{organizationId}/members",
  "/v1/organizations/{organizationId}/invitations",
  "/v1/organizations/{organizationId}/api-keys",
  "/v1/billing/usage/{organizationId}/history",
  "/v1/organizations/{organizationId}/webhooks",
  "/v1/organizations/{organizationId}/webhooks/{webhookId}/deliveries",
  "/v1/notifications",
  "/v1/organizations/{organizationId}/notification-deliveries",
  "/v1/locations/{locationId}/desks",
  "/v1/tickets/{ticketId}/messages",
].map((template) => new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`));

/** A cursor page's meta as it was before cursors: no cursor fields, always a page number. */
function withoutCursors(body: any): any {
  if (!body?.meta) return body;
  const { total, page, limit, hasMore } = body.meta;
  return { ...body, meta: { total, page: page ?? 1, limit, hasMore } };
}

/** Newest first. */
const CHANGES: Change[] = [
  {
    version: "2026-11-28",
    describe:
      "Every paged list is cursor-paginated (API keys, webhooks and their deliveries, members, invitations, locations, services, queues, desks, notifications, notification deliveries, QR tokens, NFC tags, invoices, organizations, availability, ticket messages): meta gains nextCursor and previousCursor, and meta.page is null on a page read with a cursor.",
    applies: (method, path, status) => method === "GET" && status === 200 && CURSOR_LISTS.some((list) => list.test(path)),
    down: withoutCursors,
  },
  {
    version: "2026-11-28",
    describe:
      "Events (webhook deliveries and GET /v1/events) carry phoneMasked instead of phone and no e-mail, unless the subscription sets includePersonalData or the key has the scope read:personal_data.",
    // Built where the payload is made (domain/webhooks.ts payloadFor): a masked phone cannot be turned back.
    applies: () => false,
    down: (body) => body,
  },
  {
    version: "2026-11-26",
    describe:
      "Ticket lists are cursor-paginated: meta gains nextCursor and previousCursor, and meta.page is null on a page read with a cursor.",
    applies: (method, path, status) => method === "GET" && status === 200 && TICKET_LIST.test(path),
    down: withoutCursors,
  },
];

/** What each version changed, newest first (docs/changelog.md says the same in prose). */
export const CHANGELOG = CHANGES.map((c) => ({ version: c.version, change: c.describe }));

/** The version a request is answered in: its header, else its key's pin, else the current one. */
function versionOf(c: Context<AppEnv>): ApiVersion {
  const asked = c.req.header(VERSION_HEADER)?.trim();
  if (asked !== undefined && asked !== "") {
    if (!isApiVersion(asked)) {
      throw validationError(VERSION_HEADER, `unknown version ${asked}; versions are ${API_VERSIONS.join(", ")}`, {
        versions: [...API_VERSIONS],
      });
    }
    return asked;
  }
  const principal = c.get("principal");
  if (principal.kind === "apiKey") {
    const pinned = principal.apiVersion;
    return pinned !== null && isApiVersion(pinned) ? pinned : FIRST_API_VERSION;
  }
  // Sessions are the console's and people's: they follow the current version.
  return CURRENT_API_VERSION;
}

/** Runs after authentication (it reads the key's pin); echoes the version in every answer. */
export const apiVersioning = createMiddleware<AppEnv>(async (c, next) => {
  const version = versionOf(c);
  c.set("apiVersion", version);
  await next();
  // A WebSocket upgrade (101) is the room's own answer: nothing to echo or reshape there.
  if (c.res.status === 101) return;
  answerHeader(c, VERSION_HEADER, version);
  const older = CHANGES.filter((change) => isBefore(version, change.version) && change.applies(c.req.method, c.req.path, c.res.status));
  if (older.length === 0 || !c.res.headers.get("Content-Type")?.includes("application/json")) return;
  let body = await c.res.json();
  for (const change of older) body = change.down(body);
  const headers = new Headers(c.res.headers);
  headers.delete("Content-Length");
  c.res = new Response(JSON.stringify(body), { status: c.res.status, headers });
});
