import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import { QUEUE_STATUSES, TICKET_SOURCES, TICKET_STATUSES } from "../domain/tickets";
import { actorIn, type Actor, type ResourceLocations } from "../http/auth";
import type { AppEnv } from "../http/context";
import { publicQueue, queueOfCaller } from "../tickets/queue-access";
import { forbidden, notFound, validationError } from "../http/errors";
import { reachesOrganization } from "../http/livemode";
import { reaches } from "../domain/location-scope";
import { locationsOfService } from "../catalog/location-scope";
import { deps } from "../http/deps";
import { permissionRefused } from "../http/permission-refusal";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import {
  CounterLabel,
  CustomerPhone,
  IntakeAnswersBody,
  RouteBody,
  IntakeAnswersRecord,
  PHONE_RULES,
  PublicLine,
  WaitRangeSchema,
} from "../http/schemas";
import { Language, NotifyBy, PhoneVerificationSchema, PlacementSchema } from "../http/schemas";
import { TICKET_KINDS } from "../domain/blend";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { fingerprint } from "../lib/crypto";
import { isTwinOrganizationId, queueIdOfTicket } from "../lib/ids";
import { clientIp, credentialRefusal, recordFailedCredential } from "../http/rate-limit";
import { findQueue, type QueueRow } from "../tickets/queues";
import { deferBounds } from "../tickets/tickets";
import { leaveQueue, readVisitorTicket, ticketTokenForm, visitorDefer, visitorStepBack } from "../tickets/visitor-tickets";
import { DEFER_RULES, DeferTicketRequest, deferRequestOf, StepBackRequest } from "../tickets/ticket-moves.routes";
import { connectToHub, connectToRoom, displayBoard, ticketPlace, widgetInfo, widgetJoin, widgetStatus, widgetTicket } from "./widget";

const app = router();
const tags = ["Widget"];

/**
 * Widget routes are called from any web page: CORS is open to every origin, preflights are
 * answered before authentication, and errors carry the headers too.
 */
export const widgetCors = cors({
  origin: "*",
  allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
  allowHeaders: ["X-API-Key", "Content-Type", "Idempotency-Key", "X-Request-ID", "X-Ticket-Token"],
  exposeHeaders: [
    "X-Request-ID",
    "ETag",
    "Retry-After",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "X-API-RateLimit-Limit",
    "X-API-RateLimit-Remaining",
    "X-API-RateLimit-Reset",
  ],
  maxAge: 600,
});

/**
 * A widget key restricted to origins (`allowedOrigins`, on verified domains) is answered only
 * from those origins: CORS names the caller's origin, and any other origin, or none, gets 403
 * without CORS headers. Runs after authentication, on the widget routes.
 */
export const widgetOriginLock = createMiddleware<AppEnv>(async (c, next) => {
  const principal = c.get("principal");
  if (principal.kind !== "apiKey" || principal.allowedOrigins === null) return next();
  const origin = c.req.header("Origin")?.toLowerCase();
  if (!origin || !principal.allowedOrigins.includes(origin)) {
    c.header("Access-Control-Allow-Origin", undefined);
    c.header("Access-Control-Expose-Headers", undefined);
    throw forbidden("This widget key is restricted to its allowed origins");
  }
  c.header("Access-Control-Allow-Origin", origin);
  c.header("Vary", "Origin", { append: true });
  await next();
});

/** Short enough that a polling widget stays current, long enough to absorb a crowd's refreshes. */
export const STATUS_CACHE_CONTROL = "public, max-age=5";

/**
 * A widget key may call these routes; so may the organization's other keys and members:
 * `read` access (QUEUE_VIEW) for info, status and board, QUEUE_OPERATE (`write`, `admin`) to join.
 * `resource` names what the route reaches and where (`at`: its locations, read only for a member
 * scoped to some; null for the whole organization): a member scoped to other locations is
 * answered what an unknown resource answers (docs/security.md), as the resource guards do.
 */
