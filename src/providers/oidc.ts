// An OpenID Connect provider as our single sign-on sees it (docs/sso.md): its discovery
// document, its signing keys and its token endpoint, every one fetched through the outbound
// guard (safe-fetch.ts), since the issuer is a URL an organization chose. Discovery and keys
// are cached in the isolate for 10 minutes; an unknown key id fetches the keys again once
// (the provider rotated them).
import type { JSONWebKeySet } from "jose";
import { OutboundFailure, OutboundRefusal, safeFetch, type OutboundEnv } from "./safe-fetch";

export interface ProviderMetadata {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  /** How the provider wants the client to authenticate at the token endpoint. */
  tokenAuth: "client_secret_basic" | "client_secret_post";
}

/** The provider could not be reached or answered something unusable: nothing was decided. */
export class ProviderError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

const CACHE_MS = 10 * 60 * 1000;
const discoveryCache = new Map<string, { at: number; metadata: ProviderMetadata }>();
const keyCache = new Map<string, { at: number; keys: JSONWebKeySet }>();

export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
}

async function getJson(
  env: OutboundEnv,
  url: string,
  init: { method?: "GET" | "POST"; headers?: Record<string, string>; body?: string } = {},
) {
  let res;
  try {
    res = await safeFetch(env, url, { ...init, readBody: true });
  } catch (err) {
    if (err instanceof OutboundRefusal || err instanceof OutboundFailure) throw new ProviderError(`${url}: ${err.reason}`);
    throw err;
  }
  let body: unknown = null;
  try {
    body = res.body ? JSON.parse(res.body) : null;
  } catch {
    // not JSON: the caller reports the status
  }
  return { status: res.status, body: body as Record<string, unknown> | null };
}

function httpsUrl(value: unknown, name: string): string {
  if (typeof value !== "string") throw new ProviderError(`the discovery document has no ${name}`);
  try {
    if (new URL(value).protocol === "https:") return value;
  } catch {
    // reported below
  }
  throw new ProviderError(`the discovery document's ${name} is not an https URL`);
}

/** `{issuer}/.well-known/openid-configuration`, checked: its `issuer` must be exactly the one configured. */
export async function discoverProvider(env: OutboundEnv, issuer: string, at: number, fresh = false): Promise<ProviderMetadata> {
  const cached = discoveryCache.get(issuer);
  if (!fresh && cached && at - cached.at < CACHE_MS) return cached.metadata;
  const url = discoveryUrl(issuer);
  const { status, body } = await getJson(env, url);
  if (status !== 200 || !body) throw new ProviderError(`${url} answered HTTP ${status}${body ? "" : " without JSON"}`);
  if (body.issuer !== issuer) throw new ProviderError(`the discovery document names the issuer ${String(body.issuer)}, not ${issuer}`);
  const methods = Array.isArray(body.token_endpoint_auth_methods_supported) ? body.token_endpoint_auth_methods_supported : null;
  const metadata: ProviderMetadata = {
    issuer,
    authorizationEndpoint: httpsUrl(body.authorization_endpoint, "authorization_endpoint"),
    tokenEndpoint: httpsUrl(body.token_endpoint, "token_endpoint"),
    jwksUri: httpsUrl(body.jwks_uri, "jwks_uri"),
    // The default is client_secret_basic (OpenID Connect Discovery 1.0, section 3).
    tokenAuth: !methods || methods.includes("client_secret_basic") ? "client_secret_basic" : "client_secret_post",
  };
  discoveryCache.set(issuer, { at, metadata });
  return metadata;
}

/** The provider's public keys (its JWKS), from the cache unless `fresh`. */
export async function providerKeys(env: OutboundEnv, jwksUri: string, at: number, fresh = false): Promise<JSONWebKeySet> {
  const cached = keyCache.get(jwksUri);
  if (!fresh && cached && at - cached.at < CACHE_MS) return cached.keys;
  const { status, body } = await getJson(env, jwksUri);
  if (status !== 200 || !body || !Array.isArray(body.keys)) throw new ProviderError(`${jwksUri} answered HTTP ${status} without a key set`);
  const keys = body as unknown as JSONWebKeySet;
  keyCache.set(jwksUri, { at, keys });
  return keys;
}

export interface CodeExchange {
  code: string;
  codeVerifier: string;
  redirectUri: string;
  clientId: string;
  clientSecret: string;
}

/** RFC 6749 section 2.3.1: the client id and secret are form-encoded before Basic encoding. */
function basicCredentials(clientId: string, clientSecret: string): string {
  const form = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");
  return btoa(`${form(clientId)}:${form(clientSecret)}`);
}

/** Trades the authorization code for tokens; answers the ID token, or why the provider refused. */
export async function exchangeCode(
  env: OutboundEnv,
  provider: ProviderMetadata,
  exchange: CodeExchange,
): Promise<{ idToken: string } | { refused: string; status: number }> {
  const form = new URLSearchParams({
    grant_type: "authorization_code",
    code: exchange.code,
    redirect_uri: exchange.redirectUri,
    code_verifier: exchange.codeVerifier,
  });
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" };
  if (provider.tokenAuth === "client_secret_basic") {
    headers.Authorization = `Basic ${basicCredentials(exchange.clientId, exchange.clientSecret)}`;
  } else {
    form.set("client_id", exchange.clientId);
    form.set("client_secret", exchange.clientSecret);
  }
  const { status, body } = await getJson(env, provider.tokenEndpoint, { method: "POST", headers, body: form.toString() });
  if (status !== 200) return { refused: typeof body?.error === "string" ? body.error : `HTTP ${status}`, status };
  if (typeof body?.id_token !== "string") return { refused: "no id_token in the answer", status };
  return { idToken: body.id_token };
}
