import { and, eq, inArray, lt, ne } from "drizzle-orm";
import { createLocalJWKSet, errors as jose, jwtVerify, type JWTPayload } from "jose";
import { auditInsert, recordAudit } from "../audit/audit";
import { isUniqueViolation } from "../db/errors";
import { members, ssoConnections, ssoDomains, ssoSignIns, users, verifiedDomains } from "../db/schema";
import { changedFields, type AuditOrigin } from "../domain/audit";
import { createSession, type UserRow } from "../http/credentials/sessions";
import { ApiError, conflict, notFound, validationError } from "../http/errors";
import { hashPassword, sha256Hex } from "../lib/crypto";
import { newId, randomString } from "../lib/ids";
import { openSecret, sealSecret } from "../lib/secret-box";
import { iso } from "../lib/time";
import { discoverProvider, exchangeCode, ProviderError, providerKeys, type ProviderMetadata } from "../providers/oidc";
import { publishEvent } from "../webhooks/domain-events";
import { membershipStatement, type GrantableRole } from "./members";
import { changingAccess } from "../http/credentials/access-changes";
import { findUserByEmail } from "./users";
import { locationsOfOrganization } from "../catalog/location-scope";
import { type Deps } from "../http/deps";

// Single sign-on with OpenID Connect (docs/sso.md): the authorization code flow with PKCE
// (S256), a state bound to the browser by a cookie and used once, a nonce in the ID token, and
// the ID token checked against the provider's keys, issuer, audience and expiry with `jose`.
// People whose e-mail domain the organization verified and listed are created or found, made
// members with the connection's default role just in time, and get our ordinary session.

export type SsoConnectionRow = typeof ssoConnections.$inferSelect;

/** A sign-in not back from the provider after 10 minutes is refused. */
export const SIGN_IN_TTL_MS = 10 * 60 * 1000;
/** Signing algorithms accepted on ID tokens: asymmetric only (the client secret never signs). */
const ID_TOKEN_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
/** Leeway for the provider's clock on exp, iat and nbf. */
const CLOCK_TOLERANCE_S = 60;

export type SsoRefusal =
  | "state_invalid"
  | "state_expired"
  | "provider_error"
  | "token_exchange_failed"
  | "signature_invalid"
  | "issuer_mismatch"
  | "audience_mismatch"
  | "token_expired"
  | "token_invalid"
  | "nonce_mismatch"
  | "email_missing"
  | "email_unverified"
  | "domain_not_allowed"
  | "not_configured";

const REFUSAL_TEXT: Record<SsoRefusal, string> = {
  state_invalid: "This sign-in is unknown, was already used, or was started in another browser: start again",
  state_expired: "This sign-in took more than 10 minutes: start again",
  provider_error: "The identity provider refused the sign-in",
  token_exchange_failed: "The identity provider did not accept the authorization code",
  signature_invalid: "The ID token's signature does not match the identity provider's keys",
  issuer_mismatch: "The ID token was issued by another issuer",
  audience_mismatch: "The ID token was issued for another client",
  token_expired: "The ID token has expired",
  token_invalid: "The ID token is not a valid token of this provider",
  nonce_mismatch: "The ID token was not issued for this sign-in (nonce mismatch)",
  email_missing: "The identity provider gave no e-mail address (ask for the email scope)",
  email_unverified: "The identity provider says this e-mail address is not verified",
  domain_not_allowed: "This e-mail domain does not sign in to this organization",
  not_configured: "Single sign-on is no longer configured for this organization",
};

/** A refusal of a sign-in a page started (`returnTo`): the browser goes back to that page with the reason. */
export class SsoPageRefusal extends Error {
  constructor(
    readonly refusal: ApiError,
    readonly returnTo: string,
  ) {
    super(refusal.message);
  }
}

export function ssoRefused(reason: SsoRefusal, details: Record<string, unknown> = {}): ApiError {
  return new ApiError("SSO_FAILED", REFUSAL_TEXT[reason], { reason, ...details });
}

