import { createRoute, z } from "@hono/zod-openapi";
import { authorize } from "../http/auth";
import { authorizeOnQueue, ticketQueueOfCaller } from "../tickets/queue-access";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { addLabel, labelRecord, listLabels, MAX_ORGANIZATION_LABELS, removeLabel } from "./labels";
import { ticketRecord } from "../tickets/tickets";
import { TicketLabel } from "../http/schemas";
import { TicketRecord } from "../tickets/tickets.routes";
import { deps } from "../http/deps";

// Ticket labels and the organization's label list (docs/visits.md).

const app = router();
const tags = ["Tickets"];

const TicketParam = idParam("ticketId", "tkt");

const add = createRoute({
  method: "post",
  path: "/tickets/{ticketId}/labels",
  tags,
  summary: "Put a label on a ticket (staff)",
  description:
    "Needs QUEUE_OPERATE. At any status; putting a label the ticket has changes nothing. At most 10 labels per ticket and " +
    `${MAX_ORGANIZATION_LABELS} per organization (409 CONFLICT, field \`label\`). The label joins the organization's list. ` +
    "Emits `ticket.label_added`. Find labelled tickets with `GET /v1/queues/{queueId}/tickets?label=`.",
  security: SECURITY.any,
  request: { params: TicketParam, body: jsonBody(z.strictObject({ label: TicketLabel }).openapi("AddTicketLabelRequest")) },
  responses: { 200: jsonResponse(okEnvelope(TicketRecord), "The ticket"), ...errors(409) },
});

app.openapi(add, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await ticketQueueOfCaller(c, ticketId);
  await authorizeOnQueue(c, queue, "QUEUE_OPERATE");
  return c.json(ok(ticketRecord(await addLabel(deps(c), queue, ticketId, c.req.valid("json").label, now()))), 200);
});

const remove = createRoute({
  method: "delete",
  path: "/tickets/{ticketId}/labels/{label}",
  tags,
  summary: "Take a label off a ticket (staff)",
  description: "Needs QUEUE_OPERATE. Taking off a label the ticket lacks changes nothing. Emits `ticket.label_removed`.",
  security: SECURITY.any,
  request: { params: TicketParam.extend({ label: TicketLabel.openapi({ param: { name: "label", in: "path" } }) }) },
  responses: { 200: jsonResponse(okEnvelope(TicketRecord), "The ticket"), ...errors() },
});

app.openapi(remove, async (c) => {
  const { ticketId, label } = c.req.valid("param");
  const queue = await ticketQueueOfCaller(c, ticketId);
  await authorizeOnQueue(c, queue, "QUEUE_OPERATE");
  return c.json(ok(ticketRecord(await removeLabel(deps(c), queue, ticketId, label, now()))), 200);
});

const OrganizationLabel = z.object({ label: z.string(), createdAt: z.string() }).openapi("OrganizationLabel");

const list = createRoute({
  method: "get",
  path: "/organizations/{organizationId}/labels",
  tags: ["Organizations"],
  summary: "The labels the organization's staff have used, by name",
  description: `Needs QUEUE_VIEW. At most ${MAX_ORGANIZATION_LABELS}, so not paginated.`,
  security: SECURITY.any,
  request: { params: idParam("organizationId", "org") },
  responses: { 200: jsonResponse(okEnvelope(z.array(OrganizationLabel)), "The labels"), ...errors() },
});

app.openapi(list, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorize(c, organizationId, "QUEUE_VIEW");
  return c.json(ok((await listLabels(deps(c), organizationId)).map(labelRecord)), 200);
});

export default app;