export async function widgetActor(
  c: Context<AppEnv>,
  organizationId: string,
  need: "read" | "join",
  resource: { what: string; at: ResourceLocations | null },
): Promise<Actor> {
  const actor = await actorIn(c, organizationId, resource.what);
  const other = need === "read" ? "QUEUE_VIEW" : "QUEUE_OPERATE";
  if (!actor.can("WIDGET") && !actor.can(other)) throw permissionRefused(["WIDGET", other], actor);
  if (actor.locationIds !== null && resource.at !== null) {
    const at = typeof resource.at === "function" ? await resource.at() : resource.at;
    if (!reaches(actor.locationIds, at)) throw notFound(resource.what);
  }
  return actor;
}

const OrganizationParam = idParam("organizationId", "org");
const QueueParam = idParam("queueId", "que");

export const WidgetStatus = z
  .object({
    queueId: z.string(),
    name: z.string(),
    status: z.enum(QUEUE_STATUSES),
    waitingCount: z.number().int(),
    estimatedWaitMinutes: z.number().int(),
    estimatedWaitRange: WaitRangeSchema,
    nowServing: z
      .array(z.string())
      .openapi({ description: "Codes of the tickets called or being served, most recent call first (at most 5)" }),
  })
  .openapi("WidgetQueueStatus");

const WidgetInfo = z
  .object({
    organizationId: z.string(),
    name: z.string(),
    logoUrl: z.string().nullable(),
    defaultLanguage: Language,
    languages: z.array(Language).openapi({ description: "The languages the pages offer, in the order of the language switch" }),
    queues: z.array(z.object({ id: z.string(), name: z.string(), status: z.enum(QUEUE_STATUSES) })),
  })
  .openapi("WidgetOrganizationInfo");

export const WidgetTicket = z
  .object({
    id: z.string(),
    queueId: z.string(),
    number: z.number().int(),
    displayCode: z.string().openapi({ example: "A-042" }),
    status: z.enum(TICKET_STATUSES),
    position: z.number().int().nullable(),
    estimatedWaitMinutes: z.number().int().nullable(),
    estimatedWaitRange: WaitRangeSchema.nullable(),
    partySize: z.number().int(),
    visitorName: z.string().nullable(),
    source: z.enum(TICKET_SOURCES),
    createdAt: z.string(),
    intake: IntakeAnswersRecord,
    kind: z.enum(TICKET_KINDS),
    appointmentAt: z.string().nullable(),
    placement: PlacementSchema.nullable(),
  })
  .openapi("WidgetTicket");

const JoinedTicket = WidgetTicket.extend({
  ticketToken: z.string().openapi({
    description:
      "The visitor's capability for this one ticket (128 random bits and their signature, base64url), answered once: send it as `X-Ticket-Token` " +
      "to read or leave the ticket, or in a socket's ticket subscribe. It dies when the ticket is cancelled or finished.",
    example: "q3N8v0c1Zr6mT2yWbE5kH9sJ4dLx7aPfGu0oRiXnYw8A",
  }),
  phoneVerification: PhoneVerificationSchema,
  notifyBy: NotifyBy.nullable(),
}).openapi("WidgetJoinedTicket");

export const VisitorTicket = z
  .object({
    ticketId: z.string(),
    queueId: z.string(),
    queueName: z.string().openapi({ example: "Main line" }),
    displayCode: z.string().openapi({ example: "A-042" }),
    status: z.enum(TICKET_STATUSES),
    position: z.number().int().nullable().openapi({ description: "1 = next; null unless waiting" }),
    estimatedWaitMinutes: z.number().int().nullable(),
    estimatedWaitRange: WaitRangeSchema.nullable(),
    counter: CounterLabel.nullable().openapi({
      description:
        "Where to go: call-next's `counter`, else the calling member's first name; null until called (or for a key's call without one)",
      example: "Guichet 3",
    }),
    calledAt: z.string().nullable(),
    deferredUntil: z.string().nullable().openapi({
      description: "Not called before this time (POST /v1/widget/tickets/{ticketId}/defer); null when no later turn is pending",
    }),
    deferCount: z.number().int().openapi({ description: "Later turns this ticket asked for" }),
    kind: z.enum(TICKET_KINDS).openapi({ description: "walk_in, or appointment (docs/blend.md)" }),
    appointmentAt: z.string().nullable(),
    placement: PlacementSchema.nullable().openapi({
      description: "Why the ticket stands where it does, in its language; null unless waiting",
    }),
    leg: z
      .object({ index: z.number().int(), of: z.number().int() })
      .nullable()
      .openapi({ description: "Several services in one visit (docs/visits.md): this leg, from 1; null for a one-service visit" }),
    routedToId: z
      .string()
      .nullable()
      .openapi({
        description:
          "A served leg handed on to the visit's next service: the next leg's ticket id, read with the same token " +
          "(GET /v1/widget/tickets/{routedToId}); null otherwise, and while the hand-off is in flight (read again in a moment)",
      }),
    language: Language.nullable().openapi({
      description:
        "The language the visitor chose at the join (the join's `language`): the status page speaks it unless the visitor picks " +
        "another; null when the join gave none (the business's default applies)",
      example: "fr",
    }),
  })
  .openapi("VisitorTicket");