export function ssoRecord(row: SsoConnectionRow, domains: string[]) {
  return {
    issuer: row.issuer,
    clientId: row.clientId,
    clientSecretSet: true as const,
    domains,
    defaultRole: row.defaultRole,
    roleClaim: row.roleClaim ?? null,
    roleMapping: row.roleMapping ?? {},
    defaultLocationIds: row.defaultLocationIds ?? null,
    enforced: row.enforced,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}
export type SsoRecord = ReturnType<typeof ssoRecord>;

async function domainsOf({ db }: Deps, organizationId: string): Promise<string[]> {
  const rows = await db.select({ domain: ssoDomains.domain }).from(ssoDomains).where(eq(ssoDomains.organizationId, organizationId)).all();
  return rows.map((r) => r.domain).sort();
}

export async function findSsoConnection({ db }: Deps, organizationId: string): Promise<SsoConnectionRow | undefined> {
  return db.select().from(ssoConnections).where(eq(ssoConnections.organizationId, organizationId)).get();
}

export async function requireSsoConnection(deps: Deps, organizationId: string): Promise<SsoRecord> {
  const row = await findSsoConnection(deps, organizationId);
  if (!row) throw notFound("Single sign-on configuration");
  return ssoRecord(row, await domainsOf(deps, organizationId));
}

export interface SaveSso {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  domains: string[];
  defaultRole: GrantableRole;
  roleClaim?: string | null;
  roleMapping?: Record<string, GrantableRole>;
  defaultLocationIds?: string[] | null;
  enforced: boolean;
}

/** The fields the audit log compares (the secret shows only that it changed). */
const AUDITED = [
  "issuer",
  "clientId",
  "clientSecret",
  "domains",
  "defaultRole",
  "roleClaim",
  "roleMapping",
  "defaultLocationIds",
  "enforced",
] as const;

/** Roles from the most to the least: a person whose claim maps to several gets the highest. */
const ROLE_RANK: Record<GrantableRole, number> = { admin: 3, manager: 2, operator: 1 };

/**
 * The role and locations of a person who joins by signing in: the highest role their `roleClaim`
 * value(s) map to, else `defaultRole`; managers and operators work at `defaultLocationIds`
 * (admins act on the whole organization).
 */
export function joiningMembership(
  connection: Pick<SsoConnectionRow, "defaultRole" | "roleClaim" | "roleMapping" | "defaultLocationIds">,
  claims: JWTPayload,
): { role: GrantableRole; locationIds: string[] | null; mappedFrom: string | null } {
  let role: GrantableRole = connection.defaultRole;
  let mappedFrom: string | null = null;
  if (connection.roleClaim && connection.roleMapping) {
    const raw = claims[connection.roleClaim];
    const values = (Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === "string");
    let best: GrantableRole | null = null;
    for (const value of values) {
      const mapped = Object.hasOwn(connection.roleMapping, value) ? connection.roleMapping[value] : undefined;
      if (mapped && (!best || ROLE_RANK[mapped] > ROLE_RANK[best])) {
        best = mapped;
        mappedFrom = value;
      }
    }
    if (best) role = best;
  }
  const locationIds = role === "admin" ? null : (connection.defaultLocationIds ?? null);
  return { role, locationIds, mappedFrom };
}

/**
 * Creates or replaces the organization's connection. Every domain must be one the organization
 * verified (GET /v1/business/verification/status) and no other organization's; the issuer's
 * discovery document must answer and name the same issuer. Without `clientSecret` an existing
 * connection keeps its secret.
 */
export async function saveSsoConnection(
  deps: Deps,
  origin: AuditOrigin,
  organizationId: string,
  body: SaveSso,
  at: number,
): Promise<SsoRecord> {
  const { db, env } = deps;
  const domains = [...new Set(body.domains.map((d) => d.toLowerCase().replace(/\.$/, "")))].sort();
  const verified = await db
    .select({ domain: verifiedDomains.domain })
    .from(verifiedDomains)
    .where(
      and(
        eq(verifiedDomains.organizationId, organizationId),
        inArray(verifiedDomains.domain, domains),
        eq(verifiedDomains.status, "verified"),
      ),
    )
    .all();
  const unverified = domains.find((d) => !verified.some((v) => v.domain === d));
  if (unverified)
    throw validationError(
      "domains",
      `${unverified} is not a verified domain of this organization (POST /v1/business/verification/verify)`,
      {
        domain: unverified,
      },
    );
  const taken = await db
    .select({ domain: ssoDomains.domain })
    .from(ssoDomains)
    .where(and(inArray(ssoDomains.domain, domains), ne(ssoDomains.organizationId, organizationId)))
    .get();
  if (taken) throw conflict("domains", `${taken.domain} already signs in through another organization`);
  const roleClaim = body.roleClaim ?? null;
  const roleMapping = body.roleMapping && Object.keys(body.roleMapping).length > 0 ? body.roleMapping : null;
  if (roleMapping && !roleClaim)
    throw validationError("roleClaim", "required with roleMapping: the ID token's claim whose values are mapped");
  if (roleClaim && !roleMapping) throw validationError("roleMapping", "required with roleClaim: which claim value gives which role");
  const defaultLocationIds = body.defaultLocationIds && body.defaultLocationIds.length > 0 ? [...new Set(body.defaultLocationIds)] : null;
  if (defaultLocationIds) {
    const known = await locationsOfOrganization({ db, env }, organizationId, defaultLocationIds);
    const index = defaultLocationIds.findIndex((id) => !known.has(id));
    if (index >= 0) throw validationError(`defaultLocationIds.${index}`, "not a location of this organization");
  }
  const before = await findSsoConnection(deps, organizationId);
  if (!before && body.clientSecret === undefined) throw validationError("clientSecret", "required when single sign-on is first configured");
  try {
    await discoverProvider(env, body.issuer, at, true);
  } catch (err) {
    if (err instanceof ProviderError) throw validationError("issuer", `discovery failed: ${err.reason}`);
    throw err;
  }
  const sealed = body.clientSecret === undefined ? before!.clientSecretSealed : await sealSecret(env, body.clientSecret);
  const row: SsoConnectionRow = {
    organizationId,
    issuer: body.issuer,
    clientId: body.clientId,
    clientSecretSealed: sealed,
    defaultRole: body.defaultRole,
    roleClaim,
    roleMapping,
    defaultLocationIds,
    enforced: body.enforced,
    createdAt: before?.createdAt ?? at,
    updatedAt: at,
  };
  const beforeDomains = before ? await domainsOf(deps, organizationId) : [];
  const view = (r: SsoConnectionRow | undefined, d: string[]) =>
    r
      ? {
          issuer: r.issuer,
          clientId: r.clientId,
          clientSecret: r.clientSecretSealed,
          domains: d,
          defaultRole: r.defaultRole,
          roleClaim: r.roleClaim,
          roleMapping: r.roleMapping,
          defaultLocationIds: r.defaultLocationIds,
          enforced: r.enforced,
        }
      : null;
  const changes = changedFields(view(before, beforeDomains), view(row, domains), AUDITED);
  try {
    await db.batch([
      db
        .insert(ssoConnections)
        .values(row)
        .onConflictDoUpdate({
          target: ssoConnections.organizationId,
          set: {
            issuer: row.issuer,
            clientId: row.clientId,
            clientSecretSealed: row.clientSecretSealed,
            defaultRole: row.defaultRole,
            roleClaim: row.roleClaim,
            roleMapping: row.roleMapping,
            defaultLocationIds: row.defaultLocationIds,
            enforced: row.enforced,
            updatedAt: at,
          },
        }),
      db.delete(ssoDomains).where(eq(ssoDomains.organizationId, organizationId)),
      db.insert(ssoDomains).values(domains.map((domain) => ({ domain, organizationId }))),
      auditInsert(
        deps,
        origin,
        {
          organizationId,
          entityType: "sso_connection",
          entityId: organizationId,
          action: before ? "sso.updated" : "sso.configured",
          changes,
        },
        at,
      ),
    ]);
  } catch (err) {
    if (isUniqueViolation(err, "sso_domains.")) throw conflict("domains", "A domain already signs in through another organization");
    throw err;
  }
  return ssoRecord(row, domains);
}

export async function deleteSsoConnection(deps: Deps, origin: AuditOrigin, organizationId: string, at: number): Promise<void> {
  const { db } = deps;
  const before = await findSsoConnection(deps, organizationId);
  if (!before) throw notFound("Single sign-on configuration");
  await db.batch([
    db.delete(ssoConnections).where(eq(ssoConnections.organizationId, organizationId)),
    db.delete(ssoDomains).where(eq(ssoDomains.organizationId, organizationId)),
    db.delete(ssoSignIns).where(eq(ssoSignIns.organizationId, organizationId)),
    auditInsert(deps, origin, { organizationId, entityType: "sso_connection", entityId: organizationId, action: "sso.deleted" }, at),
  ]);
}

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf("@") + 1).toLowerCase();
}

