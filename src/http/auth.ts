import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { and, eq } from "drizzle-orm";
import { database } from "../db/client";
import { members } from "../db/schema";
import { entitlements, type Limit, type RateLimits } from "../domain/plans";
import { keyPermissions, roleAllows, type Permission, type Role } from "../domain/permissions";
import type { LocationScope } from "../domain/location-scope";
import { now } from "../lib/clock";
import { permissionRefused } from "./permission-refusal";
import { sha256Hex } from "../lib/crypto";
import { isId, queueIdOfTicket } from "../lib/ids";
import type { CredentialForm } from "../lib/credentials";
import { batchReads, withValues } from "../db/prepared";
import { apiKeyForm, apiKeyLookupPrefix, apiKeyOf, apiKeyRead, apiKeySubscriptionRead, looksLikeApiKey } from "./credentials/api-keys";
import { defaultOrganizationOf } from "./credentials/memberships";
import {
  isHotQueueRoute,
  queueRead,
  recentQueueRow,
  rememberQueueRow,
  sessionRoleInOrganizationRead,
  sessionRoleInQueueRead,
  type QueueRow,
} from "./credentials/queues";
import {
  membershipsOfUserRead,
  SESSION_IDLE_MS,
  sessionOf,
  sessionRead,
  sessionTokenForm,
  sessionUserRead,
  SLIDE_GRANULARITY_MS,
  slidExpiry,
  userIdOfSessionToken,
  userRead,
  writeSlide,
  type UserRow,
} from "./credentials/sessions";
import { countsInUserBucket, credentialRefusal, recordFailedCredential, sessionRules } from "./rate-limit";
import type { AccessRows, SlideRules, StoredUser } from "../rate-limiter/caller-access";
import type { AppEnv } from "./context";
import { primaryEnv } from "./d1-sessions";
import { ApiError, forbidden, notFound, validationError } from "./errors";

export const SESSION_COOKIE = "service.session_token";

export type { Actor, Principal } from "./context";
import type { Actor, Principal } from "./context";
import { answerHeader } from "./answer-headers";

/** The credentials a route accepts, named in every 401 so a newcomer knows what to send (issue #32). */
export const EXPECTED_CREDENTIALS = [
  "X-API-Key: qk_live_…",
  "Authorization: Bearer qk_live_…",
  "Authorization: Bearer sess_… (POST /v1/auth/login)",
  "Cookie: service.session_token",
] as const;

const UNKNOWN_KEY =
  "Unknown API key: X-API-Key (or Authorization: Bearer) must carry a key created with POST /v1/organizations/{organizationId}/api-keys";
const UNKNOWN_SESSION = "Unknown session token: log in (POST /v1/auth/login) and send its token as Authorization: Bearer sess_…";

function unauthenticated(
  message = "No credential: send an API key in the X-API-Key header, or a session token as Authorization: Bearer sess_…",
): ApiError {
  return new ApiError("AUTHENTICATION_ERROR", message, { expected: [...EXPECTED_CREDENTIALS] });
}

/** Exactly what clears the session cookie in a browser (same attributes as when it was set). */
export const CLEARED_SESSION_COOKIE = `${SESSION_COOKIE}=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Lax`;

/** The response will clear the session cookie, once, whatever else happens to the request. */
export function clearSessionCookie(c: Context<AppEnv>): void {
  c.set("clearSessionCookie", true);
}

interface Credential {
  type: "apiKey" | "session";
  value: string;
  /** A cookie is sent by the browser on its own: it is optional, never a reason to refuse. */
  fromCookie: boolean;
}

function credentialOf(c: Context<AppEnv>): Credential | null {
  const apiKey = c.req.header("X-API-Key");
  if (apiKey) return { type: "apiKey", value: apiKey.trim(), fromCookie: false };
  const authorization = c.req.header("Authorization");
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match) throw unauthenticated("The Authorization header must be 'Bearer <token>' (an API key qk_live_… or a session token sess_…)");
    const token = match[1]!;
    return { type: looksLikeApiKey(token) ? "apiKey" : "session", value: token, fromCookie: false };
  }
  // A browser cannot set headers on a WebSocket upgrade: it offers its key or session token as a
  // subprotocol beside the one it speaks (docs/event-socket.md). Only a value shaped like our
  // credentials is read, so a subprotocol of another meaning is never taken for one.
  if (c.req.header("Upgrade")?.toLowerCase() === "websocket") {
    const offered = (c.req.header("Sec-WebSocket-Protocol") ?? "").split(",").map((p) => p.trim());
    const token = offered.find((p) => looksLikeApiKey(p) || p.startsWith("sess_"));
    if (token !== undefined) return { type: looksLikeApiKey(token) ? "apiKey" : "session", value: token, fromCookie: false };
  }
  const cookie = getCookie(c, SESSION_COOKIE);
  return cookie ? { type: "session", value: cookie, fromCookie: true } : null;
}

