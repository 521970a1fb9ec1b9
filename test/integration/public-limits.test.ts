import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { insertLegacyApiKey, insertLegacySession, legacyShapedApiKey, legacyShapedSessionToken } from "../helpers/credentials";
import { addQueue, createApiKey, queueFixture, setPlan } from "../helpers/fixtures";
import { COUNT_RESERVE } from "../../src/rate-limiter/rate-limiter";

// The buckets of docs/limits.md through HTTP: public reads and sockets per (IP, queue or
// organization), failed credentials per IP before any lookup, widget keys per (key, IP), and
// the daily X-API-RateLimit-* headers.

const WINDOW_START = "2026-03-02T10:00:00.000Z";
const NEXT_UTC_MIDNIGHT_SECONDS = String(Date.parse("2026-03-03T00:00:00.000Z") / 1000);

/** Hundreds of requests: seconds alone, far more on a loaded machine. */
const HEAVY_TEST_TIMEOUT_MS = 120_000;

let ipCounter = 0;
/** An address no other test of this file uses (each has its own buckets). */
function freshIp(): string {
  ipCounter += 1;
  return `198.51.100.${ipCounter}`;
}

const from = (ip: string, extra: Record<string, string> = {}) => ({ headers: { "CF-Connecting-IP": ip, ...extra } });

/** The counters the RateLimiter object of an IP holds, by rule name. */
async function countersOf(ip: string): Promise<Record<string, { count: number }>> {
  const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`ip:${ip}`));
  return runInDurableObject(stub, (_instance, state) => Object.fromEntries(state.storage.kv.list<{ count: number }>()));
}

/**
 * What the RateLimiter object of an IP has counted in each one-minute window at `at`, as it
 * decides: its own count, not the ceiling it stores ahead of it (docs/limits.md).
 */
async function countedOf(ip: string, names: string[], at: number): Promise<Record<string, number>> {
  const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`ip:${ip}`));
  const large = 1_000_000_000;
  const decision = await stub.peek(
    names.map((name) => ({ name, limit: large, windowMs: 60_000 })),
    at,
  );
  return Object.fromEntries(decision.windows.map((w) => [w.name, large - (w.remaining ?? large)]));
}

/** Runs `count` requests, `batch` at a time. */
async function inBatches<T>(count: number, batch: number, one: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < count; start += batch) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(batch, count - start) }, (_, i) => one(start + i)))));
  }
  return results;
}

describe("public reads and sockets", () => {
  it(
    "300 WebSocket upgrades from one address all connect, and leave the strict per-IP bucket untouched",
    async () => {
      testClock.set(WINDOW_START);
      const f = await queueFixture("starter");
      const ip = freshIp();
      const sockets: WebSocket[] = [];
      const statuses = await inBatches(300, 50, async (i) => {
        // Half follow the spec (connect, then subscribe), half subscribe at connection time.
        const query = i % 2 === 0 ? `?queueId=${f.queueId}` : "";
        const res = await SELF.fetch(`https://api.test/v1/widget/ws${query}`, {
          headers: { Upgrade: "websocket", "CF-Connecting-IP": ip },
        });
        if (res.webSocket) {
          res.webSocket.accept();
          sockets.push(res.webSocket);
        }
        return res.status;
      });
      expect(statuses.filter((s) => s === 101)).toHaveLength(300);
      for (const ws of sockets) ws.close(1000, "done");

      const queueBucket = `public:que:${f.queueId}`;
      expect(await countedOf(ip, [queueBucket, "public:ws", "public"], Date.parse(WINDOW_START))).toEqual({
        [queueBucket]: 150,
        "public:ws": 150,
        public: 300,
      });
      // The storage holds a ceiling ahead of each count (ceilings of 21, 42, … here: 315), written
      // when the count passes it, not once a request; never below the count.
      const stored = await countersOf(ip);
      expect(stored.public?.count).toBeGreaterThan(300);
      expect(stored.public?.count).toBeLessThanOrEqual(300 + COUNT_RESERVE);
      // Login from the same address still has its whole strict budget.
      const login = await call("POST", "/v1/auth/login", {
        ...from(ip),
        body: { email: `${unique("nobody")}@example.com`, password: "wrong password" },
      });
      expectError(login, 401, "AUTHENTICATION_ERROR");
      expect(login.headers.get("X-RateLimit-Limit")).toBe("120");
      expect(login.headers.get("X-RateLimit-Remaining")).toBe("119");
    },
    HEAVY_TEST_TIMEOUT_MS,
  );

  it(
    "status reads are counted per (IP, queue) in the generous public bucket, not the strict one",
    async () => {
      testClock.set(WINDOW_START);
      const f = await queueFixture("pro");
      const other = await addQueue(f);
      const ip = freshIp();
      const reads = await inBatches(150, 50, () => call("GET", `/v1/widget/queue/${f.queueId}/status`, from(ip)));
      expect(reads.filter((r) => r.status === 200)).toHaveLength(150);
      expect(reads[0]!.headers.get("X-RateLimit-Limit")).toBe("6000");
      expect(Math.min(...reads.map((r) => Number(r.headers.get("X-RateLimit-Remaining"))))).toBe(6000 - 150);
      expect(reads[0]!.headers.get("X-API-RateLimit-Limit")).toBeNull();
      const otherQueue = await call("GET", `/v1/widget/queue/${other}/status`, from(ip));
      expectOk(otherQueue);
      expect(otherQueue.headers.get("X-RateLimit-Remaining")).toBe("5999");
      const embed = await SELF.fetch("https://api.test/v1/embed.js", from(ip));
      expect(embed.status).toBe(200);
      expect(embed.headers.get("X-RateLimit-Limit")).toBe("6000");
    },
    HEAVY_TEST_TIMEOUT_MS,
  );
});

