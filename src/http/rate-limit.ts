import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { addressKey, ipv6PrefixBits } from "../lib/addresses";
import { now } from "../lib/clock";
import { isId, queueIdOfTicket } from "../lib/ids";
import { DAY, MINUTE } from "../lib/time";
import type { LoginRules, RateDecision, WindowRule, WindowState } from "../rate-limiter/rate-limiter";
import type { AppEnv } from "./context";
import { ApiError } from "./errors";

// The buckets (docs/limits.md, CONTRACT §9 and §10). Every bucket of one client address lives
// in that address's RateLimiter object (`ip:<address>`), each under its own rule name; an API
// key's tier lives in the key's object (`key:<id>`), a user's in the user's (`user:<id>`).

/** Strict, per IP: login, register, other anonymous routes, and failed credentials. */
export const IP_LIMIT_PER_MINUTE = 120;
/** Requests made with a user session (dashboards), per user. */
export const SESSION_LIMIT_PER_MINUTE = 600;
/** Failed logins per (account, address) in a sliding window (the account's back-off aside). */
export const FAILED_LOGINS_LIMIT = 10;
export const FAILED_LOGINS_WINDOW_MS = 15 * MINUTE;
/**
 * Failures of one account from all addresses in the window after which a sign-in must also carry
 * the code e-mailed to the account (issue 44): guessing from many addresses stops there, and the
 * owner, who reads the mail, still signs in.
 */
export const ACCOUNT_FAILED_LOGINS_CEILING = 40;
export const LOGIN_CHALLENGE_TTL_MS = 15 * MINUTE;
export const LOGIN_CHALLENGE_TRIES = 5;
/** An account's recent failures before its back-off starts (1 s, then doubling). */
export const LOGIN_FREE_FAILURES = 3;
/** Wrong keys or tokens from one IP; the next credential from it is refused before any lookup. */
export const FAILED_CREDENTIALS_LIMIT = 30;
export const FAILED_CREDENTIALS_WINDOW_MS = 15 * MINUTE;
/**
 * Public reads and socket upgrades, per (IP, queue or organization): a waiting room of 2,000
 * phones behind one address each loading the status and opening a socket within a minute.
 */
export const PUBLIC_LIMIT_PER_MINUTE = 6_000;
/** All public reads of one IP together, whatever queue they name (ids in paths are free to invent). */
export const PUBLIC_TOTAL_PER_MINUTE = 20_000;
/**
 * A published `widget` key, per (key, IP): the visitors and screens of one address, e.g. a
 * waiting room of 20 boards refetching on every call.
 */
export const WIDGET_KEY_LIMIT_PER_MINUTE = 1_200;
export const WIDGET_KEY_LIMIT_PER_DAY = 50_000;

/**
 * The client's address. In production only Cloudflare's `CF-Connecting-IP` is trusted (any
 * client can write X-Forwarded-For); development and tests may also use X-Forwarded-For.
 */
export function clientIp(c: Context<AppEnv>): string {
  const cf = c.req.header("CF-Connecting-IP");
  if (cf) return cf.trim();
  const environment = c.env?.ENVIRONMENT;
  if (environment === "development" || environment === "test") {
    const forwarded = c.req.header("X-Forwarded-For")?.split(",")[0]?.trim();
    if (forwarded) return forwarded;
  }
  return "unknown";
}

/**
 * What every per-address bucket keys on (issue 44): an IPv4 address itself, an IPv6 address's
 * /64 (IPV6_PREFIX_BITS), since one subscriber holds the whole prefix.
 */
export function clientAddressKey(c: Context<AppEnv>): string {
  return addressKey(clientIp(c), ipv6PrefixBits(c.env?.IPV6_PREFIX_BITS));
}

function limiter(c: Context<AppEnv>, subject: string) {
  return c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(subject));
}

function ipSubject(c: Context<AppEnv>): string {
  return `ip:${clientAddressKey(c)}`;
}

const WIDGET_PREFIX = "/v1/widget/";

