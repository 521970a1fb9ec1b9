import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { guarded } from "../access/guard";
import type { AppEnv } from "../http/context";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { addOutcome, listOutcomes, MAX_OUTCOMES_PER_SERVICE, outcomeRecord, removeOutcome } from "./service-outcomes";
import { PublicLine } from "../http/schemas";
import { deps } from "../http/deps";

// The outcomes a service offers at completion (docs/desks.md, outcomes).

const app = router();
const tags = ["Services"];

export const OutcomeCode = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, "lowercase letters, digits, _ and -, at most 40")
  .openapi({ example: "account_opened", description: "Lowercase letters, digits, `_` and `-`; at most 40" });

const ServiceOutcome = z
  .object({
    serviceId: z.string(),
    code: OutcomeCode,
    label: z.string().openapi({ example: "Account opened" }),
    createdAt: z.string(),
  })
  .openapi("ServiceOutcome");

const ServiceParam = idParam("serviceId", "svc");

function serviceOf(c: Context<AppEnv>, permission: "SERVICE_VIEW" | "SERVICE_MANAGE") {
  return guarded(c, "service", permission).row;
}

const create = createRoute({
  method: "post",
  path: "/services/{serviceId}/outcomes",
  tags,
  summary: "Add an outcome operators may record when completing a ticket of this service",
  description:
    `Needs SERVICE_MANAGE. \`code\` is unique within the service (409 CONFLICT, details.field \`code\`); at most ` +
    `${MAX_OUTCOMES_PER_SERVICE} outcomes per service. Completing a ticket with \`{outcome: code}\` records it.`,
  security: SECURITY.any,
  request: {
    params: ServiceParam,
    body: jsonBody(
      z
        .strictObject({ code: OutcomeCode, label: PublicLine(100).openapi({ example: "Account opened" }) })
        .openapi("CreateServiceOutcomeRequest"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(ServiceOutcome), "The outcome"), ...errors(409) },
});

app.openapi(create, async (c) => {
  const service = serviceOf(c, "SERVICE_MANAGE");
  return c.json(ok(outcomeRecord(await addOutcome(deps(c), service, c.req.valid("json"), now()))), 201);
});

const list = createRoute({
  method: "get",
  path: "/services/{serviceId}/outcomes",
  tags,
  summary: "The outcomes of a service, oldest first",
  description: `Needs SERVICE_VIEW (operators have it). At most ${MAX_OUTCOMES_PER_SERVICE}, so not paginated.`,
  security: SECURITY.any,
  request: { params: ServiceParam },
  responses: { 200: jsonResponse(okEnvelope(z.array(ServiceOutcome)), "The outcomes"), ...errors() },
});

app.openapi(list, async (c) => {
  const service = serviceOf(c, "SERVICE_VIEW");
  return c.json(ok((await listOutcomes(deps(c), service.id)).map(outcomeRecord)), 200);
});

const remove = createRoute({
  method: "delete",
  path: "/services/{serviceId}/outcomes/{code}",
  tags,
  summary: "Remove an outcome",
  description: "Needs SERVICE_MANAGE. Tickets completed with it keep its code; new completions may no longer name it.",
  security: SECURITY.any,
  request: {
    params: ServiceParam.extend({
      code: z
        .string()
        .min(1)
        .max(64)
        .openapi({ param: { name: "code", in: "path" }, example: "account_opened" }),
    }),
  },
  responses: { 200: jsonResponse(okEnvelope(z.object({ code: z.string(), deleted: z.literal(true) })), "Removed"), ...errors() },
});

app.openapi(remove, async (c) => {
  const { code } = c.req.valid("param");
  const service = serviceOf(c, "SERVICE_MANAGE");
  await removeOutcome(deps(c), service.id, code);
  return c.json(ok({ code, deleted: true as const }), 200);
});

export default app;
