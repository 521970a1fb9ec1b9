import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../http/context";
import { SECURITY } from "../http/openapi";

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
      Scalar.createApiReference("#app", { url: "/v1/openapi.json", hideClientButton: false, withDefaultFonts: false });
    </script>
  </body>
</html>`;

/** The OpenAPI document is generated from the routes themselves; the reference page is offline. */
export function mountDocs(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "sessionCookie", {
    type: "apiKey",
    in: "cookie",
    name: "service.session_token",
    description: "The session cookie set by POST /v1/auth/login",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "A session token (sess_…) or an API key (qk_live_…)",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "apiKey", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
    description: "An organization API key (qk_live_…)",
  });
  app.doc31("/v1/openapi.json", (c) => ({
    openapi: "3.1.0",
    info: {
      title: "Queue management API",
      version: "1.0.0",
      description:
        "Run waiting lines: organizations, locations, services, queues and tickets. Every response uses the envelope {success, data} or {success: false, error}.",
    },
    servers: [{ url: new URL(c.req.url).origin }],
    security: SECURITY.any,
  }));
  app.get("/v1/docs", (c) => {
    c.header("Cache-Control", "public, max-age=300");
    return c.html(DOCS_PAGE);
  });
}
