import type { Env } from "../env";
import type { ApiVersion } from "../domain/api-versions";
import type { Role } from "../domain/permissions";
import type { Limit, RateLimits } from "../domain/plans";
import type { Permission } from "../domain/permissions";
import type { UserRow } from "./credentials/sessions";
import type { ApiError } from "./errors";
import type { QueueRow } from "./credentials/queues";
import type { LocationScope } from "../domain/location-scope";
import type { RateDecision } from "../rate-limiter/rate-limiter";

/** Who is calling: set by the authenticate middleware (./auth.ts), read by every route. */
export type Principal =
  | { kind: "anonymous" }
  | { kind: "session"; user: UserRow; tokenHash: string; expiresAt: number; absoluteExpiresAt: number; lastSeenAt: number }
  | {
      kind: "apiKey";
      keyId: string;
      organizationId: string;
      permissions: ReadonlySet<Permission>;
      widgetOnly: boolean;
      rate: RateLimits;
      /** The plan's monthly API-call quota (null = unlimited), read with the key on every request. */
      apiCallsPerMonth: Limit;
      /** A widget key locked to these origins (src/widget/widget.routes.ts widgetOriginLock); null = any. */
      allowedOrigins: string[] | null;
      /** When the key was last recorded as used, read with it (src/identity/key-usage.ts). */
      lastUsedAt: number | null;
      /** The API version the key is pinned to (src/http/versioning.ts); null = the first. */
      apiVersion: string | null;
    };

/** Who acts, inside which organization. */
export interface Actor {
  organizationId: string;
  userId: string | null;
  apiKeyId: string | null;
  role: Role | null;
  /** The locations a scoped member works at (issue 31); null = the whole organization (and every key). */
  locationIds: LocationScope;
  can(permission: Permission): boolean;
}

declare const scopeDecided: unique symbol;
/**
 * An actor whose reach over the resource(s) it acts on was decided by the resource guard or by
 * `authorizeResources` (./guard.ts): the only two places that make one. Code acting on a
 * location-scoped resource asks for this type, so it cannot be handed an actor whose location
 * was never checked.
 */
export type ScopedActor = Actor & { readonly [scopeDecided]: true };

/** What the resource guard (./guard.ts) resolved for this request. */
export interface Guarded {
  kind: string;
  id: string;
  organizationId: string;
  /** The resource's row (typed per kind by `guarded`/`guardedRow` in ./guard.ts). */
  row: unknown;
  /** The caller as a member who reaches the resource; null = an outsider to it. */
  member: ScopedActor | null;
  /** The resource's name in its 404 ("Service not found"). */
  what: string;
}

/** The Hono environment every router shares. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    principal: Principal;
    /** The request recorded an audit entry (./audit-origin.ts): its end seals the chain (src/audit/audit-sealing.ts). */
    auditWritten: boolean;
    /** The version this request is answered in (./versioning.ts). */
    apiVersion: ApiVersion;
    rateLimitHeaders: Record<string, string>;
    /** The request was already counted in this bucket, by the call that judged its session (./auth.ts). */
    countedBy: { subject: string; decision: RateDecision };
    /** Roles of the session's user already read along with another row (see `rememberRole`). */
    knownRoles: Map<string, { role: Role; locationIds: readonly string[] | null } | null>;
    /** Why an optional credential (the session cookie) was not accepted; thrown by routes that need one. */
    credentialError: ApiError;
    /** The answer's envelope was written with its livemode by `c.json` (./livemode.ts). */
    livemodeSaid: boolean;
    /** The response clears the session cookie (it was invalid, or the caller logged out). */
    clearSessionCookie: boolean;
    /** The resource the path names, loaded and authorized by its guard (./guard.ts). */
    guarded: Guarded;
    /** The queue the path names, read with the credential (null: no such queue); see `queueOfCaller`. */
    prefetchedQueue: {
      queueId: string;
      queue: QueueRow | null;
      role: Role | null;
      /** The caller's membership of the queue's organization, with its locations (issue 31). */
      membership: { role: Role; locationIds: readonly string[] | null } | null;
    };
  };
};
