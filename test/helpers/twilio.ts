import worker from "../../src/index";
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { expect, vi } from "vitest";
import type { Env } from "../../src/env";
import { twilioSignature } from "../../src/providers/twilio-inbound";

// The one Twilio test double (issue 44): the configuration the Worker runs with, the fake
// Twilio API behind a fetch spy (every SMS it accepted), and Twilio's signed webhooks to us.

export const AUTH_TOKEN = "twilio-auth-token-for-tests";
/** The shared sender every organization without its own number texts from. */
export const TWILIO_FROM = "+33700000000";
export const TWILIO: Partial<Env> = {
  SMS_PROVIDER: "twilio",
  TWILIO_ACCOUNT_SID: "AC123",
  TWILIO_AUTH_TOKEN: AUTH_TOKEN,
  TWILIO_FROM,
  SMS_BASE_URL: "https://twilio.test",
};
export const INBOUND_URL = "https://api.test/v1/inbound/sms/twilio";

/** A French mobile of the +33 6 range, new each time (the per-number join cap is 3 a day). */
export const randomMobile = () => `+3361${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;

export interface SentSms {
  to: string;
  from: string | null;
  body: string;
  statusCallback: string | null;
}

/** The fake Twilio API: every SMS it accepted. Any other outbound fetch fails the test. */
export function fakeTwilio(): SentSms[] {
  const sent: SentSms[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    if (!url.startsWith("https://twilio.test/")) throw new TypeError(`unexpected fetch ${url}`);
    const form = new URLSearchParams(String(init?.body));
    sent.push({
      to: form.get("To")!,
      from: form.get("From") ?? form.get("MessagingServiceSid"),
      body: form.get("Body")!,
      statusCallback: form.get("StatusCallback"),
    });
    return Response.json({ sid: `SM${sent.length}`, status: "queued" }, { status: 201 });
  });
  return sent;
}

export interface Posted {
  status: number;
  headers: Headers;
  text: string;
  /** The JSON body, or null for TwiML. */
  body: any;
}

/** A request through the Worker with this configuration (TWILIO unless told), waited on to the end. */
export async function throughWorker(request: Request, over: Partial<Env> = TWILIO): Promise<Posted> {
  const ctx = createExecutionContext();
  const res = await worker.fetch!(request as any, { ...env, ...over } as Env, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {
    // TwiML
  }
  return { status: res.status, headers: res.headers, text, body };
}

/**
 * Twilio's POST to `url`: form-encoded, a fresh MessageSid and the shared To unless given, signed
 * over the URL and sorted parameters with AUTH_TOKEN (or `signature` as given; null sends none).
 */
export async function twilioPost(
  params: Record<string, string>,
  opts: { url?: string; signature?: string | null; over?: Partial<Env>; headers?: Record<string, string> } = {},
): Promise<Posted> {
  const url = opts.url ?? INBOUND_URL;
  const form = new URLSearchParams({ MessageSid: `SM${crypto.randomUUID().replace(/-/g, "")}`, To: TWILIO_FROM, ...params });
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded", ...(opts.headers ?? {}) };
  const signature = opts.signature === undefined ? await twilioSignature(AUTH_TOKEN, url, form) : opts.signature;
  if (signature !== null) headers["X-Twilio-Signature"] = signature;
  return throughWorker(new Request(url, { method: "POST", headers, body: form.toString() }), opts.over ?? TWILIO);
}

/** The reply carried in a TwiML answer (200 asserted), or null for an empty <Response>. */
export function replyOf(sent: Posted): string | null {
  expect(sent.status, sent.text).toBe(200);
  const m = /<Message>([\s\S]*)<\/Message>/.exec(sent.text);
  return m ? m[1]!.replace(/&#(\d+);/g, (_x, n) => String.fromCharCode(Number(n))) : null;
}

/** A customer's text to us through Twilio (signed), answering the TwiML reply. */
export async function customerText(from: string, body: string, to: string = TWILIO_FROM): Promise<string | null> {
  return replyOf(await twilioPost({ From: from, Body: body, To: to }));
}