/** The organization whose enforced single sign-on covers this e-mail, if any: its password is refused. */
export async function enforcedSsoFor({ db }: Deps, email: string): Promise<string | null> {
  const row = await db
    .select({ organizationId: ssoDomains.organizationId })
    .from(ssoDomains)
    .innerJoin(ssoConnections, eq(ssoConnections.organizationId, ssoDomains.organizationId))
    .where(and(eq(ssoDomains.domain, domainOf(email)), eq(ssoConnections.enforced, true)))
    .get();
  return row?.organizationId ?? null;
}

function base64Url(bytes: ArrayBuffer): string {
  let bin = "";
  for (const b of new Uint8Array(bytes)) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

/** Where `GET /v1/auth/sso/start` sends the browser, and the state its cookie must carry back. */
export async function startSignIn(
  deps: Deps,
  by: { organizationId?: string; email?: string },
  redirectUri: string,
  at: number,
  returnTo: string | null = null,
): Promise<{ location: string; state: string; organizationId: string }> {
  const { db, env } = deps;
  let organizationId = by.organizationId;
  if (!organizationId) {
    const row = await db
      .select({ organizationId: ssoDomains.organizationId })
      .from(ssoDomains)
      .where(eq(ssoDomains.domain, domainOf(by.email!)))
      .get();
    if (!row) throw notFound("Single sign-on for this e-mail domain");
    organizationId = row.organizationId;
  }
  const connection = await findSsoConnection(deps, organizationId);
  if (!connection) throw notFound("Single sign-on for this organization");
  let provider: ProviderMetadata;
  try {
    provider = await discoverProvider(env, connection.issuer, at);
  } catch (err) {
    if (err instanceof ProviderError)
      throw new ApiError("PROVIDER_UNAVAILABLE", `The identity provider could not be reached: ${err.reason}`);
    throw err;
  }
  const state = randomString(43);
  const nonce = randomString(43);
  const codeVerifier = randomString(64);
  const challenge = base64Url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(codeVerifier)));
  // Sign-ins never finished are forgotten by the minute cron (purgeExpiredSignIns).
  await db.insert(ssoSignIns).values({
    stateHash: await sha256Hex(state),
    organizationId,
    nonce,
    codeVerifier,
    redirectUri,
    returnTo,
    expiresAt: at + SIGN_IN_TTL_MS,
  });
  const location = new URL(provider.authorizationEndpoint);
  const params: Record<string, string> = {
    response_type: "code",
    client_id: connection.clientId,
    redirect_uri: redirectUri,
    scope: "openid email profile",
    state,
    nonce,
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...(by.email ? { login_hint: by.email } : {}),
  };
  for (const [k, v] of Object.entries(params)) location.searchParams.set(k, v);
  return { location: location.toString(), state, organizationId };
}

