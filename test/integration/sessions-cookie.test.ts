import { describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { queueFixture, registerUser, type TestUser } from "../helpers/fixtures";

// A browser that still holds an old session cookie (CONTRACT §10): signing in is never blocked,
// public routes answer it as anyone, and any 401 the cookie causes clears it.

const CLEARED = "service.session_token=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Lax";
const IDLE_EXPIRY_MS = 12 * 60 * 60_000;

let ipCounter = 0;
/** Each test from its own address, so the failures it causes do not add up across tests. */
function freshIp(): string {
  ipCounter += 1;
  return `203.0.113.${100 + ipCounter}`;
}

function withCookie(token: string, ip: string, extra: Record<string, string> = {}) {
  return { headers: { Cookie: `service.session_token=${token}`, "CF-Connecting-IP": ip, ...extra } };
}

/** A user whose session has gone past its 12-hour idle expiry. */
async function staleUser(): Promise<TestUser> {
  testClock.set("2026-03-02T08:00:00.000Z");
  const user = await registerUser();
  testClock.advance(IDLE_EXPIRY_MS + 60_000);
  return user;
}

/** Every Set-Cookie header of a response, one entry each (workerd has getSetCookie; the types here lag). */
const setCookies = (headers: Headers) => (headers as Headers & { getSetCookie(): string[] }).getSetCookie();

describe("a stale cookie never blocks signing in", () => {
  it("login with an expired cookie logs in and replaces it", async () => {
    const user = await staleUser();
    const res = await call("POST", "/v1/auth/login", {
      ...withCookie(user.token, freshIp()),
      body: { email: user.email, password: "correct horse battery" },
    });
    const data = expectOk(res);
    expect(data.session.token).not.toBe(user.token);
    expect(setCookies(res.headers)).toEqual([expect.stringMatching(/^service\.session_token=sess_/)]);
  });

  it("register with a garbage or expired cookie creates the account", async () => {
    const stale = await staleUser();
    for (const cookie of ["garbage", stale.token, "sess_unknown0000000000"]) {
      const res = await call("POST", "/v1/auth/register", {
        ...withCookie(cookie, freshIp()),
        body: {
          email: `${unique("fresh")}@example.com`,
          password: "correct horse battery",
          firstName: "A",
          lastName: "B",
          accountType: "customer",
        },
      });
      expectOk(res, 201);
    }
  });

  it("login and register ignore even a wrong credential in a header", async () => {
    const user = await staleUser();
    const ip = freshIp();
    const login = await call("POST", "/v1/auth/login", {
      headers: { "CF-Connecting-IP": ip, "X-API-Key": "qk_live_wrong" },
      token: "sess_wrong",
      body: { email: user.email, password: "correct horse battery" },
    });
    expectOk(login);
  });
});

describe("public routes treat an invalid cookie as anonymous", () => {
  it("the widget status answers and clears an expired or unknown cookie", async () => {
    const f = await queueFixture("pro");
    testClock.advance(IDLE_EXPIRY_MS + 60_000);
    for (const cookie of [f.owner.token, "sess_unknown0000000000", "garbage"]) {
      const res = await call("GET", `/v1/widget/queue/${f.queueId}/status`, withCookie(cookie, freshIp()));
      expect(expectOk(res).queueId).toBe(f.queueId);
      expect(setCookies(res.headers)).toEqual([CLEARED]);
    }
  });

  it("a valid cookie on a public route is left alone", async () => {
    const f = await queueFixture("pro");
    const res = await call("GET", `/v1/widget/queue/${f.queueId}/status`, withCookie(f.owner.token, freshIp()));
    expectOk(res);
    expect(setCookies(res.headers)).toEqual([]);
  });
});

describe("a 401 caused by the cookie clears it", () => {
  it("me and refresh answer TOKEN_EXPIRED for an expired cookie and clear it; AUTHENTICATION_ERROR for an unknown one", async () => {
    const user = await staleUser();
    const ip = freshIp();
    const me = await call("GET", "/v1/auth/me", withCookie(user.token, ip));
    expectError(me, 401, "TOKEN_EXPIRED");
    expect(setCookies(me.headers)).toEqual([CLEARED]);
    const refresh = await call("POST", "/v1/auth/session/refresh", withCookie(user.token, ip));
    expectError(refresh, 401, "TOKEN_EXPIRED");
    expect(setCookies(refresh.headers)).toEqual([CLEARED]);
    const unknown = await call("GET", "/v1/auth/me", withCookie("sess_unknown0000000000", ip));
    expectError(unknown, 401, "AUTHENTICATION_ERROR");
    expect(setCookies(unknown.headers)).toEqual([CLEARED]);
  });

  it("an expired Bearer token is still refused everywhere, and no cookie is touched", async () => {
    const user = await staleUser();
    const f = await queueFixture("pro");
    testClock.advance(IDLE_EXPIRY_MS + 60_000);
    const res = await call("GET", `/v1/widget/queue/${f.queueId}/status`, {
      token: user.token,
      headers: { "CF-Connecting-IP": freshIp() },
    });
    expectError(res, 401, "TOKEN_EXPIRED");
    expect(setCookies(res.headers)).toEqual([]);
  });

  it("a valid cookie keeps working and is not cleared", async () => {
    testClock.set("2026-03-02T08:00:00.000Z");
    const user = await registerUser();
    const res = await call("GET", "/v1/auth/me", withCookie(user.token, freshIp()));
    expect(expectOk(res).user.id).toBe(user.id);
    expect(setCookies(res.headers)).toEqual([]);
  });
});

describe("logout always clears the cookie", () => {
  it("with a valid cookie: ends the session and clears it", async () => {
    testClock.set("2026-03-02T08:00:00.000Z");
    const user = await registerUser();
    const ip = freshIp();
    const res = await call("POST", "/v1/auth/logout", withCookie(user.token, ip));
    expect(expectOk(res)).toEqual({ loggedOut: true });
    expect(setCookies(res.headers)).toEqual([CLEARED]);
    expectError(await call("GET", "/v1/auth/me", { token: user.token, headers: { "CF-Connecting-IP": ip } }), 401, "AUTHENTICATION_ERROR");
  });

  it("with an expired, unknown or no cookie: answers 200 and clears it", async () => {
    const user = await staleUser();
    for (const opts of [
      withCookie(user.token, freshIp()),
      withCookie("sess_unknown0000000000", freshIp()),
      { headers: { "CF-Connecting-IP": freshIp() } },
    ]) {
      const res = await call("POST", "/v1/auth/logout", opts);
      expect(expectOk(res)).toEqual({ loggedOut: true });
      expect(setCookies(res.headers)).toEqual([CLEARED]);
    }
  });

  it("with an API key: 403, and the cookie is cleared all the same", async () => {
    testClock.set("2026-03-02T08:00:00.000Z");
    const f = await queueFixture("pro");
    const key = expectOk(
      await call("POST", `/v1/organizations/${f.organizationId}/api-keys`, { token: f.owner.token, body: { name: unique("k") } }),
      201,
    ).key;
    const res = await call("POST", "/v1/auth/logout", { apiKey: key, headers: { "CF-Connecting-IP": freshIp() } });
    expectError(res, 403, "AUTHORIZATION_ERROR");
    expect(setCookies(res.headers)).toEqual([CLEARED]);
  });
});