const BoardCallKind = z
  .enum(TICKET_KINDS)
  .openapi({ description: 'walk_in, or appointment: the board shows "Appointment" beside the call' });

const BoardCallLanguage = Language.nullable().openapi({
  description:
    "The ticket's language (the join's `language`): a board offering it among its `voices` says the call in it " +
    "(docs/display-board.md); null when the join gave none",
});

/** One queue on the board: an item of the display-board route and the WebSocket's `board_update` data. */
const boardQueueShape = {
  queueId: z.string(),
  name: z.string(),
  status: z.enum(QUEUE_STATUSES),
  waitingCount: z.number().int(),
  estimatedWaitMinutes: z.number().int(),
  estimatedWaitRange: WaitRangeSchema,
  called: z.array(
    z.object({
      displayCode: z.string(),
      status: z.enum(["called", "serving"]),
      counter: CounterLabel.nullable().openapi({
        description: "Where to go: call-next's `counter`, else the calling member's first name; null for a key's call without one",
      }),
      calledAt: z.string(),
      kind: BoardCallKind,
      language: BoardCallLanguage,
    }),
  ),
  nextWaiting: z.array(z.string()).openapi({ description: "The next codes in call order (at most 5)" }),
  generatedAt: z.string().openapi({ description: "The server's time of this data, to age the calls by" }),
};

export const DisplayBoardQueue = z.object(boardQueueShape).openapi("DisplayBoardQueue");

const DisplayBoard = z
  .object({
    organizationId: z.string(),
    organization: z.object({ name: z.string(), logoUrl: z.string().nullable() }),
    location: z
      .object({ id: z.string(), name: z.string(), address: z.string() })
      .nullable()
      .openapi({ description: "The branch of a board asked with `?location=`; null for the whole organization" }),
    timeZone: z.string().openapi({
      description: "IANA time zone of the clock: the board's location's, else the organization's first location's, else UTC",
      example: "Europe/Paris",
    }),
    desks: z.array(z.object({ counter: CounterLabel })).openapi({
      description:
        "The open desks (of the board's location) calling from a shown queue, by the label their calls carry as `counter`: " +
        "a desks layout shows each one, also before its first call",
    }),
    generatedAt: z.string(),
    closures: z.array(z.object({ start: z.string(), end: z.string() })).openapi({
      description:
        "The calendar's closures of the whole organization (or of the board's location) in the next 24 hours: the board shows " +
        "its closed screen while one runs (docs/display-board.md)",
    }),
    queues: z.array(
      // The board route's calls also carry the deprecated `assignedTo` (the socket's do not).
      z.object({
        ...boardQueueShape,
        called: z.array(
          z.object({
            displayCode: z.string(),
            status: z.enum(["called", "serving"]),
            counter: CounterLabel.nullable().openapi({
              description: "Where to go: call-next's `counter`, else the calling member's first name; null for a key's call without one",
            }),
            assignedTo: z.string().nullable().openapi({
              description: "Deprecated (use `counter`): first name of the member who called, or the name of the calling API key",
            }),
            calledAt: z.string(),
            kind: BoardCallKind,
            language: BoardCallLanguage,
          }),
        ),
      }),
    ),
  })
  .openapi("DisplayBoard");

// ---- info -----------------------------------------------------------------------------------

const info = createRoute({
  method: "get",
  path: "/widget/organization/{organizationId}/info",
  tags,
  summary: "The organization as the widget shows it",
  description: "Public name, logo, languages and open queues. A `widget` key, or any key or member with read access.",
  security: SECURITY.any,
  request: { params: OrganizationParam },
  responses: { 200: jsonResponse(okEnvelope(WidgetInfo), "The organization's widget information"), ...errors() },
});

