import { describe, expect, it } from "vitest";
import {
  fingerprint,
  DECOY_PASSWORD_HASH,
  hashPassword,
  parsePasswordHash,
  PBKDF2_ITERATIONS,
  sha256Hex,
  PBKDF2_MAX_ITERATIONS,
  verifyPassword,
} from "../../src/lib/crypto";

// Workers cap PBKDF2 at 100,000 iterations in production while local workerd does not, so
// nothing but this test would notice a higher count before every login failed in production.
const PLATFORM_CAP = 100_000;

describe("PBKDF2 iteration count", () => {
  it("never exceeds the platform cap", () => {
    expect(PBKDF2_ITERATIONS).toBeLessThanOrEqual(PLATFORM_CAP);
    expect(PBKDF2_MAX_ITERATIONS).toBeLessThanOrEqual(PLATFORM_CAP);
  });

  it("is what a stored hash records, and the hash verifies", async () => {
    const stored = await hashPassword("correct horse battery");
    const parsed = parsePasswordHash(stored);
    expect(parsed?.iterations).toBe(PBKDF2_ITERATIONS);
    expect(parsed!.iterations).toBeLessThanOrEqual(PLATFORM_CAP);
    expect(await verifyPassword("correct horse battery", stored)).toBe(true);
    expect(await verifyPassword("wrong horse battery", stored)).toBe(false);
  });

  it("refuses to hash above the cap", async () => {
    await expect(hashPassword("correct horse battery", PLATFORM_CAP + 1)).rejects.toThrow();
  });

  it("refuses to verify a stored hash above the cap rather than derive it", async () => {
    const [scheme, , salt, hash] = (await hashPassword("pw-0123456789")).split("$");
    await expect(verifyPassword("pw-0123456789", [scheme, PLATFORM_CAP + 1, salt, hash].join("$"))).rejects.toThrow();
  });

  it("keeps the decoy hash within the cap", () => {
    expect(parsePasswordHash(DECOY_PASSWORD_HASH)?.iterations).toBeLessThanOrEqual(PLATFORM_CAP);
  });
});

describe("fingerprint (the widget status's ETag)", () => {
  it("is 16 hex characters, the same for the same text, and differs for texts one character apart", () => {
    const base = JSON.stringify({ success: true, data: { waitingCount: 12, nowServing: ["A-001"] } });
    expect(fingerprint(base)).toMatch(/^[0-9a-f]{16}$/);
    expect(fingerprint(base)).toBe(fingerprint(`${base}`));
    const seen = new Set<string>();
    // Every count from 0 to 19,999 and every one-character change of the text: no two alike.
    for (let n = 0; n < 20_000; n++) seen.add(fingerprint(base.replace("12", String(n))));
    for (let i = 0; i < base.length; i++) seen.add(fingerprint(base.slice(0, i) + "#" + base.slice(i + 1)));
    expect(seen.size).toBe(20_000 + base.length);
  });
});

describe("sha256Hex (a stored token's and key's hash)", () => {
  it("is SHA-256 in lower-case hex (FIPS 180-2 vectors)", async () => {
    expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(await sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });
});
