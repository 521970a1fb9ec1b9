import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { createMiddleware } from "hono/factory";
import { and, eq } from "drizzle-orm";
import { database } from "../db/client";
import { members } from "../db/schema";
import { entitlements, type RateLimits } from "../domain/plans";
import { keyPermissions, roleAllows, type Permission, type Role } from "../domain/permissions";
import { now } from "../lib/clock";
import { isId } from "../lib/ids";
import { findApiKey, looksLikeApiKey } from "../services/api-key-auth";
import { findSession, slideSession, type UserRow } from "../services/sessions";
import type { AppEnv } from "./context";
import { ApiError, forbidden, notFound, validationError } from "./errors";

export const SESSION_COOKIE = "service.session_token";

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
      /** A widget key locked to these origins (src/routes/widget.ts widgetOriginLock); null = any. */
      allowedOrigins: string[] | null;
    };

function unauthenticated(message = "Missing or invalid credentials"): ApiError {
  return new ApiError("AUTHENTICATION_ERROR", message);
}

function credentialOf(c: Context<AppEnv>): { type: "apiKey" | "session"; value: string } | null {
  const apiKey = c.req.header("X-API-Key");
  if (apiKey) return { type: "apiKey", value: apiKey.trim() };
  const authorization = c.req.header("Authorization");
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match) throw unauthenticated("Authorization must be 'Bearer <token>'");
    const token = match[1]!;
    return { type: looksLikeApiKey(token) ? "apiKey" : "session", value: token };
  }
  const cookie = getCookie(c, SESSION_COOKIE);
  return cookie ? { type: "session", value: cookie } : null;
}

function isWidgetPath(path: string): boolean {
  return path.startsWith("/v1/widget/") || path === "/v1/embed.js";
}

/**
 * Resolves who is calling. A credential that is present but wrong is refused here, on every
 * route; routes then state what they need (requireUser, authorize).
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const credential = credentialOf(c);
  const db = database(c.env.DB);
  const at = now();
  if (!credential) {
    c.set("principal", { kind: "anonymous" });
  } else if (credential.type === "apiKey") {
    const found = await findApiKey(db, credential.value);
    if (!found) throw unauthenticated("Unknown API key");
    const { key, subscription } = found;
    if (key.revokedAt !== null) throw new ApiError("KEY_REVOKED", "This API key has been revoked");
    const permissions = keyPermissions(key.permissions);
    const widgetOnly = permissions.size === 1 && permissions.has("WIDGET");
    // A widget key is published in web pages: whatever permission a route checks, it may only
    // reach the widget routes.
    if (widgetOnly && !isWidgetPath(c.req.path)) throw forbidden("A widget key may only call the widget routes");
    c.set("principal", {
      kind: "apiKey",
      keyId: key.id,
      organizationId: key.organizationId,
      permissions,
      widgetOnly,
      rate: entitlements(subscription ?? { plan: "starter" }).rate,
      allowedOrigins: key.allowedOrigins ?? null,
    });
  } else {
    if (!credential.value.startsWith("sess_")) throw unauthenticated("Unknown session token");
    const found = await findSession(db, credential.value, at);
    if (found.state === "expired") throw new ApiError("TOKEN_EXPIRED", "The session has expired; log in again");
    if (found.state === "unknown") throw unauthenticated("Unknown session token");
    const expiresAt = await slideSession(db, found, at);
    c.set("principal", { kind: "session", ...found, expiresAt });
  }
  await next();
});

export function requireUser(c: Context<AppEnv>): Extract<Principal, { kind: "session" }> {
  const p = c.get("principal");
  if (p.kind === "session") return p;
  if (p.kind === "apiKey") throw forbidden("This route needs a user session, not an API key");
  throw unauthenticated();
}

export function requireCredential(c: Context<AppEnv>): Exclude<Principal, { kind: "anonymous" }> {
  const p = c.get("principal");
  if (p.kind === "anonymous") throw unauthenticated();
  return p;
}

/** Who acts, inside which organization. */
export interface Actor {
  organizationId: string;
  userId: string | null;
  apiKeyId: string | null;
  role: Role | null;
  can(permission: Permission): boolean;
}

export async function memberRole(env: AppEnv["Bindings"], organizationId: string, userId: string): Promise<Role | null> {
  const row = await database(env.DB)
    .select({ role: members.role })
    .from(members)
    .where(and(eq(members.organizationId, organizationId), eq(members.userId, userId)))
    .get();
  return row?.role ?? null;
}

/**
 * The caller may act in this organization with this permission. A caller outside the
 * organization gets the same 404 as for an id that does not exist (`what` names the resource
 * looked up, message included), so ids of other organizations are never confirmed to exist.
 */
export async function authorize(
  c: Context<AppEnv>,
  organizationId: string,
  permission: Permission,
  what = "Organization",
): Promise<Actor> {
  const actor = await actorIn(c, organizationId, what);
  if (!actor.can(permission)) throw forbidden(`This needs the ${permission} permission`);
  return actor;
}

/**
 * Records the session user's role in an organization, read in the same query as another row
 * (a queue and its caller's membership), so `authorize` does not read it a second time.
 */
export function rememberRole(c: Context<AppEnv>, organizationId: string, role: Role | null): void {
  const known = c.get("knownRoles") ?? new Map<string, Role | null>();
  known.set(organizationId, role);
  c.set("knownRoles", known);
}

export async function actorIn(c: Context<AppEnv>, organizationId: string, what = "Organization"): Promise<Actor> {
  const p = requireCredential(c);
  if (p.kind === "apiKey") {
    if (p.organizationId !== organizationId) throw notFound(what);
    return { organizationId, userId: null, apiKeyId: p.keyId, role: null, can: (perm) => p.permissions.has(perm) };
  }
  const known = c.get("knownRoles");
  const role = known?.has(organizationId) ? (known.get(organizationId) ?? null) : await memberRole(c.env, organizationId, p.user.id);
  if (!role) throw notFound(what);
  return { organizationId, userId: p.user.id, apiKeyId: null, role, can: (perm) => roleAllows(role, perm) };
}

/**
 * The organization of a route with no organization id in its path: the API key's, else the
 * X-Organization-Id header, else the user's only membership (CONTRACT §2).
 */
export async function organizationOfRequest(c: Context<AppEnv>): Promise<string> {
  const p = requireCredential(c);
  if (p.kind === "apiKey") return p.organizationId;
  const header = c.req.header("X-Organization-Id");
  if (header) {
    if (!isId("org", header)) throw validationError("X-Organization-Id", "not an organization id");
    return header;
  }
  const rows = await database(c.env.DB)
    .select({ organizationId: members.organizationId })
    .from(members)
    .where(eq(members.userId, p.user.id))
    .limit(2)
    .all();
  if (rows.length === 1) return rows[0]!.organizationId;
  throw validationError(
    "X-Organization-Id",
    rows.length === 0 ? "you are not a member of any organization" : "required when you belong to several organizations",
  );
}
