import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { registerUser } from "../helpers/fixtures";

// Sign-in that cannot be held shut (#26): a per-account exponential, sliding back-off, and a
// per-(account, address) limit. Wrong passwords sent from elsewhere never stop the owner, whose
// address has no recent failures, from signing in (docs/limits.md).

const PASSWORD = "correct horse battery";
let ipCounter = 0;
function freshIp(): string {
  ipCounter += 1;
  return `198.18.0.${ipCounter}`;
}

function login(email: string, password: string, ip: string) {
  return call("POST", "/v1/auth/login", { body: { email, password }, headers: { "CF-Connecting-IP": ip } });
}

describe("sign-in back-off", () => {
  it("30 wrong passwords from one address do not lock the owner out from another", async () => {
    testClock.set("2026-03-02T10:00:00.000Z");
    const user = await registerUser();
    const attacker = freshIp();
    for (let i = 0; i < 30; i++) {
      const res = await login(user.email, "wrong password", attacker);
      expect([401, 429]).toContain(res.status);
      testClock.advance(5_000);
    }
    // The guessing address stays refused, even with the right password...
    expectError(await login(user.email, PASSWORD, attacker), 429, "API_RATE_LIMIT_EXCEEDED");
    // ... while the owner, from an address with no recent failures, is served.
    expectOk(await login(user.email, PASSWORD, freshIp()));
  });

  it("grows exponentially with the account's recent failures and slides", async () => {
    testClock.set("2026-03-02T11:00:00.000Z");
    const user = await registerUser();
    const ip = freshIp();
    // The first failures are free of delay (a typo or two).
    for (let i = 0; i < 4; i++) expectError(await login(user.email, "wrong password", ip), 401, "AUTHENTICATION_ERROR");
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const refused = await login(user.email, "wrong password", ip);
      expectError(refused, 429, "API_RATE_LIMIT_EXCEEDED");
      expect(refused.body.error.details.window).toBe("failed_logins");
      const wait = Number(refused.headers.get("Retry-After"));
      waits.push(wait);
      testClock.advance(wait * 1000);
      expectError(await login(user.email, "wrong password", ip), 401, "AUTHENTICATION_ERROR");
    }
    expect(waits).toEqual([1, 2, 4, 8]);
    // Failures older than 15 minutes are forgotten: the back-off slides back to nothing.
    testClock.advance(15 * 60_000 + 1_000);
    expectOk(await login(user.email, PASSWORD, ip));
  });

  it("limits one address to 10 failures per account per sliding 15 minutes", async () => {
    testClock.set("2026-03-02T12:00:00.000Z");
    const user = await registerUser();
    const ip = freshIp();
    for (let i = 0; i < 10; i++) {
      expectError(await login(user.email, "wrong password", ip), 401, "AUTHENTICATION_ERROR");
      testClock.advance(70_000); // past the account's back-off (at most 64 s after 10 failures)
    }
    const refused = await login(user.email, PASSWORD, ip);
    expectError(refused, 429, "API_RATE_LIMIT_EXCEEDED");
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    // A different account from that address is not affected.
    const other = await registerUser();
    expectOk(await login(other.email, PASSWORD, ip));
    testClock.advance(15 * 60_000);
    expectOk(await login(user.email, PASSWORD, ip));
  });
});
