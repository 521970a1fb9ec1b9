import { createRoute, z } from "@hono/zod-openapi";
import { isPublicParagraph, PUBLIC_PARAGRAPH_RULE } from "../domain/public-text";
import type { AppEnv } from "../http/context";
import { authorizeOnQueue, ticketQueueOfCaller } from "../tickets/queue-access";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { listMessages, sendStaffReply } from "./conversations";
import type { Context } from "hono";
import { deps } from "../http/deps";

// A ticket's conversation with its customer (docs/conversations.md): what they texted, and the
// staff's answers through their channel.

const app = router();
const tags = ["Conversations"];

const TicketParam = idParam("ticketId", "tkt");

const MessageRecord = z
  .object({
    id: z.string().openapi({ example: "msg_d3m0m3ss4g3000000000" }),
    direction: z.enum(["in", "out"]).openapi({ description: "`in`: the customer wrote; `out`: we answered" }),
    channel: z.enum(["sms", "whatsapp", "ussd"]),
    body: z.string(),
    keyword: z
      .string()
      .nullable()
      .openapi({ description: "What an inbound text was read as (here, late, cancel, status, stop, start, help); null for free text" }),
    authorId: z.string().nullable().openapi({ description: "The member who wrote an answer; null for the service's automatic replies" }),
    status: z
      .enum(["received", "queued", "sent", "delivered", "failed"])
      .openapi({ description: "`received` for inbound texts; for answers, their delivery's state (provider status callbacks move it)" }),
    deliveryEventId: z
      .string()
      .nullable()
      .openapi({ description: "The delivery's `eventId` in GET /v1/notifications/deliveries; null for automatic replies" }),
    createdAt: z.string(),
  })
  .openapi("TicketMessage");

/** The §10 paragraph rules (C1 controls and lone surrogates included), and no tab: this text reaches a phone. */
const ReplyText = z
  .string()
  .trim()
  .min(1)
  .max(480)
  .refine((t) => isPublicParagraph(t) && !t.includes("\t"), PUBLIC_PARAGRAPH_RULE);

const ReplyBody = z
  .strictObject({ text: ReplyText.openapi({ example: "Nous vous appelons dans 5 minutes." }) })
  .openapi("TicketMessageRequest");

async function operated(c: Context<AppEnv>, ticketId: string, permission: "QUEUE_OPERATE" | "QUEUE_VIEW") {
  const queue = await ticketQueueOfCaller(c, ticketId);
  const actor = await authorizeOnQueue(c, queue, permission);
  return { queue, actor };
}

const list = createRoute({
  method: "get",
  path: "/tickets/{ticketId}/messages",
  tags,
  summary: "A ticket's conversation with its customer, both ways",
  description:
    "Oldest first: the customer's texts, WhatsApp messages and USSD inputs, our automatic answers and the staff's, each answer " +
    "with its delivery state. Members with QUEUE_VIEW at the ticket's location (others: 404).",
  security: SECURITY.any,
  request: { params: TicketParam, query: CursorQuery },
  responses: { 200: jsonResponse(cursorListEnvelope(MessageRecord), "The conversation"), ...errors() },
});

app.openapi(list, async (c) => {
  const { ticketId } = c.req.valid("param");
  await operated(c, ticketId, "QUEUE_VIEW");
  const window = listWindow(c.req.valid("query"));
  const { items, total, hasMore } = await listMessages(deps(c), ticketId, window);
  return c.json(
    {
      ...ok(items),
      meta: listMeta(
        items.map((m) => m.id),
        total,
        window,
        hasMore,
      ),
    },
    200,
  );
});

const send = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/messages",
  tags,
  summary: "Answers the ticket's customer with a free text, by the channel they use (WhatsApp or SMS)",
  description:
    "By WhatsApp free text when the customer uses WhatsApp (chose it at the join, or last wrote by WhatsApp) and wrote within " +
    "the last 24 hours (Meta's window; not counted in the SMS allowance); otherwise as the business's own SMS to the phone " +
    "given at the join: the pro plan, the day's ceiling and the month's allowance apply (402, 403 QUOTA_EXCEEDED). The answer's " +
    "`channel` says which. 409 CONFLICT with `details.reason` `no_phone` when the customer gave no number, `opted_out` when " +
    "the number sent STOP. Members with QUEUE_OPERATE at the ticket's location (others: 404).",
  security: SECURITY.any,
  request: { params: TicketParam, body: jsonBody(ReplyBody) },
  responses: { 201: jsonResponse(okEnvelope(MessageRecord), "The answer, as sent"), ...errors(402, 409) },
});

app.openapi(send, async (c) => {
  const { ticketId } = c.req.valid("param");
  const { queue, actor } = await operated(c, ticketId, "QUEUE_OPERATE");
  const message = await sendStaffReply(
    deps(c),
    { id: ticketId, queueId: queue.id, organizationId: queue.organizationId },
    c.req.valid("json").text,
    actor.userId ?? actor.apiKeyId!,
    now(),
  );
  return c.json(ok(message), 201);
});

export default app;
