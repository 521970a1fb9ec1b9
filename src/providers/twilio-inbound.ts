import { constantTimeEqual } from "../lib/crypto";

// What Twilio sends us: an inbound SMS (From, To, Body, MessageSid) and the status callbacks
// of the SMS we sent (MessageSid, MessageStatus), both form-encoded and signed with
// X-Twilio-Signature = base64(HMAC-SHA1(auth token, full URL + each POST parameter, sorted by
// name, as name + value)). See https://www.twilio.com/docs/usage/webhooks/webhooks-security.

export const TWILIO_SIGNATURE_HEADER = "X-Twilio-Signature";

const encoder = new TextEncoder();

export async function twilioSignature(authToken: string, url: string, params: URLSearchParams): Promise<string> {
  const sorted = [...params.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let data = url;
  for (const [name, value] of sorted) data += name + value;
  const key = await crypto.subtle.importKey("raw", encoder.encode(authToken), { name: "HMAC", hash: "SHA-1" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(data)));
  let s = "";
  for (const b of mac) s += String.fromCharCode(b);
  return btoa(s);
}

/** True when `header` is Twilio's signature of this request. */
export async function isTwilioSigned(
  authToken: string,
  url: string,
  params: URLSearchParams,
  header: string | undefined,
): Promise<boolean> {
  if (!header) return false;
  return constantTimeEqual(header, await twilioSignature(authToken, url, params));
}

/** The TwiML answer to an inbound SMS: the reply Twilio sends back, or nothing. */
export function twiml(reply: string | null): string {
  const escaped = reply?.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
  return escaped === undefined
    ? '<?xml version="1.0" encoding="UTF-8"?><Response></Response>'
    : `<?xml version="1.0" encoding="UTF-8"?><Response><Message>${escaped}</Message></Response>`;
}

/** Twilio's MessageStatus values, as our delivery states (docs/conversations.md). */
export function deliveryStateOf(messageStatus: string): "queued" | "sent" | "delivered" | "failed" | null {
  switch (messageStatus) {
    case "accepted":
    case "scheduled":
    case "queued":
    case "sending":
      return "queued";
    case "sent":
      return "sent";
    case "delivered":
    case "read":
      return "delivered";
    case "failed":
    case "undelivered":
    case "canceled":
      return "failed";
    default:
      return null;
  }
}
