import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { authorize } from "../http/auth";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { errors, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { countUnverifiedWebhook, countVerifiedWebhook } from "../http/rate-limit";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { constantTimeEqual } from "../lib/crypto";
import { deliver } from "../notifications/notification-delivery";
import { openWhatsappWindow, organizationOfWhatsappNumber, whatsappJoinLink } from "../notifications/whatsapp";
import { inboundMessagesOf, isWhatsappSigned, WHATSAPP_SIGNATURE_HEADER, type WhatsappInbound } from "../providers/whatsapp";
import { findQueue } from "../tickets/queues";
import { receiveText } from "./inbound";
import { releaseReceipt, takeReceipt } from "./inbound-receipts";
import { deps } from "../http/deps";

// WhatsApp, the customer's side (docs/conversations.md, "WhatsApp"): Meta's webhook brings the
// customer's messages and quick-reply taps, signed with the app secret; the business number
// that received each one (phone_number_id) names the organization, so a customer of B never
// reaches A's ticket. Each is read like an SMS (the same keywords, the same matching) and the
// reply goes back as free text (the customer's message just opened the 24-hour window).

const app = router();
const tags = ["Conversations"];

const challenge = createRoute({
  method: "get",
  path: "/inbound/whatsapp",
  tags,
  summary: "Answers Meta's webhook subscription challenge",
  description:
    "Meta verifies the callback URL with `hub.mode=subscribe`, `hub.verify_token` and `hub.challenge`: when the token equals " +
    "WHATSAPP_VERIFY_TOKEN the challenge is echoed as text/plain; otherwise (or with no token configured) 403.",
  security: SECURITY.none,
  request: {
    query: z.object({
      "hub.mode": z.string().max(64).optional(),
      "hub.verify_token": z.string().max(512).optional(),
      "hub.challenge": z.string().max(512).optional(),
    }),
  },
  responses: {
    200: { description: "The challenge, echoed", content: { "text/plain": { schema: z.string().openapi({ example: "1158201444" }) } } },
    ...errors(403),
  },
});

app.openapi(challenge, async (c) => {
  const q = c.req.valid("query");
  const expected = c.env.WHATSAPP_VERIFY_TOKEN;
  const token = q["hub.verify_token"];
  if (!expected || q["hub.mode"] !== "subscribe" || !token || !constantTimeEqual(token, expected) || q["hub.challenge"] === undefined) {
    throw new ApiError("AUTHORIZATION_ERROR", "The subscription challenge does not carry this service's verify token", {
      field: "hub.verify_token",
    });
  }
  return c.text(q["hub.challenge"], 200) as never;
});

/** The raw body, once its signature holds (or no app secret is configured outside production). */
async function verifiedBody(c: Context<AppEnv>): Promise<string> {
  const raw = await c.req.text();
  const secret = c.env.WHATSAPP_APP_SECRET;
  if (!secret) {
    if (c.env.ENVIRONMENT === "production") {
      throw new ApiError("PROVIDER_UNAVAILABLE", "WHATSAPP_APP_SECRET is not configured: inbound WhatsApp messages are refused", {
        field: WHATSAPP_SIGNATURE_HEADER,
      });
    }
    await countUnverifiedWebhook(c);
    return raw;
  }
  const header = c.req.header(WHATSAPP_SIGNATURE_HEADER);
  if (!(await isWhatsappSigned(secret, raw, header))) {
    await countUnverifiedWebhook(c);
    throw new ApiError("AUTHENTICATION_ERROR", "The request is not signed by Meta", {
      field: WHATSAPP_SIGNATURE_HEADER,
      reason: header ? "mismatch" : "missing",
    });
  }
  await countVerifiedWebhook(c, "whatsapp");
  return raw;
}

const receive = createRoute({
  method: "post",
  path: "/inbound/whatsapp",
  tags,
  summary: "Receives customers' WhatsApp messages from Meta (signed)",
  description:
    "Meta's webhook (`object: whatsapp_business_account`, `entry[].changes[].value.messages[]`), signed with " +
    "`X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with WHATSAPP_APP_SECRET>`. A missing or wrong signature " +
    "is 401 and changes nothing; a message id already received changes nothing (a replay or Meta's retry). Each text or " +
    "quick-reply payload is read like an SMS (HERE/ICI, LATE/RETARD, CANCEL/ANNULER, STATUS/STATUT, STOP/ARRET, START, " +
    "HELP/AIDE) on the customer's live ticket at the organization whose number (`metadata.phone_number_id`) received it, " +
    "and answered by WhatsApp. Statuses and messages to a number no organization connected are acknowledged and ignored. " +
    "Without WHATSAPP_APP_SECRET, unsigned posts are taken outside production (the local stand-in) and 503 in production.",
  security: SECURITY.none,
  responses: {
    200: jsonResponse(
      okEnvelope(
        z.object({
          received: z.number().int().openapi({ description: "Customer messages read and acted on" }),
          ignored: z
            .number()
            .int()
            .openapi({ description: "Replays, messages to a number no organization connected, and messages over an inbound limit" }),
        }),
      ),
      "Acknowledged (Meta retries anything else)",
    ),
    ...errors(401, 503),
  },
});

/** One customer message: acted on once, answered from the number it was sent to. */
async function receiveOne(c: Context<AppEnv>, m: WhatsappInbound, at: number): Promise<boolean> {
  const organizationId = await organizationOfWhatsappNumber(deps(c), m.phoneNumberId);
  if (!organizationId) return false;
  if (!(await takeReceipt(deps(c), "whatsapp", m.id, at))) return false;
  let outcome;
  try {
    await openWhatsappWindow(deps(c), organizationId, m.from, at);
    outcome = await receiveText(
      deps(c),
      { channel: "whatsapp", from: m.from, to: `whatsapp:${m.phoneNumberId}`, body: m.body, organizationId },
      at,
    );
  } catch (err) {
    await releaseReceipt(deps(c), "whatsapp", m.id);
    throw err;
  }
  if (outcome.reply !== null) {
    // A reply to the customer's own message: inside the window, not counted as a visitor's SMS.
    await deliver(
      deps(c),
      [
        {
          eventId: `wamsg_${m.id}`,
          organizationId,
          type: "whatsapp.reply",
          channel: "whatsapp",
          target: { kind: "phone", phone: m.from },
          title: "",
          body: outcome.reply,
          data: {
            waOrganizationId: organizationId,
            waPhoneNumberId: m.phoneNumberId,
            ...(outcome.ticketId ? { ticketId: outcome.ticketId } : {}),
          },
          countUsage: false,
        },
      ],
      at,
    );
  }
  // Over an inbound limit: taken (Meta does not retry it), but not acted on.
  return outcome.action !== "limited";
}

app.openapi(receive, async (c) => {
  const raw = await verifiedBody(c);
  let payload: unknown;
  try {
    payload = JSON.parse(raw);
  } catch {
    throw new ApiError("VALIDATION_ERROR", "The body is not JSON", { field: "body", reason: "malformed" });
  }
  const at = now();
  let received = 0;
  let ignored = 0;
  for (const m of inboundMessagesOf(payload)) {
    if (await receiveOne(c, m, at)) received += 1;
    else ignored += 1;
  }
  return c.json(ok({ received, ignored }), 200);
});

const link = createRoute({
  method: "get",
  path: "/queues/{queueId}/whatsapp-link",
  tags,
  summary: "The wa.me link that opens a chat with the organization's WhatsApp number, the queue's join text prefilled (QUEUE_VIEW)",
  description:
    "For a QR code at the door: `https://wa.me/<number>?text=<text>`. The text is the queue's join request in the organization's " +
    "language with the queue's `smsKeyword` (`REJOINDRE MAIRIE`, `JOIN MAIRIE`), which the inbound message joins with (join by text). " +
    "A queue without a keyword gets its id instead (`JOIN que_…`), which joins nothing: `smsKeyword: null` says so; set one with " +
    "PATCH /v1/business/queues/{queueId}. 404 when the organization has no WhatsApp number.",
  security: SECURITY.any,
  request: { params: z.object({ queueId: z.string().min(1).max(64).openapi({ example: "que_1a2b3c" }) }) },
  responses: {
    200: jsonResponse(
      okEnvelope(
        z
          .object({
            url: z.string().openapi({ example: "https://wa.me/2250700000000?text=REJOINDRE%20MAIRIE" }),
            phoneNumber: z.string().openapi({ example: "+2250700000000" }),
            text: z.string().openapi({ example: "REJOINDRE MAIRIE" }),
            smsKeyword: z.string().nullable().openapi({
              description: "The queue's join keyword the text carries; null when the queue has none (the text then joins nothing)",
              example: "MAIRIE",
            }),
          })
          .openapi("WhatsappLink"),
      ),
      "The link",
    ),
    ...errors(),
  },
});

app.openapi(link, async (c) => {
  const queue = await findQueue(deps(c), c.req.valid("param").queueId);
  await authorize(c, queue.organizationId, "QUEUE_VIEW");
  const link = await whatsappJoinLink(deps(c), queue.organizationId, queue.id);
  if (!link) throw new ApiError("NOT_FOUND", "This organization has no WhatsApp number", { reason: "whatsapp_not_configured" });
  return c.json(ok(link), 200);
});

export default app;
