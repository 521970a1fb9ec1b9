import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { CallerAccess, type AccessRows, type AccessVerdict, type SlideRules, type StoredUser } from "./caller-access";

export interface WindowRule {
  name: string;
  /** null = unlimited: still counted, never refused. */
  limit: number | null;
  /** Fixed windows aligned on the epoch: 60_000 is a minute, 86_400_000 a UTC day. */
  windowMs: number;
}

export interface WindowState {
  name: string;
  limit: number | null;
  remaining: number | null;
  resetAt: number;
}

export interface RateDecision {
  allowed: boolean;
  windows: WindowState[];
  /** Seconds until the window that refused resets (0 when allowed). */
  retryAfterSeconds: number;
}

interface Counter {
  start: number;
  count: number;
  /** When the window ends (absent on counters written before it was recorded). */
  end?: number;
}

/** An account's recent failed logins (`login:<email>` objects only), newest last. */
interface LoginFailures {
  /** `pending`: an attempt let through whose password is being checked (counted as a failure until it ends). */
  failures: { at: number; address: string; pending?: string }[];
  /** When the newest failure leaves the sliding window: `alarm` deletes the entry after that. */
  end: number;
  /** The e-mailed code a sign-in must carry past the account's ceiling (its SHA-256 only). */
  challenge?: { hash: string; expiresAt: number; tries: number };
}

export interface LoginRules {
  windowMs: number;
  /** Failures per (account, address) within the sliding window. */
  perAddress: number;
  /** Failures of the account (from anywhere) before any delay. */
  freeFailures: number;
  /** The longest delay the back-off reaches. */
  maxDelayMs: number;
  /** Failures of the account from all addresses after which a sign-in must also pass the e-mailed code. */
  accountCeiling: number;
  challengeTtlMs: number;
  /** Wrong codes before a code is burnt (a new one is then sent). */
  challengeTries: number;
}

export interface LoginAttempt extends LoginDecision {
  /** The reservation to end with `endLogin`; null when refused. */
  attemptId: string | null;
  /** `required`: past the ceiling without a valid code (the password is not checked). */
  challenge: "required" | "passed" | null;
  /** True when `candidateHash` became the account's code: the caller mails that code. */
  issued: boolean;
}

export interface LoginDecision {
  allowed: boolean;
  retryAfterSeconds: number;
  /** Which rule refused: the address's own failures, or the account's back-off. */
  reason: "address" | "backoff" | null;
}

const LOGIN_FAILURES = "login-failures";
/** A bound on what one account's object keeps, whatever the number of guessers. */
const MAX_LOGIN_FAILURES_KEPT = 256;

/** A session request's answer from its user's object: who it is, and its count (null when refused unheard). */
export interface SessionAdmission {
  verdict: AccessVerdict;
  decision: RateDecision | null;
}

/** The most windows one object keeps in memory (`kept`). */
const KEPT_MAX = 10_000;

/** How often counters of finished windows are deleted (see `alarm`). */
const PRUNE_EVERY_MS = 60 * 60_000;

/**
 * Counted requests (a session's, a key's, an address's public reads) are counted exactly in
 * memory while the storage holds a ceiling at or above the count, raised this many requests
 * ahead (issue 43): a write, and the commit behind it, on every request was the object's main
 * cost. An object started again (evicted, restarted) counts from the ceiling: in that window it
 * may refuse up to this many requests early, never let one too many through. A small limit's
 * reserve is a thirtieth of it (`reserveOf`). Failures (`record`) are stored exactly.
 */
export const COUNT_RESERVE = 20;

/** How far ahead of a window's count its stored ceiling goes: COUNT_RESERVE, at most a thirtieth of the limit. */
export function reserveOf(rule: WindowRule): number {
  return rule.limit === null ? COUNT_RESERVE : Math.min(COUNT_RESERVE, Math.floor(rule.limit / 30));
}

/**
 * Exact fixed-window counters for one subject (an API key, an IP, an email). A Durable
 * Object runs one call at a time and these calls never await, so concurrent requests are
 * counted exactly, which the platform's rate-limit binding does not promise.
 */
