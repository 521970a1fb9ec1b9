// Secrets at rest (docs/security.md, "Secrets at rest"): a secret we must be able to use again
// (a webhook signing secret signs every delivery, so it cannot be stored as a hash) is stored
// encrypted with AES-256-GCM under a key that lives only in a Worker secret, never in D1.
//
// Stored form: `sbx1.<key id>.<iv, base64url>.<ciphertext+tag, base64url>`. The key id names the
// key that sealed it, so a rotation adds a key (SECRETS_KEY_ID + SECRETS_KEY) and keeps the old
// one readable (SECRETS_KEY_PREVIOUS_ID + SECRETS_KEY_PREVIOUS) until every row was re-sealed.
// A value without the prefix is a row written before encryption: it is read as it is (lazy
// migration) and sealed the next time it is written.

const PREFIX = "sbx1";

/** `npm run dev` and the tests when SECRETS_KEY is not set: public on purpose, refused in production. */
export const DEVELOPMENT_SECRETS_KEY = "ZGV2ZWxvcG1lbnQtc2VjcmV0cy1rZXktMzJieXRlcyE"; // base64url of 32 bytes
export const DEVELOPMENT_SECRETS_KEY_ID = "dev";

export interface SecretBoxEnv {
  ENVIRONMENT?: string;
  SECRETS_KEY?: string;
  SECRETS_KEY_ID?: string;
  SECRETS_KEY_PREVIOUS?: string;
  SECRETS_KEY_PREVIOUS_ID?: string;
}

function fromBase64Url(text: string): Uint8Array {
  const b64 = text.replaceAll("-", "+").replaceAll("_", "/");
  const bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
}

function toBase64Url(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

/** The keys this Worker holds, by id: the current one first. */
function keyring(env: SecretBoxEnv): { id: string; raw: string }[] {
  const local = env.ENVIRONMENT === "development" || env.ENVIRONMENT === "test";
  const current = env.SECRETS_KEY?.trim();
  if (!current) {
    if (!local) throw new Error("SECRETS_KEY is not set (npx wrangler secret put SECRETS_KEY)");
    return [{ id: DEVELOPMENT_SECRETS_KEY_ID, raw: DEVELOPMENT_SECRETS_KEY }];
  }
  if (!local && current === DEVELOPMENT_SECRETS_KEY) throw new Error("SECRETS_KEY is the public development value");
  const ring = [{ id: env.SECRETS_KEY_ID?.trim() || "k1", raw: current }];
  const previous = env.SECRETS_KEY_PREVIOUS?.trim();
  if (previous) ring.push({ id: env.SECRETS_KEY_PREVIOUS_ID?.trim() || "k0", raw: previous });
  // Rows sealed by the development key stay readable on a machine that moved to its own key.
  if (local) ring.push({ id: DEVELOPMENT_SECRETS_KEY_ID, raw: DEVELOPMENT_SECRETS_KEY });
  return ring;
}

/** Each key imported once per isolate (issue 43: an import on every sealed event), not extractable. */
const imported = new Map<string, Promise<CryptoKey>>();

function aesKey(raw: string): Promise<CryptoKey> {
  let key = imported.get(raw);
  if (!key) {
    const bytes = fromBase64Url(raw);
    if (bytes.length !== 32) return Promise.reject(new Error("SECRETS_KEY must be 32 bytes, base64 (openssl rand -base64 32)"));
    key = crypto.subtle.importKey("raw", bytes, "AES-GCM", false, ["encrypt", "decrypt"]);
    // A failed import is not kept: the next use tries again.
    key.catch(() => imported.delete(raw));
    imported.set(raw, key);
  }
  return key;
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(`${PREFIX}.`);
}

/** Encrypts `plain` under the current key; the key id goes with it. */
export async function sealSecret(env: SecretBoxEnv, plain: string): Promise<string> {
  const [key] = keyring(env);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const cipher = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await aesKey(key!.raw), new TextEncoder().encode(plain));
  return `${PREFIX}.${key!.id}.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(cipher))}`;
}

/** The secret in clear: decrypted with the key its id names, or as stored if written before encryption. */
export async function openSecret(env: SecretBoxEnv, stored: string): Promise<string> {
  if (!isSealed(stored)) return stored;
  const [, keyId, iv, cipher] = stored.split(".");
  const key = keyring(env).find((k) => k.id === keyId);
  if (!key || !iv || !cipher) throw new Error(`secret sealed with key ${keyId}, which this Worker does not hold`);
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64Url(iv) }, await aesKey(key.raw), fromBase64Url(cipher));
  return new TextDecoder().decode(plain);
}
