import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { DEFAULT_MAX_DEFER_MINUTES, DEFAULT_MAX_DEFERS, QUEUE_STATUSES, TICKET_STATUSES } from "../domain/tickets";
import { smsKeywordOf } from "../domain/keywords";
import { auditOrigin } from "../http/audit-origin";
import { authorize, organizationOfRequest, requireCredential, requireUser, type Actor } from "../http/auth";
import type { AppEnv } from "../http/context";
import { ApiError, notFound, validationError } from "../http/errors";
import { reaches } from "../domain/location-scope";
import { locationsOfService } from "../catalog/location-scope";
import { deps } from "../http/deps";
import {
  errors,
  idParam,
  jsonBody,
  jsonResponse,
  listEnvelope,
  okEnvelope,
  optionalJsonBody,
  pageMeta,
  pageWindow,
  PaginationQuery,
  SECURITY,
} from "../http/openapi";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { cursorListEnvelope, cursorMeta, cursorOf, CursorQuery, listMeta, listWindow, unknownCursor } from "../http/cursor";
import { now } from "../lib/clock";
import { authorizeOnQueue, queueOfCaller } from "./queue-access";
import { archiveQueue, clearQueue, createQueue, describeQueue, listQueues, setQueueStatus, updateQueue } from "./queues";
import { callNextAfterPrevious } from "./previous-call";
import { listTickets, ticketRecord } from "./tickets";
import { joinQueue } from "./joins";
import { clientIp } from "../http/rate-limit";
import {
  CounterLabel,
  CustomerPhone,
  DefaultServiceMinutes,
  NotifyBy,
  IntakeAnswersBody,
  RouteBody,
  Language,
  TicketLabel,
  PHONE_RULES,
  PreviousCallMeta,
  PreviousOutcomeField,
  PublicLine,
  PublicParagraph,
  WaitRangeSchema,
} from "../http/schemas";
import { PhoneVerificationSchema } from "../http/schemas";
import { TicketRecord } from "./tickets.routes";

const app = router();
const tags = ["Queues"];