describe("failed credentials per IP", () => {
  it("30 wrong keys or tokens of the unsigned formats from one IP get 401; the 31st such credential gets 429 before any lookup, even a valid legacy key", async () => {
    testClock.set(WINDOW_START);
    const f = await queueFixture("starter");
    const valid = await createApiKey(f.owner, f.organizationId);
    const legacy = await insertLegacyApiKey(f.organizationId);
    const ip = freshIp();
    const path = `/v1/organizations/${f.organizationId}`;
    for (let i = 0; i < 30; i++) {
      const wrong =
        i % 3 === 0
          ? { apiKey: legacyShapedApiKey() }
          : i % 3 === 1
            ? { token: legacyShapedSessionToken() }
            : { headers: { Authorization: `Bearer ${legacy.key.slice(0, -4)}zzzz` } };
      const res = await call("GET", path, { ...wrong, headers: { ...from(ip).headers, ...("headers" in wrong ? wrong.headers : {}) } });
      expectError(res, 401, "AUTHENTICATION_ERROR");
    }
    expect((await countersOf(ip)).failed?.count).toBe(30);

    // The 31st: a valid legacy key would pass its lookup, so a 429 proves none happened.
    const refused = await call("GET", path, { ...from(ip), apiKey: legacy.key });
    expectError(refused, 429, "API_RATE_LIMIT_EXCEEDED");
    expect(refused.body.error.details).toMatchObject({ window: "failed_credentials", limit: 30, reset: "2026-03-02T10:15:00.000Z" });
    expect(refused.headers.get("Retry-After")).toBe(String(15 * 60));
    const unknown = await call("GET", path, { ...from(ip), apiKey: legacyShapedApiKey() });
    expectError(unknown, 429, "API_RATE_LIMIT_EXCEEDED");
    // Refused attempts are not failures of their own (the counter stays at the limit).
    expect((await countersOf(ip)).failed?.count).toBe(30);
    // A signed key proves itself: it is served whatever the address's count (CONTRACT §10).
    expectOk(await call("GET", path, { ...from(ip), apiKey: valid.key }));

    // The failures also used the strict bucket of that address: 30 of its 120.
    const anonymous = await call("GET", "/v1/docs", from(ip));
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get("X-RateLimit-Remaining")).toBe(String(120 - 30 - 1));
    // The public side still answers that address, the legacy key still works elsewhere, and the window ends.
    expectOk(await call("GET", `/v1/widget/queue/${f.queueId}/status`, from(ip)));
    expectOk(await call("GET", path, { ...from(freshIp()), apiKey: legacy.key }));
    testClock.advance(15 * 60_000);
    expectOk(await call("GET", path, { ...from(ip), apiKey: legacy.key }));
  });

  it("a revoked legacy key and an expired legacy session count as failures; signed ones do not", async () => {
    testClock.set(WINDOW_START);
    const f = await queueFixture("starter");
    const revoked = await insertLegacyApiKey(f.organizationId);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").bind(Date.parse(WINDOW_START), revoked.id).run();
    const signedRevoked = await createApiKey(f.owner, f.organizationId);
    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}/api-keys/${signedRevoked.id}`, { token: f.owner.token }));
    const legacySession = await insertLegacySession(f.owner.id, Date.parse(WINDOW_START));
    const ip = freshIp();
    expectError(await call("GET", `/v1/organizations/${f.organizationId}`, { ...from(ip), apiKey: revoked.key }), 403, "KEY_REVOKED");
    expectError(await call("GET", `/v1/organizations/${f.organizationId}`, { ...from(ip), apiKey: signedRevoked.key }), 403, "KEY_REVOKED");
    expect((await countersOf(ip)).failed?.count).toBe(1);
    // 25 idle hours later (a new 15-minute window), both sessions have expired.
    testClock.advance(25 * 60 * 60_000);
    expectError(await call("GET", "/v1/auth/me", { ...from(ip), token: legacySession }), 401, "TOKEN_EXPIRED");
    expectError(await call("GET", "/v1/auth/me", { ...from(ip), token: legacySession }), 401, "TOKEN_EXPIRED");
    expectError(await call("GET", "/v1/auth/me", { ...from(ip), token: f.owner.token }), 401, "TOKEN_EXPIRED");
    expect((await countersOf(ip)).failed?.count).toBe(2);
  });
});

describe("widget keys", () => {
  it(
    "are limited per (key, IP) with their own daily budget, not the organization's tier, and leave its other keys' counters alone",
    async () => {
      testClock.set(WINDOW_START);
      const f = await queueFixture("starter"); // free tier: 60 a minute, 1,000 a day per key
      const widget = await createApiKey(f.owner, f.organizationId, ["widget"]);
      const read = await createApiKey(f.owner, f.organizationId, ["read"]);
      const ip = freshIp();
      const info = `/v1/widget/organization/${f.organizationId}/info`;
      const results = await inBatches(70, 35, () => call("GET", info, { ...from(ip), apiKey: widget.key }));
      expect(results.filter((r) => r.status === 200)).toHaveLength(70);
      const last = results.reduce((a, b) =>
        Number(a.headers.get("X-RateLimit-Remaining")) < Number(b.headers.get("X-RateLimit-Remaining")) ? a : b,
      );
      expect(last.headers.get("X-RateLimit-Limit")).toBe("1200");
      expect(last.headers.get("X-RateLimit-Remaining")).toBe(String(1200 - 70));
      expect(last.headers.get("X-API-RateLimit-Limit")).toBe("50000");
      expect(last.headers.get("X-API-RateLimit-Remaining")).toBe(String(50_000 - 70));
      expect(last.headers.get("X-API-RateLimit-Reset")).toBe(NEXT_UTC_MIDNIGHT_SECONDS);

      // Another visitor's address starts afresh with the same key.
      const elsewhere = await call("GET", info, { ...from(freshIp()), apiKey: widget.key });
      expect(elsewhere.headers.get("X-RateLimit-Remaining")).toBe("1199");
      // The organization's other key has used nothing of its minute or its day.
      const other = await call("GET", info, { ...from(ip), apiKey: read.key });
      expectOk(other);
      expect(other.headers.get("X-RateLimit-Limit")).toBe("60");
      expect(other.headers.get("X-RateLimit-Remaining")).toBe("59");
      expect(other.headers.get("X-API-RateLimit-Remaining")).toBe("999");
      // Nothing was counted in the widget key's own (tier) object either.
      const keyObject = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`key:${widget.id}`));
      expect(await runInDurableObject(keyObject, (_i, state) => [...state.storage.kv.list()].length)).toBe(0);
    },
    HEAVY_TEST_TIMEOUT_MS,
  );
});

describe("daily headers", () => {
  it("X-API-RateLimit-* carry the key's day (reset at the next UTC midnight), X-RateLimit-* its minute", async () => {
    testClock.set("2026-03-02T17:30:20.000Z");
    const f = await queueFixture("starter");
    const { key } = await createApiKey(f.owner, f.organizationId);
    const path = `/v1/organizations/${f.organizationId}`;
    const first = await call("GET", path, { apiKey: key });
    expect(first.headers.get("X-RateLimit-Limit")).toBe("60");
    expect(first.headers.get("X-RateLimit-Remaining")).toBe("59");
    expect(first.headers.get("X-RateLimit-Reset")).toBe(String(Date.parse("2026-03-02T17:31:00.000Z") / 1000));
    expect(first.headers.get("X-API-RateLimit-Limit")).toBe("1000");
    expect(first.headers.get("X-API-RateLimit-Remaining")).toBe("999");
    expect(first.headers.get("X-API-RateLimit-Reset")).toBe(NEXT_UTC_MIDNIGHT_SECONDS);
    testClock.advance(60_000);
    const second = await call("GET", path, { apiKey: key });
    expect(second.headers.get("X-RateLimit-Remaining")).toBe("59");
    expect(second.headers.get("X-API-RateLimit-Remaining")).toBe("998");

    await setPlan(f.organizationId, "enterprise");
    const unlimited = await call("GET", path, { apiKey: key });
    expect(unlimited.headers.get("X-RateLimit-Limit")).toBe("5000");
    expect(unlimited.headers.get("X-API-RateLimit-Limit")).toBe("unlimited");
    expect(unlimited.headers.get("X-API-RateLimit-Remaining")).toBe("unlimited");
    expect(unlimited.headers.get("X-API-RateLimit-Reset")).toBe(NEXT_UTC_MIDNIGHT_SECONDS);
  });
});

describe("the client's address", () => {
  const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext;
  async function remaining(environment: string, forwardedFor: string): Promise<string | null> {
    const res = await createApp().request(
      "https://api.test/v1/docs",
      { headers: { "X-Forwarded-For": forwardedFor } },
      { ...env, ENVIRONMENT: environment },
      ctx,
    );
    expect(res.status).toBe(200);
    return res.headers.get("X-RateLimit-Remaining");
  }

  it("is X-Forwarded-For only outside production; in production only CF-Connecting-IP counts", async () => {
    testClock.set("2026-03-02T11:00:00.000Z");
    expect(await remaining("test", "192.0.2.1")).toBe("119");
    expect(await remaining("test", "192.0.2.2")).toBe("119");
    // In production anyone can write X-Forwarded-For: both land in the same bucket.
    const a = Number(await remaining("production", "192.0.2.3"));
    const b = Number(await remaining("production", "192.0.2.4"));
    expect(b).toBe(a - 1);
  });
});