app.openapi(info, async (c) => {
  const { organizationId } = c.req.valid("param");
  await widgetActor(c, organizationId, "read", { what: "Organization", at: null });
  return c.json(ok(await widgetInfo(deps(c), organizationId)), 200);
});

// ---- status (public) --------------------------------------------------------------------------

const status = createRoute({
  method: "get",
  path: "/widget/queue/{queueId}/status",
  tags,
  summary: "Live status of a queue (public)",
  description:
    "No credential. Cached for 5 seconds (`Cache-Control: public, max-age=5`) with an `ETag`: send `If-None-Match` to get " +
    "`304 Not Modified` while nothing changed. Rate-limited per IP. The WebSocket pushes the same data on every change.",
  security: SECURITY.none,
  request: { params: QueueParam },
  responses: {
    200: jsonResponse(okEnvelope(WidgetStatus), "The queue's status"),
    304: { description: "Unchanged since the ETag sent in If-None-Match" },
    ...errors(),
  },
});

app.openapi(status, async (c) => {
  const queue = await publicQueue(c, c.req.valid("param").queueId);
  if (!reachesOrganization(c.get("principal"), queue.organizationId)) throw notFound("Queue");
  const body = ok(await widgetStatus(deps(c), queue, now()));
  const etag = `W/"${fingerprint(JSON.stringify(body))}"`;
  const headers = { "Cache-Control": STATUS_CACHE_CONTROL, ETag: etag };
  const match = c.req.header("If-None-Match");
  if (match && match.split(",").some((tag) => tag.trim() === etag || tag.trim() === "*")) {
    return c.body(null, 304, headers);
  }
  return c.json(body, 200, headers);
});

// ---- join -------------------------------------------------------------------------------------

const JoinBody = z
  .strictObject({
    visitorName: PublicLine(100).optional(),
    phone: CustomerPhone.optional(),
    notifyBy: NotifyBy.optional(),
    partySize: z.number().int().min(1).max(50).optional().openapi({ description: "1 to 50, default 1" }),
    intake: IntakeAnswersBody.optional(),
    route: RouteBody.optional(),
    language: Language.optional().openapi({
      description: "The language the visitor chose on the page: the ticket's SMS, push and receipt use it (default: the organization's)",
    }),
  })
  .openapi("WidgetJoinRequest");

const join = createRoute({
  method: "post",
  path: "/widget/queue/{queueId}/join",
  tags,
  summary: "Take a ticket from the widget",
  description:
    "A `widget` key, or a key or member with QUEUE_OPERATE (`write`, `admin`). The ticket's source is `widget`; its userId is the key's id. " +
    "Refused on a paused (QUEUE_PAUSED), closed (QUEUE_CLOSED) or full (QUEUE_FULL) queue; counts towards the plan's monthly tickets. " +
    PHONE_RULES,
  security: SECURITY.any,
  request: { params: QueueParam, body: { required: false, content: { "application/json": { schema: JoinBody } } } },
  responses: { 201: jsonResponse(okEnvelope(JoinedTicket), "Ticket created, with the visitor's ticket token"), ...errors(409) },
});

app.openapi(join, async (c) => {
  const queue = await queueOfCaller(c, c.req.valid("param").queueId);
  const actor = await widgetActor(c, queue.organizationId, "join", {
    what: "Queue",
    at: () => locationsOfService(deps(c), queue.serviceId),
  });
  const body = c.req.valid("json");
  const { ticket, token, phoneVerification, notifyBy } = await widgetJoin(
    deps(c),
    queue,
    {
      actingId: actor.userId ?? actor.apiKeyId!,
      visitorName: body.visitorName ?? null,
      phone: body.phone ?? null,
      partySize: body.partySize ?? 1,
      address: clientIp(c),
      widgetKeyId: actor.apiKeyId ?? null,
      botToken: c.req.header("CF-Turnstile-Response") ?? null,
      answers: body.intake,
      language: body.language ?? null,
      notifyBy: body.notifyBy,
      route: body.route,
    },
    now(),
  );
  return c.json(ok({ ...widgetTicket(ticket), ticketToken: token, phoneVerification, notifyBy }), 201);
});

// ---- the visitor's ticket (its token) ---------------------------------------------------------

