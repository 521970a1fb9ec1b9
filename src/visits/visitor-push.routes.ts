import { createRoute, z } from "@hono/zod-openapi";
import { actorIn } from "../http/auth";
import { notFound } from "../http/errors";
import { Language } from "../http/schemas";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { queueIdOfTicket } from "../lib/ids";
import { b64urlDecode } from "../providers/web-push";
import { findQueue } from "../tickets/queues";
import { getTicket } from "../tickets/tickets";
import { deps } from "../http/deps";
import { subscribeVisitorPush, unsubscribeVisitorPush } from "./visitor-push";

// Web push for widget visitors, who have no account. A visitor's browser is tied to a ticket
// by holding two things only the page that took the ticket has together: the widget's API key
// (the credential that joined; the ticket's userId is that key's id) and the ticket id (100
// random bits, returned once by the join). The subscription lives as long as the ticket: it is
// dropped when the ticket is served, cancelled, expired or transferred, or when the browser's
// push service answers 404/410.

const app = router();
const tags = ["Widget"];

const B64URL = /^[A-Za-z0-9_-]+={0,2}$/;

function decodesTo(length: number, first?: number) {
  return (v: string) => {
    if (!B64URL.test(v)) return false;
    try {
      const bytes = b64urlDecode(v.replace(/=+$/, ""));
      return bytes.length === length && (first === undefined || bytes[0] === first);
    } catch {
      return false;
    }
  };
}

const Subscription = z
  .strictObject({
    endpoint: z
      .url({ protocol: /^https$/ })
      .max(2048)
      .openapi({ example: "https://fcm.googleapis.com/fcm/send/dXN1YWxseS1hLXRva2Vu" }),
    keys: z.strictObject({
      p256dh: z.string().refine(decodesTo(65, 4), "the browser's P-256 public key, base64url (65 bytes, uncompressed)"),
      auth: z.string().refine(decodesTo(16), "the browser's auth secret, base64url (16 bytes)"),
    }),
    language: Language.optional().openapi({
      description: "The pushes' language, any of the catalogue (else the ticket's, else the organization's)",
    }),
  })
  .openapi("VisitorPushSubscription");

const TicketParam = idParam("ticketId", "tkt");

/** The widget ticket this credential took, while it is still live; anything else is 404. */
async function visitorTicket(c: Parameters<typeof actorIn>[0], ticketId: string) {
  const queueId = queueIdOfTicket(ticketId);
  if (!queueId) throw notFound("Ticket");
  const queue = await findQueue(deps(c), queueId).catch(() => {
    throw notFound("Ticket");
  });
  const actor = await actorIn(c, queue.organizationId, "Ticket");
  const ticket = await getTicket(deps(c), queue, ticketId, now()).catch(() => {
    throw notFound("Ticket");
  });
  if (ticket.source !== "widget" || ticket.userId !== (actor.apiKeyId ?? actor.userId)) throw notFound("Ticket");
  return { queue, ticket };
}

const publicKey = createRoute({
  method: "get",
  path: "/widget/push/public-key",
  tags,
  summary: "The VAPID public key browsers subscribe with (null: web push is not configured)",
  security: SECURITY.none,
  responses: { 200: jsonResponse(okEnvelope(z.object({ publicKey: z.string().nullable() })), "The key"), ...errors() },
});

app.openapi(publicKey, async (c) => c.json(ok({ publicKey: c.env.VAPID_PUBLIC_KEY ?? null }), 200));

const subscribe = createRoute({
  method: "post",
  path: "/widget/tickets/{ticketId}/push-subscription",
  tags,
  summary: "Opt a widget visitor in to web push for their ticket",
  description:
    "Called by embed.js after a widget join, with the same API key that took the ticket and the browser's PushSubscription " +
    "(`subscription.toJSON()`). Only a live widget ticket taken with this key is accepted (else 404). The visitor then gets the " +
    "ticket's notifications (almost called, called, …) in `language` (else the organization's default) until the ticket ends.",
  security: SECURITY.apiKey,
  request: { params: TicketParam, body: jsonBody(Subscription) },
  responses: {
    201: jsonResponse(okEnvelope(z.object({ ticketId: z.string(), endpoint: z.string(), subscribed: z.literal(true) })), "Subscribed"),
    ...errors(),
  },
});

app.openapi(subscribe, async (c) => {
  const { ticketId } = c.req.valid("param");
  const body = c.req.valid("json");
  const { queue, ticket } = await visitorTicket(c, ticketId);
  if (ticket.status !== "waiting" && ticket.status !== "called") throw notFound("Ticket");
  await subscribeVisitorPush(
    deps(c),
    {
      ticketId,
      organizationId: queue.organizationId,
      endpoint: body.endpoint,
      p256dh: body.keys.p256dh,
      auth: body.keys.auth,
      language: body.language ?? null,
    },
    now(),
  );
  return c.json(ok({ ticketId, endpoint: body.endpoint, subscribed: true as const }), 201);
});

const unsubscribe = createRoute({
  method: "delete",
  path: "/widget/tickets/{ticketId}/push-subscription",
  tags,
  summary: "Opt a widget visitor out of web push for their ticket",
  security: SECURITY.apiKey,
  request: { params: TicketParam, body: jsonBody(z.strictObject({ endpoint: z.url().max(2048) }).openapi("VisitorPushUnsubscribe")) },
  responses: { 200: jsonResponse(okEnvelope(z.object({ ticketId: z.string(), removed: z.literal(true) })), "Removed"), ...errors() },
});

app.openapi(unsubscribe, async (c) => {
  const { ticketId } = c.req.valid("param");
  const { endpoint } = c.req.valid("json");
  await visitorTicket(c, ticketId);
  if (!(await unsubscribeVisitorPush(deps(c), ticketId, endpoint))) throw notFound("Push subscription");
  return c.json(ok({ ticketId, removed: true as const }), 200);
});

export default app;
