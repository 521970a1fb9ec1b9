import { createRoute, z } from "@hono/zod-openapi";
import { DESK_NAME_MAX, DESK_QUEUES_MAX, DESK_WEIGHT_MAX } from "../domain/desks";
import type { Actor } from "../http/auth";
import { guarded } from "../access/guard";
import { errors, idParam, jsonBody, jsonResponse, optionalJsonBody, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { auditOrigin } from "../http/audit-origin";
import { closeDesk, createDesk, deleteDesk, deskRecord, listDesks, openDesk, updateDesk } from "./desks";
import { callAtDeskAfterPrevious } from "../tickets/previous-call";
import { ticketRecord } from "../tickets/tickets";
import { PreviousCallMeta, PreviousOutcomeField, PublicLine } from "../http/schemas";
import { TicketRecord } from "../tickets/tickets.routes";
import { deps } from "../http/deps";

// Desks (counters) and calling from them (docs/desks.md). Thin: the rules are in
// desks/desks.ts and domain/desks.ts.

const app = router();
const tags = ["Desks"];

export const DeskRecord = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    locationId: z.string(),
    name: z.string(),
    displayName: z.string().nullable(),
    queueIds: z.array(z.string()),
    weights: z
      .record(z.string(), z.number().int())
      .openapi({ description: "Queue id → weight (1..10) in the calling rule; a queue not listed weighs 1" }),
    status: z.enum(["open", "closed"]),
    operatorId: z.string().nullable().openapi({ description: "Who has the desk open; null when closed" }),
    openedAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Desk");

const DeskName = PublicLine(DESK_NAME_MAX);
const QueueIds = z.array(z.string().min(1).max(64)).min(1).max(DESK_QUEUES_MAX);
const Weights = z
  .record(z.string().min(1).max(64), z.number().int().min(1).max(DESK_WEIGHT_MAX))
  .refine((w) => Object.keys(w).length <= DESK_QUEUES_MAX, { message: `At most ${DESK_QUEUES_MAX} weights` })
  .openapi({
    description:
      "Queue id → weight 1..10 (default 1): the desk ranks a regular head by its wait times its queue's weight; " +
      "priority first still (docs/desks.md). Only the desk's queueIds.",
  });
const LocationParam = idParam("locationId", "loc");
const DeskParam = idParam("deskId", "dsk");

/** Who acts at a desk: the user, or for an API key the key itself. */
function actingId(actor: Actor): string {
  return actor.userId ?? actor.apiKeyId!;
}

const create = createRoute({
  method: "post",
  path: "/locations/{locationId}/desks",
  tags,
  summary: "Create a desk (counter) at a location",
  description:
    "Needs QUEUE_MANAGE. `queueIds` are the queues the desk calls from (queues of the location's organization, else 404); " +
    "`weights` optionally weights them in the calling rule (1..10, default 1). " +
    '`displayName` is what the board shows ("A-042 → Guichet 3"); `name` is shown when it is absent.',
  security: SECURITY.any,
  request: {
    params: LocationParam,
    body: jsonBody(
      z
        .strictObject({ name: DeskName, displayName: DeskName.nullable().optional(), queueIds: QueueIds, weights: Weights.optional() })
        .openapi("CreateDeskRequest"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(DeskRecord), "Created"), ...errors() },
});

app.openapi(create, async (c) => {
  const { row: location, actor } = guarded(c, "location", "QUEUE_MANAGE");
  const row = await createDesk(deps(c), location, c.req.valid("json"), now(), actor.locationIds, auditOrigin(c, actor));
  return c.json(ok(deskRecord(row)), 201);
});

const list = createRoute({
  method: "get",
  path: "/locations/{locationId}/desks",
  tags,
  summary: "The desks of a location",
  description: "Needs QUEUE_OPERATE (an operator picks a desk to open). Oldest first.",
  security: SECURITY.any,
  request: { params: LocationParam, query: CursorQuery },
  responses: { 200: jsonResponse(cursorListEnvelope(DeskRecord), "The location's desks"), ...errors() },
});

app.openapi(list, async (c) => {
  const { row: location } = guarded(c, "location", "QUEUE_OPERATE");
  const window = listWindow(c.req.valid("query"));
  const { rows, total, hasMore } = await listDesks(deps(c), location.id, window);
  return c.json(
    okList(
      rows.map(deskRecord),
      listMeta(
        rows.map((r) => r.id),
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
  path: "/desks/{deskId}",
  tags,
  summary: "A desk",
  description: "Needs QUEUE_OPERATE.",
  security: SECURITY.any,
  request: { params: DeskParam },
  responses: { 200: jsonResponse(okEnvelope(DeskRecord), "The desk"), ...errors() },
});

app.openapi(get, async (c) => {
  const { row: desk } = guarded(c, "desk", "QUEUE_OPERATE");
  return c.json(ok(deskRecord(desk)), 200);
});

const update = createRoute({
  method: "patch",
  path: "/desks/{deskId}",
  tags,
  summary: "Change a desk",
  description:
    "Needs QUEUE_MANAGE. Any creation field; `displayName: null` clears it; `weights` replaces the desk's weights " +
    "(`null` clears them), and new `queueIds` alone keep the weights of the queues that stay. An open desk stays open.",
  security: SECURITY.any,
  request: {
    params: DeskParam,
    body: jsonBody(
      z
        .strictObject({
          name: DeskName.optional(),
          displayName: DeskName.nullable().optional(),
          queueIds: QueueIds.optional(),
          weights: Weights.nullable().optional(),
        })
        .openapi("UpdateDeskRequest"),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(DeskRecord), "Updated"), ...errors() },
});

app.openapi(update, async (c) => {
  const { row: desk, actor } = guarded(c, "desk", "QUEUE_MANAGE");
  const row = await updateDesk(deps(c), desk, c.req.valid("json"), now(), actor.locationIds, auditOrigin(c, actor));
  return c.json(ok(deskRecord(row)), 200);
});

const remove = createRoute({
  method: "delete",
  path: "/desks/{deskId}",
  tags,
  summary: "Delete a desk",
  description: "Needs QUEUE_MANAGE. Tickets called at it keep its id.",
  security: SECURITY.any,
  request: { params: DeskParam },
  responses: { 200: jsonResponse(okEnvelope(z.object({ id: z.string(), deleted: z.literal(true) })), "Deleted"), ...errors() },
});

app.openapi(remove, async (c) => {
  const { row: desk, actor } = guarded(c, "desk", "QUEUE_MANAGE");
  await deleteDesk(deps(c), desk, now(), auditOrigin(c, actor));
  return c.json(ok({ id: desk.id, deleted: true as const }), 200);
});

const open = createRoute({
  method: "post",
  path: "/desks/{deskId}/open",
  tags,
  summary: "Open a desk for one's shift",
  description:
    "Needs QUEUE_OPERATE. One operator per desk and one desk per operator: 409 CONFLICT with `details.reason` " +
    "`desk_occupied` (someone else has it) or `operator_has_desk` (`details.deskId`: close that one first). Opening one's own open desk changes nothing.",
  security: SECURITY.any,
  request: { params: DeskParam },
  responses: { 200: jsonResponse(okEnvelope(DeskRecord), "Open, by the caller"), ...errors(409) },
});

app.openapi(open, async (c) => {
  const { row: desk, actor } = guarded(c, "desk", "QUEUE_OPERATE");
  const row = await openDesk(deps(c), desk, actingId(actor), now());
  return c.json(ok(deskRecord(row)), 200);
});

const close = createRoute({
  method: "post",
  path: "/desks/{deskId}/close",
  tags,
  summary: "Close a desk",
  description:
    "By the operator who has it open, or by anyone with QUEUE_MANAGE (end of day). 409 INVALID_STATE when it is not open, " +
    "409 CONFLICT (`desk_occupied`) for another operator without QUEUE_MANAGE.",
  security: SECURITY.any,
  request: { params: DeskParam },
  responses: { 200: jsonResponse(okEnvelope(DeskRecord), "Closed"), ...errors(409) },
});

app.openapi(close, async (c) => {
  const { row: desk, actor } = guarded(c, "desk", "QUEUE_OPERATE");
  const row = await closeDesk(deps(c), desk, actingId(actor), actor.can("QUEUE_MANAGE"), now());
  return c.json(ok(deskRecord(row)), 200);
});

const callNextRoute = createRoute({
  method: "post",
  path: "/desks/{deskId}/call-next",
  tags,
  summary: "Call the next ticket over the desk's queues",
  description:
    "By the operator who has the desk open (409 INVALID_STATE when it is closed, CONFLICT `desk_occupied` for someone else). " +
    "Calls, among the heads of the desk's queues, a priority ticket first, then the one that has waited longest " +
    "(times its queue's weight at this desk, when the desk has weights; docs/desks.md). The ticket carries `deskId` and the desk's label as `counter`. QUEUE_EMPTY when no queue has one to call. " +
    "`previousOutcome` says what became of the caller's previous call at this desk that was never started (docs/floor.md); `meta` reports it.",
  security: SECURITY.any,
  request: {
    params: DeskParam,
    body: optionalJsonBody(z.strictObject({ previousOutcome: PreviousOutcomeField.optional() }).openapi("CallDeskNextRequest")),
  },
  responses: {
    200: jsonResponse(okEnvelope(TicketRecord).extend({ meta: PreviousCallMeta }), "The called ticket"),
    ...errors(409),
  },
});

app.openapi(callNextRoute, async (c) => {
  const { row: desk, actor } = guarded(c, "desk", "QUEUE_OPERATE");
  const { previousOutcome } = c.req.valid("json");
  const { ticket, previous } = await callAtDeskAfterPrevious(
    deps(c),
    desk,
    actingId(actor),
    actor.userId,
    now(),
    previousOutcome,
    actor.locationIds,
  );
  return c.json({ ...ok(ticketRecord(ticket)), meta: previous }, 200);
});

export default app;