export interface Callback {
  state?: string;
  code?: string;
  error?: string;
  /** The state the browser's cookie holds: a callback from another browser is refused. */
  cookieState?: string;
}

/** Checks the ID token with jose: signature (the provider's keys), issuer, audience, expiry; then the nonce. */
async function verifyIdToken({ env }: Deps, provider: ProviderMetadata, clientId: string, idToken: string, nonce: string, at: number) {
  const options = {
    issuer: provider.issuer,
    audience: clientId,
    algorithms: ID_TOKEN_ALGORITHMS,
    currentDate: new Date(at),
    clockTolerance: CLOCK_TOLERANCE_S,
    requiredClaims: ["exp", "iat", "sub"],
  };
  let payload: JWTPayload;
  try {
    try {
      payload = (await jwtVerify(idToken, createLocalJWKSet(await providerKeys(env, provider.jwksUri, at)), options)).payload;
    } catch (err) {
      if (!(err instanceof jose.JWKSNoMatchingKey)) throw err;
      // A key id we do not know: the provider may have rotated its keys since we cached them.
      payload = (await jwtVerify(idToken, createLocalJWKSet(await providerKeys(env, provider.jwksUri, at, true)), options)).payload;
    }
  } catch (err) {
    if (err instanceof ProviderError) throw ssoRefused("provider_error", { error: err.reason });
    if (err instanceof jose.JWTExpired) throw ssoRefused("token_expired");
    if (err instanceof jose.JWSSignatureVerificationFailed || err instanceof jose.JWKSNoMatchingKey) throw ssoRefused("signature_invalid");
    if (err instanceof jose.JWTClaimValidationFailed) {
      if (err.claim === "iss") throw ssoRefused("issuer_mismatch");
      if (err.claim === "aud") throw ssoRefused("audience_mismatch");
      throw ssoRefused("token_invalid", { claim: err.claim });
    }
    if (err instanceof jose.JOSEError) throw ssoRefused("token_invalid");
    throw err;
  }
  // Several audiences: the token must have been issued to us (OpenID Connect Core 3.1.3.7).
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== clientId) throw ssoRefused("audience_mismatch");
  if (payload.nonce !== nonce) throw ssoRefused("nonce_mismatch");
  return payload;
}