export const TICKET_TOKEN_HEADER = "X-Ticket-Token";
const TicketParam = idParam("ticketId", "tkt");
const TicketTokenHeader = z.object({
  [TICKET_TOKEN_HEADER]: z
    .string()
    .optional()
    .openapi({ description: "The `ticketToken` the widget join answered", example: "q3N8v0c1Zr6mT2yWbE5kH9sJ4dLx7aPfGu0oRiXnYw8A" }),
});

/**
 * Runs `use` for the holder of the ticket's token. A missing or wrong token, an unknown or
 * finished ticket all answer 404 (nothing tells the ticket exists). A token we did not sign is
 * refused on the spot (no lookup, nothing counted); a signed token whose ticket has ended is a
 * visitor still polling, not a guess, so it counts nowhere. Only a token of the unsigned format
 * handed before needs the room to judge it: that lookup sits behind the address's
 * failed-credential limit, and its failure counts (CONTRACT §10).
 */
export async function withTicketToken<T>(
  c: Context<AppEnv>,
  ticketId: string,
  use: (queue: QueueRow, token: string) => Promise<T | null>,
): Promise<T> {
  const token = c.req.header(TICKET_TOKEN_HEADER)?.trim();
  const queueId = queueIdOfTicket(ticketId);
  const form = token && queueId ? await ticketTokenForm(deps(c), token) : "forged";
  if (form === "forged" || !token || !queueId) throw notFound("Ticket");
  if (form === "legacy") {
    const refused = await credentialRefusal(c);
    if (refused) throw refused;
  }
  // A visitor polling their ticket reads like the status: the queue row may come from memory
  // (its name only; the room checks the token and knows a deleted queue). Leaving reads D1.
  const read = c.req.method === "GET" ? publicQueue(c, queueId) : findQueue(deps(c), queueId);
  const queue = await read.catch(() => null);
  const result = queue ? await use(queue, token) : null;
  if (result === null) {
    if (form === "legacy") await recordFailedCredential(c);
    throw notFound("Ticket");
  }
  return result;
}

const visitorTicket = createRoute({
  method: "get",
  path: "/widget/tickets/{ticketId}",
  tags,
  summary: "The visitor's ticket, read with its token",
  description:
    "Send the join's `ticketToken` as `X-Ticket-Token`. Answers the ticket as the widget shows it: code, status, position, " +
    "wait, and the counter once called. A leg of a visit of several services that was served and handed on still answers, " +
    "`served` with `routedToId` (the next leg's ticket, same token), so a page can follow the visitor (docs/visits.md). " +
    "A missing or wrong token, or another ticket that is cancelled or finished, is 404; only a token of " +
    "the unsigned format handed before counts as a wrong credential of the caller's IP (docs/limits.md). No API key needed.",
  security: SECURITY.none,
  request: { params: TicketParam, headers: TicketTokenHeader },
  responses: { 200: jsonResponse(okEnvelope(VisitorTicket), "The visitor's ticket"), ...errors() },
});

app.openapi(visitorTicket, async (c) => {
  const { ticketId } = c.req.valid("param");
  const data = await withTicketToken(c, ticketId, (queue, token) => readVisitorTicket(deps(c), queue, ticketId, token, now()));
  return c.json(ok(data), 200);
});

const TicketPlace = z
  .object({
    organization: z.object({ name: z.string(), logoUrl: z.string().nullable() }),
    serviceName: z.string(),
    location: z
      .object({ name: z.string(), address: z.string() })
      .nullable()
      .openapi({ description: "The branch of the ticket's service; null when the service is offered at several locations (or none)" }),
    timeZone: z.string().openapi({
      description: 'IANA time zone of the service\'s (first) location, else UTC: the page tells times ("Back at 10:30") on it',
      example: "Europe/Paris",
    }),
    defer: z
      .object({
        maxMinutes: z.number().int().openapi({ description: "The queue's `maxDeferMinutes`: how far ahead a later turn may be" }),
        maxDefers: z.number().int().openapi({
          description:
            "The queue's `maxDefers`: later turns per ticket (0: no \"I'm running late\"); compare with the ticket's `deferCount`",
        }),
      })
      .openapi({ description: "The queue's bounds of POST /v1/widget/tickets/{ticketId}/defer (docs/visits.md), for the page's choices" }),
    defaultLanguage: Language,
    languages: z.array(Language).openapi({ description: "The languages the business offers: the status page's language switch" }),
  })
  .openapi("WidgetTicketPlace");

