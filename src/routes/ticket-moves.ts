import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Permission } from "../domain/permissions";
import type { AppEnv } from "../http/context";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { validationError } from "../http/errors";
import { authorizeOnQueue, ticketQueueOfCaller } from "../http/queue-access";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import type { QueueRow } from "../services/queues";
import { recallTicket, returnTicket, ticketRecord } from "../services/tickets";
import { TicketRecord } from "./tickets";

// The operator's verbs beyond the spec's (docs/desks.md): recall, return to the line. Each is one command of the
// ticket's room.

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
  return c.json(ok(ticketRecord(await recallTicket(c.env, queue, ticketId, now()))), 200);
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
  return c.json(ok(ticketRecord(await returnTicket(c.env, queue, ticketId, place, now()))), 200);
});

export default app;
