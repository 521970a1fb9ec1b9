// Credentials that prove themselves (docs/hot-path.md, CONTRACT §10): a session token, an API
// key and a visitor's ticket token end with a MAC of their random part (HMAC-SHA-256 keyed with
// TOKEN_SECRET). A value whose MAC does not verify was not issued by us, so it is refused in the
// Worker without a lookup, an object call or a count: guessing costs the guesser only.
//
// Rotation: set the new secret as TOKEN_SECRET and the old one as TOKEN_SECRET_PREVIOUS; values
// signed with either are accepted until TOKEN_SECRET_PREVIOUS is removed (the grace period).

/**
 * The secret of `npm run dev` and the tests when TOKEN_SECRET is not set: public on purpose (the
 * demo key of scripts/seed.mjs is signed with it), so never accepted in production.
 */
export const DEVELOPMENT_TOKEN_SECRET = "development-token-secret-not-for-production";

/** Hex characters of the MAC appended to session tokens and API keys (128 bits). */
export const MAC_HEX_LENGTH = 32;
/** base64url characters of the MAC appended to ticket tokens (16 bytes, 128 bits). */
export const MAC_BASE64URL_LENGTH = 22;

interface SecretSource {
  TOKEN_SECRET?: string;
  TOKEN_SECRET_PREVIOUS?: string;
  ENVIRONMENT?: string;
}

/** The secrets that verify, current first; the first one signs. */
export function tokenSecrets(env: SecretSource): string[] {
  const current = env.TOKEN_SECRET?.trim();
  const local = env.ENVIRONMENT === "development" || env.ENVIRONMENT === "test";
  if (!current) {
    // scripts/check-deploy.mjs refuses a deploy without it; a Worker that still lacks it cannot
    // issue or verify a credential, which must not pass silently.
    if (!local) throw new Error("TOKEN_SECRET is not set (npx wrangler secret put TOKEN_SECRET)");
    return [DEVELOPMENT_TOKEN_SECRET];
  }
  if (!local && current === DEVELOPMENT_TOKEN_SECRET) throw new Error("TOKEN_SECRET is the public development value");
  const previous = env.TOKEN_SECRET_PREVIOUS?.trim();
  return previous && previous !== current ? [current, previous] : [current];
}

const encoder = new TextEncoder();
/** Imported once per isolate and secret: importKey is not free, and the secret rarely changes. */
const keys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(secret, key);
  }
  return key;
}

async function macBytes(secret: string, body: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(body)));
}

function hex(bytes: Uint8Array, length: number): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out.slice(0, length);
}

function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export type MacEncoding = "hex" | "base64url";

async function macOf(secret: string, body: string, encoding: MacEncoding): Promise<string> {
  const bytes = await macBytes(secret, body);
  return encoding === "hex" ? hex(bytes, MAC_HEX_LENGTH) : base64url(bytes.slice(0, 16));
}

/** The MAC that `body` (prefix and random part) ends with, under the current secret. */
export async function signCredential(env: SecretSource, body: string, encoding: MacEncoding = "hex"): Promise<string> {
  return `${body}${await macOf(tokenSecrets(env)[0]!, body, encoding)}`;
}

function sameText(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  return left.byteLength === right.byteLength && crypto.subtle.timingSafeEqual(left, right);
}

/**
 * Values this isolate verified, by the secrets they were verified under (issue 43: an HMAC on
 * every request of a session or key that comes back again and again). A MAC is a pure function
 * of the value and the secret, so a verified value stays verified while the secrets are the
 * same; only verified values are kept (a guesser fills nothing), at most VERIFIED_KEPT of them.
 */
const verified = new Map<string, Set<string>>();
const VERIFIED_KEPT = 10_000;

/** Whether `value` is `body` + its MAC under the current or the previous secret. */
export async function verifyCredential(env: SecretSource, value: string, encoding: MacEncoding = "hex"): Promise<boolean> {
  const macLength = encoding === "hex" ? MAC_HEX_LENGTH : MAC_BASE64URL_LENGTH;
  if (value.length <= macLength) return false;
  const secrets = tokenSecrets(env);
  const secretsKey = secrets.join("\n");
  let known = verified.get(secretsKey);
  if (known?.has(value)) return true;
  const body = value.slice(0, -macLength);
  const mac = value.slice(-macLength);
  for (const secret of secrets) {
    if (sameText(await macOf(secret, body, encoding), mac)) {
      if (!known) verified.set(secretsKey, (known = new Set()));
      if (known.size >= VERIFIED_KEPT) known.clear();
      known.add(value);
      return true;
    }
  }
  return false;
}

/**
 * What a presented credential is: one we signed (`signed`), one of the unsigned formats issued
 * before (`legacy`: only a lookup can judge it, behind the per-address failed-credential limit),
 * or neither (`forged`: refused on the spot, costs nothing).
 */
export type CredentialForm = "signed" | "legacy" | "forged";

export async function credentialForm(
  env: SecretSource,
  value: string,
  shapes: { signed: RegExp; legacy: RegExp },
  encoding: MacEncoding = "hex",
): Promise<CredentialForm> {
  if (shapes.signed.test(value)) return (await verifyCredential(env, value, encoding)) ? "signed" : "forged";
  return shapes.legacy.test(value) ? "legacy" : "forged";
}
