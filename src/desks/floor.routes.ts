import { createRoute, z } from "@hono/zod-openapi";
import { guarded } from "../access/guard";
import { errors, idParam, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { FLOOR_LINE_WINDOW, findFloorLocation, locationFloor } from "./floor";

// The floor of a location (docs/floor.md): desks and queues live, for the floor view
// (/console/floor) and any supervisor's screen. Thin: desks/floor.ts reads it.

const app = router();

const FloorRecord = z
  .object({
    locationId: z.string(),
    at: z.string().openapi({ description: "The instant the floor was read" }),
    desks: z.array(
      z.object({
        id: z.string(),
        name: z.string().openapi({ description: "The desk's label (its displayName, else its name)" }),
        status: z.enum(["open", "closed"]),
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
      }),
    ),
  })
  .openapi("Floor");

const floor = createRoute({
  method: "get",
  path: "/locations/{locationId}/floor",
  tags: ["Desks"],
  summary: "The floor of a location, live",
  description:
    "Needs QUEUE_VIEW: owners, admins, managers and operators (an operator sees which colleague serves whom). Per desk its " +
    "operator and the ticket at it; per queue of the location (and every queue a desk there calls from) the waiting count, " +
    "the longest wait, held tickets and tickets served today. Read from the queues' rooms: poll it or follow the rooms' sockets.",
  security: SECURITY.any,
  request: { params: idParam("locationId", "loc") },
  responses: { 200: jsonResponse(okEnvelope(FloorRecord), "The floor"), ...errors() },
});

app.openapi(floor, async (c) => {
  guarded(c, "location", "QUEUE_VIEW");
  const location = await findFloorLocation(c.env, c.req.valid("param").locationId);
  return c.json(ok(await locationFloor(c.env, location, now())), 200);
});

export default app;
