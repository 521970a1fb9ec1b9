import { createRoute, z } from "@hono/zod-openapi";
import { clearSessionCookie, requireUser } from "../http/auth";
import { ApiError, forbidden } from "../http/errors";
import { errors, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { beginLoginAttempt, endLoginAttempt } from "../http/rate-limit";
import { outboxSend } from "../providers/outbox";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { DECOY_PASSWORD_HASH, sha256Hex, verifyPassword } from "../lib/crypto";
import { iso } from "../lib/time";
import { revokeSession, slideSession } from "../http/credentials/sessions";
import { deps, type Deps } from "../http/deps";
import { setSessionCookie } from "./session-cookie";
import { enforcedSsoFor } from "./sso";
import { accountByEmail, membershipsOfUser, openSession, registerAccount, userRecord } from "./users";
import { eraseMe, exportMe } from "./me-data";
import { auditOrigin } from "../http/audit-origin";
import { recordSignIn } from "./sign-in-audit";
import { Email, Language, MembershipRecord, PublicLine, SessionRecord, UserRecord } from "../http/schemas";

/** An 8-digit one-time code, mailed to the account past its ceiling of failed sign-ins. */
function signInCode(): string {
  const [n] = crypto.getRandomValues(new Uint32Array(1));
  return String(n! % 100_000_000).padStart(8, "0");
}

/** An e-mail whose organization enforces single sign-on has no password: neither a new one nor a check of one. */
async function refuseEnforcedSso(deps: Deps, email: string): Promise<void> {
  const organizationId = await enforcedSsoFor(deps, email);
  if (!organizationId) return;
  throw new ApiError("SSO_REQUIRED", "Your organization signs you in with its identity provider", {
    field: "email",
    organizationId,
    signInUrl: `/v1/auth/sso/start?email=${encodeURIComponent(email)}`,
  });
}

const app = router();
const tags = ["Session"];

const AuthResult = okEnvelope(z.object({ user: UserRecord, session: SessionRecord }));

const register = createRoute({
  method: "post",
  path: "/auth/register",
  tags,
  summary: "Create an account and log in",
  description:
    "Never reads a credential: a stale or invalid session cookie does not stand in the way of a new account. " +
    "An e-mail whose domain's organization enforces single sign-on is 403 SSO_REQUIRED (`details.signInUrl`).",
  security: SECURITY.none,
  request: {
    body: jsonBody(
      z
        .strictObject({
          email: Email,
          password: z.string().min(10).max(256),
          firstName: PublicLine(100),
          lastName: PublicLine(100),
          accountType: z.enum(["business", "customer"]),
          language: Language.optional(),
        })
        .openapi("RegisterRequest"),
    ),
  },
  responses: { 201: jsonResponse(AuthResult, "Account created; the session cookie is set"), ...errors(409) },
});

app.openapi(register, async (c) => {
  const body = c.req.valid("json");
  await refuseEnforcedSso(deps(c), body.email);
  const { user, session } = await registerAccount(deps(c), body, now());
  setSessionCookie(c, session.token);
  return c.json(ok({ user: userRecord(user), session: { token: session.token, expiresAt: iso(session.expiresAt) } }), 201);
});

const login = createRoute({
  method: "post",
  path: "/auth/login",
  tags,
  summary: "Log in with email and password",
  description:
    "A wrong email and a wrong password get the same answer in about the same time. Failed logins slow the account down (after 3 failures within 15 minutes, a wait of 1 s that doubles with each failure, " +
    "up to 15 minutes) and one address gets at most 10 failures per account in 15 sliding minutes (429 with Retry-After); " +
    "an address with no recent failure for the account is always let through, so guesses from elsewhere never lock its owner out. " +
    "After 40 failures of the account from all addresses in 15 minutes, a sign-in must also carry `challengeCode`, the code e-mailed " +
    "to the account (401 `details.reason: challenge_required`, the password unchecked): the owner still signs in, a guesser cannot go on. " +
    "Never reads a credential: a stale or invalid session cookie does not stand in the way of logging in again. " +
    "An e-mail whose domain's organization enforces single sign-on is 403 SSO_REQUIRED (`details.signInUrl`), the password unchecked.",
  security: SECURITY.none,
  request: {
    body: jsonBody(
      z
        .strictObject({
          email: Email,
          password: z.string().min(1).max(256),
          challengeCode: z
            .string()
            .min(4)
            .max(32)
            .optional()
            .openapi({ description: "The code e-mailed to the account once it had many failed sign-ins (401 reason challenge_required)" }),
        })
        .openapi("LoginRequest"),
    ),
  },
  responses: { 200: jsonResponse(AuthResult, "Logged in; the session cookie is set"), ...errors() },
});

app.openapi(login, async (c) => {
  const { email, password, challengeCode } = c.req.valid("json");
  // Single sign-on enforced for the e-mail's domain: no password is checked (nor counted as a failure).
  await refuseEnforcedSso(deps(c), email);
  const candidate = signInCode();
  const gate = await beginLoginAttempt(c, email, {
    candidateHash: await sha256Hex(candidate),
    givenHash: challengeCode ? await sha256Hex(challengeCode.replace(/\s+/g, "")) : null,
  });
  const d = deps(c);
  if ("challenge" in gate) {
    // Past the account's ceiling of failures: the password is not even checked without the code.
    if (gate.issued) {
      const owner = await accountByEmail(d, email);
      if (owner) {
        outboxSend("email", owner.email, {
          subject: "Your sign-in code",
          text: `Many sign-ins to your account failed recently. To sign in, enter this code with your password: ${candidate} (valid 15 minutes). If it was not you, change your password.`,
        });
      }
    }
    throw new ApiError("AUTHENTICATION_ERROR", "This account had many failed sign-ins: enter the code e-mailed to it with the password", {
      field: "challengeCode",
      reason: "challenge_required",
    });
  }
  const user = await accountByEmail(d, email);
  const valid = await verifyPassword(password, user?.passwordHash ?? DECOY_PASSWORD_HASH);
  await endLoginAttempt(c, email, gate, Boolean(user && valid));
  if (!user || !valid) throw new ApiError("AUTHENTICATION_ERROR", "Invalid email or password");
  const at = now();
  const session = await openSession(d, user.id, at);
  // A console sign-in is in the log of each organization the person works for (docs/security.md).
  await recordSignIn(d, auditOrigin(c, { userId: user.id, apiKeyId: null }), user.id, "password", at);
  setSessionCookie(c, session.token);
  return c.json(ok({ user: userRecord(user), session: { token: session.token, expiresAt: iso(session.expiresAt) } }), 200);
});

const me = createRoute({
  method: "get",
  path: "/auth/me",
  tags,
  summary: "The logged-in user and their memberships",
  security: SECURITY.session,
  responses: {
    200: jsonResponse(okEnvelope(z.object({ user: UserRecord, memberships: z.array(MembershipRecord) })), "The user"),
    ...errors(),
  },
});

app.openapi(me, async (c) => {
  const { user } = requireUser(c);
  return c.json(ok({ user: userRecord(user), memberships: await membershipsOfUser(deps(c), user.id) }), 200);
});

const exportMine = createRoute({
  method: "get",
  path: "/auth/me/export",
  tags,
  summary: "Everything held about the signed-in person (GDPR article 15)",
  description:
    "One JSON document: the account and its preferences, memberships, sessions (times only), invitations to the e-mail, " +
    "notifications, push devices, tickets and appointments under the account, and the audit entries the person made or " +
    "that name them. What an organization holds about a visitor by phone is exported by that organization (docs/personal-data.md).",
  security: SECURITY.session,
  responses: { 200: jsonResponse(okEnvelope(z.record(z.string(), z.unknown())), "The person's data"), ...errors() },
});

app.openapi(exportMine, async (c) => {
  const { user } = requireUser(c);
  return c.json(ok(await exportMe(deps(c), user, now())), 200);
});

const eraseMine = createRoute({
  method: "delete",
  path: "/auth/me",
  tags,
  summary: "Erase the signed-in person's account (GDPR article 17)",
  description:
    "Refused with 409 CONFLICT naming each organization the person is the last owner of (transfer its ownership or delete it first). " +
    "Otherwise memberships, sessions, push devices, notifications and invitations are removed, the account keeps only its id " +
    "(names and e-mail replaced, password unusable: signing in is refused from then on), and each organization the person " +
    "belonged to records `member.erased` in its audit log.",
  security: SECURITY.session,
  responses: {
    200: jsonResponse(okEnvelope(z.object({ erased: z.literal(true), organizationIds: z.array(z.string()) })), "Erased"),
    ...errors(409),
  },
});

app.openapi(eraseMine, async (c) => {
  const { user } = requireUser(c);
  const { organizationIds } = await eraseMe(deps(c), user, auditOrigin(c, { userId: user.id, apiKeyId: null }), now());
  clearSessionCookie(c);
  return c.json(ok({ erased: true as const, organizationIds }), 200);
});

const refresh = createRoute({
  method: "post",
  path: "/auth/session/refresh",
  tags,
  summary: "Keep the session alive",
  description: "Moves the 12-hour idle expiry forward, never past the 30-day absolute lifetime.",
  security: SECURITY.session,
  responses: { 200: jsonResponse(okEnvelope(z.object({ expiresAt: z.string() })), "The new expiry"), ...errors() },
});

app.openapi(refresh, async (c) => {
  const session = requireUser(c);
  const expiresAt = await slideSession(deps(c), session, now(), true);
  return c.json(ok({ expiresAt: iso(expiresAt) }), 200);
});

const logout = createRoute({
  method: "post",
  path: "/auth/logout",
  tags,
  summary: "End the session",
  description:
    "The token stops working at once. The cookie is always cleared: without a valid session (expired, already logged out, " +
    "or none) the answer is the same 200, so a browser can always sign out. An API key gets 403.",
  security: SECURITY.session,
  responses: { 200: jsonResponse(okEnvelope(z.object({ loggedOut: z.literal(true) })), "Logged out"), ...errors() },
});

app.openapi(logout, async (c) => {
  clearSessionCookie(c);
  const p = c.get("principal");
  if (p.kind === "apiKey") throw forbidden("This route needs a user session, not an API key");
  if (p.kind === "session") await revokeSession(deps(c), p.user.id, p.tokenHash, now());
  return c.json(ok({ loggedOut: true as const }), 200);
});

export default app;
