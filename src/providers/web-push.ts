import { importJWK, SignJWT } from "jose";
import { answerOf, isTransientStatus, networkFailure, type SendOutcome } from "./types";

// Web Push for widget visitors: VAPID (RFC 8292, ES256 JWT signed with jose) and the
// aes128gcm content encoding (RFC 8291 / RFC 8188) written on WebCrypto. Written here rather
// than taken from @block65/webcrypto-web-push 1.0.2, which only produces the older "aesgcm"
// draft encoding (Safari and the current RFC need aes128gcm).

export interface VapidConfig {
  /** Uncompressed P-256 public key, base64url (65 bytes): what the browser subscribes with. */
  publicKey: string;
  /** The private scalar d, base64url (32 bytes). */
  privateKey: string;
  /** mailto: or https: contact for the push services. */
  subject: string;
}

export interface BrowserSubscription {
  endpoint: string;
  p256dh: string;
  auth: string;
}

export function b64urlDecode(text: string): Uint8Array {
  const b64 = text
    .replace(/-/g, "+")
    .replace(/_/g, "/")
    .padEnd(Math.ceil(text.length / 4) * 4, "=");
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

export function b64urlEncode(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const text = (s: string) => new TextEncoder().encode(s);

async function hmac(key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, data));
}

/** The key and nonce of RFC 8291 §3.4, from both public keys, the shared secret, auth and salt. */
export async function contentKeys(
  ecdhSecret: Uint8Array,
  auth: Uint8Array,
  uaPublic: Uint8Array,
  asPublic: Uint8Array,
  salt: Uint8Array,
): Promise<{ cek: Uint8Array; nonce: Uint8Array }> {
  const prkKey = await hmac(auth, ecdhSecret);
  const ikm = await hmac(prkKey, concat(text("WebPush: info\0"), uaPublic, asPublic, new Uint8Array([1])));
  const prk = await hmac(salt, ikm);
  const cek = (await hmac(prk, concat(text("Content-Encoding: aes128gcm\0"), new Uint8Array([1])))).slice(0, 16);
  const nonce = (await hmac(prk, concat(text("Content-Encoding: nonce\0"), new Uint8Array([1])))).slice(0, 12);
  return { cek, nonce };
}

const RECORD_SIZE = 4096;

/** One aes128gcm record: salt ‖ rs ‖ idlen ‖ keyid (our ephemeral public key) ‖ ciphertext. */
export async function encryptAes128gcm(payload: Uint8Array, sub: BrowserSubscription): Promise<Uint8Array> {
  const uaPublic = b64urlDecode(sub.p256dh);
  const auth = b64urlDecode(sub.auth);
  const ua = await crypto.subtle.importKey("raw", uaPublic, { name: "ECDH", namedCurve: "P-256" }, false, []);
  const local = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])) as CryptoKeyPair;
  const asPublic = new Uint8Array((await crypto.subtle.exportKey("raw", local.publicKey)) as ArrayBuffer);
  const ecdhSecret = new Uint8Array(
    await crypto.subtle.deriveBits({ name: "ECDH", public: ua } as unknown as SubtleCryptoDeriveKeyAlgorithm, local.privateKey, 256),
  );
  const salt = crypto.getRandomValues(new Uint8Array(16));
  const { cek, nonce } = await contentKeys(ecdhSecret, auth, uaPublic, asPublic, salt);
  const key = await crypto.subtle.importKey("raw", cek, "AES-GCM", false, ["encrypt"]);
  // A single record: the payload, then the last-record delimiter 0x02 (no padding).
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv: nonce }, key, concat(payload, new Uint8Array([2]))));
  const header = new Uint8Array(21);
  header.set(salt, 0);
  new DataView(header.buffer).setUint32(16, RECORD_SIZE);
  header[20] = asPublic.length;
  return concat(header, asPublic, sealed);
}

/** `Authorization: vapid t=<ES256 JWT for the endpoint's origin>, k=<public key>` (RFC 8292). */
export async function vapidAuthorization(endpoint: string, vapid: VapidConfig, nowSeconds: number): Promise<string> {
  const pub = b64urlDecode(vapid.publicKey);
  const jwk = { kty: "EC", crv: "P-256", x: b64urlEncode(pub.slice(1, 33)), y: b64urlEncode(pub.slice(33, 65)), d: vapid.privateKey };
  const key = await importJWK(jwk, "ES256");
  const jwt = await new SignJWT({})
    .setProtectedHeader({ alg: "ES256", typ: "JWT" })
    .setAudience(new URL(endpoint).origin)
    .setExpirationTime(nowSeconds + 12 * 3600)
    .setSubject(vapid.subject)
    .sign(key);
  return `vapid t=${jwt}, k=${vapid.publicKey}`;
}

export async function webPushSend(vapid: VapidConfig, sub: BrowserSubscription, message: unknown): Promise<SendOutcome> {
  let body: Uint8Array;
  let authorization: string;
  try {
    body = await encryptAes128gcm(text(JSON.stringify(message)), sub);
    authorization = await vapidAuthorization(sub.endpoint, vapid, Math.floor(Date.now() / 1000));
  } catch (err) {
    return { ok: false, provider: "web_push", transient: false, response: `encryption: ${String(err)}`, deadToken: true };
  }
  let res: Response;
  try {
    res = await fetch(sub.endpoint, {
      method: "POST",
      headers: {
        Authorization: authorization,
        "Content-Encoding": "aes128gcm",
        "Content-Type": "application/octet-stream",
        TTL: "3600",
        Urgency: "high",
      },
      body,
    });
  } catch (err) {
    return networkFailure("web_push", err);
  }
  const answer = await answerOf(res);
  if (res.ok) return { ok: true, provider: "web_push", response: answer };
  // 404/410: the browser dropped the subscription; it is removed like a dead FCM token.
  return {
    ok: false,
    provider: "web_push",
    transient: isTransientStatus(res.status),
    response: answer,
    deadToken: res.status === 404 || res.status === 410,
  };
}