export const QueueRecord = z
  .object({
    id: z.string(),
    serviceId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    maxCapacity: z.number().int().nullable(),
    noShowTimeoutMinutes: z.number().int(),
    defaultServiceMinutes: z.number().int(),
    targetWaitMinutes: z.number().int().nullable().openapi({
      description: "The wait the branch aims for; the floor turns a line amber, then red, and alerts (docs/floor.md). null: none",
    }),
    maxDeferMinutes: z.number().int().openapi({ description: "How far ahead a ticket may ask for a later turn (docs/visits.md, defer)" }),
    maxDefers: z.number().int().openapi({ description: "How many later turns one ticket may ask; 0: none (docs/visits.md, defer)" }),
    smsKeyword: z.string().nullable().openapi({
      description: "The word a customer texts to the organization's number to take a ticket here (docs/conversations.md). null: none",
      example: "MAIRIE",
    }),
    status: z.enum(QUEUE_STATUSES),
    letter: z.string(),
    waitingCount: z.number().int(),
    servingCount: z.number().int(),
    estimatedWaitMinutes: z.number().int(),
    estimatedWaitRange: WaitRangeSchema,
    archivedAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Queue");

const QueueParam = idParam("queueId", "que");
const QueueName = PublicLine(100);
const QueueDescription = PublicParagraph(1000).nullable();
const MaxCapacity = z.number().int().min(1).max(10_000);
const NoShowTimeout = z.number().int().min(1).max(60).describe("Minutes a called ticket has to come forward before it expires (default 5)");
const TargetWait = z
  .number()
  .int()
  .min(1)
  .max(600)
  .describe(
    "Minutes a visitor should wait at most: the floor shows the line amber from 75 % of it, red past it, and alerts staff (docs/floor.md)",
  );
const MaxDeferMinutes = z
  .number()
  .int()
  .min(1)
  .max(480)
  .describe(
    `Minutes ahead a ticket may ask to be called at the earliest (POST /v1/tickets/{ticketId}/defer; default ${DEFAULT_MAX_DEFER_MINUTES})`,
  );
const MaxDefers = z
  .number()
  .int()
  .min(0)
  .max(10)
  .describe(`Later turns one ticket may ask (default ${DEFAULT_MAX_DEFERS}); 0 turns deferral off`);
const PartySize = z.number().int().min(1).max(50);
const VisitorName = PublicLine(100);

/** Who acts on a queue: the user, or for an API key the key itself. */
function actingId(actor: Actor): string {
  return actor.userId ?? actor.apiKeyId!;
}

async function queueFor(c: Context<AppEnv>, queueId: string, permission: Parameters<typeof authorize>[2]) {
  const queue = await queueOfCaller(c, queueId);
  const actor = await authorizeOnQueue(c, queue, permission);
  return { queue, actor };
}

const create = createRoute({
  method: "post",
  path: "/business/queues",
  tags,
  summary: "Create a queue for a service",
  description: "The queue gets the first free display letter of its service (A, B, …). The starter plan allows one queue.",
  security: SECURITY.any,
  request: {
    body: jsonBody(
      z
        .strictObject({
          serviceId: z.string().min(1).max(64),
          name: QueueName,
          description: QueueDescription.optional(),
          maxCapacity: MaxCapacity.nullable().optional(),
          noShowTimeoutMinutes: NoShowTimeout.optional(),
          defaultServiceMinutes: DefaultServiceMinutes.optional(),
          targetWaitMinutes: TargetWait.nullable().optional(),
          maxDeferMinutes: MaxDeferMinutes.optional(),
          maxDefers: MaxDefers.optional(),
        })
        .openapi("CreateQueueRequest"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(QueueRecord), "Created"), ...errors(402) },
});

app.openapi(create, async (c) => {
  const organizationId = await organizationOfRequest(c);
  const actor = await authorize(c, organizationId, "QUEUE_MANAGE");
  const input = c.req.valid("json");
  // A scoped manager adds queues to their locations' services only (issue 31).
  if (actor.locationIds !== null && !reaches(actor.locationIds, await locationsOfService(deps(c), input.serviceId))) {
    throw new ApiError("NOT_FOUND", "Service not found", { field: "serviceId" });
  }
  return c.json(ok(await createQueue(deps(c), organizationId, input, now(), undefined, auditOrigin(c, actor))), 201);
});

const list = createRoute({
  method: "get",
  path: "/business/queues",
  tags,
  summary: "The organization's queues (archived ones are hidden)",
  security: SECURITY.any,
  request: { query: CursorQuery.extend({ serviceId: z.string().min(1).max(64).optional() }) },
  responses: { 200: jsonResponse(cursorListEnvelope(QueueRecord), "Queues"), ...errors() },
});

app.openapi(list, async (c) => {
  const organizationId = await organizationOfRequest(c);
  const actor = await authorize(c, organizationId, "QUEUE_VIEW");
  const query = c.req.valid("query");
  const window = listWindow(query);
  const { items, total, hasMore } = await listQueues(deps(c), organizationId, query.serviceId, window, now(), actor.locationIds);
  return c.json(
    okList(
      items,
      listMeta(
        items.map((q) => q.id),
        total,
        window,
        hasMore,
      ),
    ),
    200,
  );
});

const get = createRoute({
  method: "get",
  path: "/queues/{queueId}",
  tags,
  summary: "A queue with its live counts",
  description: "Any signed-in user may read a queue (customers look before they join); an API key only its organization's.",
  security: SECURITY.any,
  "x-outside-callers": "any signed-in user (customers look before they join)",
  request: { params: QueueParam },
  responses: { 200: jsonResponse(okEnvelope(QueueRecord), "The queue"), ...errors() },
});

app.openapi(get, async (c) => {
  const principal = requireCredential(c);
  const queue = await queueOfCaller(c, c.req.valid("param").queueId);
  if (principal.kind === "apiKey" && principal.organizationId !== queue.organizationId) throw notFound("Queue");
  return c.json(ok(await describeQueue(deps(c), queue, now())), 200);
});

const status = createRoute({
  method: "patch",
  path: "/business/queues/{queueId}/status",
  tags,
  summary: "Open (active), pause or close a queue",
  description: "paused refuses new tickets but allows calling; closed refuses both. An archived queue cannot change.",
  security: SECURITY.any,
  request: { params: QueueParam, body: jsonBody(z.strictObject({ status: z.enum(QUEUE_STATUSES) }).openapi("QueueStatusRequest")) },
  responses: { 200: jsonResponse(okEnvelope(QueueRecord), "The queue"), ...errors(409) },
});

app.openapi(status, async (c) => {
  const { queue, actor } = await queueFor(c, c.req.valid("param").queueId, "QUEUE_MANAGE");
  return c.json(ok(await setQueueStatus(deps(c), queue, c.req.valid("json").status, now(), auditOrigin(c, actor))), 200);
});

const update = createRoute({
  method: "patch",
  path: "/business/queues/{queueId}",
  tags,
  summary: "Rename a queue or change its capacity, no-show timeout, target wait or join keyword",
  description:
    "Needs QUEUE_MANAGE. `null` clears the description, the capacity or the target wait. A lower capacity refuses joins until the line is under it " +
    "(nobody is removed); a new no-show timeout applies to tickets already called. An archived queue cannot change (409).",
  security: SECURITY.any,
  request: {
    params: QueueParam,
    body: jsonBody(
      z
        .strictObject({
          name: QueueName.optional(),
          description: QueueDescription.optional(),
          maxCapacity: MaxCapacity.nullable().optional(),
          noShowTimeoutMinutes: NoShowTimeout.optional(),
          defaultServiceMinutes: DefaultServiceMinutes.optional(),
          targetWaitMinutes: TargetWait.nullable().optional(),
          maxDeferMinutes: MaxDeferMinutes.optional(),
          maxDefers: MaxDefers.optional(),
          smsKeyword: z
            .string()
            .max(40)
            .nullable()
            .optional()
            .openapi({
              description:
                "Join by text: one word of 2–20 letters or digits starting with a letter, stored in upper case without accents; " +
                "unique in the organization (409 CONFLICT), not a reserved keyword (ICI, STOP, JOIN…). null: none",
              example: "MAIRIE",
            }),
        })
        .openapi("UpdateQueueRequest"),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(QueueRecord), "The queue"), ...errors(409) },
});

app.openapi(update, async (c) => {
  const { queue, actor } = await queueFor(c, c.req.valid("param").queueId, "QUEUE_MANAGE");
  const { smsKeyword, ...patch } = c.req.valid("json");
  let keyword: string | null | undefined = smsKeyword;
  if (smsKeyword) {
    const read = smsKeywordOf(smsKeyword);
    if ("refused" in read) throw validationError("smsKeyword", read.refused);
    keyword = read.keyword;
  }
  return c.json(ok(await updateQueue(deps(c), queue, { ...patch, smsKeyword: keyword }, now(), auditOrigin(c, actor))), 200);
});

const join = createRoute({
  method: "post",
  path: "/queues/{queueId}/join",
  tags,
  summary: "Take a ticket (customer)",
  description: `Needs a user session. Refused on a paused (QUEUE_PAUSED), closed (QUEUE_CLOSED) or full (QUEUE_FULL) queue. ${PHONE_RULES}`,
  security: SECURITY.session,
  "x-outside-callers": "customers",
  request: {
    params: QueueParam,
    body: optionalJsonBody(
      z
        .strictObject({
          partySize: PartySize.optional(),
          phone: CustomerPhone.optional(),
          notifyBy: NotifyBy.optional(),
          language: Language.optional(),
          intake: IntakeAnswersBody.optional(),
          route: RouteBody.optional(),
        })
        .openapi("JoinQueueRequest"),
    ),
  },
  responses: {
    201: jsonResponse(
      okEnvelope(
        TicketRecord.extend({ phoneVerification: PhoneVerificationSchema, notifyBy: NotifyBy.nullable() }).openapi("JoinedTicket"),
      ),
      "Ticket created",
    ),
    ...errors(409),
  },
});

app.openapi(join, async (c) => {
  const { user } = requireUser(c);
  const queue = await queueOfCaller(c, c.req.valid("param").queueId);
  const body = c.req.valid("json");
  const { ticket, phoneVerification, notifyBy } = await joinQueue(
    deps(c),
    queue,
    {
      notifyBy: body.notifyBy,
      ticket: {
        userId: user.id,
        partySize: body.partySize ?? 1,
        isPriority: false,
        isGhostMode: false,
        visitorName: null,
        phone: body.phone ?? null,
        language: body.language ?? user.language,
        source: "app",
        answers: body.intake,
      },
      caller: { address: clientIp(c), widgetKeyId: null },
      route: body.route,
    },
    now(),
  );
  return c.json(ok({ ...ticketRecord(ticket), phoneVerification, notifyBy }), 201);
});

const WalkInBody = z
  .strictObject({
    visitorName: VisitorName.optional(),
    partySize: PartySize.optional(),
    intake: IntakeAnswersBody.optional(),
    phone: CustomerPhone.optional().openapi({
      example: "+33698765432",
      description:
        "The customer's mobile, typed by the clerk: the only way a walk-in hears of its ticket (SMS; checked and capped as a widget join's phone)",
    }),
    language: Language.optional().openapi({ description: "The customer's language for the SMS (default: the organization's)" }),
    route: RouteBody.optional(),
  })
  .openapi("WalkInTicketRequest");

const operatorJoin = createRoute({
  method: "post",
  path: "/queues/{queueId}/operator-join",
  tags,
  summary: "Create a ticket for a walk-in visitor (ghost mode)",
  description:
    "Needs QUEUE_OPERATE. The ticket's userId is the operator's; it sends no notification, except SMS to the `phone` the clerk typed. " +
    "Under the SMS policy's `requirePhoneCode` no code is texted for it: staff vouch for the person, the number counts as verified.",
  security: SECURITY.any,
  request: { params: QueueParam, body: optionalJsonBody(WalkInBody) },
  responses: { 201: jsonResponse(okEnvelope(TicketRecord), "Ticket created"), ...errors(409) },
});

const vip = createRoute({
  method: "post",
  path: "/queues/{queueId}/vip-ticket",
  tags,
  summary: "Create a VIP ticket at the front of the line (ghost mode)",
  description:
    "Needs QUEUE_OPERATE. VIP tickets go ahead of regular ones, in the order they were created. Like a walk-in, it sends no notification, except SMS to the `phone` the clerk typed (no code under `requirePhoneCode`: staff vouch for the person).",
  security: SECURITY.any,
  request: { params: QueueParam, body: optionalJsonBody(WalkInBody) },
  responses: { 201: jsonResponse(okEnvelope(TicketRecord), "Ticket created"), ...errors(409) },
});

for (const [route, isPriority] of [
  [operatorJoin, false],
  [vip, true],
] as const) {
  app.openapi(route, async (c) => {
    const { queue, actor } = await queueFor(c, c.req.valid("param").queueId, "QUEUE_OPERATE");
    const body = c.req.valid("json");
    const { ticket } = await joinQueue(
      deps(c),
      queue,
      {
        ticket: {
          userId: actingId(actor),
          partySize: body.partySize ?? 1,
          isPriority,
          isGhostMode: true,
          visitorName: body.visitorName ?? null,
          phone: body.phone ?? null,
          language: body.language ?? null,
          source: isPriority ? "vip" : "operator",
          answers: body.intake,
        },
        caller: { address: clientIp(c), widgetKeyId: null },
        staffVouched: true,
        route: body.route,
      },
      now(),
    );
    return c.json(ok(ticketRecord(ticket)), 201);
  });
}

const callNextRoute = createRoute({
  method: "post",
  path: "/queues/{queueId}/call-next",
  tags,
  summary: "Call the next callable ticket",
  description:
    "Needs QUEUE_OPERATE. Completes the ticket the caller was serving. `serviceId`, if sent, must be the queue's service. " +
    '`counter` names where the visitor goes ("Guichet 3"); the display board shows it beside the code. Without it, a member\'s ' +
    "call shows their first name and an API key's call shows no label (a key's name is never shown). " +
    "QUEUE_EMPTY when no ticket can be called, QUEUE_CLOSED on a closed queue. `previousOutcome` says what became of the " +
    "caller's previous call in this queue that was never started (docs/floor.md); `meta` reports it.",
  security: SECURITY.any,
  request: {
    params: QueueParam,
    body: optionalJsonBody(
      z
        .strictObject({
          serviceId: z.string().min(1).max(64).optional(),
          counter: CounterLabel.optional().openapi({
            description: "The counter or desk label shown on the display board (1 to 40 characters)",
          }),
          previousOutcome: PreviousOutcomeField.optional(),
        })
        .openapi("CallNextRequest"),
    ),
  },
  responses: {
    200: jsonResponse(okEnvelope(TicketRecord).extend({ meta: PreviousCallMeta }), "The called ticket"),
    ...errors(409),
  },
});

app.openapi(callNextRoute, async (c) => {
  const { queue, actor } = await queueFor(c, c.req.valid("param").queueId, "QUEUE_OPERATE");
  const { serviceId, counter, previousOutcome } = c.req.valid("json");
  if (serviceId !== undefined && serviceId !== queue.serviceId) throw validationError("serviceId", "not the service of this queue");
  // The board shows the chosen label, else the member's first name; never an API key's name.
  const principal = c.get("principal");
  const label = counter ?? (principal.kind === "session" ? principal.user.firstName : null);
  const { ticket, previous } = await callNextAfterPrevious(deps(c), queue, actingId(actor), actor.userId, now(), label, previousOutcome);
  return c.json({ ...ok(ticketRecord(ticket)), meta: previous }, 200);
});

const clear = createRoute({
  method: "post",
  path: "/queues/{queueId}/clear",
  tags,
  summary: "Cancel every waiting and called ticket",
  security: SECURITY.any,
  request: { params: QueueParam },
  responses: { 200: jsonResponse(okEnvelope(z.object({ cancelled: z.number().int() })), "Cleared"), ...errors(409) },
});

app.openapi(clear, async (c) => {
  const { queue, actor } = await queueFor(c, c.req.valid("param").queueId, "QUEUE_MANAGE");
  return c.json(ok(await clearQueue(deps(c), queue, now(), auditOrigin(c, actor))), 200);
});

const archive = createRoute({
  method: "post",
  path: "/queues/{queueId}/archive",
  tags,
  summary: "Close the queue for good and hide it from listings",
  description: "Waiting and called tickets are cancelled, tickets being served are completed; all stay readable.",
  security: SECURITY.any,
  request: { params: QueueParam },
  responses: { 200: jsonResponse(okEnvelope(QueueRecord), "Archived"), ...errors(409) },
});

app.openapi(archive, async (c) => {
  const { queue, actor } = await queueFor(c, c.req.valid("param").queueId, "QUEUE_MANAGE");
  return c.json(ok(await archiveQueue(deps(c), queue, now(), auditOrigin(c, actor))), 200);
});

const tickets = createRoute({
  method: "get",
  path: "/queues/{queueId}/tickets",
  tags,
  summary: "The queue's tickets",
  description:
    "status=waiting lists in calling order; otherwise by number. Read page after page with startingAfter=meta.nextCursor: tickets joining or leaving meanwhile are neither skipped nor repeated (page and offset still work). `label` keeps the tickets carrying that label (read by page and offset).",
  security: SECURITY.any,
  request: {
    params: QueueParam,
    query: CursorQuery.extend({ status: z.enum(TICKET_STATUSES).optional(), label: TicketLabel.optional() }),
  },
  responses: { 200: jsonResponse(cursorListEnvelope(TicketRecord), "Tickets"), ...errors() },
});

app.openapi(tickets, async (c) => {
  const { queue } = await queueFor(c, c.req.valid("param").queueId, "QUEUE_VIEW");
  const query = c.req.valid("query");
  const cursor = cursorOf(query);
  const window = pageWindow(query);
  const page = await listTickets(deps(c), queue, query.status, window, now(), cursor, query.label ?? null);
  if (page.anchorMissing && cursor) unknownCursor(cursor);
  const read = cursor ? { cursor, hasMore: page.hasMore ?? false } : { cursor, page: window.page, offset: window.offset };
  return c.json(okList(page.items.map(ticketRecord), cursorMeta(page.items, { total: page.total, limit: window.limit, ...read })), 200);
});

export default app;
