import { createScheduledController, env } from "cloudflare:test";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from "jose";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk, fetchWorker, unique } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { addMember, createOrganization, registerUser, type TestUser } from "../helpers/fixtures";
import { fakeInternet, type FakeInternet } from "../helpers/outbound";
import { now } from "../../src/lib/clock";
import worker from "../../src/index";

// Single sign-on through HTTP against a stand-in identity provider: its discovery document, key
// set and token endpoint are served through the fetch interception, its RSA key made here with
// jose. The test plays the browser: it follows the start redirect, "authenticates" at the
// provider (a code bound to the request's nonce and PKCE challenge), and comes back to the callback.

afterEach(() => {
  vi.restoreAllMocks();
  testClock.reset();
});

const IDP_HOST = "login.idp-stand-in.com";
const ISSUER = `https://${IDP_HOST}`;
const CLIENT_ID = "queue-service";
const CLIENT_SECRET = "s3cr3t with spaces & symbols";
const KID = "key-1";

let owner: TestUser;
let orgId: string;
let domain: string;
let verificationToken: string;
let signingKey: CryptoKey;
let otherKey: CryptoKey;
let publicJwk: Record<string, unknown>;

interface Grant {
  /** The authorization request's parameters, as the browser brought them to the provider. */
  request: URLSearchParams;
  claims: JWTPayload;
  key?: CryptoKey;
}

interface Idp {
  net: FakeInternet;
  grants: Map<string, Grant>;
  /** Every token request the provider received: its headers and form. */
  tokenRequests: { authorization: string | null; form: URLSearchParams }[];
}

async function s256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return btoa(String.fromCharCode(...digest))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replaceAll("=", "");
}

/** The outside world of these tests: the organization's domain (verification TXT) and the provider. */
function standInProvider(): Idp {
  const idp: Idp = { net: undefined as never, grants: new Map(), tokenRequests: [] };
  idp.net = fakeInternet(
    { [IDP_HOST]: { A: ["93.184.216.34"] }, [domain]: { TXT: [`"service-verification=${verificationToken}"`] } },
    {
      [`${ISSUER}/.well-known/openid-configuration`]: () =>
        Response.json({
          issuer: ISSUER,
          authorization_endpoint: `${ISSUER}/authorize`,
          token_endpoint: `${ISSUER}/token`,
          jwks_uri: `${ISSUER}/jwks`,
          response_types_supported: ["code"],
          id_token_signing_alg_values_supported: ["RS256"],
          token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
        }),
      [`${ISSUER}/jwks`]: () => Response.json({ keys: [publicJwk] }),
      [`${ISSUER}/token`]: async (request) => {
        const form = new URLSearchParams(await request.text());
        idp.tokenRequests.push({ authorization: request.headers.get("Authorization"), form });
        const grant = idp.grants.get(form.get("code") ?? "");
        if (!grant) return Response.json({ error: "invalid_grant" }, { status: 400 });
        idp.grants.delete(form.get("code")!);
        // A real provider checks PKCE and the redirect URI: so does the stand-in.
        if ((await s256(form.get("code_verifier") ?? "")) !== grant.request.get("code_challenge"))
          return Response.json({ error: "invalid_grant" }, { status: 400 });
        if (form.get("redirect_uri") !== grant.request.get("redirect_uri"))
          return Response.json({ error: "invalid_grant" }, { status: 400 });
        const idToken = await new SignJWT(grant.claims).setProtectedHeader({ alg: "RS256", kid: KID }).sign(grant.key ?? signingKey);
        return Response.json({ access_token: "at", token_type: "Bearer", expires_in: 3600, id_token: idToken });
      },
    },
  );
  return idp;
}

async function verifyDomain(): Promise<void> {
  const res = await call("POST", "/v1/business/verification/verify", {
    token: owner.token,
    headers: { "X-Organization-Id": orgId },
    body: { domain, method: "dns" },
  });
  expect(expectOk(res).status).toBe("verified");
}

function configure(body: Record<string, unknown> = {}, token = owner.token) {
  return call("PUT", `/v1/organizations/${orgId}/sso`, {
    token,
    body: { issuer: ISSUER, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, domains: [domain], defaultRole: "operator", ...body },
  });
}

