import { createRoute, z } from "@hono/zod-openapi";
import { guarded } from "../access/guard";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { parseInstantInput } from "../lib/instant";
import { iso } from "../lib/time";
import type { ReplayOutcome } from "../domain/blend-replay";
import { PLACEMENT_RULES, TICKET_KINDS } from "../domain/blend";
import { blendOf, setBlend } from "./blend";
import { REPLAY_MAX_DAYS, REPLAY_MAX_TICKETS, replayPeriod } from "./blend-replay";
import { deps } from "../http/deps";

// GET/PUT /v1/business/queues/{queueId}/blend (docs/blend.md).

const app = router();
const tags = ["Queues"];

const minutes = (max: number) => z.number().int().min(0).max(max);

const BlendPolicySchema = z
  .strictObject({
    appointmentsFirstFromMinutes: minutes(240).openapi({
      description: "An appointment's ticket goes ahead of walk-ins from this many minutes before its time (default 0: at its time)",
    }),
    walkInMaxWaitMinutes: z
      .number()
      .int()
      .min(1)
      .max(1440)
      .nullable()
      .openapi({ description: "A walk-in that has waited this long goes ahead of appointments; null (default): no cap" }),
  })
  .openapi("BlendPolicy", {
    description:
      "When check-in opens and what a late check-in becomes are the service's booking settings (checkInOpensMinutes, lateGraceMinutes, lateBecomes)",
  });

const BlendRecord = z
  .object({
    queueId: z.string(),
    policy: BlendPolicySchema,
    isDefault: z.boolean().openapi({ description: "True while the queue has no policy of its own (the defaults apply)" }),
  })
  .openapi("QueueBlend");

const QueueParam = idParam("queueId", "que");

const get = createRoute({
  method: "get",
  path: "/business/queues/{queueId}/blend",
  tags,
  summary: "The queue's blend policy: how appointments and walk-ins share its line",
  description: "Needs QUEUE_VIEW. A queue without a policy of its own answers the defaults with `isDefault: true`.",
  security: SECURITY.any,
  request: { params: QueueParam },
  responses: { 200: jsonResponse(okEnvelope(BlendRecord), "The policy"), ...errors() },
});

app.openapi(get, (c) => {
  const { row } = guarded(c, "queue", "QUEUE_VIEW");
  return c.json(ok(blendOf(row)), 200);
});

const put = createRoute({
  method: "put",
  path: "/business/queues/{queueId}/blend",
  tags,
  summary: "Set the queue's blend policy",
  description:
    "Needs QUEUE_MANAGE. The whole policy; a field left out takes its default. The queue's room applies it from its next call " +
    "(the policy travels with the room's rules, pushed before this answers).",
  security: SECURITY.any,
  request: {
    params: QueueParam,
    body: jsonBody(
      BlendPolicySchema.partial().openapi("PutBlendPolicyRequest", {
        example: { appointmentsFirstFromMinutes: 5, walkInMaxWaitMinutes: 30 },
      }),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(BlendRecord), "The policy now in force"), ...errors() },
});

app.openapi(put, async (c) => {
  const { row } = guarded(c, "queue", "QUEUE_MANAGE");
  return c.json(ok(await setBlend(deps(c), row, c.req.valid("json"), now())), 200);
});

// ── Replay: a past period under another policy ─────────────────────────────────────────────

const InstantText = z
  .string()
  .max(40)
  .refine((s) => parseInstantInput(s) !== null, "an ISO 8601 timestamp with Z or an offset, or a date YYYY-MM-DD");

const Waits = {
  count: z.number().int(),
  meanWaitMinutes: z.number().nullable(),
  p90WaitMinutes: z.number().nullable(),
  longestWaitMinutes: z.number().nullable(),
};

const ReplayFigures = z
  .object({
    walkIns: z.object(Waits).openapi("ReplayWalkInWaits"),
    appointments: z
      .object({
        ...Waits,
        calledLate: z.number().int().openapi({ description: "Appointments checked in on time and called after their time" }),
      })
      .openapi("ReplayAppointmentWaits"),
    calls: z.array(
      z
        .object({
          ticketId: z.string(),
          displayCode: z.string(),
          kind: z.enum(TICKET_KINDS),
          calledAt: z.string(),
          waitMinutes: z.number(),
          rule: z
            .enum(PLACEMENT_RULES)
            .nullable()
            .openapi({ description: "The placement it was called under in the replay; null for what happened" }),
        })
        .openapi("ReplayCall"),
    ),
  })
  .openapi("ReplayFigures");

const ReplayRecord = z
  .object({
    queueId: z.string(),
    from: z.string(),
    to: z.string(),
    policy: BlendPolicySchema,
    policyInForce: BlendPolicySchema,
    happened: ReplayFigures,
    replayed: ReplayFigures,
  })
  .openapi("BlendReplay");

const replay = createRoute({
  method: "post",
  path: "/business/queues/{queueId}/blend/replay",
  tags,
  summary: "Replay a past period under another blend policy",
  description:
    "Needs QUEUE_MANAGE. Changes nothing. The tickets that joined the queue in [from, to) and were called (D1's history: arrivals, " +
    "check-ins with their appointment times, who called and how long each service took) are called again under `policy` (a field " +
    `left out takes its default): each desk calls as often as it did, no earlier than it did and no earlier than the end of the ` +
    "service it would have been giving, taking the first ticket of the blended order. Answers what happened beside what would have " +
    "(waits of walk-ins and of appointments: mean, p90, longest; appointments called late). A bare date is 00:00 in the service's " +
    `location's time zone and \`to\` includes that day. At most ${REPLAY_MAX_DAYS} days and ${REPLAY_MAX_TICKETS} called tickets.`,
  security: SECURITY.any,
  request: {
    params: QueueParam,
    body: jsonBody(
      z
        .strictObject({
          policy: BlendPolicySchema.partial(),
          from: InstantText,
          to: InstantText,
        })
        .openapi("BlendReplayRequest", {
          example: { policy: { appointmentsFirstFromMinutes: 5, walkInMaxWaitMinutes: 30 }, from: "2026-03-16", to: "2026-03-20" },
        }),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(ReplayRecord), "What happened and what the policy would have produced"), ...errors() },
});

const outcomeJson = (o: ReplayOutcome) => ({ ...o, calls: o.calls.map((call) => ({ ...call, calledAt: iso(call.calledAt) })) });

app.openapi(replay, async (c) => {
  const { row } = guarded(c, "queue", "QUEUE_MANAGE");
  const body = c.req.valid("json");
  const answer = await replayPeriod(deps(c), row, body.policy, parseInstantInput(body.from)!, parseInstantInput(body.to)!, now());
  return c.json(
    ok({
      ...answer,
      from: iso(answer.from),
      to: iso(answer.to),
      happened: outcomeJson(answer.happened),
      replayed: outcomeJson(answer.replayed),
    }),
    200,
  );
});

export default app;
