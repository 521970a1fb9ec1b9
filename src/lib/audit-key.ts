// The audit chain's key (docs/security.md, "Audit log"): every entry's hash and every checkpoint
// is an HMAC-SHA256 under a key that lives in a Worker secret, never in D1, so someone able to
// write the database cannot re-hash an entry they changed. Each entry stores the id of the key
// that hashed it: a rotation adds a key (AUDIT_KEY_ID + AUDIT_KEY) and keeps the old one for
// verification (AUDIT_KEY_PREVIOUS_ID + AUDIT_KEY_PREVIOUS).

/** `npm run dev` and the tests when AUDIT_KEY is not set: public on purpose, refused in production. */
export const DEVELOPMENT_AUDIT_KEY = "ZGV2ZWxvcG1lbnQtYXVkaXQtY2hhaW4ta2V5LTMyYnl0ZXM";
export const DEVELOPMENT_AUDIT_KEY_ID = "dev";

export interface AuditKeyEnv {
  ENVIRONMENT?: string;
  AUDIT_KEY?: string;
  AUDIT_KEY_ID?: string;
  AUDIT_KEY_PREVIOUS?: string;
  AUDIT_KEY_PREVIOUS_ID?: string;
}

export interface AuditKeyring {
  /** The id new entries and checkpoints are keyed with. */
  currentId: string;
  /** The HMAC of `text` under the key `id`, hex; null when this Worker does not hold that key. */
  sign(id: string, text: string): Promise<string | null>;
}

function rawKeys(env: AuditKeyEnv): { id: string; raw: string }[] {
  const local = env.ENVIRONMENT === "development" || env.ENVIRONMENT === "test";
  const current = env.AUDIT_KEY?.trim();
  if (!current) {
    if (!local) throw new Error("AUDIT_KEY is not set (openssl rand -base64 32 | npx wrangler secret put AUDIT_KEY)");
    return [{ id: DEVELOPMENT_AUDIT_KEY_ID, raw: DEVELOPMENT_AUDIT_KEY }];
  }
  if (!local && current === DEVELOPMENT_AUDIT_KEY) throw new Error("AUDIT_KEY is the public development value");
  const ring = [{ id: env.AUDIT_KEY_ID?.trim() || "k1", raw: current }];
  const previous = env.AUDIT_KEY_PREVIOUS?.trim();
  if (previous) ring.push({ id: env.AUDIT_KEY_PREVIOUS_ID?.trim() || "k0", raw: previous });
  if (local) ring.push({ id: DEVELOPMENT_AUDIT_KEY_ID, raw: DEVELOPMENT_AUDIT_KEY });
  return ring;
}

const encoder = new TextEncoder();

export function auditKeyring(env: AuditKeyEnv): AuditKeyring {
  const keys = rawKeys(env);
  const imported = new Map<string, Promise<CryptoKey>>();
  const keyOf = (id: string): Promise<CryptoKey> | null => {
    const found = keys.find((k) => k.id === id);
    if (!found) return null;
    let key = imported.get(id);
    if (!key) {
      key = crypto.subtle.importKey("raw", encoder.encode(found.raw), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      imported.set(id, key);
    }
    return key;
  };
  return {
    currentId: keys[0]!.id,
    async sign(id, text) {
      const key = keyOf(id);
      if (!key) return null;
      const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await key, encoder.encode(text)));
      return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
    },
  };
}