/**
 * The queue or organization a public read or socket upgrade is about, or null when the request
 * is not a public read. Only GETs that anyone may make (with a widget key at most) qualify.
 */
export function publicReadScope(method: string, path: string, query: (name: string) => string | undefined): string | null {
  if (method !== "GET") return null;
  const scoped = (kind: "que" | "org", id: string | undefined) => (id && isId(kind, id) ? `${kind}:${id}` : `${kind}:?`);
  if (path.startsWith(WIDGET_PREFIX)) {
    const parts = path.slice(WIDGET_PREFIX.length).split("/");
    if (parts[0] === "ws" && parts.length === 1) {
      const queueId = query("queueId");
      return queueId === undefined ? "ws" : scoped("que", queueId);
    }
    if (parts[0] === "queue" && parts[2] === "status" && parts.length === 3) return scoped("que", parts[1]);
    if (parts[0] === "organization" && parts.length === 3 && (parts[2] === "info" || parts[2] === "display-board"))
      return scoped("org", parts[1]);
    if (parts[0] === "board" && parts.length === 1) return scoped("org", query("organization"));
    // A visitor polling their own ticket: the crowd of one queue shares its scope.
    if (parts[0] === "tickets" && parts.length === 2) return scoped("que", queueIdOfTicket(parts[1] ?? "") ?? undefined);
    return null;
  }
  if (path === "/v1/embed.js") return "embed";
  if (path === "/v1/qr/generate") return "qr";
  if (path === "/v1/locations/nearby") return "nearby";
  if (path === "/v1/services/types") return "catalog";
  return null;
}

interface Plan {
  subject: string;
  rules: WindowRule[];
  /** Rule names whose windows the headers show: the minute window, and an API key's daily budget. */
  minute: string;
  day: string | null;
}

const minuteRule = (name: string, limit: number | null): WindowRule => ({ name, limit, windowMs: MINUTE });
const dayRule = (name: string, limit: number | null): WindowRule => ({ name, limit, windowMs: DAY });

/** A user's own bucket: what a session request counts in, unless it is a public read. */
export function sessionRules(): WindowRule[] {
  return [minuteRule("minute", SESSION_LIMIT_PER_MINUTE)];
}

/**
 * Whether a session request counts in its user's bucket (not a public read's): then its user's
 * object counts it in the same call that judges the session (http/auth.ts, issue 43).
 */
export function countsInUserBucket(c: Context<AppEnv>): boolean {
  return publicReadScope(c.req.method, c.req.path, (name) => c.req.query(name)) === null;
}

function planOf(c: Context<AppEnv>): Plan {
  const p = c.get("principal");
  if (p.kind === "apiKey" && !p.widgetOnly) {
    return {
      subject: `key:${p.keyId}`,
      rules: [minuteRule("minute", p.rate.perMinute), dayRule("day", p.rate.perDay)],
      minute: "minute",
      day: "day",
    };
  }
  const scope = publicReadScope(c.req.method, c.req.path, (name) => c.req.query(name));
  if (scope !== null && p.kind !== "apiKey") {
    // Anonymous visitors and dashboard users reading what the public may read (a widget key, even
    // here, keeps its own per-(key, IP) bucket below).
    const name = `public:${scope}`;
    return {
      subject: ipSubject(c),
      rules: [minuteRule(name, PUBLIC_LIMIT_PER_MINUTE), minuteRule("public", PUBLIC_TOTAL_PER_MINUTE)],
      minute: name,
      day: null,
    };
  }
  if (p.kind === "apiKey") {
    // A widget key is published in web pages: its budget is per (key, IP), never the organization's tier.
    const name = `widget:${p.keyId}`;
    return {
      subject: ipSubject(c),
      rules: [minuteRule(`${name}:minute`, WIDGET_KEY_LIMIT_PER_MINUTE), dayRule(`${name}:day`, WIDGET_KEY_LIMIT_PER_DAY)],
      minute: `${name}:minute`,
      day: `${name}:day`,
    };
  }
  if (p.kind === "session") {
    return { subject: `user:${p.user.id}`, rules: sessionRules(), minute: "minute", day: null };
  }
  return { subject: ipSubject(c), rules: [minuteRule("minute", IP_LIMIT_PER_MINUTE)], minute: "minute", day: null };
}

