import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { registerUser } from "../helpers/fixtures";

// Issue 44: a ceiling on guessing per account that never locks the owner out (after 40 failures
// from all addresses, a sign-in must also carry the code e-mailed to the account), and the
// per-address limit exact under concurrency (one counter decides and reserves each attempt).

const PASSWORD = "correct horse battery";

afterEach(() => vi.restoreAllMocks());

let n = 0;
const freshIp = () => `192.0.2.${(n = (n % 250) + 1)}`;
const ipOf = (i: number) => `198.19.${Math.floor(i / 250)}.${(i % 250) + 1}`;

function login(body: Record<string, unknown>, ip: string) {
  return call("POST", "/v1/auth/login", { body, headers: { "CF-Connecting-IP": ip } });
}

/** What the e-mail stand-in printed to this address. */
function mailsTo(log: { mock: { calls: unknown[][] } }, to: string): any[] {
  return log.mock.calls
    .map((args) => {
      try {
        return JSON.parse(String(args[0]));
      } catch {
        return null;
      }
    })
    .filter((m: any) => m?.notification === "outbox" && m.channel === "email" && m.to === to);
}

describe("a ceiling on guessing per account (issue 44)", () => {
  it("40 wrong passwords from 40 addresses: the 41st try needs the e-mailed code, and the owner still signs in with it", async () => {
    testClock.set("2026-03-03T09:00:00.000Z");
    const user = await registerUser();
    const log = vi.spyOn(console, "log");
    const base = Math.floor(Math.random() * 200) * 250;
    for (let i = 0; i < 40; i++) {
      expectError(await login({ email: user.email, password: `guess ${i}` }, ipOf(base + i)), 401, "AUTHENTICATION_ERROR");
      testClock.advance(1_000);
    }
    expect(mailsTo(log, user.email)).toHaveLength(0);

    // The 41st, even with the right password and from a clean address: the code first.
    const owner = ipOf(base + 100);
    const asked = await login({ email: user.email, password: PASSWORD }, owner);
    expectError(asked, 401, "AUTHENTICATION_ERROR", "challengeCode");
    expect(asked.body.error.details.reason).toBe("challenge_required");
    const mails = mailsTo(log, user.email);
    expect(mails).toHaveLength(1);
    const code = /(\d{8})/.exec(mails[0].payload.text)![1]!;

    // A guesser without the mailbox goes no further: a wrong code is refused unchecked, and no new mail goes out.
    const guessed = await login({ email: user.email, password: PASSWORD, challengeCode: "00000000" }, ipOf(base + 101));
    expect(guessed.body.error.details.reason).toBe("challenge_required");
    expect(mailsTo(log, user.email)).toHaveLength(1);

    const signedIn = expectOk(await login({ email: user.email, password: PASSWORD, challengeCode: code }, owner));
    expect(signedIn.user.email).toBe(user.email);
    // The code is used up.
    const again = await login({ email: user.email, password: PASSWORD, challengeCode: code }, owner);
    expect(again.body.error.details.reason).toBe("challenge_required");
  });

  it("a wrong password with the right code is checked and refused like any wrong password", async () => {
    testClock.set("2026-03-03T10:00:00.000Z");
    const user = await registerUser();
    const log = vi.spyOn(console, "log");
    const base = Math.floor(Math.random() * 200) * 250;
    for (let i = 0; i < 40; i++) await login({ email: user.email, password: `guess ${i}` }, ipOf(base + i));
    await login({ email: user.email, password: "another guess" }, ipOf(base + 41));
    const code = /(\d{8})/.exec(mailsTo(log, user.email)[0].payload.text)![1]!;
    const wrong = await login({ email: user.email, password: "still wrong", challengeCode: code }, ipOf(base + 42));
    expectError(wrong, 401, "AUTHENTICATION_ERROR");
    expect(wrong.body.error.details?.reason).toBeUndefined();
  });
});

describe("failed logins counted exactly under concurrency (issue 44)", () => {
  it("30 concurrent wrong passwords from one address are checked exactly 10 times", async () => {
    testClock.set("2026-03-03T11:00:00.000Z");
    const user = await registerUser();
    const ip = freshIp();
    const answers = await Promise.all(Array.from({ length: 30 }, (_x, i) => login({ email: user.email, password: `guess ${i}` }, ip)));
    expect(answers.filter((r) => r.status === 401)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(20);
    // The owner, from elsewhere, is served.
    expectOk(await login({ email: user.email, password: PASSWORD }, freshIp()));
  });
});