function nameParts(claims: JWTPayload, email: string): { firstName: string; lastName: string } {
  const clean = (v: unknown) =>
    typeof v === "string"
      ? v
          .replace(/[\p{Cc}\p{Cf}]/gu, "")
          .trim()
          .slice(0, 100)
      : "";
  let firstName = clean(claims.given_name);
  let lastName = clean(claims.family_name);
  if (!firstName && !lastName) {
    const [first, ...rest] = clean(claims.name).split(/\s+/);
    firstName = first ?? "";
    lastName = rest.join(" ");
  }
  return { firstName: firstName || email.slice(0, email.indexOf("@")).slice(0, 100), lastName };
}

/**
 * Finishes a sign-in: the state is used once (and must match the browser's cookie), the code
 * is exchanged with the PKCE verifier, the ID token checked, and only then is the person found
 * or created and made a member with the default role. A refusal creates nothing.
 */
export async function completeSignIn(
  deps: Deps,
  callback: Callback,
  origin: Omit<AuditOrigin, "actor">,
  at: number,
): Promise<{ user: UserRow; organizationId: string; returnTo: string | null }> {
  const { db } = deps;
  if (!callback.state || !callback.cookieState || callback.state !== callback.cookieState) throw ssoRefused("state_invalid");
  const attempt = await db
    .delete(ssoSignIns)
    .where(eq(ssoSignIns.stateHash, await sha256Hex(callback.state)))
    .returning()
    .get();
  if (!attempt) throw ssoRefused("state_invalid");
  try {
    return { ...(await finishSignIn(deps, callback, origin, attempt, at)), returnTo: attempt.returnTo };
  } catch (err) {
    if (attempt.returnTo && err instanceof ApiError) throw new SsoPageRefusal(err, attempt.returnTo);
    throw err;
  }
}

async function finishSignIn(
  deps: Deps,
  callback: Callback,
  origin: Omit<AuditOrigin, "actor">,
  attempt: typeof ssoSignIns.$inferSelect,
  at: number,
): Promise<{ user: UserRow; organizationId: string }> {
  const { db, env } = deps;
  const organizationId = attempt.organizationId;
  const refuse = async (reason: SsoRefusal, details: Record<string, unknown> = {}): Promise<never> => {
    await recordAudit(
      deps,
      { ...origin, actor: { type: "system", id: null } },
      {
        organizationId,
        entityType: "sso_connection",
        entityId: organizationId,
        action: "sso.sign_in_refused",
        changes: { reason: { before: null, after: reason } },
      },
      at,
    );
    throw ssoRefused(reason, details);
  };
  if (attempt.expiresAt < at) return refuse("state_expired");
  if (callback.error) return refuse("provider_error", { error: callback.error.slice(0, 200) });
  if (!callback.code) throw validationError("code", "required");
  const connection = await findSsoConnection(deps, organizationId);
  if (!connection) throw ssoRefused("not_configured");
  let provider: ProviderMetadata;
  try {
    provider = await discoverProvider(env, connection.issuer, at);
  } catch (err) {
    if (err instanceof ProviderError)
      throw new ApiError("PROVIDER_UNAVAILABLE", `The identity provider could not be reached: ${err.reason}`);
    throw err;
  }
  const exchanged = await exchangeCode(env, provider, {
    code: callback.code,
    codeVerifier: attempt.codeVerifier,
    redirectUri: attempt.redirectUri,
    clientId: connection.clientId,
    clientSecret: await openSecret(env, connection.clientSecretSealed),
  }).catch((err: unknown) => {
    if (err instanceof ProviderError) return { refused: err.reason, status: 0 };
    throw err;
  });
  if ("refused" in exchanged) return refuse("token_exchange_failed", { error: exchanged.refused });
  let claims: JWTPayload;
  try {
    claims = await verifyIdToken(deps, provider, connection.clientId, exchanged.idToken, attempt.nonce, at);
  } catch (err) {
    if (err instanceof ApiError && typeof err.details.reason === "string") return refuse(err.details.reason as SsoRefusal);
    throw err;
  }
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
  if (!/^[^@\s]+@[^@\s]+$/.test(email) || email.length > 254) return refuse("email_missing");
  if (claims.email_verified === false) return refuse("email_unverified");
  const domain = domainOf(email);
  const allowed = await db
    .select({ domain: ssoDomains.domain })
    .from(ssoDomains)
    .where(and(eq(ssoDomains.domain, domain), eq(ssoDomains.organizationId, organizationId)))
    .get();
  if (!allowed) return refuse("domain_not_allowed", { domain });
  const user = await findOrCreateUser(deps, email, claims, at);
  const membership = joiningMembership(connection, claims);
  const joined = await joinJustInTime(deps, { ...origin, actor: { type: "user", id: user.id } }, organizationId, user.id, membership, at);
  await recordAudit(
    deps,
    { ...origin, actor: { type: "user", id: user.id } },
    {
      organizationId,
      entityType: "user",
      entityId: user.id,
      action: "sso.signed_in",
      changes: { issuer: { before: null, after: connection.issuer } },
    },
    at,
  );
  if (joined) {
    await publishEvent(deps, {
      id: newId("evt"),
      type: "member.joined",
      organizationId,
      queueId: null,
      ticketId: null,
      occurredAt: iso(at),
      data: { userId: user.id, role: membership.role, addedBy: null, via: "sso" },
    });
  }
  return { user, organizationId };
}

