import { importPKCS8, SignJWT } from "jose";
import { answerOf, isTransientStatus, networkFailure, trimUrl, type SendOutcome } from "./types";

// Firebase Cloud Messaging, HTTP v1. The service account's key signs an RS256 JWT that is
// exchanged for an OAuth2 access token (kept until a minute before it expires), then one
// `messages:send` per device token.

export interface FcmConfig {
  /** The service-account JSON (FCM_SERVICE_ACCOUNT). */
  serviceAccount: string;
  /** Default https://fcm.googleapis.com (FCM_BASE_URL). */
  baseUrl?: string;
  /** Default the account's token_uri, else https://oauth2.googleapis.com/token (FCM_TOKEN_URL). */
  tokenUrl?: string;
}

export interface PushMessage {
  title: string;
  body: string;
  /** FCM accepts string values only. */
  data: Record<string, string>;
}

interface ServiceAccount {
  client_email: string;
  private_key: string;
  project_id: string;
  token_uri?: string;
}

const SCOPE = "https://www.googleapis.com/auth/firebase.messaging";
const DEFAULT_TOKEN_URL = "https://oauth2.googleapis.com/token";
const REFRESH_MARGIN_MS = 60_000;

/** Access tokens by service account, for the isolate's life. */
const tokens = new Map<string, { token: string; expiresAt: number }>();

function parseAccount(json: string): ServiceAccount {
  const account = JSON.parse(json) as ServiceAccount;
  if (!account.client_email || !account.private_key || !account.project_id) {
    throw new Error("FCM_SERVICE_ACCOUNT lacks client_email, private_key or project_id");
  }
  return account;
}

async function accessToken(account: ServiceAccount, tokenUrl: string): Promise<string | SendOutcome> {
  const cacheKey = `${account.client_email}|${tokenUrl}`;
  const cached = tokens.get(cacheKey);
  if (cached && cached.expiresAt - REFRESH_MARGIN_MS > Date.now()) return cached.token;
  const key = await importPKCS8(account.private_key, "RS256");
  const iat = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({ scope: SCOPE })
    .setProtectedHeader({ alg: "RS256", typ: "JWT" })
    .setIssuer(account.client_email)
    .setAudience(tokenUrl)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 3600)
    .sign(key);
  let res: Response;
  try {
    res = await fetch(tokenUrl, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion }).toString(),
    });
  } catch (err) {
    return networkFailure("fcm", err);
  }
  if (!res.ok) return { ok: false, provider: "fcm", transient: isTransientStatus(res.status), response: `token: ${await answerOf(res)}` };
  const body = (await res.json()) as { access_token: string; expires_in?: number };
  tokens.set(cacheKey, { token: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 3600) * 1000 });
  return body.access_token;
}

/** FCM's error status for a token that will never work again: the device registration goes. */
function isDeadToken(status: number, answer: string): boolean {
  return (status === 404 && answer.includes("UNREGISTERED")) || (status === 400 && answer.includes("INVALID_ARGUMENT"));
}

export async function fcmSend(config: FcmConfig, deviceToken: string, message: PushMessage): Promise<SendOutcome> {
  let account: ServiceAccount;
  try {
    account = parseAccount(config.serviceAccount);
  } catch (err) {
    return { ok: false, provider: "fcm", transient: false, response: `configuration: ${String(err)}` };
  }
  const tokenUrl = config.tokenUrl ?? account.token_uri ?? DEFAULT_TOKEN_URL;
  const token = await accessToken(account, tokenUrl);
  if (typeof token !== "string") return token;
  const base = trimUrl(config.baseUrl ?? "https://fcm.googleapis.com");
  let res: Response;
  try {
    res = await fetch(`${base}/v1/projects/${encodeURIComponent(account.project_id)}/messages:send`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({
        message: { token: deviceToken, notification: { title: message.title, body: message.body }, data: message.data },
      }),
    });
  } catch (err) {
    return networkFailure("fcm", err);
  }
  const answer = await answerOf(res);
  if (res.ok) return { ok: true, provider: "fcm", response: answer };
  if (res.status === 401) tokens.delete(`${account.client_email}|${tokenUrl}`);
  return {
    ok: false,
    provider: "fcm",
    transient: isTransientStatus(res.status) || res.status === 401,
    response: answer,
    deadToken: isDeadToken(res.status, answer),
  };
}