export class RateLimiter extends DurableObject<Env> {
  private pruneScheduled = false;
  /**
   * Each window's count and the ceiling stored for it (`COUNT_RESERVE`), by rule name. This
   * object is its storage's only writer, so while it lives the copy is the truth: a request reads
   * no storage (issue 43). Started again, it reads the ceiling.
   */
  private readonly kept = new Map<string, { start: number; end: number; count: number; ceiling: number }>();
  /** A user's object (`user:<id>`) also holds the user's sessions and memberships (./caller-access.ts). */
  private readonly access = new CallerAccess(this.ctx.storage);

  /**
   * A session request, in one call (issue 43): is the session live, who is the user, where are
   * they a member, and the per-user count, counted only for a live session. `load`: the Worker
   * reads the rows from D1 and calls `admitLoadedSession`.
   */
  admitSession(tokenHash: string, at: number, slide: SlideRules, rules: WindowRule[]): SessionAdmission {
    return this.counted(this.access.admit(tokenHash, at, slide), rules, at);
  }

  admitLoadedSession(
    generation: string,
    tokenHash: string,
    rows: AccessRows<StoredUser>,
    at: number,
    slide: SlideRules,
    rules: WindowRule[],
  ): SessionAdmission {
    return this.counted(this.access.admitLoaded(generation, tokenHash, rows, at, slide), rules, at);
  }

  /** A write to this user's sessions, memberships or row is about to reach D1 (src/http/credentials/access-changes.ts). */
  accessChanging(changeId: string, at: number): true {
    this.access.changing(changeId, at);
    return true;
  }

  accessChanged(changeId: string, at: number): true {
    this.access.changed(changeId, at);
    return true;
  }

  private counted(verdict: AccessVerdict, rules: WindowRule[], at: number): SessionAdmission {
    return { verdict, decision: verdict.state === "valid" ? this.decide(rules, at, true) : null };
  }

  /** Counts one request if every window has room; a refused request counts nowhere. */
  hit(rules: WindowRule[], at: number): RateDecision {
    return this.decide(rules, at, true);
  }

  /** The same decision without counting (e.g. "may this email still try to log in?"). */
  peek(rules: WindowRule[], at: number): RateDecision {
    return this.decide(rules, at, false);
  }

  /** Counts one event without refusing (e.g. a failed login). */
  record(rules: WindowRule[], at: number): void {
    for (const rule of rules) this.write(rule, this.counter(rule, at), 1, 0);
    this.schedulePrune();
  }

  /**
   * May this address try a password for this account now? (CONTRACT §9, #26.) An address with no
   * recent failure on the account is always let through, so guesses sent from elsewhere never
   * lock the owner out. Otherwise: at most `perAddress` failures per sliding window, and the
   * account's exponential back-off: after `freeFailures` recent failures, each one doubles the
   * wait after the newest (1 s, 2 s, 4 s … up to `maxDelayMs`).
   */
  loginAllowed(address: string, rules: LoginRules, at: number): LoginDecision {
    const recent = this.recentLoginFailures(rules, at);
    const mine = recent.filter((f) => f.address === address);
    if (mine.length === 0) return { allowed: true, retryAfterSeconds: 0, reason: null };
    const seconds = (until: number) => Math.max(1, Math.ceil((until - at) / 1000));
    if (mine.length >= rules.perAddress) {
      // Sliding: the address may try again once enough of its failures have left the window.
      const until = mine[mine.length - rules.perAddress]!.at + rules.windowMs;
      return { allowed: false, retryAfterSeconds: seconds(until), reason: "address" };
    }
    const beyondFree = recent.length - rules.freeFailures;
    if (beyondFree > 0) {
      const delay = Math.min(rules.maxDelayMs, 1000 * 2 ** (beyondFree - 1));
      const until = recent[recent.length - 1]!.at + delay;
      if (at < until) return { allowed: false, retryAfterSeconds: seconds(until), reason: "backoff" };
    }
    return { allowed: true, retryAfterSeconds: 0, reason: null };
  }

