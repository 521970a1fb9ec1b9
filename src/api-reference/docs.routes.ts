import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { SECURITY } from "../http/openapi";
import { polishDocument } from "../http/openapi-document";

const DOCS_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Queue service API reference</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="/v1/docs/scalar.js"></script>
    <script>
      // Offline: no AI agent, no MCP generator, no share/deploy tools (they need the internet).
      Scalar.createApiReference("#app", {
        url: "/v1/openapi.json",
        withDefaultFonts: false,
        agent: { disabled: true },
        mcp: { disabled: true },
        showDeveloperTools: "never",
        defaultHttpClient: { targetKey: "shell", clientKey: "curl" },
        authentication: { preferredSecurityScheme: "apiKey" },
      });
    </script>
  </body>
</html>`;

/** The first section of the reference: the business flow, end to end. */
const API_DESCRIPTION = `Run waiting lines: organizations, locations, services, queues and tickets, with live displays,
remote join, QR and NFC entry, a team calendar, billing, notifications and webhooks.

## The flow in six calls

1. **Log in** — \`POST /v1/auth/login\` returns a session token; server-to-server callers use an API key
   in \`X-API-Key\` instead (create one with \`POST /v1/organizations/{organizationId}/api-keys\`).
2. **Organization** — \`POST /v1/organizations {name, slug, type}\`: you become its owner.
3. **Location** — \`POST /v1/locations {organizationId, name, address, latitude, longitude, timezone}\`.
4. **Service** — \`POST /v1/services {name, locationIds, serviceTypeId}\` (\`GET /v1/services/types?organizationType=\`
   lists the types that fit your organization).
5. **Queue** — \`POST /v1/business/queues {serviceId, name}\`: it gets a letter (A, B, …).
6. **Tickets** — customers \`POST /v1/queues/{queueId}/join\`; operators \`POST /v1/queues/{queueId}/call-next\`,
   then \`POST /v1/tickets/{ticketId}/serve\` and \`/complete\`.

## Conventions

Every answer is \`{success: true, data}\` (lists add \`meta {total, page, limit, hasMore}\`) or
\`{success: false, error: {code, message, details, timestamp, requestId}}\`. Bodies are strict JSON: unknown
fields are refused. Send \`Idempotency-Key\` on a POST to retry it safely. Each operation lists the error
codes it can answer.`;

/** The OpenAPI document is generated from the routes themselves; the reference page is offline. */
export function mountDocs(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "apiKey", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
    description: "An organization API key (qk_live_…): the credential for server-to-server calls",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "A session token (sess_…) or an API key (qk_live_…)",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "sessionCookie", {
    type: "apiKey",
    in: "cookie",
    name: "service.session_token",
    description: "The session cookie set by POST /v1/auth/login (browsers)",
  });
  app.get("/v1/openapi.json", (c) => c.json(apiDocument(app, new URL(c.req.url).origin)));
  app.get("/v1/docs", (c) => {
    c.header("Cache-Control", "public, max-age=300");
    return c.html(DOCS_PAGE);
  });
}

/** The API document as /v1/openapi.json serves it (the MCP server makes its tools from it too). */
export function apiDocument(app: OpenAPIHono<AppEnv>, origin: string): Record<string, unknown> {
  const doc = app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Queue management API",
      version: "1.0.0",
      description: API_DESCRIPTION,
      contact: { name: "API support", url: `${origin}/v1/docs` },
      license: { name: "Proprietary", url: `${origin}/v1/docs` },
    },
    servers: [{ url: origin, description: "This deployment" }],
    security: SECURITY.any,
  });
  return polishDocument(doc as unknown as Record<string, unknown>);
}
