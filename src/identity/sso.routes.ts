import { createRoute, z } from "@hono/zod-openapi";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { auditOrigin } from "../http/audit-origin";
import { authorize } from "../http/auth";
import { ApiError, validationError } from "../http/errors";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { clientIp } from "../http/rate-limit";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { Email, SessionRecord, UserRecord } from "../http/schemas";
import { now } from "../lib/clock";
import { iso } from "../lib/time";
import { setSessionCookie } from "./session-cookie";
import {
  completeSignIn,
  deleteSsoConnection,
  requireSsoConnection,
  saveSsoConnection,
  sessionForSignIn,
  SIGN_IN_TTL_MS,
  SsoPageRefusal,
  startSignIn,
} from "./sso";
import { userRecord } from "./users";
import { deps } from "../http/deps";

// Single sign-on with OpenID Connect (docs/sso.md): the organization's connection (ORG_MANAGE)
// and the two legs of the browser's round trip through the identity provider.

const app = router();
const tags = ["Single sign-on"];

/** Holds the state between start and callback, only on the callback's path: a callback in another browser is refused. */
export const SSO_STATE_COOKIE = "service.sso_state";
const CALLBACK_PATH = "/v1/auth/sso/callback";

const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .min(3)
  .max(253)
  .regex(/^(?=.{3,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "a domain name such as example.com")
  .openapi({ example: "demo-bank.example.com" });

const SsoRecord = z
  .object({
    issuer: z.string().openapi({ example: "https://login.demo-bank.example.com" }),
    clientId: z.string().openapi({ example: "queue-service" }),
    clientSecretSet: z.literal(true).openapi({ description: "The client secret is kept sealed and never read back" }),
    domains: z.array(z.string()),
    defaultRole: z.enum(["admin", "manager", "operator"]),
    roleClaim: z.string().nullable().openapi({ example: "groups" }),
    roleMapping: z.record(z.string(), z.enum(["admin", "manager", "operator"])).openapi({ example: { "queue-admins": "admin" } }),
    defaultLocationIds: z.array(z.string()).nullable(),
    enforced: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("SsoConnection");

const SaveBody = z
  .strictObject({
    issuer: z
      .url({ protocol: /^https$/ })
      .max(500)
      .openapi({
        description: "The provider's issuer: `{issuer}/.well-known/openid-configuration` must answer and name exactly this issuer",
        example: "https://login.demo-bank.example.com",
      }),
    clientId: z.string().trim().min(1).max(255).openapi({ example: "queue-service" }),
    clientSecret: z.string().min(1).max(1000).optional().openapi({
      description: "Required the first time; left out, the current secret is kept. Sealed at rest, never returned",
      example: "s3cr3t-from-the-provider",
    }),
    domains: z.array(Domain).min(1).max(20).openapi({
      description: "E-mail domains that sign in here; each must be a domain the organization verified, and no other organization's",
    }),
    defaultRole: z
      .enum(["admin", "manager", "operator"])
      .default("operator")
      .openapi({ description: "The role of people who join by signing in, when `roleMapping` gives none" }),
    roleClaim: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .nullable()
      .optional()
      .openapi({ description: "The ID token's claim (a string or a list of strings) whose values `roleMapping` maps", example: "groups" }),
    roleMapping: z
      .record(z.string().min(1).max(200), z.enum(["admin", "manager", "operator"]))
      .refine((m) => Object.keys(m).length <= 50, { message: "at most 50 values" })
      .optional()
      .openapi({
        description: "Claim value → role of a person who joins; several values: the highest role. Needs `roleClaim`",
        example: { "queue-admins": "admin", "branch-managers": "manager" },
      }),
    defaultLocationIds: z
      .array(z.string().min(1).max(64))
      .max(100)
      .nullable()
      .optional()
      .openapi({ description: "Locations of this organization where managers and operators who join work; none: the whole organization" }),
    enforced: z
      .boolean()
      .default(false)
      .openapi({ description: "Refuse password sign-in (403 SSO_REQUIRED) for e-mails of these domains" }),
  })
  .openapi("SaveSsoConnectionRequest");

const OrgParam = idParam("organizationId", "org");

/** A page of this service the browser comes back to (a path, never another site: no open redirect). */
const ReturnTo = z
  .string()
  .max(512)
  .regex(/^\/(?![\/\\])[^\s]*$/, "a path of this service, such as /console")
  .openapi({
    description:
      "A page of this service (a path) to come back to: signed in, the callback answers 303 to it; refused, 303 to it with `?sso_error={reason}`",
    example: "/console",
  });

/** `returnTo` with `sso_error` added, as the page reads it back. */
function withError(returnTo: string, reason: string): string {
  const url = new URL(returnTo, "https://x.invalid");
  url.searchParams.set("sso_error", reason);
  return `${url.pathname}${url.search}${url.hash}`;
}
const path = "/organizations/{organizationId}/sso";

app.openapi(
  createRoute({
    method: "get",
    path,
    tags,
    summary: "The organization's single sign-on configuration (ORG_MANAGE); 404 when none",
    security: SECURITY.any,
    request: { params: OrgParam },
    responses: { 200: jsonResponse(okEnvelope(SsoRecord), "The configuration"), ...errors() },
  }),
  async (c) => {
    const { organizationId } = c.req.valid("param");
    await authorize(c, organizationId, "ORG_MANAGE");
    return c.json(ok(await requireSsoConnection(deps(c), organizationId)), 200);
  },
);

app.openapi(
  createRoute({
    method: "put",
    path,
    tags,
    summary: "Configure or replace the organization's OpenID Connect single sign-on (ORG_MANAGE, owner and admin)",
    description:
      "Fetches the issuer's discovery document through the outbound guard (400 on `issuer` when it does not answer or names another issuer). " +
      "A domain the organization has not verified is 400 on `domains`; one another organization signs in with is 409 CONFLICT. " +
      "Register `{origin}/v1/auth/sso/callback` as the redirect URI at the provider. Audited (`sso.configured`, `sso.updated`; the secret redacted).",
    security: SECURITY.any,
    request: { params: OrgParam, body: jsonBody(SaveBody) },
    responses: { 200: jsonResponse(okEnvelope(SsoRecord), "The configuration in force"), ...errors(409) },
  }),
  async (c) => {
    const { organizationId } = c.req.valid("param");
    const origin = auditOrigin(c, await authorize(c, organizationId, "ORG_MANAGE"));
    return c.json(ok(await saveSsoConnection(deps(c), origin, organizationId, c.req.valid("json"), now())), 200);
  },
);

app.openapi(
  createRoute({
    method: "delete",
    path,
    tags,
    summary: "Remove the organization's single sign-on (ORG_MANAGE); members keep their accounts",
    security: SECURITY.any,
    request: { params: OrgParam },
    responses: { 200: jsonResponse(okEnvelope(z.object({ deleted: z.literal(true) })), "Removed"), ...errors() },
  }),
  async (c) => {
    const { organizationId } = c.req.valid("param");
    const origin = auditOrigin(c, await authorize(c, organizationId, "ORG_MANAGE"));
    await deleteSsoConnection(deps(c), origin, organizationId, now());
    return c.json(ok({ deleted: true as const }), 200);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: "/auth/sso/start",
    tags,
    summary: "Begin signing in with the organization's identity provider (a browser redirect)",
    description:
      "Name the organization, or give the person's e-mail and its domain finds the organization. Answers 302 to the provider's " +
      "authorization endpoint with `state`, `nonce` and a PKCE challenge (S256), and sets a cookie holding the state for the callback " +
      "(10 minutes). 404 when no single sign-on covers the organization or domain.",
    security: SECURITY.none,
    request: {
      query: z
        .object({
          organization: z.string().min(1).max(64).optional().openapi({ example: "org_d3m0bank000000000000" }),
          email: Email.optional().openapi({ example: "aya@demo-bank.example.com" }),
          returnTo: ReturnTo.optional(),
        })
        .refine((q) => Boolean(q.organization) !== Boolean(q.email), {
          message: "give exactly one of organization or email",
          path: ["organization"],
        }),
    },
    responses: {
      302: { description: "To the identity provider", headers: { Location: { schema: { type: "string" } } } },
      303: {
        description: "With `returnTo`: back to that page with `?sso_error=not_configured|provider_unavailable` instead of a 404 or 503",
        headers: { Location: { schema: { type: "string" } } },
      },
      ...errors(503),
    },
  }),
  async (c) => {
    const { organization, email, returnTo } = c.req.valid("query");
    const redirectUri = new URL(CALLBACK_PATH, c.req.url).toString();
    let started: Awaited<ReturnType<typeof startSignIn>>;
    try {
      started = await startSignIn(deps(c), { organizationId: organization, email }, redirectUri, now(), returnTo ?? null);
    } catch (err) {
      // A page's button: the browser goes back to the page, which says why, rather than to a JSON error.
      if (returnTo && err instanceof ApiError && (err.code === "NOT_FOUND" || err.code === "PROVIDER_UNAVAILABLE"))
        return c.redirect(withError(returnTo, err.code === "NOT_FOUND" ? "not_configured" : "provider_unavailable"), 303) as never;
      throw err;
    }
    setCookie(c, SSO_STATE_COOKIE, started.state, {
      httpOnly: true,
      secure: true,
      sameSite: "Lax",
      path: CALLBACK_PATH,
      maxAge: SIGN_IN_TTL_MS / 1000,
    });
    return c.redirect(started.location, 302) as never;
  },
);

const AuthResult = okEnvelope(z.object({ user: UserRecord, session: SessionRecord, organizationId: z.string() }));

app.openapi(
  createRoute({
    method: "get",
    path: "/auth/sso/callback",
    tags,
    summary: "Where the identity provider sends the browser back: signs in as a password login would",
    description:
      "The state must be the one this browser started with (its cookie), unused and under 10 minutes old. The code is exchanged " +
      "with the PKCE verifier and the client's credentials; the ID token must be signed by one of the provider's keys (JWKS) and " +
      "carry its issuer, our client id as audience, an expiry not past and the sign-in's nonce. A person whose e-mail domain is one " +
      "of the connection's is found or created and joins the organization with the default role (`member.joined`). Any refusal is " +
      "401 SSO_FAILED with `details.reason` (state_invalid, state_expired, provider_error, token_exchange_failed, signature_invalid, " +
      "issuer_mismatch, audience_mismatch, token_expired, token_invalid, nonce_mismatch, email_missing, email_unverified, " +
      "domain_not_allowed) and creates nothing. Sets the session cookie and answers the session, as POST /v1/auth/login does.",
    security: SECURITY.none,
    request: {
      query: z.object({
        code: z.string().max(4096).optional(),
        state: z.string().max(256).optional(),
        error: z.string().max(256).optional(),
        error_description: z.string().max(1024).optional(),
      }),
    },
    responses: {
      200: jsonResponse(AuthResult, "Signed in; the session cookie is set"),
      303: {
        description:
          "A sign-in started with `returnTo`: signed in (the session cookie is set), back to that page; refused, back to it with `?sso_error={reason}`",
        headers: { Location: { schema: { type: "string" } } },
      },
      ...errors(503),
    },
  }),
  async (c) => {
    const query = c.req.valid("query");
    const cookieState = getCookie(c, SSO_STATE_COOKIE);
    // The state is good for one try, whatever its outcome: the browser forgets it too.
    deleteCookie(c, SSO_STATE_COOKIE, { path: CALLBACK_PATH, secure: true, httpOnly: true, sameSite: "Lax" });
    if (!query.state) throw validationError("state", "required");
    const ip = clientIp(c);
    const at = now();
    let signedIn: Awaited<ReturnType<typeof completeSignIn>>;
    try {
      signedIn = await completeSignIn(
        deps(c),
        { state: query.state, code: query.code, error: query.error, cookieState },
        { ip: ip === "unknown" ? null : ip, requestId: c.get("requestId") ?? null },
        at,
      );
    } catch (err) {
      if (err instanceof SsoPageRefusal) {
        const reason = typeof err.refusal.details.reason === "string" ? err.refusal.details.reason : err.refusal.code.toLowerCase();
        return c.redirect(withError(err.returnTo, reason), 303) as never;
      }
      throw err;
    }
    const { user, organizationId, returnTo } = signedIn;
    const session = await sessionForSignIn(deps(c), user.id, at);
    setSessionCookie(c, session.token);
    if (returnTo) return c.redirect(returnTo, 303) as never;
    return c.json(
      ok({ user: userRecord(user), session: { token: session.token, expiresAt: iso(session.expiresAt) }, organizationId }),
      200,
    );
  },
);

export default app;