  /**
   * One sign-in attempt, decided and reserved in one call (issue 44): the attempt counts as a
   * failure from the moment it is let through until `endLogin` says it succeeded, so concurrent
   * guesses from one address are checked exactly `perAddress` times. Past `accountCeiling`
   * failures from all addresses, an attempt without the account's live e-mailed code is refused
   * unchecked (`challenge: required`); `candidateHash` becomes that code when none is live.
   */
  beginLogin(address: string, rules: LoginRules, at: number, codes: { candidateHash: string; givenHash: string | null }): LoginAttempt {
    const stored = this.ctx.storage.kv.get<LoginFailures>(LOGIN_FAILURES);
    const recent = (stored?.failures ?? []).filter((f) => f.at > at - rules.windowMs);
    const refused = (decision: LoginDecision): LoginAttempt => ({ ...decision, attemptId: null, challenge: null, issued: false });
    const seconds = (until: number) => Math.max(1, Math.ceil((until - at) / 1000));
    const mine = recent.filter((f) => f.address === address);
    if (mine.length >= rules.perAddress) {
      const until = mine[mine.length - rules.perAddress]!.at + rules.windowMs;
      return refused({ allowed: false, retryAfterSeconds: seconds(until), reason: "address" });
    }
    // The back-off follows finished failures, and only for an address that failed itself.
    const finished = recent.filter((f) => !f.pending);
    const beyondFree = finished.length - rules.freeFailures;
    if (mine.some((f) => !f.pending) && beyondFree > 0) {
      const delay = Math.min(rules.maxDelayMs, 1000 * 2 ** (beyondFree - 1));
      const until = finished[finished.length - 1]!.at + delay;
      if (at < until) return refused({ allowed: false, retryAfterSeconds: seconds(until), reason: "backoff" });
    }
    let challenge: LoginAttempt["challenge"] = null;
    let code =
      stored?.challenge && stored.challenge.expiresAt > at && stored.challenge.tries < rules.challengeTries ? stored.challenge : undefined;
    let issued = false;
    if (recent.length >= rules.accountCeiling) {
      if (code && codes.givenHash !== null && codes.givenHash === code.hash) challenge = "passed";
      else {
        if (code && codes.givenHash !== null) code = { ...code, tries: code.tries + 1 };
        if (!code || code.tries >= rules.challengeTries) {
          code = { hash: codes.candidateHash, expiresAt: at + rules.challengeTtlMs, tries: 0 };
          issued = true;
        }
        this.ctx.storage.kv.put<LoginFailures>(LOGIN_FAILURES, { failures: recent, end: at + rules.windowMs, challenge: code });
        this.schedulePrune();
        return { allowed: true, retryAfterSeconds: 0, reason: null, attemptId: null, challenge: "required", issued };
      }
    }
    const attemptId = crypto.randomUUID();
    const failures = [...recent, { at, address, pending: attemptId }].slice(-MAX_LOGIN_FAILURES_KEPT);
    this.ctx.storage.kv.put<LoginFailures>(LOGIN_FAILURES, { failures, end: at + rules.windowMs, challenge: code });
    this.schedulePrune();
    return { allowed: true, retryAfterSeconds: 0, reason: null, attemptId, challenge, issued };
  }

  /** The end of an attempt `beginLogin` let through: a success takes back its failure (and uses up the code it passed). */
  endLogin(attemptId: string, succeeded: boolean, usedChallenge: boolean, rules: LoginRules, at: number): void {
    const stored = this.ctx.storage.kv.get<LoginFailures>(LOGIN_FAILURES);
    if (!stored) return;
    const failures = succeeded
      ? stored.failures.filter((f) => f.pending !== attemptId)
      : stored.failures.map((f) => (f.pending === attemptId ? { at: f.at, address: f.address } : f));
    const challenge = succeeded && usedChallenge ? undefined : stored.challenge;
    this.ctx.storage.kv.put<LoginFailures>(LOGIN_FAILURES, { failures, end: Math.max(stored.end, at + rules.windowMs), challenge });
  }

  /** Records a failed login of this account from this address. */
  recordLoginFailure(address: string, rules: LoginRules, at: number): void {
    const failures = [...this.recentLoginFailures(rules, at), { at, address }].slice(-MAX_LOGIN_FAILURES_KEPT);
    this.ctx.storage.kv.put<LoginFailures>(LOGIN_FAILURES, { failures, end: at + rules.windowMs });
    this.schedulePrune();
  }

