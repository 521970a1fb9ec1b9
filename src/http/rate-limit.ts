import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { now } from "../lib/clock";
import { DAY, MINUTE } from "../lib/time";
import type { RateDecision, WindowRule } from "../rate-limiter/rate-limiter";
import type { AppEnv } from "./context";
import { ApiError } from "./errors";

/** Secondary limit on requests without a credential (login, register, public widget, scans). */
export const IP_LIMIT_PER_MINUTE = 120;
/** Requests made with a user session (dashboards), per user. */
export const SESSION_LIMIT_PER_MINUTE = 600;
export const FAILED_LOGINS_LIMIT = 10;
export const FAILED_LOGINS_WINDOW_MS = 15 * MINUTE;

export function clientIp(c: Context<AppEnv>): string {
  return c.req.header("CF-Connecting-IP") ?? c.req.header("X-Forwarded-For")?.split(",")[0]?.trim() ?? "unknown";
}

function limiter(c: Context<AppEnv>, subject: string) {
  return c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(subject));
}

function subjectAndRules(c: Context<AppEnv>): { subject: string; rules: WindowRule[]; apiKey: boolean } {
  const p = c.get("principal");
  if (p.kind === "apiKey") {
    return {
      subject: `key:${p.keyId}`,
      apiKey: true,
      rules: [
        { name: "minute", limit: p.rate.perMinute, windowMs: MINUTE },
        { name: "day", limit: p.rate.perDay, windowMs: DAY },
      ],
    };
  }
  if (p.kind === "session") {
    return { subject: `user:${p.user.id}`, apiKey: false, rules: [{ name: "minute", limit: SESSION_LIMIT_PER_MINUTE, windowMs: MINUTE }] };
  }
  return { subject: `ip:${clientIp(c)}`, apiKey: false, rules: [{ name: "minute", limit: IP_LIMIT_PER_MINUTE, windowMs: MINUTE }] };
}

function headersOf(decision: RateDecision, apiKey: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  const minute = decision.windows[0]!;
  const reset = String(Math.floor(minute.resetAt / 1000));
  headers["X-RateLimit-Limit"] = String(minute.limit);
  headers["X-RateLimit-Remaining"] = String(minute.remaining);
  headers["X-RateLimit-Reset"] = reset;
  if (apiKey) {
    headers["X-API-RateLimit-Limit"] = String(minute.limit);
    headers["X-API-RateLimit-Remaining"] = String(minute.remaining);
    headers["X-API-RateLimit-Reset"] = reset;
  }
  return headers;
}

/**
 * Counts the request against its subject's windows (exact, in a Durable Object) and puts
 * the headers on the response, whether it succeeds or fails.
 */
export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  const { subject, rules, apiKey } = subjectAndRules(c);
  const at = now();
  const decision = await limiter(c, subject).hit(rules, at);
  const headers = headersOf(decision, apiKey);
  c.set("rateLimitHeaders", headers);
  if (!decision.allowed) {
    const refused = decision.windows.find((w) => w.remaining === 0)!;
    throw new ApiError(
      "API_RATE_LIMIT_EXCEEDED",
      `Rate limit of ${refused.limit} requests per ${refused.name} exceeded`,
      { retryAfter: decision.retryAfterSeconds, limit: refused.limit, reset: new Date(refused.resetAt).toISOString(), window: refused.name },
      { "Retry-After": String(decision.retryAfterSeconds) },
    );
  }
  await next();
});

function failedLoginRules(): WindowRule[] {
  return [{ name: "failed", limit: FAILED_LOGINS_LIMIT, windowMs: FAILED_LOGINS_WINDOW_MS }];
}

/** Refuses a login for an email that failed too often in the current 15-minute window. */
export async function assertLoginAllowed(c: Context<AppEnv>, email: string): Promise<void> {
  const decision = await limiter(c, `login:${email}`).peek(failedLoginRules(), now());
  if (!decision.allowed) {
    throw new ApiError(
      "API_RATE_LIMIT_EXCEEDED",
      "Too many failed logins for this account; try again later",
      {
        retryAfter: decision.retryAfterSeconds,
        limit: FAILED_LOGINS_LIMIT,
        reset: new Date(decision.windows[0]!.resetAt).toISOString(),
        window: "failed_logins",
      },
      { "Retry-After": String(decision.retryAfterSeconds) },
    );
  }
}

export async function recordFailedLogin(c: Context<AppEnv>, email: string): Promise<void> {
  await limiter(c, `login:${email}`).record(failedLoginRules(), now());
}