function isWidgetPath(path: string): boolean {
  return path.startsWith("/v1/widget/") || path === "/v1/embed.js" || WIDGET_BOOKING_PATH.test(path);
}

/** The widget and the kiosk book appointments: a service's free slots, a hold, the booking (docs/appointments.md). */
const WIDGET_BOOKING_PATH = /^\/v1\/(appointments|appointments\/holds|services\/[^/]+\/slots)$/;

/** Signing in works whatever the browser still holds: these routes never read a credential. */
const SIGN_IN_PATHS: ReadonlySet<string> = new Set(["/v1/auth/login", "/v1/auth/register", "/v1/auth/sso/start", "/v1/auth/sso/callback"]);
/** Logging out always succeeds in clearing the cookie, even when the session is already gone. */
const LOGOUT_PATH = "/v1/auth/logout";

/**
 * The queue a route names in its path (`queues/{queueId}`, the widget's `queue/{queueId}`, or
 * `tickets/{ticketId}`, whose id carries its queue's): read in the same D1 round trip as the
 * credential (docs/hot-path.md), for `queueOfCaller`.
 */
export function queueIdOfPath(path: string): string | null {
  const match = /\/(queues?|tickets)\/([^/]+)/.exec(path);
  if (!match) return null;
  const id = match[2]!;
  if (match[1] === "tickets") return queueIdOfTicket(id);
  return isId("que", id) ? id : null;
}

/** Runs a write after the response, off the request's path (logged, never thrown). */
function afterResponse(c: Context<AppEnv>, write: Promise<unknown>, what: string): void {
  c.executionCtx.waitUntil(
    write.catch((err: unknown) => console.error(JSON.stringify({ requestId: c.get("requestId"), error: `${what}: ${String(err)}` }))),
  );
}

/**
 * The caller behind a credential, or why it is refused (unknown, expired or revoked). One D1
 * round trip: the credential's row, and the queue the path names (with the session user's role
 * in its organization) in the same batch.
 */
async function resolve(c: Context<AppEnv>, credential: Credential, at: number): Promise<Principal | ApiError> {
  const db = database(c.env.DB);
  const queueId = queueIdOfPath(c.req.path);
  // A join or a call-next may use the row this isolate read recently (credentials/queues.ts):
  // then no statement of the batch reads the queue.
  const recent = queueId !== null && isHotQueueRoute(c.req.method, c.req.path) ? recentQueueRow(queueId) : null;
  const kept = (row: QueueRow | undefined): QueueRow | null => {
    if (row && row !== recent) rememberQueueRow(row);
    return row ?? null;
  };
  if (credential.type === "apiKey") {
    const lookupPrefix = apiKeyLookupPrefix(credential.value);
    if (lookupPrefix === null) return unauthenticated(UNKNOWN_KEY);
    const keyReads = [withValues(apiKeyRead, { lookupPrefix }), withValues(apiKeySubscriptionRead, { lookupPrefix })] as const;
    const [[key], [subscription], queueRows] =
      queueId === null || recent !== null
        ? [...(await batchReads(c.env.DB, keyReads)), recent === null ? null : [recent]]
        : await batchReads(c.env.DB, [...keyReads, withValues(queueRead, { queueId })]);
    const found = await apiKeyOf(key, subscription, credential.value);
    if (!found) return unauthenticated(UNKNOWN_KEY);
    if (found.key.revokedAt !== null) return new ApiError("KEY_REVOKED", "This API key has been revoked");
    if (queueId !== null && queueRows) c.set("prefetchedQueue", { queueId, queue: kept(queueRows[0]), role: null, membership: null });
    const plan = entitlements(found.subscription ?? { plan: "starter" });
    const permissions = keyPermissions(found.key.permissions);
    return {
      kind: "apiKey",
      keyId: found.key.id,
      organizationId: found.key.organizationId,
      permissions,
      widgetOnly: permissions.size === 1 && permissions.has("WIDGET"),
      rate: plan.rate,
      allowedOrigins: found.key.allowedOrigins ?? null,
      apiCallsPerMonth: plan.quotas.apiCallsPerMonth,
      lastUsedAt: found.key.lastUsedAt,
      apiVersion: found.key.apiVersion,
    };
  }
  const userId = userIdOfSessionToken(credential.value);
  const tokenHash = userId !== null ? await signedTokenHash(credential.value) : await sha256Hex(credential.value);
  if (userId !== null) return resolveByUserObject(c, userId, tokenHash, queueId, recent, kept, at);
  const sessionReads = [withValues(sessionRead, { tokenHash }), withValues(sessionUserRead, { tokenHash })] as const;
  const [[session], [user], queueRows, roleRows] =
    queueId === null
      ? [...(await batchReads(c.env.DB, sessionReads)), null, null]
      : recent !== null
        ? await batchReads(c.env.DB, [
            ...sessionReads,
            withValues(sessionRoleInOrganizationRead, { organizationId: recent.organizationId, tokenHash }),
          ]).then(([sessions, users, roles]) => [sessions, users, [recent], roles] as const)
        : await batchReads(c.env.DB, [
            ...sessionReads,
            withValues(queueRead, { queueId }),
            withValues(sessionRoleInQueueRead, { queueId, tokenHash }),
          ]);
  const found = sessionOf(session, user, tokenHash, at);
  if (found.state === "expired") return new ApiError("TOKEN_EXPIRED", "The session has expired; log in again");
  if (found.state === "unknown") return unauthenticated(UNKNOWN_SESSION);
  if (queueId !== null && queueRows && roleRows) {
    // The role was read for the user of this very token (a subquery on the same session row).
    const membership = roleRows[0] ? { role: roleRows[0].role, locationIds: roleRows[0].locationIds ?? null } : null;
    c.set("prefetchedQueue", { queueId, queue: kept(queueRows[0]), role: membership?.role ?? null, membership });
  }
  // The idle expiry slides without a write on most requests, and never with one on the path.
  const { expiresAt, write } = slidExpiry(found, at);
  if (write) afterResponse(c, writeSlide(db, tokenHash, at, expiresAt), "session slide");
  return { kind: "session", ...found, expiresAt };
}

