// The caller's own object (issue 43, docs/hot-path.md "The caller's object"): a user's
// RateLimiter object (`user:<id>`) also holds what a session request must know before it may
// act: the user's live sessions (token hash → expiries, sliding), the user row and the user's
// memberships. A warm session request is then judged, counted against the per-user limit and
// given its memberships in one call, with no D1 statement.
//
// D1 stays the authority. The object never reads D1 itself (it imports nothing of ours above
// lib/): when it lacks what a request needs, or while a change is under way, it answers "load",
// the Worker reads the rows from D1 and hands them back with the request (`admitLoaded`); the
// object keeps them only when no change began in between.
//
// Every write that ends a session or changes a membership or the user row runs between
// `changing` and `changed` (src/http/credentials/access-changes.ts):
//  - `changing` records a lease (persisted, so it survives an eviction) and drops what the
//    object holds; while any lease is live, every request is judged on rows read from D1 after
//    it arrived, and nothing is kept;
//  - `changed` ends the lease and drops what the object holds again;
//  - a lease that was never ended (the writer died, `changed` was lost) expires after
//    ACCESS_LEASE_MS, and the object then reloads from D1 once. The writer writes only while
//    its lease is surely live (it gives up after half the lease), so no write lands after it.
// Rows a Worker read are kept only if the object's generation did not move since it asked for
// them: a `changing` (or an eviction: the generation carries the instance's own nonce) between
// the question and the answer means the rows may predate the change, so they judge that one
// request (concurrent with the change) and are dropped.

import type { Language } from "../domain/languages";
import type { Role } from "../domain/permissions";

/**
 * The user row as D1 holds it (`users`, src/db/schema.ts), held as the Worker gave it. Spelt out
 * here because this object imports nothing above lib/ and domain/; the Worker passes a `UserRow`
 * in and takes this back as one, so the compiler checks both shapes stay the same.
 */
export interface StoredUser {
  id: string;
  email: string;
  passwordHash: string;
  firstName: string;
  lastName: string;
  accountType: "business" | "customer";
  role: "user" | "admin";
  language: Language;
  smsNotifications: boolean;
  ticketReminders: boolean;
  createdAt: number;
  updatedAt: number;
  defaultOrganizationId: string | null;
}

/** How long a change may keep the object reading D1 before it reloads by itself. */
export const ACCESS_LEASE_MS = 30_000;

/** A session's times, as D1 holds them. */
export interface AccessSession {
  expiresAt: number;
  lastSeenAt: number;
  absoluteExpiresAt: number;
}

export interface AccessMembership {
  organizationId: string;
  role: Role;
  locationIds: string[] | null;
}

/** The rows a Worker read from D1 for one request: null = no such row (unknown or revoked session). */
export interface AccessRows<User> {
  session: AccessSession | null;
  user: User | null;
  memberships: AccessMembership[];
}

/** How the session's idle expiry slides (docs/hot-path.md): given by the Worker, the same everywhere. */
export interface SlideRules {
  idleMs: number;
  /** The slide is written to D1 at most this often; in between it moves in the object only. */
  granularityMs: number;
}

export type AccessVerdict<User = StoredUser> =
  | { state: "load"; generation: string }
  | { state: "unknown" }
  | { state: "expired" }
  | {
      state: "valid";
      user: User;
      memberships: AccessMembership[];
      session: AccessSession;
      /** The slid expiry moved enough to be written to D1 (by the Worker, after the response). */
      writeSlide: boolean;
    };

interface Lease {
  id: string;
  until: number;
}

const LEASES = "access:leases";

interface Held<User> {
  user: User;
  memberships: AccessMembership[];
  sessions: Map<string, AccessSession>;
}

export class CallerAccess<User = StoredUser> {
  /** Unique to this instance: rows asked for before an eviction are never kept after it. */
  private readonly nonce = crypto.randomUUID();
  private counter = 0;
  private held: Held<User> | null = null;

  constructor(private readonly storage: DurableObjectStorage) {}

  private get generation(): string {
    return `${this.nonce}:${this.counter}`;
  }

  private forget(): void {
    this.held = null;
    this.counter += 1;
  }

  /**
   * The leases as stored, kept in memory once read (issue 43: a read of the storage on every
   * request). This object is their only writer, and every write goes through `keepLeases`.
   */
  private leases: Lease[] | null = null;

  private keepLeases(leases: Lease[]): void {
    if (leases.length > 0) this.storage.kv.put(LEASES, leases);
    else this.storage.kv.delete(LEASES);
    this.leases = leases;
  }

  /** The leases still running at `at`; an expired one is removed and the object reloads once. */
  private liveLeases(at: number): Lease[] {
    const leases = (this.leases ??= this.storage.kv.get<Lease[]>(LEASES) ?? []);
    if (leases.length === 0) return leases;
    const live = leases.filter((l) => l.until > at);
    if (live.length !== leases.length) {
      this.keepLeases(live);
      this.forget();
    }
    return live;
  }

  /** A warm answer, or `load` when the object does not hold this session or a change runs. */
  admit(tokenHash: string, at: number, slide: SlideRules): AccessVerdict<User> {
    if (this.liveLeases(at).length > 0 || !this.held) return { state: "load", generation: this.generation };
    const session = this.held.sessions.get(tokenHash);
    if (!session) return { state: "load", generation: this.generation };
    return this.judge(this.held, tokenHash, session, at, slide);
  }

  /** Judges the request on rows read from D1 after `generation` was given; keeps them if nothing changed since. */
  admitLoaded(generation: string, tokenHash: string, rows: AccessRows<User>, at: number, slide: SlideRules): AccessVerdict<User> {
    const quiet = this.liveLeases(at).length === 0 && generation === this.generation;
    if (!rows.user) return { state: "unknown" };
    let held: Held<User> = { user: rows.user, memberships: rows.memberships, sessions: new Map() };
    if (quiet) {
      // The same generation: the rows are at least as new as anything held, user and memberships included.
      held = { ...held, sessions: this.held?.sessions ?? new Map() };
      this.held = held;
    }
    if (!rows.session) {
      if (quiet) held.sessions.delete(tokenHash);
      return { state: "unknown" };
    }
    const session = { ...rows.session };
    if (quiet) held.sessions.set(tokenHash, session);
    return this.judge(held, tokenHash, session, at, slide);
  }

  private judge(held: Held<User>, tokenHash: string, session: AccessSession, at: number, slide: SlideRules): AccessVerdict<User> {
    if (session.expiresAt <= at) {
      held.sessions.delete(tokenHash);
      return { state: "expired" };
    }
    let writeSlide = false;
    if (at - session.lastSeenAt >= slide.granularityMs) {
      session.lastSeenAt = at;
      session.expiresAt = Math.min(at + slide.idleMs, session.absoluteExpiresAt);
      writeSlide = true;
    }
    return { state: "valid", user: held.user, memberships: held.memberships, session: { ...session }, writeSlide };
  }

  /** A change to this user's sessions, memberships or row is about to be written to D1. */
  changing(changeId: string, at: number): void {
    const leases = this.liveLeases(at).filter((l) => l.id !== changeId);
    this.keepLeases([...leases, { id: changeId, until: at + ACCESS_LEASE_MS }]);
    this.forget();
  }

  /** The change is written (or given up): what the object held before it is dropped. */
  changed(changeId: string, at: number): void {
    this.keepLeases(this.liveLeases(at).filter((l) => l.id !== changeId));
    this.forget();
  }
}
