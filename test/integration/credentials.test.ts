import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { testClock } from "../helpers/clock";
import {
  alterTail,
  forgedApiKey,
  forgedSessionToken,
  insertLegacyApiKey,
  insertLegacySession,
  legacyShapedApiKey,
  legacyShapedSessionToken,
  meterBindings,
} from "../helpers/credentials";
import { createApiKey, queueFixture, registerUser } from "../helpers/fixtures";

// Credentials that prove themselves (issue #33, CONTRACT §10 as amended): a forged credential is
// refused without reaching D1 or any object; a failed-credential count only ever refuses
// requests whose own credential fails; stale cookies and polls of ended tickets count nowhere.

let ipCounter = 0;
function freshIp(): string {
  ipCounter += 1;
  return `192.0.2.${ipCounter}`;
}
const from = (ip: string, extra: Record<string, string> = {}) => ({ "CF-Connecting-IP": ip, ...extra });

async function failedCount(ip: string): Promise<number> {
  const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`ip:${ip}`));
  const counters = await runInDurableObject(stub, (_instance, state) => Object.fromEntries(state.storage.kv.list<{ count: number }>()));
  return (counters.failed as { count: number } | undefined)?.count ?? 0;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a forged credential", () => {
  it("30 forged tokens and 30 forged keys from one address reach neither D1 nor an object, and lock nobody out", async () => {
    const f = await queueFixture("pro");
    const admin = await createApiKey(f.owner, f.organizationId, ["admin"]);
    const widget = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const ip = freshIp();
    const orgPath = `/v1/organizations/${f.organizationId}`;

    const meter = meterBindings();
    // The meter sees what a lookup costs: an unsigned credential is judged by a D1 read.
    expectError(
      await meter.call("GET", "/v1/auth/me", { token: legacyShapedSessionToken(), headers: from(freshIp()) }),
      401,
      "AUTHENTICATION_ERROR",
    );
    expect(meter.count.d1).toBeGreaterThan(0);
    meter.reset();
    for (let i = 0; i < 30; i++) {
      expectError(await meter.call("GET", "/v1/auth/me", { token: forgedSessionToken(), headers: from(ip) }), 401, "AUTHENTICATION_ERROR");
      expectError(await meter.call("GET", orgPath, { apiKey: forgedApiKey(), headers: from(ip) }), 401, "AUTHENTICATION_ERROR");
    }
    // A real key with its MAC altered, and one of another secret's signature, are forged too.
    expectError(await meter.call("GET", orgPath, { apiKey: alterTail(admin.key, 4), headers: from(ip) }), 401, "AUTHENTICATION_ERROR");
    expectError(await meter.call("GET", orgPath, { token: alterTail(f.owner.token), headers: from(ip) }), 401, "AUTHENTICATION_ERROR");
    expect(meter.count).toEqual({ d1: 0, objects: 0, rooms: 0 });
    expect(await failedCount(ip)).toBe(0);

    // The valid session, admin key and widget key of that address are all served.
    expect(expectOk(await call("GET", "/v1/auth/me", { token: f.owner.token, headers: from(ip) })).user.id).toBe(f.owner.id);
    expect(expectOk(await call("GET", orgPath, { apiKey: admin.key, headers: from(ip) })).id).toBe(f.organizationId);
    expectOk(await call("GET", `/v1/widget/queue/${f.queueId}/status`, { apiKey: widget.key, headers: from(ip) }));
  });

  it("a valid signed credential is served even from an address over its failed-credential limit", async () => {
    testClock.set("2026-03-02T10:00:00.000Z");
    const f = await queueFixture("pro");
    const admin = await createApiKey(f.owner, f.organizationId, ["admin"]);
    const widget = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const legacy = await insertLegacyApiKey(f.organizationId);
    const ip = freshIp();
    const orgPath = `/v1/organizations/${f.organizationId}`;
    // Unsigned shapes need a lookup: those failures count, 30 of them fill the address's limit.
    for (let i = 0; i < 30; i++) {
      const wrong = i % 2 === 0 ? { apiKey: legacyShapedApiKey() } : { token: legacyShapedSessionToken() };
      expectError(await call("GET", orgPath, { ...wrong, headers: from(ip) }), 401, "AUTHENTICATION_ERROR");
    }
    expect(await failedCount(ip)).toBe(30);
    // What still needs a lookup is refused before it (a legacy key, even a valid one)...
    expectError(await call("GET", orgPath, { apiKey: legacy.key, headers: from(ip) }), 429, "API_RATE_LIMIT_EXCEEDED");
    // ... while every credential that proves itself is answered normally.
    expectOk(await call("GET", "/v1/auth/me", { token: f.owner.token, headers: from(ip) }));
    expectOk(await call("GET", orgPath, { apiKey: admin.key, headers: from(ip) }));
    expectOk(await call("GET", `/v1/widget/queue/${f.queueId}/status`, { apiKey: widget.key, headers: from(ip) }));
    // The legacy key itself still works from elsewhere.
    expectOk(await call("GET", orgPath, { apiKey: legacy.key, headers: from(freshIp()) }));
  });

  it("a revoked signed key and a logged-out signed session are refused without counting against the address", async () => {
    const f = await queueFixture("pro");
    const key = await createApiKey(f.owner, f.organizationId, ["admin"]);
    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}/api-keys/${key.id}`, { token: f.owner.token }));
    const ip = freshIp();
    expectError(await call("GET", `/v1/organizations/${f.organizationId}`, { apiKey: key.key, headers: from(ip) }), 403, "KEY_REVOKED");
    const session = expectOk(
      await call("POST", "/v1/auth/login", { body: { email: f.owner.email, password: "correct horse battery" }, headers: from(ip) }),
    ).session.token as string;
    expectOk(await call("POST", "/v1/auth/logout", { token: session, headers: from(ip) }));
    expectError(await call("GET", "/v1/auth/me", { token: session, headers: from(ip) }), 401, "AUTHENTICATION_ERROR");
    expect(await failedCount(ip)).toBe(0);
  });
});

describe("what does not count as a failed credential", () => {
  it("stale cookies on public reads are answered and count nowhere", async () => {
    const f = await queueFixture("pro");
    const ip = freshIp();
    const stale = await insertLegacySession(f.owner.id, Date.now() - 40 * 86_400_000);
    for (const cookie of [stale, legacyShapedSessionToken(), forgedSessionToken()]) {
      for (let i = 0; i < 12; i++) {
        const res = await call("GET", `/v1/widget/queue/${f.queueId}/status`, {
          headers: from(ip, { Cookie: `service.session_token=${cookie}` }),
        });
        expectOk(res);
      }
    }
    expect(await failedCount(ip)).toBe(0);
  });

  it("polls of a visitor's ended ticket answer 404 and count nowhere; a forged ticket token costs no lookup", async () => {
    const f = await queueFixture("pro");
    const widget = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const joined = expectOk(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: widget.key, body: {} }), 201);
    expect(joined.ticketToken).toMatch(/^[A-Za-z0-9_-]{44}$/);
    const ip = freshIp();
    const headers = from(ip, { "X-Ticket-Token": joined.ticketToken });
    expectOk(await call("GET", `/v1/widget/tickets/${joined.id}`, { headers }));
    expectOk(await call("POST", `/v1/widget/tickets/${joined.id}/cancel`, { headers }));
    for (let i = 0; i < 35; i++) expectError(await call("GET", `/v1/widget/tickets/${joined.id}`, { headers }), 404, "NOT_FOUND");
    expect(await failedCount(ip)).toBe(0);

    const meter = meterBindings();
    const forged = `${joined.ticketToken.slice(0, 22)}${"A".repeat(22)}`;
    expectError(
      await meter.call("GET", `/v1/widget/tickets/${joined.id}`, { headers: from(ip, { "X-Ticket-Token": forged }) }),
      404,
      "NOT_FOUND",
    );
    // No lookup: neither D1 nor the room; the one object is the address's public-read bucket,
    // which every read of this public route pays, whatever its token.
    expect(meter.count).toEqual({ d1: 0, objects: 1, rooms: 0 });
  });
});

describe("signatures", () => {
  async function signedWith(secret: string, body: string): Promise<string> {
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)));
    return (
      body +
      [...mac]
        .map((b) => b.toString(16).padStart(2, "0"))
        .join("")
        .slice(0, 32)
    );
  }

  async function insertSession(userId: string, token: string): Promise<void> {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
    const hash = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
    const at = Date.now();
    await env.DB.prepare(
      "INSERT INTO sessions (token_hash, user_id, created_at, last_seen_at, expires_at, absolute_expires_at) VALUES (?, ?, ?, ?, ?, ?)",
    )
      .bind(hash, userId, at, at, at + 86_400_000, at + 86_400_000)
      .run();
  }

  it("accepts what TOKEN_SECRET_PREVIOUS signed (rotation) and refuses another secret's signature without a lookup", async () => {
    const f = await queueFixture("pro");
    const body = `sess_${"r".repeat(20)}${"s".repeat(20)}`;
    const rotated = await signedWith(env.TOKEN_SECRET_PREVIOUS!, body);
    await insertSession(f.owner.id, rotated);
    expect(expectOk(await call("GET", "/v1/auth/me", { token: rotated, headers: from(freshIp()) })).user.id).toBe(f.owner.id);

    const foreignBody = `sess_${"t".repeat(40)}`;
    const foreign = await signedWith("a secret that is not ours", foreignBody);
    await insertSession(f.owner.id, foreign);
    const meter = meterBindings();
    expectError(await meter.call("GET", "/v1/auth/me", { token: foreign, headers: from(freshIp()) }), 401, "AUTHENTICATION_ERROR");
    expect(meter.count).toEqual({ d1: 0, objects: 0, rooms: 0 });
  });

  it("a credential verified once is not verified again by the isolate; a forged one is verified (and refused) every time", async () => {
    const f = await queueFixture("pro");
    expectOk(await call("GET", "/v1/auth/me", { token: f.owner.token }));
    const forged = `${f.owner.token.slice(0, -1)}${f.owner.token.endsWith("0") ? "1" : "0"}`;
    const sign = vi.spyOn(crypto.subtle, "sign");
    expectOk(await call("GET", "/v1/auth/me", { token: f.owner.token }));
    const forValid = sign.mock.calls.length;
    expectError(await call("GET", "/v1/auth/me", { token: forged, headers: from(freshIp()) }), 401, "AUTHENTICATION_ERROR");
    expectError(await call("GET", "/v1/auth/me", { token: forged, headers: from(freshIp()) }), 401, "AUTHENTICATION_ERROR");
    const forForged = sign.mock.calls.length - forValid;
    sign.mockRestore();
    expect(forValid).toBe(0);
    expect(forForged).toBeGreaterThanOrEqual(2);
  });

  it("a session token's hash is taken once by the isolate, and its session is still judged on every request", async () => {
    const f = await queueFixture("pro");
    const other = await registerUser();
    expectOk(await call("GET", "/v1/auth/me", { token: f.owner.token }));
    expectOk(await call("GET", "/v1/auth/me", { token: other.token }));
    const digest = vi.spyOn(crypto.subtle, "digest");
    expectOk(await call("GET", "/v1/auth/me", { token: f.owner.token }));
    expectOk(await call("GET", "/v1/auth/me", { token: other.token }));
    const digests = digest.mock.calls.length;
    digest.mockRestore();
    expect(digests).toBe(0);
    // The hash is the token's alone: a logout still ends the session at once.
    expectOk(await call("POST", "/v1/auth/logout", { token: other.token }));
    expectError(await call("GET", "/v1/auth/me", { token: other.token }), 401, "AUTHENTICATION_ERROR");
    expectOk(await call("GET", "/v1/auth/me", { token: f.owner.token }));
  });

  it("new keys and sessions are signed; a legacy key keeps working and is listed for rotation", async () => {
    const f = await queueFixture("pro");
    const fresh = await createApiKey(f.owner, f.organizationId, ["read"]);
    expect(fresh.key).toMatch(/^qk_live_[0-9a-z]{40}[0-9a-f]{32}$/);
    expect(f.owner.token).toMatch(/^sess_usr_[0-9a-z]{20}_[0-9a-z]{40}[0-9a-f]{32}$/);
    const legacy = await insertLegacyApiKey(f.organizationId, ["read"]);
    expectOk(await call("GET", `/v1/organizations/${f.organizationId}`, { apiKey: legacy.key, headers: from(freshIp()) }));
    const legacySession = await insertLegacySession(f.owner.id);
    expectOk(await call("GET", "/v1/auth/me", { token: legacySession, headers: from(freshIp()) }));
    const listed = await call("GET", `/v1/organizations/${f.organizationId}/api-keys`, { token: f.owner.token });
    const byId = new Map((expectOk(listed) as { id: string; legacy: boolean }[]).map((k) => [k.id, k.legacy]));
    expect(byId.get(fresh.id)).toBe(false);
    expect(byId.get(legacy.id)).toBe(true);
  });
});
