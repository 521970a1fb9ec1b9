import type { Env } from "../env";
import { ApiError } from "../http/errors";
import { trimUrl } from "./types";

// Cloudflare Turnstile, verified server-side (issue 44): the page's widget hands the visitor a
// token; siteverify says whether it is good (once: a token verifies a single time). Without
// TURNSTILE_SECRET_KEY outside production, Turnstile's documented always-pass test secret is used,
// so local pages work with the test site key; TURNSTILE_BASE_URL points at a stand-in in tests.
// https://developers.cloudflare.com/turnstile/get-started/server-side-validation/

/** Turnstile's test secret that always passes (https://developers.cloudflare.com/turnstile/troubleshooting/testing/). */
export const TURNSTILE_TEST_SECRET = "1x0000000000000000000000000000000AA";

export async function verifyTurnstile(env: Env, token: string, remoteIp: string): Promise<boolean> {
  const secret = env.TURNSTILE_SECRET_KEY ?? (env.ENVIRONMENT === "production" ? null : TURNSTILE_TEST_SECRET);
  if (!secret) throw new ApiError("PROVIDER_UNAVAILABLE", "TURNSTILE_SECRET_KEY is not configured: the bot check cannot be verified");
  const base = trimUrl(env.TURNSTILE_BASE_URL ?? "https://challenges.cloudflare.com");
  const form = new URLSearchParams({ secret, response: token.slice(0, 2048) });
  if (remoteIp && remoteIp !== "unknown") form.set("remoteip", remoteIp);
  try {
    const res = await fetch(`${base}/turnstile/v0/siteverify`, { method: "POST", body: form, signal: AbortSignal.timeout(5_000) });
    if (!res.ok) return false;
    const body = (await res.json()) as { success?: boolean };
    return body.success === true;
  } catch {
    return false;
  }
}