async function start(query: string): Promise<{ request: URLSearchParams; location: URL; cookie: string }> {
  const res = await fetchWorker(`/v1/auth/sso/start?${query}`, { redirect: "manual" });
  expect(res.status, await res.clone().text()).toBe(302);
  const location = new URL(res.headers.get("Location")!);
  const cookie = /service\.sso_state=([^;]+)/.exec(res.headers.get("Set-Cookie") ?? "")?.[1] ?? "";
  return { request: location.searchParams, location, cookie };
}

/** The claims a good ID token for this sign-in carries; `overrides` replaces any of them (undefined removes it). */
function claimsFor(request: URLSearchParams, email: string, overrides: JWTPayload = {}): JWTPayload {
  const at = Math.floor(now() / 1000);
  const claims: JWTPayload = {
    iss: ISSUER,
    sub: `sub-${email}`,
    aud: CLIENT_ID,
    iat: at,
    exp: at + 300,
    nonce: request.get("nonce")!,
    email,
    email_verified: true,
    given_name: "Aya",
    family_name: "Koné",
    ...overrides,
  };
  for (const [k, v] of Object.entries(claims)) if (v === undefined) delete claims[k];
  return claims;
}

/** The whole round trip: start, the provider's grant, the callback with the browser's cookie. */
async function signIn(
  idp: Idp,
  email: string,
  options: { overrides?: JWTPayload; key?: CryptoKey; cookie?: string; state?: string; beforeCallback?: () => void } = {},
) {
  const started = await start(`email=${encodeURIComponent(email)}`);
  const code = unique("code");
  idp.grants.set(code, { request: started.request, claims: claimsFor(started.request, email, options.overrides), key: options.key });
  options.beforeCallback?.();
  const state = options.state ?? started.request.get("state")!;
  const res = await call("GET", `/v1/auth/sso/callback?code=${code}&state=${encodeURIComponent(state)}`, {
    headers: { Cookie: `service.sso_state=${options.cookie ?? started.cookie}` },
  });
  return { res, started, code, state };
}

async function usersWithEmail(email: string): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM users WHERE email = ?").bind(email).first<{ n: number }>())!.n;
}

async function auditActions(): Promise<string[]> {
  const rows = await env.DB.prepare("SELECT action FROM audit_events WHERE organization_id = ? ORDER BY rowid")
    .bind(orgId)
    .all<{ action: string }>();
  return rows.results.map((r) => r.action);
}

beforeAll(async () => {
  owner = await registerUser();
  orgId = (await createOrganization(owner)).id;
  domain = `${unique("corp")}.com`;
  const generated = await call("POST", "/v1/business/verification/generate-token", {
    token: owner.token,
    headers: { "X-Organization-Id": orgId },
  });
  verificationToken = expectOk(generated, 201).token;
  const pair = await generateKeyPair("RS256", { extractable: true });
  signingKey = pair.privateKey;
  otherKey = (await generateKeyPair("RS256")).privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: KID, alg: "RS256", use: "sig" };
});

describe("the organization's configuration", () => {
  it("refuses a domain the organization has not verified, then keeps the secret sealed and never returns it", async () => {
    standInProvider();
    expectError(await call("GET", `/v1/organizations/${orgId}/sso`, { token: owner.token }), 404, "NOT_FOUND");
    expectError(await configure(), 400, "VALIDATION_ERROR", "domains");
    await verifyDomain();
    expectError(await configure({ issuer: "https://other-issuer.com" }), 400, "VALIDATION_ERROR", "issuer");
    expectError(await configure({ clientSecret: undefined }), 400, "VALIDATION_ERROR", "clientSecret");

    const saved = expectOk(await configure());
    expect(saved).toMatchObject({
      issuer: ISSUER,
      clientId: CLIENT_ID,
      clientSecretSet: true,
      domains: [domain],
      defaultRole: "operator",
      enforced: false,
    });
    expect(JSON.stringify(saved)).not.toContain(CLIENT_SECRET);
    const read = expectOk(await call("GET", `/v1/organizations/${orgId}/sso`, { token: owner.token }));
    expect(JSON.stringify(read)).not.toContain(CLIENT_SECRET);
    const stored = await env.DB.prepare("SELECT client_secret_sealed AS s FROM sso_connections WHERE organization_id = ?")
      .bind(orgId)
      .first<{ s: string }>();
    expect(stored!.s).toMatch(/^sbx1\./);
    expect(stored!.s).not.toContain("s3cr3t");

    // Left out, the secret is kept; the change is audited with the secret redacted.
    expectOk(await configure({ clientSecret: undefined, defaultRole: "manager" }));
    expectOk(await configure({ defaultRole: "operator" }));
    const entries = await env.DB.prepare(
      "SELECT action, changes FROM audit_events WHERE organization_id = ? AND entity_type = 'sso_connection'",
    )
      .bind(orgId)
      .all<{ action: string; changes: string }>();
    expect(entries.results.map((e) => e.action)).toEqual(["sso.configured", "sso.updated", "sso.updated"]);
    expect(entries.results.map((e) => e.changes).join()).not.toContain("s3cr3t");
    expect(JSON.parse(entries.results[0]!.changes).clientSecret).toEqual({ before: null, after: "[redacted]" });
  });

  it("is for owners and admins only, and a domain signs in through one organization", async () => {
    standInProvider();
    const operator = await addMember(owner, orgId, "operator");
    expectError(await configure({}, operator.token), 403, "AUTHORIZATION_ERROR");
    expectError(await call("GET", `/v1/organizations/${orgId}/sso`, { token: operator.token }), 403, "AUTHORIZATION_ERROR");
    const stranger = await registerUser();
    expectError(await call("GET", `/v1/organizations/${orgId}/sso`, { token: stranger.token }), 404, "NOT_FOUND");
  });
});

