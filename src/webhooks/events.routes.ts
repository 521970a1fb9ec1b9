import { createRoute, z } from "@hono/zod-openapi";
import { EVENT_TYPES, isEventType, type EventType } from "../domain/events";
import { authorize, organizationOfRequest } from "../http/auth";
import { validationError } from "../http/errors";
import { errors, idParam, jsonResponse, SECURITY } from "../http/openapi";
import { router } from "../http/router";
import { listEvents, openEventStream, openPendingStream, streamStartSeq } from "./event-stream";
import { EVENT_STREAM_PROTOCOL, isStreamLogin, STREAM_LOGIN_HEADER, type StreamStart } from "./event-hub";
import { clientIp } from "../http/rate-limit";
import { ok } from "../http/respond";
import { deps } from "../http/deps";

// The event stream as a list (issue #32): an integrator without a public URL catches up from
// the last event it saw. Same envelope as a webhook delivery's body.

const app = router();
const tags = ["Webhooks"];

const CommaList = (name: string, description: string, example: string) =>
  z
    .string()
    .max(2000)
    .optional()
    .openapi({ param: { name, in: "query" }, description, example });

const EventsQuery = z.object({
  startingAfter: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({
      param: { name: "startingAfter", in: "query" },
      description: "Events recorded after this one (the last id you saw: meta.nextCursor)",
    }),
  types: CommaList("types", "Only these event types, comma-separated", "ticket.created,ticket.called"),
  queueIds: CommaList("queueIds", "Only events of these queues, comma-separated", "que_d3m0q000000000000000"),
  limit: z.coerce.number().int().min(1).max(100).default(50).openapi({ description: "Default 50, maximum 100" }),
});

const Event = z
  .object({
    id: z.string().openapi({ example: "evt_d3m0sh1ft00000000000" }),
    type: z.string().openapi({ example: "ticket.called" }),
    createdAt: z.string(),
    organizationId: z.string(),
    data: z
      .record(z.string(), z.unknown())
      .openapi({ description: "As in the webhook delivery: the event's fields, queueId and ticketId" }),
  })
  .openapi("Event");

const EventsMeta = z
  .object({
    limit: z.number().int(),
    hasMore: z.boolean().openapi({ description: "More events are already recorded after this page: ask again at once" }),
    nextCursor: z.string().nullable().openapi({
      description:
        "Send as startingAfter next time: the last event of this page, or the cursor you sent when the page is empty (null before any event)",
    }),
  })
  .openapi("EventsMeta");

function commaList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

app.openapi(
  createRoute({
    method: "get",
    path: "/events",
    tags,
    summary: "The organization's events of the last 24 hours, oldest first, resumable from the last one seen",
    description:
      "Organization from the API key, X-Organization-Id, or the user's only membership. Scope `manage:webhooks` (or an `admin` key), or an owner/admin session. " +
      "From version 2026-11-28 a visitor's phone is `phoneMasked` and e-mails are left out, unless the key has the scope `read:personal_data` (given by name only, not part of `admin`); sessions always read the masked form. " +
      "Every event is listed once, in the order it was recorded: poll with startingAfter=meta.nextCursor and nothing is skipped or repeated. `npm run webhooks:listen` forwards them to a local URL.",
    security: SECURITY.any,
    request: { query: EventsQuery },
    responses: {
      200: jsonResponse(z.object({ success: z.literal(true), data: z.array(Event), meta: EventsMeta }), "Events"),
      ...errors(),
    },
  }),
  async (c) => {
    const organizationId = await organizationOfRequest(c);
    const actor = await authorize(c, organizationId, "WEBHOOK_MANAGE");
    const reader = { version: c.get("apiVersion"), personalData: actor.can("PERSONAL_DATA_VIEW") };
    const query = c.req.valid("query");
    const types = eventTypes(commaList(query.types));
    const queueIds = commaList(query.queueIds);
    if (queueIds.length > 100) throw validationError("queueIds", "at most 100 queues");
    const page = await listEvents(
      deps(c),
      organizationId,
      {
        types,
        queueIds,
        startingAfter: query.startingAfter ?? null,
        limit: query.limit,
      },
      reader,
    );
    if (page.kind === "unknownCursor") {
      throw validationError("startingAfter", "no event of this organization with this id in the last 24 hours (list again without it)");
    }
    const nextCursor = page.items.at(-1)?.id ?? query.startingAfter ?? null;
    c.header("Cache-Control", "no-store");
    return c.json(
      {
        success: true as const,
        data: page.items,
        meta: { limit: query.limit, hasMore: page.hasMore, nextCursor },
      },
      200,
    );
  },
);