async function findOrCreateUser(deps: Deps, email: string, claims: JWTPayload, at: number): Promise<UserRow> {
  const { db } = deps;
  const existing = await findUserByEmail(deps, email);
  if (existing) return existing;
  const user = {
    id: newId("usr"),
    email,
    // No password signs in to this account (a random one nobody knows); the owner may set one by a reset.
    passwordHash: await hashPassword(randomString(40)),
    ...nameParts(claims, email),
    accountType: "business" as const,
    role: "user" as const,
    language:
      claims.locale === "fr" || (typeof claims.locale === "string" && claims.locale.startsWith("fr-")) ? ("fr" as const) : ("en" as const),
    smsNotifications: true,
    ticketReminders: true,
    createdAt: at,
    updatedAt: at,
    defaultOrganizationId: null,
  };
  try {
    await db.insert(users).values(user);
  } catch (err) {
    // Two first sign-ins at once: the other one created the account.
    if (String(err).includes("UNIQUE")) return (await findUserByEmail(deps, email))!;
    throw err;
  }
  return user as UserRow;
}

/** Makes the person a member with the default role unless they already are one; answers whether they joined. */
async function joinJustInTime(
  deps: Deps,
  origin: AuditOrigin,
  organizationId: string,
  userId: string,
  membership: { role: GrantableRole; locationIds: string[] | null; mappedFrom: string | null },
  at: number,
): Promise<boolean> {
  const { db, env } = deps;
  const { role, locationIds, mappedFrom } = membership;
  const member = await db
    .select({ role: members.role })
    .from(members)
    .where(and(eq(members.organizationId, organizationId), eq(members.userId, userId)))
    .get();
  if (member) return false;
  try {
    await changingAccess(env, [userId], () =>
      db.batch([
        membershipStatement(deps, { kind: "grant", organizationId, userId, role, at, locationIds }),
        auditInsert(
          deps,
          origin,
          {
            organizationId,
            entityType: "member",
            entityId: userId,
            action: "member.joined",
            changes: {
              role: { before: null, after: role },
              via: { before: null, after: "sso" },
              ...(mappedFrom ? { roleClaimValue: { before: null, after: mappedFrom } } : {}),
              ...(locationIds ? { locationIds: { before: null, after: locationIds } } : {}),
            },
          },
          at,
        ),
      ]),
    );
  } catch (err) {
    if (isUniqueViolation(err, "members.")) return false;
    throw err;
  }
  return true;
}

/** Expired sign-ins deleted per sweep; a backlog drains over the next minutes. */
const SIGN_IN_PURGE_LIMIT = 1000;

/**
 * The minute cron: sign-ins started and never finished (or refused) are deleted once expired,
 * with their nonce and PKCE verifier. Answers how many were deleted.
 */
export async function purgeExpiredSignIns({ db }: Deps, at: number): Promise<number> {
  const expired = db
    .select({ stateHash: ssoSignIns.stateHash })
    .from(ssoSignIns)
    .where(lt(ssoSignIns.expiresAt, at))
    .limit(SIGN_IN_PURGE_LIMIT);
  const deleted = await db.delete(ssoSignIns).where(inArray(ssoSignIns.stateHash, expired)).returning({ stateHash: ssoSignIns.stateHash });
  return deleted.length;
}

/** Our session for a person the provider vouched for: the same one a password login issues. */
export function sessionForSignIn({ db, env }: Deps, userId: string, at: number) {
  return createSession(db, env, userId, at);
}