  private recentLoginFailures(rules: LoginRules, at: number): LoginFailures["failures"] {
    const stored = this.ctx.storage.kv.get<LoginFailures>(LOGIN_FAILURES);
    return (stored?.failures ?? []).filter((f) => f.at > at - rules.windowMs);
  }

  /**
   * Deletes the counters of finished windows. An IP's object holds one counter per queue or
   * organization it read publicly (and per widget key it used): ids in paths are anyone's to
   * invent, so without this the object would keep every name it ever saw.
   */
  override async alarm(): Promise<void> {
    this.pruneScheduled = false;
    const at = Date.now();
    let kept = 0;
    for (const [name, counter] of this.kept) if (counter.end <= at) this.kept.delete(name);
    for (const [name, counter] of this.ctx.storage.kv.list<Counter>()) {
      // A lease of ./caller-access.ts is not a counter: it ends itself, checked on the next request.
      if (name.startsWith("access:")) continue;
      if (counter.end !== undefined && counter.end <= at) this.ctx.storage.kv.delete(name);
      else kept++;
    }
    if (kept > 0) this.schedulePrune();
  }

  private schedulePrune(): void {
    if (this.pruneScheduled) return;
    this.pruneScheduled = true;
    // An alarm already set (by this object before it was evicted) is kept, never pushed back.
    void this.ctx.storage.getAlarm().then((alarm) => (alarm === null ? this.ctx.storage.setAlarm(Date.now() + PRUNE_EVERY_MS) : undefined));
  }

  /**
   * The window's count: the one kept in memory, else the stored one (a ceiling after a restart:
   * never below the true count).
   */
  private counter(rule: WindowRule, at: number): Counter & { ceiling: number } {
    const start = at - (at % rule.windowMs);
    const kept = this.kept.get(rule.name);
    if (kept && kept.start === start) return { start, count: kept.count, ceiling: kept.ceiling };
    const stored = this.ctx.storage.kv.get<Counter>(rule.name);
    const ceiling = stored && stored.start === start ? stored.count : 0;
    return { start, count: ceiling, ceiling };
  }

  /** Counts `by` more in the window; the storage is written when the count passes its ceiling, `reserve` ahead. */
  private write(rule: WindowRule, counter: Counter & { ceiling: number }, by: number, reserve: number): void {
    counter.count += by;
    if (counter.count > counter.ceiling || reserve === 0) {
      counter.ceiling =
        rule.limit === null ? counter.count + reserve : Math.max(counter.count, Math.min(counter.count + reserve, rule.limit));
      this.ctx.storage.kv.put(rule.name, { start: counter.start, count: counter.ceiling, end: counter.start + rule.windowMs });
    }
    // Names built from ids (an address's public reads of any queue) are bounded: past KEPT_MAX the
    // copies go, and the stored ceilings stand in for them (early, never late).
    if (this.kept.size >= KEPT_MAX && !this.kept.has(rule.name)) this.kept.clear();
    this.kept.set(rule.name, { start: counter.start, end: counter.start + rule.windowMs, count: counter.count, ceiling: counter.ceiling });
  }

  private decide(rules: WindowRule[], at: number, count: boolean): RateDecision {
    const counters = rules.map((rule) => ({ rule, counter: this.counter(rule, at) }));
    const refusing = counters.filter(({ rule, counter }) => rule.limit !== null && counter.count >= rule.limit);
    const allowed = refusing.length === 0;
    if (allowed && count) {
      for (const { rule, counter } of counters) this.write(rule, counter, 1, reserveOf(rule));
      this.schedulePrune();
    }
    const windows = counters.map(({ rule, counter }) => ({
      name: rule.name,
      limit: rule.limit,
      remaining: rule.limit === null ? null : Math.max(0, rule.limit - counter.count),
      resetAt: counter.start + rule.windowMs,
    }));
    const retryAt = Math.max(0, ...refusing.map(({ rule, counter }) => counter.start + rule.windowMs));
    return { allowed, windows, retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((retryAt - at) / 1000)) };
  }
}