const SLIDE: SlideRules = { idleMs: SESSION_IDLE_MS, granularityMs: SLIDE_GRANULARITY_MS };

/**
 * A session token that carries its user's id (issue 43): judged by the user's object in one call
 * (is the session live, who is the user, their memberships, and the per-user count), with no D1
 * statement once the object holds them; the queue row the path names is read beside it unless
 * this isolate keeps it. The object answers `load` when it lacks the session or while a change
 * to the user's access runs: the rows are then read from D1 and handed to it with the request
 * (rate-limiter/caller-access.ts).
 */
async function resolveByUserObject(
  c: Context<AppEnv>,
  userId: string,
  tokenHash: string,
  queueId: string | null,
  recent: QueueRow | null,
  kept: (row: QueueRow | undefined) => QueueRow | null,
  at: number,
): Promise<Principal | ApiError> {
  const subject = `user:${userId}`;
  const account = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(subject));
  const counts = countsInUserBucket(c);
  const rules = counts ? sessionRules() : [];
  const [first, queueRows] = await Promise.all([
    account.admitSession(tokenHash, at, SLIDE, rules),
    queueId !== null && recent === null ? batchReads(c.env.DB, [withValues(queueRead, { queueId })]).then(([rows]) => rows) : null,
  ]);
  let admission = first;
  if (admission.verdict.state === "load") {
    const [[session], [user], memberships] = await batchReads(c.env.DB, [
      withValues(sessionRead, { tokenHash }),
      withValues(userRead, { userId }),
      withValues(membershipsOfUserRead, { userId }),
    ]);
    const rows: AccessRows<StoredUser> = {
      session:
        session && session.userId === userId
          ? { expiresAt: session.expiresAt, lastSeenAt: session.lastSeenAt, absoluteExpiresAt: session.absoluteExpiresAt }
          : null,
      user: user ?? null,
      memberships,
    };
    admission = await account.admitLoadedSession(admission.verdict.generation, tokenHash, rows, at, SLIDE, rules);
  }
  const { verdict, decision } = admission;
  if (verdict.state === "expired") return new ApiError("TOKEN_EXPIRED", "The session has expired; log in again");
  if (verdict.state !== "valid") return unauthenticated(UNKNOWN_SESSION);
  if (decision && counts) c.set("countedBy", { subject, decision });
  if (queueId !== null) {
    const queue = recent ?? kept(queueRows?.[0]);
    const found = queue ? verdict.memberships.find((m) => m.organizationId === queue.organizationId) : undefined;
    const membership = found ? { role: found.role, locationIds: found.locationIds ?? null } : null;
    c.set("prefetchedQueue", { queueId, queue, role: membership?.role ?? null, membership });
  }
  const { session } = verdict;
  if (verdict.writeSlide) afterResponse(c, writeSlide(database(c.env.DB), tokenHash, at, session.expiresAt), "session slide");
  return { kind: "session", user: verdict.user, tokenHash, ...session };
}

