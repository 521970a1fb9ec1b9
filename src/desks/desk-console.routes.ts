import { createRoute, z } from "@hono/zod-openapi";
import { guarded } from "../access/guard";
import { errors, idParam, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { TicketRecord } from "../tickets/tickets.routes";
import { DeskRecord } from "./desks.routes";
import { CONSOLE_LINE_MAX, deskConsole } from "./desk-console";
import { deps } from "../http/deps";

// The counter console's one read (docs/pages.md): what a desk shows, read again on every live
// signal of its queues. Thin: desks/desk-console.ts reads it.

const app = router();

const DeskConsoleRecord = z
  .object({
    at: z.string().openapi({ description: "The instant it was read" }),
    desk: DeskRecord,
    location: z
      .object({ id: z.string(), name: z.string(), address: z.string(), timezone: z.string() })
      .openapi({ description: "The branch the desk is in" }),
    queues: z
      .array(
        z.object({
          id: z.string(),
          name: z.string(),
          letter: z.string(),
          status: z.enum(["active", "paused", "closed"]),
          serviceId: z.string(),
          serviceName: z.string(),
          waitingCount: z.number().int().openapi({ description: "Everyone waiting in the queue, listed or not" }),
          heldCount: z.number().int(),
        }),
      )
      .openapi({ description: "The desk's queues in the desk's order (archived ones left out)" }),
    waiting: z.array(TicketRecord).openapi({
      description:
        `The line in the desk's order: the first ${CONSOLE_LINE_MAX} of each queue; one queue in its calling order, ` +
        "several merged priority first, then by place in line, then by wait",
    }),
    held: z.array(TicketRecord).openapi({ description: "The queues' tickets set aside (hold)" }),
    current: TicketRecord.nullable().openapi({
      description: "The caller's ticket at this desk (called or serving; serving first, then the latest call); null when none",
    }),
  })
  .openapi("DeskConsole");

const consoleRoute = createRoute({
  method: "get",
  path: "/desks/{deskId}/console",
  tags: ["Desks"],
  summary: "What a counter console shows of its desk, in one read",
  description:
    "Needs QUEUE_OPERATE, like the desk (owners, admins, managers, operators; a key with write:queues); a member scoped to " +
    "other locations, or another organization, gets 404. The branch, the desk's queues with their counts, the waiting line, " +
    "the held tickets and the caller's own ticket at the desk. The console reads it on every `queue_update` of the desk's queues.",
  security: SECURITY.any,
  request: { params: idParam("deskId", "dsk") },
  responses: { 200: jsonResponse(okEnvelope(DeskConsoleRecord), "The desk's console view"), ...errors() },
});

app.openapi(consoleRoute, async (c) => {
  const { row: desk, actor } = guarded(c, "desk", "QUEUE_OPERATE");
  return c.json(ok(await deskConsole(deps(c), desk, actor.userId ?? actor.apiKeyId!, now())), 200);
});

export default app;
