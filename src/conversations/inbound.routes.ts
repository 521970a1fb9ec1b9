import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { errors, SECURITY } from "../http/openapi";
import { countUnverifiedWebhook, countVerifiedWebhook } from "../http/rate-limit";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { deliveryStateOf, isTwilioSigned, TWILIO_SIGNATURE_HEADER, twiml } from "../providers/twilio-inbound";
import { receiveText } from "./inbound";
import { releaseReceipt, takeReceipt } from "./inbound-receipts";
import { applyDeliveryReport } from "./inbound-status";
import { ok } from "../http/respond";
import { deps } from "../http/deps";

// What customers send us (docs/conversations.md). Providers call these routes, signed with
// their secret; without the secret (local development) the routes take unsigned messages, so a
// laptop can play the customer with curl, and the reply is printed. In production a missing
// secret is 503: an unsigned message could act on anyone's ticket.

const app = router();
const tags = ["Conversations"];

const TwimlResponse = {
  description: "TwiML: the reply Twilio texts back to the customer (an empty <Response/> when none)",
  content: {
    "text/xml": {
      schema: z.string().openapi({
        example:
          '<?xml version="1.0" encoding="UTF-8"?><Response><Message>A-042 : merci, l\'accueil sait que vous êtes là.</Message></Response>',
      }),
    },
  },
};

/** The URL the provider signed: the public origin when one is configured (a proxy may rewrite the host). */
function signedUrl(c: Context<AppEnv>): string {
  const url = new URL(c.req.url);
  const base = c.env.PUBLIC_BASE_URL?.replace(/\/+$/, "");
  return base ? `${base}${url.pathname}${url.search}` : url.toString();
}

/** The form the provider posted, once its signature holds (or no secret is configured outside production). */
async function verifiedTwilioForm(c: Context<AppEnv>): Promise<URLSearchParams> {
  const form = new URLSearchParams(await c.req.text());
  const token = c.env.TWILIO_AUTH_TOKEN;
  if (!token) {
    if (c.env.ENVIRONMENT === "production") {
      throw new ApiError("PROVIDER_UNAVAILABLE", "TWILIO_AUTH_TOKEN is not configured: inbound SMS are refused", {
        field: TWILIO_SIGNATURE_HEADER,
      });
    }
    // The stand-in: unsigned, so counted as any anonymous request of its address.
    await countUnverifiedWebhook(c);
    return form;
  }
  if (!(await isTwilioSigned(token, signedUrl(c), form, c.req.header(TWILIO_SIGNATURE_HEADER)))) {
    // Not signed by Twilio: anyone's anonymous request, in the strict bucket of its address.
    await countUnverifiedWebhook(c);
    throw new ApiError("VALIDATION_ERROR", "The request is not signed by Twilio", {
      field: TWILIO_SIGNATURE_HEADER,
      reason: c.req.header(TWILIO_SIGNATURE_HEADER) ? "mismatch" : "missing",
    });
  }
  await countVerifiedWebhook(c, "twilio");
  return form;
}

/** Required parameters of a provider's form: 400 naming the one missing. */
function field(form: URLSearchParams, name: string): string {
  const value = form.get(name);
  if (value === null || value.trim() === "") {
    throw new ApiError("VALIDATION_ERROR", `Invalid value for ${name}: required`, { field: name, reason: "required" });
  }
  return value;
}

const TWIML_HEADERS = { "Content-Type": "text/xml; charset=utf-8" };

const twilioSms = createRoute({
  method: "post",
  path: "/inbound/sms/twilio",
  tags,
  summary: "Receives a customer's SMS from Twilio (signed)",
  description:
    "Twilio's incoming-message webhook: form-encoded `From`, `To`, `Body`, `MessageSid`, …, signed with `X-Twilio-Signature` " +
    "(base64 HMAC-SHA1 with TWILIO_AUTH_TOKEN over the full URL and the sorted parameters). A missing or wrong signature is " +
    "400 and changes nothing; a MessageSid already received answers 200 and changes nothing (a replay or Twilio's retry). " +
    "The text is matched to a live ticket of the business the conversation is with: the owner of the `To` number, else the " +
    "ticket the customer chose or the only business with a live ticket of theirs, else the customer is sent a short menu. " +
    "It is read as a keyword (HERE/ICI, " +
    "LATE/RETARD, CANCEL/ANNULER, STATUS/STATUT, STOP/ARRET, START, HELP/AIDE; case and accents ignored) or kept as a " +
    "message on the ticket; the answer is TwiML carrying the reply. Without TWILIO_AUTH_TOKEN, unsigned messages are taken " +
    "outside production (the local stand-in, docs/conversations.md) and 503 in production.",
  security: SECURITY.none,
  responses: { 200: TwimlResponse, ...errors(503) },
});

app.openapi(twilioSms, async (c) => {
  const form = await verifiedTwilioForm(c);
  const from = field(form, "From");
  // Twilio always sends one; the local stand-in's curl may not.
  const messageSid = c.env.TWILIO_AUTH_TOKEN ? field(form, "MessageSid") : (form.get("MessageSid") ?? crypto.randomUUID());
  const at = now();
  // A replay or Twilio's retry of a message already taken: 200, and nothing acts or answers again.
  if (!(await takeReceipt(deps(c), "twilio", messageSid, at))) return c.body(twiml(null), 200, TWIML_HEADERS) as never;
  let outcome;
  try {
    outcome = await receiveText(deps(c), { channel: "sms", from, to: form.get("To"), body: form.get("Body") ?? "" }, at);
  } catch (err) {
    await releaseReceipt(deps(c), "twilio", messageSid);
    throw err;
  }
  if (!c.env.TWILIO_AUTH_TOKEN) {
    // The local stand-in: what Twilio would have texted back.
    console.log(JSON.stringify({ conversation: "reply", channel: "sms", to: from, action: outcome.action, body: outcome.reply }));
  }
  return c.body(twiml(outcome.reply), 200, TWIML_HEADERS) as never;
});

const twilioStatus = createRoute({
  method: "post",
  path: "/inbound/sms/twilio/status",
  tags,
  summary: "Receives Twilio's status callback for an SMS we sent (signed)",
  description:
    "The `StatusCallback` each SMS is sent with when PUBLIC_BASE_URL is set: `?delivery=<delivery key>` and the form's " +
    "`MessageStatus` (queued, sent, delivered, undelivered, failed…), signed like the inbound SMS. The delivery moves forward " +
    "only (sent → delivered, or → failed), shown in the delivery listing and the ticket's conversation.",
  security: SECURITY.none,
  request: { query: z.object({ delivery: z.string().min(1).max(300).openapi({ description: "The delivery's key" }) }) },
  responses: {
    200: {
      description: "Received",
      content: {
        "application/json": { schema: z.object({ success: z.literal(true), data: z.object({ state: z.string(), applied: z.boolean() }) }) },
      },
    },
    ...errors(503),
  },
});

app.openapi(twilioStatus, async (c) => {
  const form = await verifiedTwilioForm(c);
  const reported = field(form, "MessageStatus");
  const state = deliveryStateOf(reported);
  if (!state)
    throw new ApiError("VALIDATION_ERROR", `Invalid value for MessageStatus: unknown status ${reported}`, { field: "MessageStatus" });
  const answer =
    `callback ${reported}${form.get("ErrorCode") ? ` error ${form.get("ErrorCode")}` : ""} ${form.get("MessageSid") ?? ""}`.trim();
  const applied = await applyDeliveryReport(deps(c), c.req.valid("query").delivery, state, answer, now());
  return c.json(ok({ state, applied }), 200);
});

export default app;