/**
 * The hashes of the signed session tokens this isolate served (issue 43: a SHA-256 on every
 * request of a session that comes back again and again). Only tokens whose MAC verified reach
 * here (`authenticate` refuses forged ones first), so a guesser fills nothing; at most
 * TOKEN_HASHES_KEPT of them.
 */
const tokenHashes = new Map<string, string>();
const TOKEN_HASHES_KEPT = 10_000;

async function signedTokenHash(token: string): Promise<string> {
  const known = tokenHashes.get(token);
  if (known !== undefined) return known;
  const hash = await sha256Hex(token);
  if (tokenHashes.size >= TOKEN_HASHES_KEPT) tokenHashes.clear();
  tokenHashes.set(token, hash);
  return hash;
}

function formOf(c: Context<AppEnv>, credential: Credential): Promise<CredentialForm> {
  return credential.type === "apiKey" ? apiKeyForm(c.env, credential.value) : sessionTokenForm(c.env, credential.value);
}

/**
 * Resolves who is calling. A wrong credential in a header is refused here, on every route; a
 * wrong session cookie leaves the request anonymous (public routes answer as to anyone) and
 * only routes that need a caller refuse it, with the cookie's error; the cookie is cleared.
 *
 * CONTRACT §10: a credential whose MAC does not verify was not issued by us and is refused
 * before any lookup or object call, counted nowhere. A signed credential is looked up whatever
 * its address's failed-credential count: a valid one is always served. Only the unsigned
 * formats issued before (legacy keys and sessions) need a lookup to be judged: those alone sit
 * behind the per-address limit, and their failures alone count (a cookie's never do: the
 * browser sends it on its own, e.g. a stale one on every public read).
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  c.set("principal", { kind: "anonymous" });
  const credential = SIGN_IN_PATHS.has(c.req.path) ? null : credentialOf(c);
  if (credential) {
    const lenient = credential.fromCookie || c.req.path === LOGOUT_PATH;
    const form = await formOf(c, credential);
    let outcome: Principal | ApiError;
    let counted = false;
    if (form === "forged") {
      outcome = unauthenticated(credential.type === "apiKey" ? UNKNOWN_KEY : UNKNOWN_SESSION);
    } else if (form === "legacy") {
      const refused = await credentialRefusal(c);
      outcome = refused ?? (await resolve(c, credential, now()));
      counted = !refused && !credential.fromCookie;
    } else {
      outcome = await resolve(c, credential, now());
    }
    if (outcome instanceof ApiError) {
      if (counted) await recordFailedCredential(c);
      if (!lenient) throw outcome;
      c.set("credentialError", outcome);
      if (credential.fromCookie && outcome.code !== "API_RATE_LIMIT_EXCEEDED") clearSessionCookie(c);
    } else {
      // A widget key is published in web pages: whatever permission a route checks, it may only
      // reach the widget routes.
      if (outcome.kind === "apiKey" && outcome.widgetOnly && !isWidgetPath(c.req.path)) {
        throw forbidden("A widget key may only call the widget routes");
      }
      c.set("principal", outcome);
    }
  }
  await next();
  if (c.get("clearSessionCookie")) answerHeader(c, "Set-Cookie", CLEARED_SESSION_COOKIE, { append: true });
});

/** What an anonymous request is refused with: the rejected cookie's own error if there was one. */
function anonymousRefusal(c: Context<AppEnv>): ApiError {
  return c.get("credentialError") ?? unauthenticated();
}

export function requireUser(c: Context<AppEnv>): Extract<Principal, { kind: "session" }> {
  const p = c.get("principal");
  if (p.kind === "session") return p;
  if (p.kind === "apiKey") throw forbidden("This route needs a user session, not an API key");
  throw anonymousRefusal(c);
}

export function requireCredential(c: Context<AppEnv>): Exclude<Principal, { kind: "anonymous" }> {
  const p = c.get("principal");
  if (p.kind === "anonymous") throw anonymousRefusal(c);
  return p;
}

/** A user's place in an organization: their role and, if scoped, their locations. */
export interface Membership {
  role: Role;
  locationIds: LocationScope;
}

