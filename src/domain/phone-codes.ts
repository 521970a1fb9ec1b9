// A one-time code that proves a visitor's number (docs/limits.md, "SMS and messaging caps"):
// where the organization requires it, the first SMS a number gets from a join is a 6-digit code,
// and nothing more is texted to that ticket until the visitor gives the code back. The rules
// here are pure; the storing and the sending are in visits/phone-verification.ts.

/** The delivery type of the code message (the delivery log shows it; the SMS gate lets it through first). */
export const PHONE_CODE_MESSAGE = "phone.code";

/** A code is good for 10 minutes after it was sent. */
export const PHONE_CODE_TTL_MS = 10 * 60_000;

/** Wrong codes a code survives: the 5th wrong one kills it (a new code must be asked for). */
export const PHONE_CODE_MAX_ATTEMPTS = 5;

/**
 * What a ticket's number is, as an integrator reads it: `none` (no phone, or no code required),
 * `pending` (a code was sent: give it back before `expiresAt`), `expired` (too late or too many
 * wrong codes: ask for a new one), `verified`.
 */
export const PHONE_VERIFICATION_STATUSES = ["none", "pending", "expired", "verified"] as const;
export type PhoneVerificationStatus = (typeof PHONE_VERIFICATION_STATUSES)[number];

/** A uniformly drawn 6-digit code, leading zeros kept (rejection sampling: no modulo bias). */
export function newPhoneCode(): string {
  const limit = Math.floor(0x1_0000_0000 / 1_000_000) * 1_000_000;
  for (;;) {
    const [n] = crypto.getRandomValues(new Uint32Array(1));
    if (n! < limit) return String(n! % 1_000_000).padStart(6, "0");
  }
}

export interface CodeState {
  expiresAt: number;
  failedAttempts: number;
  verifiedAt: number | null;
}

/** Why a code can no longer be given back, or null while it can. */
export function deadReason(s: CodeState, at: number): "too_many_attempts" | "expired" | null {
  if (s.failedAttempts >= PHONE_CODE_MAX_ATTEMPTS) return "too_many_attempts";
  if (s.expiresAt <= at) return "expired";
  return null;
}

export function statusOf(s: CodeState | null, at: number): PhoneVerificationStatus {
  if (!s) return "none";
  if (s.verifiedAt !== null) return "verified";
  return deadReason(s, at) ? "expired" : "pending";
}
