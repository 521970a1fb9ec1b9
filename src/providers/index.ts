import type { Env } from "../env";
import { fcmSend, type PushMessage } from "./fcm";
import { outboxSend } from "./outbox";
import { orange, twilio, type SmsProvider } from "./sms";
import type { SendOutcome } from "./types";
import { webPushSend, type BrowserSubscription } from "./web-push";
import { whatsappSend, type WhatsappMessage } from "./whatsapp";

// Which provider each channel uses, from configuration. A channel without its secrets uses
// the outbox provider, so local development and tests run the whole flow offline.

export type { SendOutcome } from "./types";
export { outboxSend } from "./outbox";

export function sendPush(env: Env, deviceToken: string, message: PushMessage): Promise<SendOutcome> {
  if (!env.FCM_SERVICE_ACCOUNT) return Promise.resolve(outboxSend("push", deviceToken, message));
  return fcmSend({ serviceAccount: env.FCM_SERVICE_ACCOUNT, baseUrl: env.FCM_BASE_URL, tokenUrl: env.FCM_TOKEN_URL }, deviceToken, message);
}

/** The configured SMS provider, or null when its secrets are missing (the outbox stands in). */
export function smsProvider(env: Env): SmsProvider | null {
  const which = (env.SMS_PROVIDER ?? "twilio").toLowerCase();
  if (which === "twilio" && env.TWILIO_ACCOUNT_SID && env.TWILIO_AUTH_TOKEN && env.TWILIO_FROM) {
    return twilio({
      accountSid: env.TWILIO_ACCOUNT_SID,
      authToken: env.TWILIO_AUTH_TOKEN,
      from: env.TWILIO_FROM,
      baseUrl: env.SMS_BASE_URL,
    });
  }
  if (which === "orange" && env.ORANGE_CLIENT_ID && env.ORANGE_CLIENT_SECRET && env.ORANGE_SENDER) {
    return orange({
      clientId: env.ORANGE_CLIENT_ID,
      clientSecret: env.ORANGE_CLIENT_SECRET,
      sender: env.ORANGE_SENDER,
      baseUrl: env.SMS_BASE_URL,
    });
  }
  return null;
}

export function sendSms(env: Env, to: string, body: string, statusCallback?: string): Promise<SendOutcome> {
  const provider = smsProvider(env);
  return provider ? provider.send(to, body, statusCallback) : Promise.resolve(outboxSend("sms", to, { body }));
}

export function sendWebPush(env: Env, sub: BrowserSubscription, message: unknown): Promise<SendOutcome> {
  if (!env.VAPID_PUBLIC_KEY || !env.VAPID_PRIVATE_KEY) return Promise.resolve(outboxSend("web_push", sub.endpoint, message));
  const vapid = {
    publicKey: env.VAPID_PUBLIC_KEY,
    privateKey: env.VAPID_PRIVATE_KEY,
    subject: env.VAPID_SUBJECT ?? "mailto:support@example.com",
  };
  return webPushSend(vapid, sub, message);
}

/** A WhatsApp message from the organization's business number; the outbox records it without WHATSAPP_TOKEN. */
export function sendWhatsapp(env: Env, phoneNumberId: string, to: string, message: WhatsappMessage): Promise<SendOutcome> {
  if (!env.WHATSAPP_TOKEN) return Promise.resolve(outboxSend("whatsapp", to, { phoneNumberId, ...message }));
  return whatsappSend({ accessToken: env.WHATSAPP_TOKEN, baseUrl: env.WHATSAPP_API_BASE_URL }, phoneNumberId, to, message);
}
