import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Permission } from "../domain/permissions";
import type { AppEnv } from "../http/context";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, optionalJsonBody, SECURITY } from "../http/openapi";
import { validationError } from "../http/errors";
import { authorizeOnQueue, ticketQueueOfCaller } from "./queue-access";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import type { QueueRow } from "../http/credentials/queues";
import { requireCredential } from "../http/auth";
import { DEFAULT_MAX_DEFER_MINUTES, DEFAULT_MAX_DEFERS, DEFER_MAX_PLACES, STEP_BACK_MAX_PLACES } from "../domain/tickets";
import type { DeferRequest } from "./tickets";
import {
  getTicket,
  holdTicket,
  deferTicket,
  prioritizeTicket,
  recallTicket,
  resumeTicket,
  returnTicket,
  stepBackTicket,
  ticketRecord,
  unprioritizeTicket,
} from "./tickets";
import { TicketRecord } from "./tickets.routes";
import { PublicLine } from "../http/schemas";
import { deps } from "../http/deps";

// The operator's verbs beyond the spec's (docs/desks.md): recall, return to the line, hold and resume, and the
// owner's step back. Each is one command of the ticket's room.

const app = router();
const tags = ["Tickets"];
const TicketParam = idParam("ticketId", "tkt");
const TicketResponse = jsonResponse(okEnvelope(TicketRecord), "The ticket");

async function operated(c: Context<AppEnv>, ticketId: string, permission: Permission = "QUEUE_OPERATE"): Promise<QueueRow> {
  const queue = await ticketQueueOfCaller(c, ticketId);
  await authorizeOnQueue(c, queue, permission);
  return queue;
}

const recall = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/recall",
  tags,
  summary: "Announce a called ticket again",
  description:
    "Needs QUEUE_OPERATE. The ticket stays called; `recallCount` + 1, event `ticket.recalled` (webhooks, the customer's " +
    "notification), the display board flashes the code again. At most 3 recalls per call (409 RECALL_LIMIT_REACHED); " +
    "a ticket that is not called is 409 INVALID_STATE.",
  security: SECURITY.any,
  request: { params: TicketParam },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(recall, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await operated(c, ticketId);
  return c.json(ok(ticketRecord(await recallTicket(deps(c), queue, ticketId, now()))), 200);
});

const returnRoute = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/return",
  tags,
  summary: "Send a called or serving ticket back to the line",
  description:
    "Needs QUEUE_OPERATE. The customer needs a document; the operator takes the next one. `first`: ahead of everyone; " +
    "`last`: behind everyone now waiting; `after`: right behind `afterTicketId` (a waiting ticket of the same queue, 404 " +
    "otherwise, 409 INVALID_STATE if it is not waiting). The ticket is waiting again (no operator, no desk), event " +
    "`ticket.returned`. Any other state is 409 INVALID_STATE with details {status, allowed}.",
  security: SECURITY.any,
  request: {
    params: TicketParam,
    body: jsonBody(
      z
        .strictObject({
          position: z.enum(["first", "last", "after"]),
          afterTicketId: z.string().min(1).max(64).optional().openapi({ description: "With `after` only" }),
        })
        .openapi("ReturnTicketRequest"),
    ),
  },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(returnRoute, async (c) => {
  const { ticketId } = c.req.valid("param");
  const { position, afterTicketId } = c.req.valid("json");
  if (position === "after" && afterTicketId === undefined) throw validationError("afterTicketId", "required with position after");
  if (position !== "after" && afterTicketId !== undefined) throw validationError("afterTicketId", "only with position after");
  const queue = await operated(c, ticketId);
  const place = position === "after" ? { position, afterTicketId: afterTicketId! } : { position };
  return c.json(ok(ticketRecord(await returnTicket(deps(c), queue, ticketId, place, now()))), 200);
});

