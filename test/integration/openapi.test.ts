import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { PAGE_PATHS } from "../../src/http/pages";
import { call } from "../helpers/api";

// The document is checked against the OpenAPI 3.1 JSON schema in test/node/openapi.test.ts:
// the validator compiles schemas with `new Function` and reads files from disk, neither of
// which workerd allows, so that part runs in Node on the same document.

const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);
/** Routes that are not part of the API itself. */
// The pages (/console, /kiosk, /t/{ticketId}…) are HTML for people, not API operations.
const UNDOCUMENTED = new Set(["/v1/openapi.json", "/v1/docs", ...PAGE_PATHS]);

function mountedRoutes(): { method: string; path: string }[] {
  const seen = new Map<string, { method: string; path: string }>();
  for (const route of createApp().routes) {
    if (!METHODS.has(route.method) || route.path.includes("*") || UNDOCUMENTED.has(route.path)) continue;
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    seen.set(`${route.method} ${path}`, { method: route.method, path });
  }
  return [...seen.values()];
}

describe("GET /v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document that lists every mounted route", async () => {
    const res = await call("GET", "/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toMatch(/^3\.1\./);
    const routes = mountedRoutes();
    expect(routes.length).toBeGreaterThan(10);
    const missing = routes.filter(({ method, path }) => !doc.paths?.[path]?.[method.toLowerCase()]);
    expect(missing).toEqual([]);
  });

  it("declares the three credentials and documents errors with the envelope", async () => {
    const doc = (await call("GET", "/v1/openapi.json")).body;
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["apiKey", "bearerAuth", "sessionCookie"]);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", in: "header", name: "X-API-Key" });
    expect(doc.components.securitySchemes.sessionCookie).toMatchObject({ type: "apiKey", in: "cookie", name: "service.session_token" });
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    const patch = doc.paths["/v1/organizations/{organizationId}"].patch;
    const badInput = doc.components.responses[patch.responses["400"].$ref.split("/").pop()];
    expect(badInput.content["application/json"].schema.properties.error.properties.code.enum).toEqual(["VALIDATION_ERROR"]);
    expect(badInput.headers["X-Request-ID"]).toEqual({ $ref: "#/components/headers/X-Request-ID" });
  });
});

describe("GET /v1/docs", () => {
  it("answers an HTML page that loads the reference script from this service", async () => {
    const res = await call("GET", "/v1/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/text\/html/);
    expect(res.body).toContain('src="/v1/docs/scalar.js"');
    expect(res.body).toContain("/v1/openapi.json");
  });
});
