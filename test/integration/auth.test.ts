import { describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { registerUser } from "../helpers/fixtures";

const HOUR = 3_600_000;

describe("register", () => {
  it("creates the account, answers like login and sets the session cookie", async () => {
    const email = `${unique("reg")}@Example.com`;
    const res = await call("POST", "/v1/auth/register", {
      body: { email, password: "0123456789", firstName: "Ada", lastName: "Lovelace", accountType: "business", language: "fr" },
    });
    const data = expectOk(res, 201);
    expect(data.user).toMatchObject({ email: email.toLowerCase(), firstName: "Ada", accountType: "business", language: "fr" });
    expect(data.user.id).toMatch(/^usr_[0-9a-z]{20}$/);
    expect(data.session.token).toMatch(/^sess_/);
    expect(data.user).not.toHaveProperty("passwordHash");
    const cookie = res.headers.get("Set-Cookie") ?? "";
    expect(cookie).toContain("service.session_token=sess_");
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/Secure/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
  });

  it("refuses a duplicate email with 409 CONFLICT on email", async () => {
    const user = await registerUser();
    const res = await call("POST", "/v1/auth/register", {
      body: { email: user.email.toUpperCase(), password: "0123456789", firstName: "A", lastName: "B", accountType: "customer" },
    });
    expectError(res, 409, "CONFLICT", "email");
  });

  it.each([
    ["a short password", { password: "short" }, "password"],
    ["a bad email", { email: "nope" }, "email"],
    ["a missing first name", { firstName: undefined }, "firstName"],
    ["a wrong type", { accountType: 3 }, "accountType"],
    ["an unknown field", { role: "admin" }, "role"],
    ["an unknown language", { language: "xx" }, "language"],
  ])("refuses %s", async (_label, patch, field) => {
    const body = {
      email: `${unique()}@example.com`,
      password: "0123456789",
      firstName: "A",
      lastName: "B",
      accountType: "customer",
      ...patch,
    };
    expectError(await call("POST", "/v1/auth/register", { body }), 400, "VALIDATION_ERROR", field);
  });
});

describe("login", () => {
  it("logs in with the right password and the token works as Bearer and cookie", async () => {
    const user = await registerUser();
    const res = await call("POST", "/v1/auth/login", { body: { email: user.email, password: "correct horse battery" } });
    const data = expectOk(res);
    expect(data.user.id).toBe(user.id);
    const me = expectOk(await call("GET", "/v1/auth/me", { token: data.session.token }));
    expect(me.user.id).toBe(user.id);
    expect(me.memberships).toEqual([]);
    const viaCookie = await call("GET", "/v1/auth/me", { headers: { Cookie: `service.session_token=${data.session.token}` } });
    expect(expectOk(viaCookie).user.id).toBe(user.id);
  });

  it("gives the same answer for an unknown email and a wrong password", async () => {
    const user = await registerUser();
    const wrong = await call("POST", "/v1/auth/login", { body: { email: user.email, password: "wrong password" } });
    const unknown = await call("POST", "/v1/auth/login", { body: { email: `${unique()}@example.com`, password: "wrong password" } });
    expectError(wrong, 401, "AUTHENTICATION_ERROR");
    expectError(unknown, 401, "AUTHENTICATION_ERROR");
    expect(wrong.body.error.message).toBe(unknown.body.error.message);
  });

  it("refuses an address after 10 failed logins for one email in 15 minutes, then lets it in again", async () => {
    testClock.set("2026-03-02T10:00:00.000Z");
    const user = await registerUser();
    for (let i = 0; i < 10; i++) {
      expectError(
        await call("POST", "/v1/auth/login", { body: { email: user.email, password: "wrong password" } }),
        401,
        "AUTHENTICATION_ERROR",
      );
      testClock.advance(70_000); // past the account's back-off (test/integration/login-backoff.test.ts)
    }
    const locked = await call("POST", "/v1/auth/login", { body: { email: user.email, password: "correct horse battery" } });
    expectError(locked, 429, "API_RATE_LIMIT_EXCEEDED");
    expect(Number(locked.headers.get("Retry-After"))).toBeGreaterThan(0);
    testClock.advance(15 * 60_000);
    expectOk(await call("POST", "/v1/auth/login", { body: { email: user.email, password: "correct horse battery" } }));
  });

  it("refuses a body with an unknown field", async () => {
    expectError(
      await call("POST", "/v1/auth/login", { body: { email: "a@example.com", password: "x", remember: true } }),
      400,
      "VALIDATION_ERROR",
      "remember",
    );
  });
});

describe("sessions", () => {
  it("expire after 12 idle hours with TOKEN_EXPIRED; unknown tokens get AUTHENTICATION_ERROR", async () => {
    testClock.set("2026-03-02T08:00:00.000Z");
    const user = await registerUser();
    testClock.advance(12 * HOUR + 1);
    expectError(await call("GET", "/v1/auth/me", { token: user.token }), 401, "TOKEN_EXPIRED");
    expectError(await call("GET", "/v1/auth/me", { token: "sess_doesnotexist" }), 401, "AUTHENTICATION_ERROR");
    expectError(await call("GET", "/v1/auth/me"), 401, "AUTHENTICATION_ERROR");
  });

  it("slide with use and refresh, but never past 30 days", async () => {
    testClock.set("2026-03-02T08:00:00.000Z");
    const user = await registerUser();
    for (let day = 0; day < 29; day++) {
      testClock.advance(11 * HOUR);
      expectOk(await call("GET", "/v1/auth/me", { token: user.token }));
      testClock.advance(11 * HOUR);
      const refreshed = expectOk(await call("POST", "/v1/auth/session/refresh", { token: user.token }));
      expect(Date.parse(refreshed.expiresAt)).toBeLessThanOrEqual(Date.parse("2026-04-01T08:00:00.000Z"));
    }
    testClock.set("2026-04-01T08:00:00.001Z");
    expectError(await call("GET", "/v1/auth/me", { token: user.token }), 401, "TOKEN_EXPIRED");
  });

  it("logout ends the session at once and clears the cookie", async () => {
    const user = await registerUser();
    const res = await call("POST", "/v1/auth/logout", { token: user.token });
    expect(expectOk(res)).toEqual({ loggedOut: true });
    expect(res.headers.get("Set-Cookie")).toMatch(/service\.session_token=;/);
    expectError(await call("GET", "/v1/auth/me", { token: user.token }), 401, "AUTHENTICATION_ERROR");
  });
});
