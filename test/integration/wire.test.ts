import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callSelf, expectError, expectOk, unique } from "../helpers/api";
import { createOrganization, registerUser } from "../helpers/fixtures";

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("request bodies", () => {
  it("answers 415 to a text/plain body and to a body without Content-Type", async () => {
    const user = await registerUser();
    const json = JSON.stringify({ name: "x", slug: unique("w") });
    const plain = await call("POST", "/v1/organizations", { token: user.token, rawBody: json, headers: { "Content-Type": "text/plain" } });
    expectError(plain, 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type");
    const res = await SELF.fetch("https://api.test/v1/organizations", {
      method: "POST",
      headers: { Authorization: `Bearer ${user.token}` },
      body: new TextEncoder().encode(json),
    });
    const body = await res.json<any>();
    expect(res.status).toBe(415);
    expect(body.error).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE", details: { field: "Content-Type" } });
  });

  it("answers 415 to a route with a body when no body is sent at all", async () => {
    const user = await registerUser();
    const res = await call("POST", "/v1/organizations", { token: user.token });
    expectError(res, 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type");
  });

  it("answers 400 on body to malformed JSON", async () => {
    const user = await registerUser();
    const res = await call("POST", "/v1/organizations", {
      token: user.token,
      rawBody: '{"name": "x",',
      headers: { "Content-Type": "application/json" },
    });
    expectError(res, 400, "VALIDATION_ERROR", "body");
  });

  it("answers 413 to a body over 64 KiB, its length declared or not (chunked, HTTP/2)", async () => {
    const user = await registerUser();
    const body = { name: "x", slug: unique("w"), description: "x".repeat(65 * 1024) };
    // Through the runtime, the request carries Content-Length.
    expectError(await callSelf("POST", "/v1/organizations", { token: user.token, body }), 413, "PAYLOAD_TOO_LARGE");
    // Handed to the Worker as is: a body stream with no declared length is measured too.
    expectError(await call("POST", "/v1/organizations", { token: user.token, body }), 413, "PAYLOAD_TOO_LARGE");
  });
});

describe("envelope and headers", () => {
  it("answers an unknown route with the 404 NOT_FOUND envelope", async () => {
    const res = await call("GET", "/v1/no-such-thing");
    expectError(res, 404, "NOT_FOUND");
    expect(res.headers.get("Content-Type")).toMatch(/application\/json/);
  });

  it("echoes a safe X-Request-ID and replaces an unsafe or missing one", async () => {
    const safe = await call("GET", "/v1/no-such-thing", { headers: { "X-Request-ID": "client-abc.123:x_y" } });
    expect(safe.headers.get("X-Request-ID")).toBe("client-abc.123:x_y");
    expect(safe.body.error.requestId).toBe("client-abc.123:x_y");
    for (const unsafe of ["<script>alert(1)</script>", "x".repeat(129), "a b"]) {
      const res = await call("GET", "/v1/no-such-thing", { headers: { "X-Request-ID": unsafe } });
      expect(res.headers.get("X-Request-ID")).toMatch(/^req_[0-9a-z]{20}$/);
      expect(res.body.error.requestId).toBe(res.headers.get("X-Request-ID"));
    }
    const missing = await call("GET", "/v1/no-such-thing");
    expect(missing.headers.get("X-Request-ID")).toMatch(/^req_[0-9a-z]{20}$/);
  });

  it("puts Cache-Control: no-store on successes and errors", async () => {
    const user = await registerUser();
    const org = await createOrganization(user);
    const ok = await call("GET", `/v1/organizations/${org.id}`, { token: user.token });
    expectOk(ok);
    expect(ok.headers.get("Cache-Control")).toBe("no-store");
    expect((await call("GET", "/v1/nope")).headers.get("Cache-Control")).toBe("no-store");
  });

  it("writes timestamps with milliseconds", async () => {
    const user = await registerUser();
    const org = await createOrganization(user);
    expect(org.createdAt).toMatch(ISO_MS);
    expect(org.updatedAt).toMatch(ISO_MS);
    const members = expectOk(await call("GET", `/v1/organizations/${org.id}/members`, { token: user.token }));
    expect(members[0].createdAt).toMatch(ISO_MS);
  });

  it("refuses limit > 100 with 400 on limit", async () => {
    const user = await registerUser();
    const org = await createOrganization(user);
    expectError(
      await call("GET", `/v1/organizations/${org.id}/members?limit=101`, { token: user.token }),
      400,
      "VALIDATION_ERROR",
      "limit",
    );
    const page = await call("GET", `/v1/organizations/${org.id}/members?limit=100`, { token: user.token });
    expect(page.body.meta).toMatchObject({ total: 1, page: 1, limit: 100, hasMore: false });
  });

  it("never shows a stack trace, whatever the input", async () => {
    const user = await registerUser();
    const org = await createOrganization(user);
    const attempts = [
      call("PATCH", `/v1/organizations/${org.id}`, { token: user.token, rawBody: "[1,2", headers: { "Content-Type": "application/json" } }),
      call("PATCH", `/v1/organizations/${org.id}`, { token: user.token, body: [1, 2] }),
      call("PATCH", `/v1/organizations/${org.id}`, { token: user.token, body: "text" }),
      call("PATCH", `/v1/organizations/${org.id}`, { token: user.token, body: null }),
      call("POST", `/v1/organizations/${org.id}/members`, { token: user.token, body: { email: { $ne: 1 }, role: ["admin"] } }),
      call("GET", `/v1/organizations/${"x".repeat(5000)}`, { token: user.token }),
      call("GET", "/v1/auth/me", { headers: { Authorization: "Basic abc" } }),
      call("GET", "/v1/auth/me", { headers: { "X-API-Key": "qk_live_short" } }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(JSON.stringify(res.body)).not.toMatch(/\bat \w+ \(|\.ts:\d+|stack/i);
      expect(res.body.success).toBe(false);
    }
  });
});