const hold = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/hold",
  tags,
  summary: "Set a called or serving ticket aside",
  description:
    "Needs QUEUE_OPERATE. The ticket becomes `held`: out of the line, never expired by the no-show timeout, off the display " +
    "board's called list; its operator, desk and counter stay. `reason` (≤ 200 characters) is kept as `holdReason`. Event " +
    "`ticket.held`. Any state but called or serving is 409 INVALID_STATE with details {status, allowed}.",
  security: SECURITY.any,
  request: {
    params: TicketParam,
    body: optionalJsonBody(
      z
        .strictObject({ reason: PublicLine(200).optional().openapi({ example: "Fetching the passport from the car" }) })
        .openapi("HoldTicketRequest"),
    ),
  },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(hold, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await operated(c, ticketId);
  return c.json(ok(ticketRecord(await holdTicket(deps(c), queue, ticketId, c.req.valid("json").reason ?? null, now()))), 200);
});

const resume = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/resume",
  tags,
  summary: "Bring a held ticket back to its operator and desk",
  description:
    "Needs QUEUE_OPERATE. The ticket goes back to the state it was held from, with the same operator, desk and counter: " +
    "`serving` as it was, or `called` as a new call (a new `calledAt`: the no-show timeout starts over and the display " +
    "board shows the code again). Event `ticket.resumed`. A ticket that is not held is 409 INVALID_STATE.",
  security: SECURITY.any,
  request: { params: TicketParam },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(resume, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await operated(c, ticketId);
  return c.json(ok(ticketRecord(await resumeTicket(deps(c), queue, ticketId, now()))), 200);
});

export const StepBackRequest = z
  .strictObject({
    places: z
      .number()
      .int()
      .min(1)
      .max(STEP_BACK_MAX_PLACES)
      .openapi({ example: 2, description: `Tickets to let pass, 1 to ${STEP_BACK_MAX_PLACES}; fewer when fewer are behind` }),
  })
  .openapi("StepBackRequest");

const stepBack = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/step-back",
  tags,
  summary: "Let others pass: the ticket's owner steps back a few places, once",
  description:
    "For the ticket's owner (the customer who joined), or a member with QUEUE_OPERATE acting for them. A waiting ticket " +
    `moves behind the next \`places\` waiting tickets (1 to ${STEP_BACK_MAX_PLACES}; fewer when fewer are behind it), once ` +
    "per ticket: a second time is 409 CONFLICT `already_stepped_back`; nobody behind is 409 CONFLICT `nobody_behind`. " +
    "Event `ticket.stepped_back`. Any state but waiting is 409 INVALID_STATE.",
  security: SECURITY.any,
  "x-outside-callers": "the ticket's owner",
  request: { params: TicketParam, body: jsonBody(StepBackRequest) },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(stepBack, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await ticketQueueOfCaller(c, ticketId);
  const principal = requireCredential(c);
  const at = now();
  const own = principal.kind === "session" && (await getTicket(deps(c), queue, ticketId, at)).userId === principal.user.id;
  if (!own) await authorizeOnQueue(c, queue, "QUEUE_OPERATE");
  return c.json(ok(ticketRecord(await stepBackTicket(deps(c), queue, ticketId, c.req.valid("json").places, at))), 200);
});

export const DeferTicketRequest = z
  .strictObject({
    until: z.iso.datetime({ offset: true }).optional().openapi({
      example: "2026-03-20T11:00:00.000Z",
      description: "Not called before this time: in the future, at most the queue's `maxDeferMinutes` ahead",
    }),
    places: z
      .number()
      .int()
      .min(1)
      .max(DEFER_MAX_PLACES)
      .optional()
      .openapi({ example: 3, description: `Tickets to let pass, 1 to ${DEFER_MAX_PLACES}; fewer when fewer are behind` }),
  })
  .openapi("DeferTicketRequest");

/** The body as the room takes it: exactly one of `until` (in the future) and `places`. */
export function deferRequestOf(body: { until?: string | undefined; places?: number | undefined }, at: number): DeferRequest {
  if (body.until !== undefined && body.places !== undefined) throw validationError("places", "give either until or places, not both");
  if (body.places !== undefined) return { places: body.places };
  if (body.until === undefined) throw validationError("until", "give until or places");
  const until = Date.parse(body.until);
  if (until <= at) throw validationError("until", "must be in the future");
  return { until };
}