describe("signing in", () => {
  it("redirects with state, nonce and PKCE, exchanges the code with the verifier and client auth, and joins a new person just in time", async () => {
    const idp = standInProvider();
    const email = `${unique("aya")}@${domain}`;
    const { res, started, code } = await signIn(idp, email);

    expect(`${started.location.origin}${started.location.pathname}`).toBe(`${ISSUER}/authorize`);
    expect(started.request.get("response_type")).toBe("code");
    expect(started.request.get("client_id")).toBe(CLIENT_ID);
    expect(started.request.get("redirect_uri")).toBe("https://api.test/v1/auth/sso/callback");
    expect(started.request.get("scope")).toBe("openid email profile");
    expect(started.request.get("code_challenge_method")).toBe("S256");
    expect(started.request.get("state")!.length).toBeGreaterThanOrEqual(32);
    expect(started.request.get("nonce")!.length).toBeGreaterThanOrEqual(32);
    expect(started.request.get("login_hint")).toBe(email);
    expect(started.cookie).toBe(started.request.get("state"));

    const data = expectOk(res);
    expect(data.user).toMatchObject({ email, firstName: "Aya", lastName: "Koné", accountType: "business" });
    expect(data.organizationId).toBe(orgId);
    expect(res.headers.get("Set-Cookie")).toContain(`service.session_token=${data.session.token}`);

    // What the provider received at its token endpoint.
    expect(idp.tokenRequests).toHaveLength(1);
    const [exchange] = idp.tokenRequests;
    expect(exchange!.form.get("grant_type")).toBe("authorization_code");
    expect(exchange!.form.get("code")).toBe(code);
    expect(exchange!.form.get("redirect_uri")).toBe("https://api.test/v1/auth/sso/callback");
    expect(await s256(exchange!.form.get("code_verifier")!)).toBe(started.request.get("code_challenge"));
    expect(exchange!.form.get("client_secret")).toBeNull();
    const basic = `${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET).replace(/%20/g, "+")}`;
    expect(exchange!.authorization).toBe(`Basic ${btoa(basic)}`);

    // Our session, as a password login gives it: the person is a member with the default role.
    const me = expectOk(await call("GET", "/v1/auth/me", { token: data.session.token }));
    expect(me.memberships).toEqual([{ organizationId: orgId, role: "operator", locationIds: null }]);
    const actions = await auditActions();
    expect(actions.slice(-2)).toEqual(["member.joined", "sso.signed_in"]);
  });

  it("finds an existing account and keeps its role; one `start` by organization works too", async () => {
    const idp = standInProvider();
    const manager = await registerUser({ email: `${unique("mgr")}@${domain}` });
    // The password still works while SSO is not enforced.
    expect((await call("POST", "/v1/auth/login", { body: { email: manager.email, password: "correct horse battery" } })).status).toBe(200);
    const first = expectOk((await signIn(idp, manager.email)).res);
    expect(first.user.id).toBe(manager.id);
    await call("PATCH", `/v1/organizations/${orgId}/members/${manager.id}`, { token: owner.token, body: { role: "manager" } });
    const again = expectOk((await signIn(idp, manager.email)).res);
    expect(again.user.id).toBe(manager.id);
    const me = expectOk(await call("GET", "/v1/auth/me", { token: again.session.token }));
    expect(me.memberships).toEqual([{ organizationId: orgId, role: "manager", locationIds: null }]);
    const byOrg = await start(`organization=${orgId}`);
    expect(byOrg.request.get("client_id")).toBe(CLIENT_ID);
    expect(byOrg.request.get("login_hint")).toBeNull();
  });

  const refusals: [string, (email: string) => Parameters<typeof signIn>[2], string][] = [
    ["a state that is not this browser's", () => ({ cookie: "another-browsers-state" }), "state_invalid"],
    ["an unknown state", () => ({ state: "x".repeat(43), cookie: "x".repeat(43) }), "state_invalid"],
    ["a token signed by another key", () => ({ key: otherKey }), "signature_invalid"],
    ["a token for another audience", () => ({ overrides: { aud: "someone-else" } }), "audience_mismatch"],
    ["a token of another issuer", () => ({ overrides: { iss: "https://evil.example.net" } }), "issuer_mismatch"],
    [
      "an expired token",
      () => ({ overrides: { exp: Math.floor(now() / 1000) - 120, iat: Math.floor(now() / 1000) - 600 } }),
      "token_expired",
    ],
    ["a token of another sign-in (nonce)", () => ({ overrides: { nonce: "n".repeat(43) } }), "nonce_mismatch"],
    ["an unverified e-mail", () => ({ overrides: { email_verified: false } }), "email_unverified"],
    ["a sign-in older than 10 minutes", () => ({ beforeCallback: () => testClock.advance(11 * 60 * 1000) }), "state_expired"],
  ];

  for (const [what, options, reason] of refusals) {
    it(`refuses ${what} (${reason}) and creates nothing`, async () => {
      const idp = standInProvider();
      const email = `${unique("refused")}@${domain}`;
      const { res } = await signIn(idp, email, options(email));
      expectError(res, 401, "SSO_FAILED");
      expect(res.body.error.details.reason).toBe(reason);
      expect(res.headers.get("Set-Cookie") ?? "").not.toContain("service.session_token=sess");
      expect(await usersWithEmail(email)).toBe(0);
    });
  }

  it("refuses an e-mail whose domain is not the connection's, and creates nothing", async () => {
    const idp = standInProvider();
    const started = await start(`organization=${orgId}`);
    const email = `${unique("outsider")}@elsewhere.com`;
    const code = unique("code");
    idp.grants.set(code, { request: started.request, claims: claimsFor(started.request, email) });
    const res = await call("GET", `/v1/auth/sso/callback?code=${code}&state=${started.request.get("state")}`, {
      headers: { Cookie: `service.sso_state=${started.cookie}` },
    });
    expectError(res, 401, "SSO_FAILED");
    expect(res.body.error.details).toMatchObject({ reason: "domain_not_allowed", domain: "elsewhere.com" });
    expect(await usersWithEmail(email)).toBe(0);
    expect((await auditActions()).at(-1)).toBe("sso.sign_in_refused");
  });

  it("uses a state once: the same callback replayed is refused", async () => {
    const idp = standInProvider();
    const email = `${unique("replay")}@${domain}`;
    const { res, started, code, state } = await signIn(idp, email);
    expectOk(res);
    idp.grants.set(code, { request: started.request, claims: claimsFor(started.request, email) });
    const replay = await call("GET", `/v1/auth/sso/callback?code=${code}&state=${state}`, {
      headers: { Cookie: `service.sso_state=${state}` },
    });
    expectError(replay, 401, "SSO_FAILED");
    expect(replay.body.error.details.reason).toBe("state_invalid");
    expect(idp.tokenRequests).toHaveLength(1);
  });

  it("maps the role claim to the highest role it names, and managers and operators who join work at the default locations", async () => {
    const idp = standInProvider();
    const location = expectOk(
      await call("POST", "/v1/locations", {
        token: owner.token,
        body: { organizationId: orgId, name: "Agence SSO", address: "1 quai", latitude: 48.85, longitude: 2.35 },
      }),
      201,
    );
    const mapping = { roleClaim: "groups", roleMapping: { "q-admins": "admin", "q-managers": "manager" } };
    expectError(await configure({ roleMapping: mapping.roleMapping }), 400, "VALIDATION_ERROR", "roleClaim");
    expectError(await configure({ roleClaim: "groups" }), 400, "VALIDATION_ERROR", "roleMapping");
    expectError(await configure({ ...mapping, defaultLocationIds: ["loc_notours"] }), 400, "VALIDATION_ERROR", "defaultLocationIds.0");
    const saved = expectOk(await configure({ ...mapping, defaultLocationIds: [location.id] }));
    expect(saved).toMatchObject({ ...mapping, defaultLocationIds: [location.id], defaultRole: "operator" });
    expect(expectOk(await call("GET", `/v1/organizations/${orgId}/sso`, { token: owner.token }))).toMatchObject(mapping);

    const membershipOf = async (email: string, groups: unknown) => {
      const data = expectOk((await signIn(idp, email, { overrides: { groups } })).res);
      const me = expectOk(await call("GET", "/v1/auth/me", { token: data.session.token }));
      return me.memberships.find((m: any) => m.organizationId === orgId);
    };
    expect(await membershipOf(`${unique("mgr")}@${domain}`, ["staff", "q-managers"])).toEqual({
      organizationId: orgId,
      role: "manager",
      locationIds: [location.id],
    });
    // Several values: the highest role; an admin acts on the whole organization.
    expect(await membershipOf(`${unique("adm")}@${domain}`, ["q-managers", "q-admins"])).toEqual({
      organizationId: orgId,
      role: "admin",
      locationIds: null,
    });
    // A single string counts too; a value mapped to nothing, or no claim: the default role.
    expect((await membershipOf(`${unique("one")}@${domain}`, "q-managers")).role).toBe("manager");
    expect(await membershipOf(`${unique("op")}@${domain}`, ["staff"])).toEqual({
      organizationId: orgId,
      role: "operator",
      locationIds: [location.id],
    });
    expect((await membershipOf(`${unique("none")}@${domain}`, undefined)).role).toBe("operator");
    // The join names the claim value that gave the role.
    const joined = await env.DB.prepare(
      "SELECT changes FROM audit_events WHERE organization_id = ? AND action = 'member.joined' AND changes LIKE '%roleClaimValue%' ORDER BY rowid DESC",
    )
      .bind(orgId)
      .first<{ changes: string }>();
    expect(JSON.parse(joined!.changes).roleClaimValue).toEqual({ before: null, after: "q-managers" });
    // Back to the plain configuration for the tests after this one.
    expect(expectOk(await configure())).toMatchObject({ roleClaim: null, roleMapping: {}, defaultLocationIds: null });
  });

  it("a page's button: start with returnTo, come back to the page signed in, or with the reason of a refusal", async () => {
    const idp = standInProvider();
    const email = `${unique("page")}@${domain}`;
    const started = await start(`email=${encodeURIComponent(email)}&returnTo=${encodeURIComponent("/console")}`);
    const code = unique("code");
    idp.grants.set(code, { request: started.request, claims: claimsFor(started.request, email) });
    const back = await fetchWorker(`/v1/auth/sso/callback?code=${code}&state=${encodeURIComponent(started.request.get("state")!)}`, {
      redirect: "manual",
      headers: { Cookie: `service.sso_state=${started.cookie}` },
    });
    expect(back.status).toBe(303);
    expect(back.headers.get("Location")).toBe("/console");
    const session = /service\.session_token=([^;]+)/.exec(back.headers.get("Set-Cookie") ?? "")?.[1];
    expect(session).toMatch(/^sess_/);
    // The console, loaded with that cookie, is signed in.
    const me = await fetchWorker("/v1/auth/me", { headers: { Cookie: `service.session_token=${session}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as any).data.user.email).toBe(email);

    // A refusal goes back to the page with its reason, and signs no one in.
    const other = `${unique("page")}@${domain}`;
    const again = await start(`email=${encodeURIComponent(other)}&returnTo=${encodeURIComponent("/console?lang=fr")}`);
    const badCode = unique("code");
    idp.grants.set(badCode, { request: again.request, claims: claimsFor(again.request, other, { nonce: "n".repeat(43) }) });
    const refused = await fetchWorker(`/v1/auth/sso/callback?code=${badCode}&state=${encodeURIComponent(again.request.get("state")!)}`, {
      redirect: "manual",
      headers: { Cookie: `service.sso_state=${again.cookie}` },
    });
    expect(refused.status).toBe(303);
    expect(refused.headers.get("Location")).toBe("/console?lang=fr&sso_error=nonce_mismatch");
    expect(refused.headers.get("Set-Cookie") ?? "").not.toContain("service.session_token=sess");
    expect(await usersWithEmail(other)).toBe(0);

    // A domain without single sign-on goes back to the page too; another site is never a return address.
    const unknown = await fetchWorker(`/v1/auth/sso/start?email=someone@nowhere-sso.com&returnTo=%2Fconsole`, { redirect: "manual" });
    expect(unknown.status).toBe(303);
    expect(unknown.headers.get("Location")).toBe("/console?sso_error=not_configured");
    for (const evil of ["//evil.example.com/x", "https://evil.example.com", "/\\evil.example.com"]) {
      expectError(
        await call("GET", `/v1/auth/sso/start?email=${encodeURIComponent(email)}&returnTo=${encodeURIComponent(evil)}`),
        400,
        "VALIDATION_ERROR",
        "returnTo",
      );
    }
  });

  it("the minute cron deletes sign-ins never finished once expired, and keeps those still running", async () => {
    standInProvider();
    const stateRow = async (state: string) => {
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(state)));
      const hash = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
      return env.DB.prepare("SELECT expires_at FROM sso_sign_ins WHERE state_hash = ?").bind(hash).first();
    };
    const abandoned = [await start(`organization=${orgId}`), await start(`organization=${orgId}`)];
    testClock.advance(11 * 60 * 1000);
    const running = await start(`organization=${orgId}`);
    for (const s of [...abandoned, running]) expect(await stateRow(s.request.get("state")!)).not.toBeNull();
    await worker.scheduled(createScheduledController({ scheduledTime: now(), cron: "* * * * *" }), env, {} as ExecutionContext);
    for (const s of abandoned) expect(await stateRow(s.request.get("state")!)).toBeNull();
    expect(await stateRow(running.request.get("state")!)).not.toBeNull();
    const left = await env.DB.prepare("SELECT count(*) AS n FROM sso_sign_ins WHERE expires_at < ?").bind(now()).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it("answers 404 for an e-mail domain or organization without single sign-on", async () => {
    standInProvider();
    expectError(await call("GET", `/v1/auth/sso/start?email=someone@nowhere-sso.com`), 404, "NOT_FOUND");
    const other = await createOrganization(owner);
    expectError(await call("GET", `/v1/auth/sso/start?organization=${other.id}`), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/auth/sso/start`), 400, "VALIDATION_ERROR");
  });
});

describe("enforcement and removal", () => {
  it("refuses the password for the domain while enforced, and signing in with the provider still works", async () => {
    const idp = standInProvider();
    const member = await registerUser({ email: `${unique("enf")}@${domain}` });
    expectOk(await configure({ enforced: true }));
    const refused = await call("POST", "/v1/auth/login", { body: { email: member.email, password: "correct horse battery" } });
    expectError(refused, 403, "SSO_REQUIRED", "email");
    expect(refused.body.error.details.signInUrl).toBe(`/v1/auth/sso/start?email=${encodeURIComponent(member.email)}`);
    // A wrong password gets the same answer: nothing about the account is checked.
    expectError(await call("POST", "/v1/auth/login", { body: { email: member.email, password: "wrong" } }), 403, "SSO_REQUIRED");
    // Nor can a new account of the domain be made with a password.
    const newcomer = `${unique("new")}@${domain}`;
    const register = await call("POST", "/v1/auth/register", {
      body: { email: newcomer, password: "correct horse battery", firstName: "N", lastName: "C", accountType: "business" },
    });
    expectError(register, 403, "SSO_REQUIRED", "email");
    expect(await usersWithEmail(newcomer)).toBe(0);
    // Other domains are untouched.
    expect((await call("POST", "/v1/auth/login", { body: { email: owner.email, password: "correct horse battery" } })).status).toBe(200);
    expectOk((await signIn(idp, member.email)).res);
    expectOk(await configure({ enforced: false }));
    expect((await call("POST", "/v1/auth/login", { body: { email: member.email, password: "correct horse battery" } })).status).toBe(200);
  });

  it("DELETE removes the connection (audited): sign-in by the domain is then unknown", async () => {
    standInProvider();
    expectOk(await call("DELETE", `/v1/organizations/${orgId}/sso`, { token: owner.token }));
    expectError(await call("GET", `/v1/organizations/${orgId}/sso`, { token: owner.token }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/auth/sso/start?organization=${orgId}`), 404, "NOT_FOUND");
    expect((await auditActions()).at(-1)).toBe("sso.deleted");
    expectError(await call("DELETE", `/v1/organizations/${orgId}/sso`, { token: owner.token }), 404, "NOT_FOUND");
  });
});
