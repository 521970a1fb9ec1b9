import { createRoute, z } from "@hono/zod-openapi";
import { guarded } from "../access/guard";
import { errors, idParam, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { FLOOR_LINE_WINDOW, locationFloor } from "./floor";
import { deps } from "../http/deps";

// The floor of a location (docs/floor.md): desks and queues live, for the floor view
// (/console/floor) and any supervisor's screen. Thin: desks/floor.ts reads it.

const app = router();

const Level = z
  .enum(["ok", "amber", "red"])
  .openapi({ description: "Against the queue's target wait: amber from 75 % of it, red once reached; ok without a target" });

const FloorAlertRecord = z
  .object({
    queueId: z.string(),
    ticketId: z.string(),
    displayCode: z.string(),
    waitedSeconds: z.number().int().openapi({ description: "How long the longest-waiting visitor of the queue has waited" }),
    targetWaitMinutes: z.number().int(),
    idleDesks: z
      .array(z.object({ id: z.string(), name: z.string() }))
      .openapi({ description: "Open desks that call from this queue with nobody at them" }),
  })
  .openapi("FloorAlert");

const FloorRecord = z
  .object({
    locationId: z.string(),
    location: z.object({ id: z.string(), name: z.string(), address: z.string(), timezone: z.string() }),
    at: z.string().openapi({ description: "The instant the floor was read" }),
    desks: z.array(
      z.object({
        id: z.string(),
        name: z.string().openapi({ description: "The desk's label (its displayName, else its name)" }),
        status: z.enum(["open", "closed"]),
        queueIds: z.array(z.string()).openapi({ description: "The queues the desk calls from" }),
        operator: z
          .object({ id: z.string(), name: z.string() })
          .nullable()
          .openapi({ description: "Who has the desk open (a member's full name, or an API key's name); null when closed" }),
        current: z
          .object({
            ticketId: z.string(),
            displayCode: z.string(),
            status: z.enum(["called", "serving", "held"]),
            since: z.string().openapi({ description: "When it was called, started, or set aside" }),
          })
          .nullable()
          .openapi({ description: "The ticket at the desk: serving first, else the latest called, else held; null when none" }),
      }),
    ),
    queues: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        letter: z.string(),
        waitingCount: z.number().int(),
        longestWaitSeconds: z
          .number()
          .int()
          .openapi({
            description: `The longest wait among the first ${FLOOR_LINE_WINDOW} in line (since each joined); 0 when nobody waits`,
          }),
        heldCount: z.number().int(),
        servedToday: z.number().int().openapi({ description: "Tickets completed since 00:00 on the location's clocks" }),
        targetWaitMinutes: z
          .number()
          .int()
          .nullable()
          .openapi({ description: "The queue's target wait (PATCH /v1/business/queues/{id}); null: none" }),
        level: Level,
        waiting: z
          .array(
            z.object({
              ticketId: z.string(),
              displayCode: z.string(),
              name: z.string().nullable().openapi({ description: "The visitor's name, when given" }),
              joinedAt: z.string(),
              waitedSeconds: z.number().int(),
              vip: z.boolean().openapi({ description: "Ahead of the regular line (VIP, a prioritized transfer, a restore)" }),
              appointmentAt: z.string().nullable().openapi({ description: "An appointment's start; null for a walk-in" }),
              level: Level,
            }),
          )
          .openapi({ description: `The line, in order, its first ${FLOOR_LINE_WINDOW}` }),
        today: z.object({
          served: z.number().int(),
          noShows: z.number().int().openapi({ description: "Called today, then expired or marked absent" }),
          averageWaitSeconds: z.number().int().nullable().openapi({ description: "From the join to the call, over tickets called today" }),
          averageServiceSeconds: z
            .number()
            .int()
            .nullable()
            .openapi({ description: "From the start of service to its completion, over tickets completed today" }),
        }),
      }),
    ),
    alerts: z.array(FloorAlertRecord).openapi({
      description:
        "A visitor has waited the queue's target or longer while an open desk that calls from that queue is idle: one per queue. " +
        "Clerks' consoles read it too (operators have QUEUE_VIEW): an alert naming their desk is theirs.",
    }),
  })
  .openapi("Floor");

const floor = createRoute({
  method: "get",
  path: "/locations/{locationId}/floor",
  tags: ["Desks"],
  summary: "The floor of a location, live",
  description:
    "Needs QUEUE_VIEW: owners, admins, managers and operators (an operator sees which colleague serves whom); a member scoped " +
    "to other locations gets 404. The branch; per desk its operator and the ticket at it; per queue of the location (and every " +
    "queue a desk there calls from) its line with names, waits and marks, the longest wait against the target, held tickets, " +
    "today's served, no-shows and averages; and the alerts (a wait past the target while a desk is idle). Read from the " +
    "queues' rooms: poll it or follow the rooms' sockets.",
  security: SECURITY.any,
  request: { params: idParam("locationId", "loc") },
  responses: { 200: jsonResponse(okEnvelope(FloorRecord), "The floor"), ...errors() },
});

app.openapi(floor, async (c) => {
  const { row: location } = guarded(c, "location", "QUEUE_VIEW");
  return c.json(ok(await locationFloor(deps(c), location, now())), 200);
});

export default app;