export const DEFER_RULES =
  "Exactly one of `until` (not called before that time; it keeps its place in the line and call-next passes over it until " +
  "then, so from `until` on it stands where its place puts it among those still waiting — at the front if everyone ahead " +
  "was called) and `places` (it moves behind the next `places` waiting tickets). Bounds are the queue's: `until` at most " +
  `\`maxDeferMinutes\` ahead (default ${DEFAULT_MAX_DEFER_MINUTES}; 422 DEFER_TOO_FAR, details {field: until, maxDeferMinutes, ` +
  `latest}), at most \`maxDefers\` later turns per ticket (default ${DEFAULT_MAX_DEFERS}; 409 DEFER_LIMIT_REACHED, details ` +
  "{field, defers, maxDefers}). `until` in the past or both fields: 400 VALIDATION_ERROR naming the field. Nobody behind " +
  "for `places`: 409 CONFLICT `nobody_behind`. Any state but waiting: 409 INVALID_STATE (reason `ticket_not_waiting`). The " +
  "answer's `estimatedWaitMinutes` is the new estimate (never less than the minutes left until `until`). Event `ticket.deferred`.";

const deferRoute = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/defer",
  tags,
  summary: "A later turn: call me after a time, or let a few people pass",
  description:
    "For the ticket's owner (the customer who joined; a widget visitor uses POST /v1/widget/tickets/{ticketId}/defer with " +
    "the ticket's token), or a member with QUEUE_OPERATE acting for them. " +
    DEFER_RULES,
  security: SECURITY.any,
  "x-outside-callers": "the ticket's owner",
  request: { params: TicketParam, body: jsonBody(DeferTicketRequest) },
  responses: { 200: TicketResponse, ...errors(409, 422) },
});

app.openapi(deferRoute, async (c) => {
  const { ticketId } = c.req.valid("param");
  const at = now();
  const request = deferRequestOf(c.req.valid("json"), at);
  const queue = await ticketQueueOfCaller(c, ticketId);
  const principal = requireCredential(c);
  const own = principal.kind === "session" && (await getTicket(deps(c), queue, ticketId, at)).userId === principal.user.id;
  if (!own) await authorizeOnQueue(c, queue, "QUEUE_OPERATE");
  return c.json(ok(ticketRecord(await deferTicket(deps(c), queue, ticketId, request, at))), 200);
});

const vip = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/vip",
  tags,
  summary: "Make a waiting ticket VIP",
  description:
    'Needs QUEUE_OPERATE. The counter\'s "mark VIP" on a ticket already in the line (POST /v1/queues/{queueId}/vip-ticket ' +
    "creates one): the ticket gets `isPriority: true` and moves into the priority lane, ahead of every regular waiting " +
    "ticket and behind the VIP tickets already waiting, so the next call-next calls it once those are called. A ticket " +
    "already in the priority lane (returned first, restored) keeps its place. Event `ticket.prioritized` {position}; the " +
    "queue's sockets see the move. Already VIP: 200 with the ticket unchanged, no event. Any state but waiting is 409 " +
    "INVALID_STATE with details {status, allowed}.",
  security: SECURITY.any,
  request: { params: TicketParam },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(vip, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await operated(c, ticketId);
  return c.json(ok(ticketRecord(await prioritizeTicket(deps(c), queue, ticketId, now()))), 200);
});

const unVip = createRoute({
  method: "delete",
  path: "/tickets/{ticketId}/vip",
  tags,
  summary: "Undo a VIP mark: the waiting ticket goes back to the regular line",
  description:
    "Needs QUEUE_OPERATE. `isPriority` becomes false and the ticket goes back to the regular line at the place its number " +
    "gives it (behind the waiting tickets numbered before it), as if it had never been VIP; this works for a ticket created " +
    "VIP too. Event `ticket.priority_removed` {position}. Not VIP: 200 unchanged, no event. Any state but waiting is 409 " +
    "INVALID_STATE with details {status, allowed}.",
  security: SECURITY.any,
  request: { params: TicketParam },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(unVip, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await operated(c, ticketId);
  return c.json(ok(ticketRecord(await unprioritizeTicket(deps(c), queue, ticketId, now()))), 200);
});

export default app;
