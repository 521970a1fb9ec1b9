import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { COMPLETION_NOTE_MAX, RECOVERY_OPTIONS, TICKET_SOURCES, TICKET_STATUSES } from "../domain/tickets";
import type { Permission } from "../domain/permissions";
import { actorIn, requireCredential } from "../http/auth";
import type { AppEnv } from "../http/context";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, optionalJsonBody, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { CounterLabel, IntakeAnswersRecord, PlacementSchema, PublicParagraph, WaitRangeSchema } from "../http/schemas";
import { TICKET_KINDS } from "../domain/blend";
import { now } from "../lib/clock";
import type { TicketView } from "./tickets";
import { withVisitEstimate } from "./visit-route";
import type { QueueRow } from "../http/credentials/queues";
import { authorizeOnQueue, ticketQueueOfCaller } from "./queue-access";
import {
  cancelTicket,
  completeTicket,
  getTicket,
  markPresent,
  recoverTicket,
  skipAbsent,
  startServing,
  ticketRecord,
  transferToOperator,
  transferToQueue,
} from "./tickets";
import { deps } from "../http/deps";

const app = router();
const tags = ["Tickets"];

export const TicketRecord = z
  .object({
    id: z.string(),
    queueId: z.string(),
    serviceId: z.string(),
    organizationId: z.string(),
    userId: z.string(),
    number: z.number().int(),
    displayCode: z.string().openapi({ example: "A-042" }),
    status: z.enum(TICKET_STATUSES),
    partySize: z.number().int(),
    isPriority: z.boolean(),
    isGhostMode: z.boolean(),
    visitorName: z.string().nullable(),
    assignedToId: z.string().nullable(),
    calledAt: z.string().nullable(),
    servedAt: z.string().nullable(),
    createdAt: z.string(),
    position: z.number().int().nullable().openapi({ description: "1 = next; null when not waiting" }),
    estimatedWaitMinutes: z.number().int().nullable(),
    estimatedWaitRange: WaitRangeSchema.nullable(),
    counter: CounterLabel.nullable().openapi({
      description:
        "Where the ticket was called to: call-next's `counter`, else the calling member's first name; null for a key without one",
    }),
    deskId: z
      .string()
      .nullable()
      .openapi({ description: "The desk the ticket was called at (`dsk_…`); null for a call made on the queue" }),
    recallCount: z.number().int().openapi({ description: "Times this call was announced again (POST /v1/tickets/{ticketId}/recall)" }),
    recalledAt: z.string().nullable(),
    heldAt: z.string().nullable().openapi({ description: "When the ticket was set aside (status `held`); null otherwise" }),
    holdReason: z.string().nullable(),
    outcome: z.string().nullable().openapi({ description: "The completion's outcome code (one of the service's outcomes)" }),
    note: z.string().nullable().openapi({ description: "The operator's note at completion" }),
    steppedBackPlaces: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Places the owner let pass (POST /v1/tickets/{ticketId}/step-back, once); null until then" }),
    deferredUntil: z.string().nullable().openapi({
      description: "Not called before this time (POST /v1/tickets/{ticketId}/defer); null when no later turn is pending",
    }),
    deferCount: z.number().int().openapi({ description: "Later turns asked for this ticket (the queue's `maxDefers` bounds it)" }),
    presentAt: z.string().nullable(),
    servingAt: z.string().nullable(),
    skipReason: z.string().nullable(),
    recoveredFromId: z.string().nullable(),
    transferredToId: z.string().nullable(),
    source: z.enum(TICKET_SOURCES),
    updatedAt: z.string(),
    intake: IntakeAnswersRecord,
    labels: z.array(z.string()).openapi({ description: "Staff's labels (POST /v1/tickets/{ticketId}/labels); [] when none" }),
    phoneMasked: z
      .string()
      .nullable()
      .openapi({
        example: "+33 6 •• •• •• 78",
        description:
          "The visitor's phone for the counter: country code, first digit and last two digits, the rest hidden; null when the " +
          "ticket has no phone. The full number is never in a ticket.",
      }),
    kind: z
      .enum(TICKET_KINDS)
      .openapi({ description: "walk_in, or appointment for a ticket made by an appointment's check-in (docs/blend.md)" }),
    appointmentAt: z.string().nullable().openapi({ description: "The appointment's start; null for a walk-in" }),
    placement: PlacementSchema.nullable().openapi({
      description: "Why a waiting ticket stands where it does under the queue's blend policy (docs/blend.md); null unless waiting",
    }),
    route: z
      .array(z.object({ serviceId: z.string(), queueId: z.string() }))
      .nullable()
      .openapi({
        description: "The visit's services in order, each with the queue its leg waits in (docs/visits.md); null for one service",
      }),
    leg: z
      .object({ index: z.number().int().openapi({ description: "From 1" }), of: z.number().int() })
      .nullable()
      .openapi({ description: "Which leg of the visit this ticket is (leg 1 of 2); null for a one-service visit" }),
    visitId: z.string().nullable().openapi({ description: "The visit's first ticket; null for a one-service visit" }),
    routedFromId: z.string().nullable().openapi({ description: "The visit's previous leg (its ticket), once this leg came from one" }),
    routedToId: z
      .string()
      .nullable()
      .openapi({ description: "The visit's next leg (its ticket), once this completed leg was handed over to the next service" }),
    estimatedVisitMinutes: z.number().int().nullable().openapi({
      description:
        "The rest of the visit: this leg's wait plus, for each service still to come, its queue's wait and every remaining leg's service time (docs/visits.md). Set on a single ticket's read of a visit of several services; null otherwise",
    }),
  })
  .openapi("Ticket");