// ---- the live socket (issue 41, docs/event-socket.md) -------------------------------------------

app.openapi(
  createRoute({
    method: "get",
    path: "/organizations/{organizationId}/events/stream",
    tags,
    summary: "The organization's events pushed over a WebSocket as they are recorded",
    description:
      "Upgrade with `Upgrade: websocket`. Same credential and permission as GET /v1/events (scope `manage:webhooks`, an `admin` key, or an owner/admin session). " +
      "A browser cannot set headers on an upgrade: it names the subprotocol `queue-events` and its key or session token as the second one, " +
      '`new WebSocket(url, ["queue-events", "qk_live_…"])`; the answer selects `queue-events`. ' +
      'Or it connects with no credential and sends `{"action": "authenticate", "key": "qk_live_…"}` (or a session token) as its first message, ' +
      'within 10 seconds: the answer is `{"type": "authenticated", "organizationId"}` and then the events; a refused login is ' +
      '`{"type": "error", "error": {code, message}}` and the socket closes (4401 bad or no credential, 4403 not allowed, 4400 bad message or query). ' +
      "Each message is one event in the webhook envelope, in recording order. `types` filters; `after` (an event id of the last 24 hours) first sends every event recorded after it, " +
      "exactly once and in order, then the live ones: reconnect with the last id you received and nothing is lost or repeated. Send the text `ping` as a keep-alive: the answer is `pong`.",
    security: SECURITY.any,
    "x-outside-callers":
      "a browser that logs in with its first message (no credential on the upgrade); any credential is judged by the handler",
    request: {
      params: idParam("organizationId", "org"),
      query: z.object({
        types: CommaList("types", "Only these event types, comma-separated", "ticket.created,ticket.called"),
        after: z
          .string()
          .min(1)
          .max(64)
          .optional()
          .openapi({ param: { name: "after", in: "query" }, description: "Resume after this event (the last id you received)" }),
      }),
    },
    responses: {
      101: { description: "Switching protocols to a WebSocket" },
      ...errors(),
    },
  }),
  async (c) => {
    // The event hub's own login of a socket opened without a credential (event-hub.ts): the start it would have had.
    const login = isStreamLogin(c.req.header(STREAM_LOGIN_HEADER));
    if (!login && c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
      throw validationError("Upgrade", "this route needs a WebSocket upgrade (Upgrade: websocket)");
    }
    const { organizationId } = c.req.valid("param");
    const offered = (c.req.header("Sec-WebSocket-Protocol") ?? "").split(",").map((p) => p.trim());
    const protocol = offered.includes(EVENT_STREAM_PROTOCOL) ? EVENT_STREAM_PROTOCOL : null;
    if (!login && c.get("principal").kind === "anonymous") {
      // No credential at all: a browser logs in with its first message (docs/event-socket.md).
      const url = new URL(c.req.url);
      return openPendingStream(deps(c), { organizationId, query: url.search, address: clientIp(c), protocol });
    }
    const actor = await authorize(c, organizationId, "WEBHOOK_MANAGE");
    const query = c.req.valid("query");
    const types = eventTypes(commaList(query.types));
    const afterSeq = await streamStartSeq(deps(c), organizationId, query.after ?? null);
    if (afterSeq === null) {
      throw validationError("after", "no event of this organization with this id in the last 24 hours (connect again without it)");
    }
    const start: StreamStart = {
      organizationId,
      types,
      afterSeq,
      reader: { version: c.get("apiVersion"), personalData: actor.can("PERSONAL_DATA_VIEW") },
      protocol,
    };
    if (login) return c.json(ok(start), 200);
    return openEventStream(deps(c), start);
  },
);

/** The listed event types, or 400 naming `types` for the first one that is not an event type. */
function eventTypes(list: string[]): EventType[] {
  const unknown = list.find((t) => !isEventType(t));
  if (unknown !== undefined) throw validationError("types", `unknown event type ${unknown}`, { allowed: [...EVENT_TYPES] });
  return list.filter(isEventType);
}

export default app;
