import { createRoute, z } from "@hono/zod-openapi";
import { authorize, organizationOfRequest } from "../http/auth";
import { errors, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { dashboard } from "./dashboard";
import { deps } from "../http/deps";

const app = router();

const Counts = (statuses: readonly [string, ...string[]]) =>
  z.object({ total: z.number().int(), byStatus: z.record(z.enum(statuses), z.number().int()) });

export const Dashboard = z
  .object({
    organizationId: z.string(),
    generatedAt: z.string(),
    locations: z.object({ total: z.number().int() }),
    services: Counts(["active", "inactive", "pending", "rejected"]),
    queues: Counts(["active", "paused", "closed"]),
    tickets: z
      .object({
        today: z.object({ total: z.number().int(), byStatus: z.record(z.string(), z.number().int()) }),
        averageWaitMinutes: z.number().nullable(),
        averageServiceMinutes: z.number().nullable(),
      })
      .openapi({
        description:
          "Tickets created since 00:00 UTC by status; average wait (join → call) and service time (serve → complete) of today's tickets, null before the first one",
      }),
  })
  .openapi("Dashboard");

const get = createRoute({
  method: "get",
  path: "/business/dashboard",
  tags: ["Organizations"],
  summary: "Counts of the caller's organization: locations, services, queues, tickets",
  description:
    "Organization from the API key, X-Organization-Id, or the user's only membership. Needs ANALYTICS_VIEW (managers and up; keys with read:analytics). Archived queues are not counted.",
  security: SECURITY.any,
  responses: { 200: jsonResponse(okEnvelope(Dashboard), "Dashboard data"), ...errors() },
});

app.openapi(get, async (c) => {
  const organizationId = await organizationOfRequest(c);
  const actor = await authorize(c, organizationId, "ANALYTICS_VIEW");
  return c.json(ok(await dashboard(deps(c), organizationId, now(), actor.locationIds)), 200);
});

export default app;
