import { constantTimeEqual } from "../lib/crypto";
import { answerOf, isTransientStatus, networkFailure, trimUrl, type SendOutcome } from "./types";

// Meta's WhatsApp Cloud API (docs/notifications.md, "WhatsApp"): messages are sent from a
// business number (its `phone_number_id`) with a system user's access token; inbound messages
// and statuses arrive on our webhook, signed with the app secret.
// https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages

export const WHATSAPP_API_VERSION = "v21.0";
export const WHATSAPP_SIGNATURE_HEADER = "X-Hub-Signature-256";

/** One body variable or quick-reply payload of an approved template. */
export interface WhatsappTemplate {
  name: string;
  /** Meta's language code of the approved translation ("fr", "en"). */
  language: string;
  /** Values of {{1}}, {{2}}, … in the template's body. */
  bodyParameters: string[];
  /** The payload each quick-reply button (in order) sends back when tapped. */
  quickReplies: string[];
}

export type WhatsappMessage = { kind: "template"; template: WhatsappTemplate } | { kind: "text"; body: string };

/** The JSON Meta receives for one message to `to` (E.164; Meta wants the digits without "+"). */
export function whatsappRequestBody(to: string, message: WhatsappMessage): Record<string, unknown> {
  const base = { messaging_product: "whatsapp", recipient_type: "individual", to: to.replace(/^\+/, "") };
  if (message.kind === "text") return { ...base, type: "text", text: { preview_url: false, body: message.body } };
  const t = message.template;
  const components: Record<string, unknown>[] = [];
  if (t.bodyParameters.length > 0) components.push({ type: "body", parameters: t.bodyParameters.map((text) => ({ type: "text", text })) });
  t.quickReplies.forEach((payload, index) =>
    components.push({ type: "button", sub_type: "quick_reply", index: String(index), parameters: [{ type: "payload", payload }] }),
  );
  return { ...base, type: "template", template: { name: t.name, language: { code: t.language }, components } };
}

export interface WhatsappConfig {
  accessToken: string;
  baseUrl?: string;
}

export async function whatsappSend(
  config: WhatsappConfig,
  phoneNumberId: string,
  to: string,
  message: WhatsappMessage,
): Promise<SendOutcome> {
  const base = trimUrl(config.baseUrl ?? "https://graph.facebook.com");
  let res: Response;
  try {
    res = await fetch(`${base}/${WHATSAPP_API_VERSION}/${encodeURIComponent(phoneNumberId)}/messages`, {
      method: "POST",
      headers: { Authorization: `Bearer ${config.accessToken}`, "Content-Type": "application/json" },
      body: JSON.stringify(whatsappRequestBody(to, message)),
    });
  } catch (err) {
    return networkFailure("whatsapp", err);
  }
  const answer = await answerOf(res);
  return res.ok
    ? { ok: true, provider: "whatsapp", response: answer }
    : { ok: false, provider: "whatsapp", transient: isTransientStatus(res.status), response: answer };
}

const encoder = new TextEncoder();

/** `sha256=<hex HMAC-SHA256 of the raw body with the app secret>`, as Meta signs its webhooks. */
export async function whatsappSignature(appSecret: string, rawBody: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(appSecret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(rawBody)));
  return `sha256=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** True when `header` is Meta's signature of this exact body (compared in constant time). */
export async function isWhatsappSigned(appSecret: string, rawBody: string, header: string | undefined): Promise<boolean> {
  if (!header) return false;
  return constantTimeEqual(header.trim().toLowerCase(), await whatsappSignature(appSecret, rawBody));
}

/** One customer message of a webhook: text typed, or a quick-reply button tapped. */
export interface WhatsappInbound {
  id: string;
  /** E.164 with "+". */
  from: string;
  /** The business number it was sent to (identifies the organization). */
  phoneNumberId: string;
  /** The text, or the tapped button's payload. */
  body: string;
}

interface WebhookMessage {
  id?: unknown;
  from?: unknown;
  type?: unknown;
  text?: { body?: unknown };
  button?: { payload?: unknown; text?: unknown };
  interactive?: { type?: unknown; button_reply?: { id?: unknown; title?: unknown }; list_reply?: { id?: unknown; title?: unknown } };
}

const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);

/**
 * The customer messages of a webhook (`entry[].changes[].value.messages[]`). Statuses of our
 * messages and message types we do not read (images, locations…) are left out.
 */
export function inboundMessagesOf(payload: unknown): WhatsappInbound[] {
  const out: WhatsappInbound[] = [];
  const entries = (payload as { entry?: unknown })?.entry;
  if (!Array.isArray(entries)) return out;
  for (const entry of entries) {
    const changes = (entry as { changes?: unknown })?.changes;
    if (!Array.isArray(changes)) continue;
    for (const change of changes) {
      const value = (change as { value?: { metadata?: { phone_number_id?: unknown }; messages?: unknown } })?.value;
      const phoneNumberId = str(value?.metadata?.phone_number_id);
      if (!phoneNumberId || !Array.isArray(value?.messages)) continue;
      for (const m of value.messages as WebhookMessage[]) {
        const id = str(m?.id);
        const from = str(m?.from);
        const body =
          m?.type === "text"
            ? str(m.text?.body)
            : m?.type === "button"
              ? (str(m.button?.payload) ?? str(m.button?.text))
              : m?.type === "interactive"
                ? (str(m.interactive?.button_reply?.id) ?? str(m.interactive?.list_reply?.id))
                : null;
        if (!id || !from || body === null) continue;
        out.push({ id, from: `+${from.replace(/^\+/, "")}`, phoneNumberId, body });
      }
    }
  }
  return out;
}