const limitText = (limit: number | null) => (limit === null ? "unlimited" : String(limit));
const resetSeconds = (window: WindowState) => String(Math.floor(window.resetAt / 1000));

function headersOf(decision: RateDecision, plan: Plan): Record<string, string> {
  const minute = decision.windows.find((w) => w.name === plan.minute)!;
  const headers: Record<string, string> = {
    "X-RateLimit-Limit": limitText(minute.limit),
    "X-RateLimit-Remaining": limitText(minute.remaining),
    "X-RateLimit-Reset": resetSeconds(minute),
  };
  const day = plan.day === null ? undefined : decision.windows.find((w) => w.name === plan.day);
  if (day) {
    headers["X-API-RateLimit-Limit"] = limitText(day.limit);
    headers["X-API-RateLimit-Remaining"] = limitText(day.remaining);
    headers["X-API-RateLimit-Reset"] = resetSeconds(day);
  }
  return headers;
}

function refusal(decision: RateDecision, message?: string): ApiError {
  const refused = decision.windows.find((w) => w.remaining === 0)!;
  const window = refused.name.endsWith("day") ? "day" : refused.name === "failed" ? "failed_credentials" : "minute";
  return new ApiError(
    "API_RATE_LIMIT_EXCEEDED",
    message ?? `Rate limit of ${refused.limit} requests per ${window} exceeded`,
    { retryAfter: decision.retryAfterSeconds, limit: refused.limit, reset: new Date(refused.resetAt).toISOString(), window },
    { "Retry-After": String(decision.retryAfterSeconds) },
  );
}

/**
 * A payment provider's events, per provider (#26): a provider sends many a minute from few
 * addresses, so a signed event counts in its provider's bucket (keyed by the secret that
 * verified it), never in the anonymous per-address one; a forged one counts there instead.
 */
export const PROVIDER_WEBHOOK_LIMIT_PER_MINUTE = 6_000;
const PROVIDER_WEBHOOK_PATH =
  /^\/v1\/(billing\/webhooks\/(stripe|fedapay|sandbox)|inbound\/sms\/twilio(\/status)?|inbound\/ussd|inbound\/whatsapp)$/;

function isProviderWebhook(c: Context<AppEnv>): boolean {
  return c.req.method === "POST" && PROVIDER_WEBHOOK_PATH.test(c.req.path) && c.get("principal").kind === "anonymous";
}

async function count(c: Context<AppEnv>, plan: Plan): Promise<void> {
  const decision = await limiter(c, plan.subject).hit(plan.rules, now());
  c.set("rateLimitHeaders", headersOf(decision, plan));
  if (!decision.allowed) throw refusal(decision);
}

/** A provider's event whose signature verified: its provider's bucket. */
export function countVerifiedWebhook(c: Context<AppEnv>, provider: string): Promise<void> {
  const name = `webhook:${provider}`;
  return count(c, { subject: name, rules: [minuteRule(name, PROVIDER_WEBHOOK_LIMIT_PER_MINUTE)], minute: name, day: null });
}

/** A webhook whose signature failed: the strict bucket of its address, as any anonymous request. */
export function countUnverifiedWebhook(c: Context<AppEnv>): Promise<void> {
  return count(c, { subject: ipSubject(c), rules: [minuteRule("minute", IP_LIMIT_PER_MINUTE)], minute: "minute", day: null });
}

/**
 * Counts the request against its bucket (exact, in a Durable Object) and puts the headers on
 * the response, whether it succeeds or fails. Provider webhooks are counted by their route,
 * once their signature is checked (countVerifiedWebhook, countUnverifiedWebhook).
 */
