// Standard Webhooks (https://www.standardwebhooks.com) signature check with WebCrypto, for a
// receiver of this service's webhooks: each delivery carries `webhook-id`, `webhook-timestamp`
// (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`,
// several space-separated while a secret is being rotated), signed with the webhook's
// `whsec_…` secret. Works in Node 20+, Workers, Deno, Bun and browsers.
import type { components } from "../schema.js";

/** The body of every delivery (the same shape as GET /v1/events' records). */
export type WebhookEvent = components["schemas"]["Event"];

export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
}

/** `Headers`, or a plain object such as Node's `req.headers`. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the timestamp may be from now, in seconds (default 300: replays older than that fail). */
  toleranceSeconds?: number;
  /** Now, for tests. */
  now?: Date;
}

const encoder = new TextEncoder();

/**
 * Checks a delivery's signature against the raw body (as received: do not re-serialize it) and
 * answers the parsed event; throws WebhookVerificationError otherwise. `secret` may be several
 * (during a rotation, the new and the old).
 */
export async function verifyWebhook(
  payload: string | Uint8Array,
  headers: HeadersLike,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("Missing webhook-id, webhook-timestamp or webhook-signature");
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError("webhook-timestamp is not a number of seconds");
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(timestamp)) > tolerance) throw new WebhookVerificationError("webhook-timestamp is outside the tolerance");

  const body = typeof payload === "string" ? encoder.encode(payload) : payload;
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);

  const candidates = signatures
    .split(" ")
    .map((s) => s.split(","))
    .filter(([version, value]) => version === "v1" && value)
    .map(([, value]) => decodeBase64(value!))
    .filter((bytes) => bytes !== null);
  for (const s of typeof secret === "string" ? [secret] : secret) {
    const keyBytes = decodeBase64(s.startsWith("whsec_") ? s.slice("whsec_".length) : s);
    if (!keyBytes) throw new WebhookVerificationError("The secret is not whsec_ followed by base64");
    const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
    for (const candidate of candidates) {
      // subtle.verify compares in constant time.
      if (await crypto.subtle.verify("HMAC", key, candidate, signed)) {
        return JSON.parse(typeof payload === "string" ? payload : new TextDecoder().decode(payload)) as WebhookEvent;
      }
    }
  }
  throw new WebhookVerificationError("No signature matches");
}

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>))
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(" ") : value;
  return undefined;
}

function decodeBase64(text: string) {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}
