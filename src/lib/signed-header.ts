// The `t=<unix seconds>,<scheme>=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` header shared by
// Stripe (v1=), FedaPay (s=) and our sandbox provider (v1=).
import { constantTimeEqual } from "./crypto";

const encoder = new TextEncoder();

/** The providers' replay window: a signature older (or newer) than this is refused. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export async function hmacSha256Hex(secret: string, text: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(text)));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function signHeader(secret: string, rawBody: string, atMs: number, scheme: string): Promise<string> {
  const t = Math.floor(atMs / 1000);
  return `t=${t},${scheme}=${await hmacSha256Hex(secret, `${t}.${rawBody}`)}`;
}

export type SignatureFault = "missing" | "malformed" | "outside the 5-minute window" | "mismatch";

/** Checks the header against the raw body at `atMs`; answers what is wrong, or null when it is good. */
export async function checkSignedHeader(
  header: string | undefined,
  secret: string,
  rawBody: string,
  atMs: number,
  scheme: string,
): Promise<SignatureFault | null> {
  if (!header) return "missing";
  let t: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const [name, value] = part.trim().split("=", 2);
    if (name === "t" && value && /^\d+$/.test(value)) t = Number(value);
    else if (name === scheme && value) signatures.push(value);
  }
  if (t === null || signatures.length === 0) return "malformed";
  if (Math.abs(atMs / 1000 - t) > SIGNATURE_TOLERANCE_SECONDS) return "outside the 5-minute window";
  const expected = await hmacSha256Hex(secret, `${t}.${rawBody}`);
  return signatures.some((s) => constantTimeEqual(s, expected)) ? null : "mismatch";
}