const visitorTicketPlace = createRoute({
  method: "get",
  path: "/widget/tickets/{ticketId}/place",
  tags,
  summary: "Where the visitor's ticket is: business, branch and address",
  description:
    "Send the join's `ticketToken` as `X-Ticket-Token`, as for the ticket's read. Answers what the status page's header shows: the " +
    "business's name and logo, the service, and the branch's name and address (null when the service is offered at several " +
    "locations), and the queue's bounds of a later turn (`defer`). Read once: it does not change during a visit. A missing or wrong token is 404.",
  security: SECURITY.none,
  request: { params: TicketParam, headers: TicketTokenHeader },
  responses: { 200: jsonResponse(okEnvelope(TicketPlace), "Where the ticket is"), ...errors() },
});

app.openapi(visitorTicketPlace, async (c) => {
  const { ticketId } = c.req.valid("param");
  const data = await withTicketToken(c, ticketId, async (queue, token) => {
    if ((await readVisitorTicket(deps(c), queue, ticketId, token, now())) === null) return null;
    const place = await ticketPlace(deps(c), queue);
    const { maxDeferMinutes, maxDefers } = deferBounds(queue);
    return place && { ...place, defer: { maxMinutes: maxDeferMinutes, maxDefers } };
  });
  return c.json(ok(data), 200);
});

const leave = createRoute({
  method: "post",
  path: "/widget/tickets/{ticketId}/cancel",
  tags,
  summary: "Leave the queue: the visitor cancels their ticket with its token",
  description:
    "Send the join's `ticketToken` as `X-Ticket-Token`. Cancels a waiting or called ticket and answers it (`cancelled`); the " +
    "token dies with it. 409 INVALID_STATE once the ticket is being served. A missing or wrong token is 404, as for the read.",
  security: SECURITY.none,
  request: { params: TicketParam, headers: TicketTokenHeader },
  responses: { 200: jsonResponse(okEnvelope(VisitorTicket), "The ticket, cancelled"), ...errors(409) },
});

app.openapi(leave, async (c) => {
  const { ticketId } = c.req.valid("param");
  const data = await withTicketToken(c, ticketId, (queue, token) => leaveQueue(deps(c), queue, ticketId, token, now()));
  return c.json(ok(data), 200);
});

const visitorStepBackRoute = createRoute({
  method: "post",
  path: "/widget/tickets/{ticketId}/step-back",
  tags,
  summary: "Let others pass: the visitor steps back a few places with the ticket's token, once",
  description:
    "Send the join's `ticketToken` as `X-Ticket-Token`. As POST /v1/tickets/{ticketId}/step-back (docs/desks.md): a waiting " +
    "ticket moves behind the next `places` waiting tickets, once (a second time 409 CONFLICT). A missing or wrong token is " +
    "404, as for the read.",
  security: SECURITY.none,
  request: { params: TicketParam, headers: TicketTokenHeader, body: jsonBody(StepBackRequest) },
  responses: { 200: jsonResponse(okEnvelope(VisitorTicket), "The ticket at its new place"), ...errors(409) },
});

app.openapi(visitorStepBackRoute, async (c) => {
  const { ticketId } = c.req.valid("param");
  const { places } = c.req.valid("json");
  const data = await withTicketToken(c, ticketId, (queue, token) => visitorStepBack(deps(c), queue, ticketId, token, places, now()));
  return c.json(ok(data), 200);
});

const visitorDeferRoute = createRoute({
  method: "post",
  path: "/widget/tickets/{ticketId}/defer",
  tags,
  summary: "\"I'm running late\": the visitor asks for a later turn with the ticket's token",
  description:
    "Send the join's `ticketToken` as `X-Ticket-Token`; a missing or wrong token is 404, as for the read. As POST " +
    "/v1/tickets/{ticketId}/defer (docs/visits.md): " +
    DEFER_RULES,
  security: SECURITY.none,
  request: { params: TicketParam, headers: TicketTokenHeader, body: jsonBody(DeferTicketRequest) },
  responses: { 200: jsonResponse(okEnvelope(VisitorTicket), "The ticket with its later turn"), ...errors(409, 422) },
});

