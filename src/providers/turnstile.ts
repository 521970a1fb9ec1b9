import type { Env } from "../env";
import { trimUrl } from "./types";

// Cloudflare Turnstile, verified server-side (issue 44): the page's widget hands the visitor a
// token; siteverify says whether it is good (once: a token verifies a single time). Without
// TURNSTILE_SECRET_KEY outside production, Turnstile's documented always-pass test secret is used,
// so local pages work with the test site key; TURNSTILE_BASE_URL points at a stand-in in tests.
// https://developers.cloudflare.com/turnstile/get-started/server-side-validation/

/** Turnstile's test secret that always passes (https://developers.cloudflare.com/turnstile/troubleshooting/testing/). */
export const TURNSTILE_TEST_SECRET = "1x0000000000000000000000000000000AA";

/** Turnstile's word on a token; `unconfigured` when production has no secret (the caller answers 503). */
export type TurnstileVerdict = "passed" | "failed" | "unconfigured";

export async function verifyTurnstile(env: Env, token: string, remoteIp: string): Promise<TurnstileVerdict> {
  const secret = env.TURNSTILE_SECRET_KEY ?? (env.ENVIRONMENT === "production" ? null : TURNSTILE_TEST_SECRET);
  if (!secret) return "unconfigured";
  const base = trimUrl(env.TURNSTILE_BASE_URL ?? "https://challenges.cloudflare.com");
  const form = new URLSearchParams({ secret, response: token.slice(0, 2048) });
  if (remoteIp && remoteIp !== "unknown") form.set("remoteip", remoteIp);
  try {
    const res = await fetch(`${base}/turnstile/v0/siteverify`, { method: "POST", body: form, signal: AbortSignal.timeout(5_000) });
    if (!res.ok) return "failed";
    const body = (await res.json()) as { success?: boolean };
    return body.success === true ? "passed" : "failed";
  } catch {
    return "failed";
  }
}