const TicketParam = idParam("ticketId", "tkt");
const TicketResponse = jsonResponse(okEnvelope(TicketRecord), "The ticket");

/** The ticket's queue, with the caller allowed `permission` in its organization. */
async function operated(c: Context<AppEnv>, ticketId: string, permission: Permission = "QUEUE_OPERATE"): Promise<QueueRow> {
  const queue = await ticketQueueOfCaller(c, ticketId);
  await authorizeOnQueue(c, queue, permission);
  return queue;
}

/** The ticket's owner may act on it; anyone else needs `permission` in its organization. */
async function ownedOr(c: Context<AppEnv>, ticketId: string, permission: Permission): Promise<{ queue: QueueRow; ticket: TicketView }> {
  const principal = requireCredential(c);
  const queue = await ticketQueueOfCaller(c, ticketId);
  const at = now();
  if (principal.kind === "session") {
    const ticket = await getTicket(deps(c), queue, ticketId, at);
    if (ticket.userId === principal.user.id) return { queue, ticket };
    await authorizeOnQueue(c, queue, permission);
    return { queue, ticket };
  }
  await authorizeOnQueue(c, queue, permission);
  return { queue, ticket: await getTicket(deps(c), queue, ticketId, at) };
}

const get = createRoute({
  method: "get",
  path: "/tickets/{ticketId}",
  tags,
  summary: "A ticket with its position and estimated wait",
  description: "For its owner, or a member of the queue's organization with QUEUE_VIEW.",
  security: SECURITY.any,
  "x-outside-callers": "the ticket's owner",
  request: { params: TicketParam },
  responses: { 200: TicketResponse, ...errors() },
});

app.openapi(get, async (c) => {
  const { ticket } = await ownedOr(c, c.req.valid("param").ticketId, "QUEUE_VIEW");
  return c.json(ok(ticketRecord(await withVisitEstimate(deps(c), ticket, now()))), 200);
});

const cancel = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/cancel",
  tags,
  summary: "Cancel a waiting or called ticket (its owner or an operator)",
  security: SECURITY.any,
  "x-outside-callers": "the ticket's owner",
  request: { params: TicketParam },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(cancel, async (c) => {
  const { ticketId } = c.req.valid("param");
  const { queue } = await ownedOr(c, ticketId, "QUEUE_OPERATE");
  return c.json(ok(ticketRecord(await cancelTicket(deps(c), queue, ticketId, now()))), 200);
});

type SimpleOperation = typeof startServing;

const AT_SERVE_RULE =
  " While one of the service's `at_serve` intake questions has no answer on the ticket (PATCH /v1/tickets/{ticketId}/intake), " +
  "409 INTAKE_REQUIRED with details {field, missing[]} naming them as `intake.<key>`.";

const simple: [string, string, SimpleOperation, string][] = [
  ["serve", "Start serving a called ticket", startServing, AT_SERVE_RULE],
  ["present", "Confirm the customer is here (waiting or called; makes a remote-join ticket callable)", markPresent, ""],
];

