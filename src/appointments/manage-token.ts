import { credentialForm, signCredential, type CredentialForm } from "../lib/credentials";
import { sha256Hex } from "../lib/crypto";
import type { Deps } from "../http/deps";

// The appointment's manage token (docs/appointments.md): the customer's capability for one
// appointment (see, reschedule, cancel, check in), like the visitor's ticket token. 128 random
// bits and their MAC (src/lib/credentials.ts), base64url; the row keeps only its SHA-256
// (`appointments.token_hash`), so a database read cannot act for the customer.

/** The header a manage link's page sends the token in (never the query string: it would be logged). */
export const APPOINTMENT_TOKEN_HEADER = "X-Appointment-Token";

const TOKEN_BYTES = 16;
const SIGNED_MANAGE_TOKEN = /^[A-Za-z0-9_-]{44}$/;
/** No unsigned manage token was ever handed, so nothing is "legacy". */
const NEVER = /^$/;

function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A new token and the hash the row keeps. */
export async function newManageToken({ env }: Deps): Promise<{ token: string; tokenHash: string }> {
  const token = await signCredential(env, base64url(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES))), "base64url");
  return { token, tokenHash: await sha256Hex(token) };
}

/** Whether a presented token is one we signed (checked before any lookup: a forged one costs nothing). */
export function manageTokenForm({ env }: Deps, token: string): Promise<CredentialForm> {
  return credentialForm(env, token, { signed: SIGNED_MANAGE_TOKEN, legacy: NEVER }, "base64url");
}

/** The hash to compare with `appointments.token_hash`, or null for a token that is not ours. */
export async function manageTokenHash(deps: Deps, token: string | undefined): Promise<string | null> {
  if (!token || (await manageTokenForm(deps, token)) !== "signed") return null;
  return sha256Hex(token);
}
