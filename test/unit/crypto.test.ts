import { describe, expect, it } from "vitest";
import {
  DECOY_PASSWORD_HASH,
  hashPassword,
  parsePasswordHash,
  PBKDF2_ITERATIONS,
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