for (const [name, summary, operation, rule] of simple) {
  const route = createRoute({
    method: "post",
    path: `/tickets/{ticketId}/${name}`,
    tags,
    summary,
    description: "Needs QUEUE_OPERATE. Any other state is 409 INVALID_STATE with details {status, allowed}." + rule,
    security: SECURITY.any,
    request: { params: TicketParam },
    responses: { 200: TicketResponse, ...errors(409) },
  });
  app.openapi(route, async (c) => {
    const { ticketId } = c.req.valid("param");
    const queue = await operated(c, ticketId);
    return c.json(ok(ticketRecord(await operation(deps(c), queue, ticketId, now()))), 200);
  });
}

const complete = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/complete",
  tags,
  summary: "Finish serving a ticket, with an outcome and a note if given",
  description:
    "Needs QUEUE_OPERATE. `outcome` must be a code of the service's outcomes (GET /v1/services/{serviceId}/outcomes; 400 " +
    "VALIDATION_ERROR with details.field `outcome` otherwise); `note` is the operator's, at most 500 characters. Both are " +
    "kept on the ticket and carried by the `ticket.served` event. Any state but serving is 409 INVALID_STATE with " +
    "details {status, allowed}." +
    AT_SERVE_RULE,
  security: SECURITY.any,
  request: {
    params: TicketParam,
    body: optionalJsonBody(
      z
        .strictObject({
          outcome: z
            .string()
            .min(1)
            .max(64)
            .optional()
            .openapi({ description: "One of the service's outcome codes", example: "account_opened" }),
          note: PublicParagraph(COMPLETION_NOTE_MAX).trim().min(1).optional().openapi({ example: "Brings the signed form on Monday" }),
        })
        .openapi("CompleteTicketRequest"),
    ),
  },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(complete, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await operated(c, ticketId);
  const { outcome, note } = c.req.valid("json");
  return c.json(ok(ticketRecord(await completeTicket(deps(c), queue, ticketId, now(), { outcome, note }))), 200);
});

const skip = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/skip-absent",
  tags,
  summary: "Mark a called customer absent",
  security: SECURITY.any,
  request: {
    params: TicketParam,
    body: optionalJsonBody(
      z
        .strictObject({ reason: z.string().trim().min(1).max(500).optional().openapi({ description: 'Default "absent"' }) })
        .openapi("SkipAbsentRequest"),
    ),
  },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(skip, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await operated(c, ticketId);
  const reason = c.req.valid("json").reason ?? "absent";
  return c.json(ok(ticketRecord(await skipAbsent(deps(c), queue, ticketId, reason, now()))), 200);
});

const recover = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/recover",
  tags,
  summary: "Recover a skipped or expired ticket",
  description: "`rejoin` creates a new ticket at the back (recoveredFromId set); `restore` puts the same ticket back at the front.",
  security: SECURITY.any,
  request: {
    params: TicketParam,
    body: jsonBody(z.strictObject({ recoveryOption: z.enum(RECOVERY_OPTIONS) }).openapi("RecoverTicketRequest")),
  },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(recover, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await operated(c, ticketId);
  return c.json(ok(ticketRecord(await recoverTicket(deps(c), queue, ticketId, c.req.valid("json").recoveryOption, now()))), 200);
});

const transferQueue = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/transfer-queue",
  tags,
  summary: "Move a waiting or called ticket to another queue of the organization",
  description: "Answers the new ticket; the old one is cancelled with transferredToId. Safe to retry.",
  security: SECURITY.any,
  request: {
    params: TicketParam,
    body: jsonBody(
      z.strictObject({ targetQueueId: z.string().min(1).max(64), prioritize: z.boolean().optional() }).openapi("TransferQueueRequest"),
    ),
  },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(transferQueue, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await operated(c, ticketId);
  const body = c.req.valid("json");
  // The caller's membership was read by `operated`: this costs no second read.
  const { locationIds } = await actorIn(c, queue.organizationId);
  const moved = await transferToQueue(deps(c), queue, ticketId, body.targetQueueId, body.prioritize ?? false, now(), locationIds);
  return c.json(ok(ticketRecord(moved)), 200);
});

const transfer = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/transfer",
  tags,
  summary: "Hand a called or serving ticket to another operator",
  security: SECURITY.any,
  request: {
    params: TicketParam,
    body: jsonBody(z.strictObject({ targetOperatorId: z.string().min(1).max(64) }).openapi("TransferOperatorRequest")),
  },
  responses: { 200: TicketResponse, ...errors(409) },
});

app.openapi(transfer, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await operated(c, ticketId);
  const moved = await transferToOperator(deps(c), queue, ticketId, c.req.valid("json").targetOperatorId, now());
  return c.json(ok(ticketRecord(moved)), 200);
});

export default app;