export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  if (isProviderWebhook(c)) return next();
  const plan = planOf(c);
  // A session judged by its user's object was counted there, in the same call (http/auth.ts).
  const counted = c.get("countedBy");
  const decision = counted && counted.subject === plan.subject ? counted.decision : await limiter(c, plan.subject).hit(plan.rules, now());
  c.set("rateLimitHeaders", headersOf(decision, plan));
  if (!decision.allowed) throw refusal(decision);
  await next();
});

function failedCredentialRules(): WindowRule[] {
  return [{ name: "failed", limit: FAILED_CREDENTIALS_LIMIT, windowMs: FAILED_CREDENTIALS_WINDOW_MS }];
}

/**
 * Refuses (429) a credential from an IP that sent too many wrong ones, before the credential
 * is looked up: guessing keys or tokens costs the guesser, not the database. Null when allowed.
 */
export async function credentialRefusal(c: Context<AppEnv>): Promise<ApiError | null> {
  const decision = await limiter(c, ipSubject(c)).peek(failedCredentialRules(), now());
  if (decision.allowed) return null;
  return refusal(decision, "Too many wrong credentials from this address; try again later");
}

/** A wrong credential counts towards the IP's failures and its strict per-minute bucket. */
export async function recordFailedCredential(c: Context<AppEnv>): Promise<void> {
  await limiter(c, ipSubject(c)).record([...failedCredentialRules(), minuteRule("minute", IP_LIMIT_PER_MINUTE)], now());
}

/**
 * Sign-in (#26, docs/limits.md): per account, an exponential back-off over the failures of the
 * last 15 minutes (sliding), and at most 10 failures per (account, address) in that window. An
 * address with no recent failure on the account is always let through: wrong passwords sent
 * from elsewhere cannot hold the account shut against its owner.
 */
const LOGIN_RULES: LoginRules = {
  windowMs: FAILED_LOGINS_WINDOW_MS,
  perAddress: FAILED_LOGINS_LIMIT,
  freeFailures: LOGIN_FREE_FAILURES,
  maxDelayMs: FAILED_LOGINS_WINDOW_MS,
  accountCeiling: ACCOUNT_FAILED_LOGINS_CEILING,
  challengeTtlMs: LOGIN_CHALLENGE_TTL_MS,
  challengeTries: LOGIN_CHALLENGE_TRIES,
};

export interface LoginGate {
  /** Pass to `endLoginAttempt` once the password is checked. */
  attemptId: string;
  /** The attempt carried the account's valid e-mailed code. */
  passedChallenge: boolean;
}

/**
 * Decides and reserves one sign-in attempt (issue 44) in the account's one counter: 429 while the
 * address or the back-off must wait; past the account's ceiling without the e-mailed code, the
 * answer says a code is needed (`challenge`), with the new code to mail when one was issued.
 */
export async function beginLoginAttempt(
  c: Context<AppEnv>,
  email: string,
  codes: { candidateHash: string; givenHash: string | null },
): Promise<LoginGate | { challenge: "required"; issued: boolean }> {
  const at = now();
  const decision = await limiter(c, `login:${email}`).beginLogin(clientAddressKey(c), LOGIN_RULES, at, codes);
  if (!decision.allowed) {
    throw new ApiError(
      "API_RATE_LIMIT_EXCEEDED",
      decision.reason === "address"
        ? "Too many failed logins for this account from this address; try again later"
        : "Too many recent failed logins for this account; wait before trying again",
      {
        retryAfter: decision.retryAfterSeconds,
        limit: FAILED_LOGINS_LIMIT,
        reset: new Date(at + decision.retryAfterSeconds * 1000).toISOString(),
        window: "failed_logins",
      },
      { "Retry-After": String(decision.retryAfterSeconds) },
    );
  }
  if (decision.challenge === "required" || decision.attemptId === null) return { challenge: "required", issued: decision.issued };
  return { attemptId: decision.attemptId, passedChallenge: decision.challenge === "passed" };
}

export async function endLoginAttempt(c: Context<AppEnv>, email: string, gate: LoginGate, succeeded: boolean): Promise<void> {
  await limiter(c, `login:${email}`).endLogin(gate.attemptId, succeeded, gate.passedChallenge, LOGIN_RULES, now());
}
