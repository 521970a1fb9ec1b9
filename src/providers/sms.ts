import { answerOf, isTransientStatus, networkFailure, trimUrl, type SendOutcome } from "./types";

// SMS behind one interface. SMS_PROVIDER picks the provider (twilio | orange); with its
// secrets missing, the outbox provider stands in (see ./outbox.ts).

export interface SmsProvider {
  name: string;
  /** `statusCallback`: where the provider reports the message's fate (Twilio's StatusCallback), when it can. */
  send(to: string, body: string, statusCallback?: string): Promise<SendOutcome>;
}

export interface TwilioConfig {
  accountSid: string;
  authToken: string;
  /** A sender number (+E.164) or a Messaging Service SID (MG…). */
  from: string;
  baseUrl?: string;
}

export function twilio(config: TwilioConfig): SmsProvider {
  const base = trimUrl(config.baseUrl ?? "https://api.twilio.com");
  return {
    name: "twilio",
    async send(to, body, statusCallback) {
      const form = new URLSearchParams({ To: to, Body: body });
      form.set(config.from.startsWith("MG") ? "MessagingServiceSid" : "From", config.from);
      if (statusCallback) form.set("StatusCallback", statusCallback);
      let res: Response;
      try {
        res = await fetch(`${base}/2010-04-01/Accounts/${encodeURIComponent(config.accountSid)}/Messages.json`, {
          method: "POST",
          headers: {
            Authorization: `Basic ${btoa(`${config.accountSid}:${config.authToken}`)}`,
            "Content-Type": "application/x-www-form-urlencoded",
          },
          body: form.toString(),
        });
      } catch (err) {
        return networkFailure("twilio", err);
      }
      const answer = await answerOf(res);
      return res.ok
        ? { ok: true, provider: "twilio", response: answer }
        : { ok: false, provider: "twilio", transient: isTransientStatus(res.status), response: answer };
    },
  };
}

export interface OrangeConfig {
  clientId: string;
  clientSecret: string;
  /** The sender number without "+" or "tel:" (e.g. 2250000000). */
  sender: string;
  baseUrl?: string;
}

const orangeTokens = new Map<string, { token: string; expiresAt: number }>();

/** Orange SMS API (West Africa): OAuth2 client credentials, then an outbound SMS request. */
export function orange(config: OrangeConfig): SmsProvider {
  const base = trimUrl(config.baseUrl ?? "https://api.orange.com");
  async function token(): Promise<string | SendOutcome> {
    const cached = orangeTokens.get(config.clientId);
    if (cached && cached.expiresAt - 60_000 > Date.now()) return cached.token;
    let res: Response;
    try {
      res = await fetch(`${base}/oauth/v3/token`, {
        method: "POST",
        headers: {
          Authorization: `Basic ${btoa(`${config.clientId}:${config.clientSecret}`)}`,
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: "grant_type=client_credentials",
      });
    } catch (err) {
      return networkFailure("orange", err);
    }
    if (!res.ok)
      return { ok: false, provider: "orange", transient: isTransientStatus(res.status), response: `token: ${await answerOf(res)}` };
    const body = (await res.json()) as { access_token: string; expires_in?: number };
    orangeTokens.set(config.clientId, { token: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 3600) * 1000 });
    return body.access_token;
  }
  return {
    name: "orange",
    async send(to, body) {
      const access = await token();
      if (typeof access !== "string") return access;
      const sender = `tel:+${config.sender.replace(/^\+/, "")}`;
      let res: Response;
      try {
        res = await fetch(`${base}/smsmessaging/v1/outbound/${encodeURIComponent(sender)}/requests`, {
          method: "POST",
          headers: { Authorization: `Bearer ${access}`, "Content-Type": "application/json" },
          body: JSON.stringify({
            outboundSMSMessageRequest: { address: `tel:${to}`, senderAddress: sender, outboundSMSTextMessage: { message: body } },
          }),
        });
      } catch (err) {
        return networkFailure("orange", err);
      }
      const answer = await answerOf(res);
      return res.ok
        ? { ok: true, provider: "orange", response: answer }
        : { ok: false, provider: "orange", transient: isTransientStatus(res.status), response: answer };
    },
  };
}
