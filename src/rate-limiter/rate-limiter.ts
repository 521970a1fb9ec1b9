import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

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

/** How often counters of finished windows are deleted (see `alarm`). */
const PRUNE_EVERY_MS = 60 * 60_000;

/**
 * Exact fixed-window counters for one subject (an API key, an IP, an email). A Durable
 * Object runs one call at a time and these calls never await, so concurrent requests are
 * counted exactly, which the platform's rate-limit binding does not promise.
 */
export class RateLimiter extends DurableObject<Env> {
  private pruneScheduled = false;

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
    for (const rule of rules) {
      const counter = this.counter(rule, at);
      this.ctx.storage.kv.put(rule.name, { start: counter.start, count: counter.count + 1, end: counter.start + rule.windowMs });
    }
    this.schedulePrune();
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
    for (const [name, counter] of this.ctx.storage.kv.list<Counter>()) {
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

  private counter(rule: WindowRule, at: number): Counter {
    const start = at - (at % rule.windowMs);
    const stored = this.ctx.storage.kv.get<Counter>(rule.name);
    return stored && stored.start === start ? stored : { start, count: 0 };
  }

  private decide(rules: WindowRule[], at: number, count: boolean): RateDecision {
    const counters = rules.map((rule) => ({ rule, counter: this.counter(rule, at) }));
    const refusing = counters.filter(({ rule, counter }) => rule.limit !== null && counter.count >= rule.limit);
    const allowed = refusing.length === 0;
    if (allowed && count) {
      for (const { rule, counter } of counters) {
        counter.count += 1;
        this.ctx.storage.kv.put(rule.name, { ...counter, end: counter.start + rule.windowMs });
      }
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