app.openapi(visitorDeferRoute, async (c) => {
  const { ticketId } = c.req.valid("param");
  const at = now();
  const request = deferRequestOf(c.req.valid("json"), at);
  const data = await withTicketToken(c, ticketId, (queue, token) => visitorDefer(deps(c), queue, ticketId, token, request, at));
  return c.json(ok(data), 200);
});

// ---- display board ----------------------------------------------------------------------------

const board = createRoute({
  method: "get",
  path: "/widget/organization/{organizationId}/display-board",
  tags,
  summary: "Call screen data for waiting rooms",
  description:
    "Per open queue: the called and serving tickets with who called them, newest call first (at most 10), and the next codes " +
    "(at most 5). `?location=` keeps the queues of services offered at that branch (its name, clock, closures and open desks; " +
    "404 for a location of another organization); `?queues=` keeps the listed queues. A `widget` key, or any key or member with " +
    "read access. Subscribe to the queues over the WebSocket to refresh on change.",
  security: SECURITY.any,
  request: {
    params: OrganizationParam,
    query: z.object({
      location: z
        .string()
        .regex(/^loc_[A-Za-z0-9]+$/, "a location id (loc_…)")
        .optional()
        .openapi({ description: "A location id: the board of this branch only", example: "loc_d3m0par1s00000000000" }),
      queues: z
        .string()
        .max(1000)
        .regex(/^[A-Za-z0-9_-]+(,[A-Za-z0-9_-]+)*$/, "comma-separated queue ids")
        .optional()
        .openapi({ description: "Comma-separated queue ids: only these queues" }),
    }),
  },
  responses: { 200: jsonResponse(okEnvelope(DisplayBoard), "The display board"), ...errors() },
});

app.openapi(board, async (c) => {
  const { organizationId } = c.req.valid("param");
  const { location, queues } = c.req.valid("query");
  await widgetActor(c, organizationId, "read", { what: "Organization", at: location ? [location] : null });
  return c.json(ok(await displayBoard(deps(c), organizationId, now(), { locationId: location, queueIds: queues?.split(",") })), 200);
});

// ---- WebSocket --------------------------------------------------------------------------------

const socket = createRoute({
  method: "get",
  path: "/widget/ws",
  tags,
  summary: "Live queue updates over a WebSocket (public)",
  description:
    'Connect, then send `{"action": "subscribe", "queueId": "que_…"}`: the server answers `{"type": "queue_update", "data": <status>}` ' +
    'at once and after every change of that queue, and `{"type": "error", "data": {"code", "message", "queueId"?}}` for a bad message or ' +
    "an unknown queue (the socket stays open). One socket may subscribe to several queues of one organization; " +
    '`{"action": "unsubscribe", "queueId"}` stops them. Send the text `ping` as a keep-alive: the answer is `pong`. ' +
    "Optional `?queueId=` subscribes at connection time (404 before the upgrade for an unknown queue). " +
    'A display board adds `"view": "board"` to its subscribe messages (or `&view=board` to the URL): it then receives ' +
    '`{"type": "board_update", "data": <DisplayBoardQueue>}` instead of `queue_update` (the calls with their counter, the next ' +
    "codes, the waiting count and wait), so it never refetches the display-board route.",
  security: SECURITY.none,
  request: {
    query: z.object({
      queueId: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,64}$/, "a queue id")
        .optional()
        .openapi({ description: "Subscribe to this queue at connection time" }),
      view: z.enum(["status", "board"]).optional().openapi({ description: "board: the `?queueId=` subscription receives board_update" }),
    }),
  },
  responses: {
    101: { description: "Switching protocols to a WebSocket" },
    ...errors(),
  },
});

app.openapi(socket, async (c) => {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
    throw validationError("Upgrade", "this route needs a WebSocket upgrade (Upgrade: websocket)");
  }
  const { queueId, view } = c.req.valid("query");
  const principal = c.get("principal");
  if (queueId === undefined)
    return connectToHub(
      deps(c),
      principal.kind === "apiKey" && isTwinOrganizationId(principal.organizationId) ? principal.organizationId : null,
    );
  return connectToRoom(deps(c), queueId, view ?? "status", (organizationId) => reachesOrganization(principal, organizationId));
});

export default app;