export async function memberRole(env: AppEnv["Bindings"], organizationId: string, userId: string): Promise<Role | null> {
  return (await membershipOf(env, organizationId, userId))?.role ?? null;
}

export async function membershipOf(env: AppEnv["Bindings"], organizationId: string, userId: string): Promise<Membership | null> {
  const row = await database(env.DB)
    .select({ role: members.role, locationIds: members.locationIds })
    .from(members)
    .where(and(eq(members.organizationId, organizationId), eq(members.userId, userId)))
    .get();
  return row ? { role: row.role, locationIds: row.locationIds ?? null } : null;
}

/**
 * The locations of a resource, for a member scoped to some locations: given as ids, or as a
 * read that runs only when the caller is scoped (the whole organization's members, and keys,
 * pay nothing for it). Used by the resource guard (./guard.ts).
 */
export type ResourceLocations = readonly string[] | (() => Promise<readonly string[]>);

/**
 * The caller may act in this organization with this permission. A caller outside the
 * organization gets the same 404 as for an id that does not exist (`what` names the resource
 * looked up, message included), so ids of other organizations are never confirmed to exist.
 *
 * There is no location argument: on a route of a resource named in its path, the guard
 * (./guard.ts) decided the caller's reach before the handler ran, and this answers its decision;
 * ids in a body go through `authorizeResources` (./guard.ts).
 */
export async function authorize(c: Context<AppEnv>, organizationId: string, permission: Permission, what = "Organization"): Promise<Actor> {
  const actor = await actorIn(c, organizationId, what);
  if (!actor.can(permission)) throw permissionRefused(permission, actor);
  return actor;
}

/**
 * Records the session user's role in an organization, read in the same query as another row
 * (a queue and its caller's membership), so `authorize` does not read it a second time.
 */
export function rememberRole(c: Context<AppEnv>, organizationId: string, membership: Membership | null): void {
  const known = c.get("knownRoles") ?? new Map<string, Membership | null>();
  known.set(organizationId, membership);
  c.set("knownRoles", known);
}

/**
 * The caller inside an organization: the one place where a caller's membership is read. Inside
 * a request whose path resource the guard resolved, in that resource's organization, it is the
 * guard's actor: a member scoped to other locations is an outsider here too (the same 404 as a
 * caller from another organization, issue 31/36), whatever the call site passes.
 */
export async function actorIn(c: Context<AppEnv>, organizationId: string, what = "Organization"): Promise<Actor> {
  return (await memberIn(c, organizationId)) ?? Promise.reject(notFound(what));
}

/**
 * `actorIn` for a caller that may be an outsider: null instead of the 404. The resource guard
 * asks it of every customer's join and ticket read, where throwing (an error and its stack
 * built, then caught) cost 0.3 ms a request (issue 43).
 */
export async function memberIn(c: Context<AppEnv>, organizationId: string): Promise<Actor | null> {
  const p = requireCredential(c);
  const guarded = c.get("guarded");
  if (guarded && guarded.organizationId === organizationId) return guarded.member ?? null;
  if (p.kind === "apiKey") {
    if (p.organizationId !== organizationId) return null;
    return { organizationId, userId: null, apiKeyId: p.keyId, role: null, locationIds: null, can: (perm) => p.permissions.has(perm) };
  }
  const known = c.get("knownRoles");
  const membership = known?.has(organizationId)
    ? (known.get(organizationId) ?? null)
    : await membershipOf(primaryEnv(c), organizationId, p.user.id);
  if (!membership) return null;
  const { role, locationIds } = membership;
  return { organizationId, userId: p.user.id, apiKeyId: null, role, locationIds, can: (perm) => roleAllows(role, perm) };
}

/**
 * The organization of a route with no organization id in its path: the API key's, else the
 * X-Organization-Id header, else the user's only membership (CONTRACT §2), else their chosen default.
 */
export async function organizationOfRequest(c: Context<AppEnv>): Promise<string> {
  const p = requireCredential(c);
  if (p.kind === "apiKey") return p.organizationId;
  const header = c.req.header("X-Organization-Id");
  if (header) {
    if (!isId("org", header)) throw validationError("X-Organization-Id", "not an organization id");
    return header;
  }
  // The only membership, else the user's chosen default (PATCH /v1/auth/me), issue 26.
  const { organizationId, memberships } = await defaultOrganizationOf(database(primaryEnv(c).DB), p.user.id);
  if (organizationId) return organizationId;
  throw validationError(
    "X-Organization-Id",
    memberships === 0
      ? "you are not a member of any organization"
      : "required when you belong to several organizations and have chosen no default (PATCH /v1/auth/me)",
  );
}
