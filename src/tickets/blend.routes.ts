import { createRoute, z } from "@hono/zod-openapi";
import { guarded } from "../access/guard";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { blendOf, setBlend } from "./blend";

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
  return c.json(ok(await setBlend(c.env, row, c.req.valid("json"), now())), 200);
});

export default app;
