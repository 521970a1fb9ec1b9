import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, createOrganization, registerUser } from "../helpers/fixtures";

const WINDOW_START = "2026-03-02T10:00:00.000Z";
const WINDOW_END_SECONDS = String(Date.parse("2026-03-02T10:01:00.000Z") / 1000);
const NEXT_UTC_MIDNIGHT_SECONDS = String(Date.parse("2026-03-03T00:00:00.000Z") / 1000);

/** A starter organization (free tier: 60/minute, 1,000/day) and one of its keys. */
async function starterKey() {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  const { key } = await createApiKey(owner, org.id);
  return { owner, org, key, path: `/v1/organizations/${org.id}` };
}

describe("per API key", () => {
  it("lets exactly 60 of 75 concurrent requests through and refuses 15 with 429", async () => {
    testClock.set(WINDOW_START);
    const { key, path } = await starterKey();
    const results = await Promise.all(Array.from({ length: 75 }, () => call("GET", path, { apiKey: key })));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(60);
    expect(refused).toHaveLength(15);

    // X-RateLimit-* is the minute window; X-API-RateLimit-* the key's daily budget (CONTRACT §10).
    for (const res of ok) {
      expect(res.headers.get("X-RateLimit-Limit")).toBe("60");
      expect(res.headers.get("X-RateLimit-Reset")).toBe(WINDOW_END_SECONDS);
      expect(res.headers.get("X-API-RateLimit-Limit")).toBe("1000");
      expect(res.headers.get("X-API-RateLimit-Reset")).toBe(NEXT_UTC_MIDNIGHT_SECONDS);
    }
    expect(ok.map((r) => Number(r.headers.get("X-RateLimit-Remaining"))).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 60 }, (_, i) => i),
    );
    expect(ok.map((r) => Number(r.headers.get("X-API-RateLimit-Remaining"))).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 60 }, (_, i) => 940 + i),
    );
    for (const res of refused) {
      expectError(res, 429, "API_RATE_LIMIT_EXCEEDED");
      expect(res.headers.get("Retry-After")).toBe("60");
      expect(res.body.error.details).toMatchObject({ retryAfter: 60, limit: 60, reset: "2026-03-02T10:01:00.000Z", window: "minute" });
      expect(res.headers.get("X-RateLimit-Remaining")).toBe("0");
      expect(res.headers.get("X-API-RateLimit-Remaining")).toBe("940");
      expect(res.headers.get("X-API-RateLimit-Reset")).toBe(NEXT_UTC_MIDNIGHT_SECONDS);
    }
  });

  it("starts a new window a minute later", async () => {
    testClock.set(WINDOW_START);
    const { key, path } = await starterKey();
    for (let i = 0; i < 60; i++) expectOk(await call("GET", path, { apiKey: key }));
    const refused = await call("GET", path, { apiKey: key });
    expectError(refused, 429, "API_RATE_LIMIT_EXCEEDED");
    testClock.advance(45_000);
    expect((await call("GET", path, { apiKey: key })).headers.get("Retry-After")).toBe("15");
    testClock.advance(15_000);
    const again = await call("GET", path, { apiKey: key });
    expectOk(again);
    expect(again.headers.get("X-RateLimit-Remaining")).toBe("59");
  });

  it("applies the daily limit across minute windows, until the next UTC day", async () => {
    testClock.set("2026-03-02T23:50:00.000Z");
    const { org, key, path } = await starterKey();
    // An enterprise organization with a small custom daily limit keeps this test fast.
    await env.DB.prepare(
      "UPDATE subscriptions SET plan = 'enterprise', custom_rate_per_minute = 30, custom_rate_per_day = 70 WHERE organization_id = ?",
    )
      .bind(org.id)
      .run();
    let allowed = 0;
    for (let minute = 0; minute < 3; minute++) {
      for (let i = 0; i < 30; i++) {
        const res = await call("GET", path, { apiKey: key });
        if (res.status === 200) allowed++;
        else {
          expectError(res, 429, "API_RATE_LIMIT_EXCEEDED");
          expect(res.body.error.details).toMatchObject({ limit: 70, reset: "2026-03-03T00:00:00.000Z" });
          expect(Number(res.headers.get("Retry-After"))).toBe(
            Math.ceil((Date.parse("2026-03-03T00:00:00.000Z") - Date.parse("2026-03-02T23:52:00.000Z")) / 1000),
          );
        }
      }
      testClock.advance(60_000);
    }
    expect(allowed).toBe(70);
    testClock.set("2026-03-03T00:00:00.000Z");
    expectOk(await call("GET", path, { apiKey: key }));
  });

  it("counts each key on its own", async () => {
    testClock.set(WINDOW_START);
    const { owner, org, key, path } = await starterKey();
    for (let i = 0; i < 60; i++) await call("GET", path, { apiKey: key });
    expectError(await call("GET", path, { apiKey: key }), 429, "API_RATE_LIMIT_EXCEEDED");
    const other = await createApiKey(owner, org.id);
    expectOk(await call("GET", path, { apiKey: other.key }));
  });
});

describe("per IP without a credential", () => {
  // 125 requests at once: 4 s alone, over the default 30 s on a loaded machine.
  it("allows 120 requests a minute per IP, then 429; other IPs are unaffected", { timeout: 120_000 }, async () => {
    testClock.set(WINDOW_START);
    const ip = "203.0.113.7";
    const results = await Promise.all(Array.from({ length: 125 }, () => call("GET", "/v1/docs", { headers: { "CF-Connecting-IP": ip } })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(120);
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(5);
    expectError(refused[0]!, 429, "API_RATE_LIMIT_EXCEEDED");
    expect(refused[0]!.headers.get("X-RateLimit-Limit")).toBe("120");
    expect(refused[0]!.headers.get("X-API-RateLimit-Limit")).toBeNull();
    expect((await call("GET", "/v1/docs", { headers: { "CF-Connecting-IP": "203.0.113.8" } })).status).toBe(200);
    testClock.advance(60_000);
    expect((await call("GET", "/v1/docs", { headers: { "CF-Connecting-IP": ip } })).status).toBe(200);
  });
});
