import { createRoute, z } from "@hono/zod-openapi";
import { ANALYTICS_CHANNELS } from "../domain/analytics";
import { errors, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import {
  analyticsEstimates,
  analyticsHeatmap,
  analyticsKinds,
  analyticsOperators,
  analyticsSummary,
  analyticsVisits,
  GROUP_BY,
  WEEKDAYS,
} from "./analytics";
import { AnalyticsScopeQuery, resolveAnalyticsScope } from "./analytics-scope";
import { analyticsFeedback, FEEDBACK_WAIT_EDGES_MINUTES } from "./feedback";
import { deps } from "../http/deps";

const app = router();
const tags = ["Analytics"];

const ACCESS =
  "Organization from the API key, X-Organization-Id, or the user's only membership. Needs ANALYTICS_VIEW (owner, admin, manager; keys with read:analytics) and the pro or enterprise plan (402 PLAN_REQUIRED on starter). " +
  "Tickets count in the hour they were created (a cohort), in the time zone of their queue's location; the range is rounded out to whole UTC hours. See docs/analytics.md.";

const Range = {
  from: z.string().openapi({ description: "Start of the range read (rounded down to the hour)", example: "2026-03-01T00:00:00.000Z" }),
  to: z.string().openapi({ description: "End of the range read, exclusive (rounded up to the hour)", example: "2026-04-01T00:00:00.000Z" }),
};

const Minutes = z
  .object({
    count: z.number().int().openapi({ description: "Tickets measured" }),
    mean: z.number().nullable(),
    p50: z.number().nullable().openapi({ description: "Median, from fixed buckets (error bound in docs/analytics.md)" }),
    p90: z.number().nullable(),
  })
  .openapi("AnalyticsMinutes");

const Counts = {
  created: z.number().int(),
  served: z.number().int(),
  noShow: z.number().int().openapi({ description: "Expired after being called, or skipped by an operator" }),
  cancelled: z.number().int().openapi({ description: "Cancelled, transfers excepted" }),
  transferred: z.number().int().openapi({ description: "Moved to another queue" }),
};

const Figures = {
  ...Counts,
  abandonmentRate: z
    .number()
    .nullable()
    .openapi({ description: "(noShow + cancelled) / (served + noShow + cancelled); null when none ended", example: 0.12 }),
  waitMinutes: Minutes.openapi({ description: "Join → call, over tickets called" }),
  serviceMinutes: Minutes.openapi({ description: "Serve → complete, over tickets served" }),
};

const ChannelFigures = z.object({ ...Counts, meanWaitMinutes: z.number().nullable() }).openapi("AnalyticsChannelFigures");

const Summary = z
  .object({
    ...Range,
    groupBy: z.enum(GROUP_BY),
    timeZones: z.array(z.string()).openapi({ description: "Time zones of the queues in scope", example: ["Europe/Paris"] }),
    queues: z.number().int().openapi({ description: "Queues in scope" }),
    totals: z.object(Figures),
    channels: z.object(
      Object.fromEntries(ANALYTICS_CHANNELS.map((c) => [c, ChannelFigures])) as Record<
        (typeof ANALYTICS_CHANNELS)[number],
        typeof ChannelFigures
      >,
    ),
    buckets: z.array(
      z.object({
        label: z.string().openapi({
          description:
            "Local hour with its offset (2026-03-29T03:00+02:00), local date (day), or the local date of the week's Monday (week)",
          example: "2026-03-20",
        }),
        startsAt: z
          .string()
          .nullable()
          .openapi({ description: "The bucket's first instant; null when the scope spans several time zones" }),
        ...Figures,
      }),
    ),
  })
  .openapi("AnalyticsSummary");

const Operators = z
  .object({
    ...Range,
    operators: z.array(
      z.object({
        operatorId: z.string(),
        name: z.string().nullable(),
        calls: z.number().int().openapi({ description: "Tickets this operator called (their last operator), created in the range" }),
        served: z.number().int(),
        noShows: z.number().int(),
        meanServiceMinutes: z.number().nullable(),
        activeHours: z.number().int().openapi({ description: "Clock hours in which they called at least one of these tickets" }),
        servedPerActiveHour: z.number().nullable(),
        recalls: z.number().int().openapi({ description: "Recalls of the calls counted (each announcement again of a called ticket)" }),
        desk: z
          .string()
          .nullable()
          .openapi({ description: "The desk this operator called most of these tickets from; null when none was called from a desk" }),
      }),
    ),
  })
  .openapi("AnalyticsOperators");

const Heatmap = z
  .object({
    ...Range,
    timeZones: z.array(z.string()),
    weekdays: z.array(z.enum(WEEKDAYS)),
    total: z.number().int(),
    arrivals: z
      .array(z.array(z.number().int()))
      .openapi({ description: "arrivals[weekday][hour]: tickets created, weekday 0 = Monday, local hour 0–23" }),
  })
  .openapi("AnalyticsHeatmap");

const EstimateFigures = {
  estimated: z.number().int().openapi({ description: "Tickets called that had an estimate at join" }),
  meanAbsoluteErrorMinutes: z.number().nullable(),
  p50AbsoluteErrorMinutes: z.number().nullable(),
  p90AbsoluteErrorMinutes: z.number().nullable(),
  meanBiasMinutes: z
    .number()
    .nullable()
    .openapi({ description: "Actual − promised wait: positive when people waited longer than promised" }),
};

const Estimates = z
  .object({
    ...Range,
    totals: z.object(EstimateFigures),
    queues: z.array(z.object({ queueId: z.string(), name: z.string().nullable(), ...EstimateFigures })),
  })
  .openapi("AnalyticsEstimates");

const summary = createRoute({
  method: "get",
  path: "/analytics/summary",
  tags,
  summary: "Tickets created, served, no-show, cancelled, transferred; wait and service times; abandonment; per channel and per bucket",
  description: ACCESS,
  security: SECURITY.any,
  request: {
    query: AnalyticsScopeQuery.extend({
      groupBy: z
        .enum(GROUP_BY)
        .default("day")
        .openapi({ param: { name: "groupBy", in: "query" }, description: "Bucket size, in the location's time zone (default day)" }),
    }),
  },
  responses: { 200: jsonResponse(okEnvelope(Summary), "The summary"), ...errors(402) },
});

app.openapi(summary, async (c) => {
  const query = c.req.valid("query");
  const scope = await resolveAnalyticsScope(c, query);
  return c.json(ok(await analyticsSummary(deps(c), scope, query.groupBy)), 200);
});

const operators = createRoute({
  method: "get",
  path: "/analytics/operators",
  tags,
  summary: "Per operator: calls, served, no-shows, mean service time, throughput",
  description: `${ACCESS} Read from the tickets (each ticket counts for the operator it was last assigned to). Recalls count their announcements again; the desk is the one they called most of them from.`,
  security: SECURITY.any,
  request: { query: AnalyticsScopeQuery },
  responses: { 200: jsonResponse(okEnvelope(Operators), "Operators' figures"), ...errors(402) },
});

app.openapi(operators, async (c) => {
  const scope = await resolveAnalyticsScope(c, c.req.valid("query"));
  return c.json(ok(await analyticsOperators(deps(c), scope)), 200);
});

const KindFigures = z
  .object({
    created: z.number().int(),
    served: z.number().int(),
    noShow: z.number().int().openapi({ description: "Expired after being called, or skipped by an operator" }),
    cancelled: z.number().int().openapi({ description: "Cancelled, transfers excepted" }),
    meanWaitMinutes: z.number().nullable().openapi({ description: "Join (check-in) → call, over tickets called" }),
  })
  .openapi("AnalyticsKindFigures");

const Kinds = z
  .object({
    ...Range,
    walkIn: KindFigures,
    appointment: KindFigures.openapi({ description: "Tickets made by a check-in" }),
    punctuality: z.object({
      checkedIn: z.number().int(),
      beforeStart: z.number().int().openapi({ description: "Checked in at or before the appointment's start" }),
      afterStart: z.number().int(),
      meanMinutesFromStart: z.number().nullable().openapi({ description: "Check-in minus start, negative when early" }),
    }),
    appointments: z
      .object({
        booked: z.number().int(),
        checkedIn: z.number().int(),
        noShow: z.number().int(),
        cancelled: z.number().int(),
        noShowRate: z.number().nullable().openapi({ description: "noShow / (checkedIn + noShow); null when none" }),
      })
      .openapi({ description: "Appointments of the scope's services starting in the range, by status now" }),
  })
  .openapi("AnalyticsKinds");

const kinds = createRoute({
  method: "get",
  path: "/analytics/kinds",
  tags,
  summary: "Walk-ins beside appointments: figures by kind, punctuality, no-show rate",
  description: `${ACCESS} Read from the tickets (by creation, like the other figures) and the appointments (by start).`,
  security: SECURITY.any,
  request: { query: AnalyticsScopeQuery },
  responses: { 200: jsonResponse(okEnvelope(Kinds), "Figures by kind"), ...errors(402) },
});

app.openapi(kinds, async (c) => {
  const scope = await resolveAnalyticsScope(c, c.req.valid("query"));
  return c.json(ok(await analyticsKinds(deps(c), scope)), 200);
});

const VisitFigures = {
  visits: z.number().int().openapi({ description: "Visits of several services whose first leg joined in the range" }),
  completed: z.number().int().openapi({ description: "Those whose last leg was served (every leg done)" }),
  totalMinutes: z
    .object({
      count: z.number().int().openapi({ description: "Completed visits measured" }),
      mean: z.number().nullable(),
      p50: z.number().nullable().openapi({ description: "Median (nearest rank, exact)" }),
      p90: z.number().nullable(),
    })
    .openapi({ description: "The visit's total time: first leg's join → last leg's completion, over completed visits" }),
  meanWaitMinutes: z
    .number()
    .nullable()
    .openapi({ description: "Mean over completed visits of the waits of all legs (each leg's join or hand-off → call)" }),
  meanServiceMinutes: z
    .number()
    .nullable()
    .openapi({ description: "Mean over completed visits of the service times of all legs (serve → complete)" }),
};

const Visits = z
  .object({
    ...Range,
    ...VisitFigures,
    byLegs: z
      .array(z.object({ legs: z.number().int().openapi({ description: "Services in the visit", example: 2 }), ...VisitFigures }))
      .openapi({ description: "The same figures by the visit's number of legs, ascending; only counts that occur" }),
  })
  .openapi("AnalyticsVisits");

const visits = createRoute({
  method: "get",
  path: "/analytics/visits",
  tags,
  summary: "Visits of several services: started, completed, and the visit's total time over all its legs",
  description: `${ACCESS} A visit counts with its first leg (its join time and queue, so queueId/serviceId filter on the first service); every leg's time counts in its total. One-service visits are not listed here.`,
  security: SECURITY.any,
  request: { query: AnalyticsScopeQuery },
  responses: { 200: jsonResponse(okEnvelope(Visits), "Visits of several services"), ...errors(402) },
});

app.openapi(visits, async (c) => {
  const scope = await resolveAnalyticsScope(c, c.req.valid("query"));
  return c.json(ok(await analyticsVisits(deps(c), scope)), 200);
});

const heatmap = createRoute({
  method: "get",
  path: "/analytics/heatmap",
  tags,
  summary: "Arrivals by weekday × hour, in the location's time zone",
  description: ACCESS,
  security: SECURITY.any,
  request: { query: AnalyticsScopeQuery },
  responses: { 200: jsonResponse(okEnvelope(Heatmap), "Arrivals"), ...errors(402) },
});

app.openapi(heatmap, async (c) => {
  const scope = await resolveAnalyticsScope(c, c.req.valid("query"));
  return c.json(ok(await analyticsHeatmap(deps(c), scope)), 200);
});

const estimates = createRoute({
  method: "get",
  path: "/analytics/estimates",
  tags,
  summary: "How right the promised waits were: absolute error (mean, p50, p90) and bias, per queue",
  description: `${ACCESS} Each ticket keeps the wait its join answered; the error is |actual wait − that estimate|.`,
  security: SECURITY.any,
  request: { query: AnalyticsScopeQuery },
  responses: { 200: jsonResponse(okEnvelope(Estimates), "Accuracy of estimates"), ...errors(402) },
});

app.openapi(estimates, async (c) => {
  const scope = await resolveAnalyticsScope(c, c.req.valid("query"));
  return c.json(ok(await analyticsEstimates(deps(c), scope)), 200);
});

const ScoreFigures = {
  count: z.number().int().openapi({ description: "Verdicts counted" }),
  mean: z.number().nullable().openapi({ description: "Mean score (1–5), two decimals; null when none", example: 4.25 }),
  distribution: z
    .object({ "1": z.number().int(), "2": z.number().int(), "3": z.number().int(), "4": z.number().int(), "5": z.number().int() })
    .openapi({ description: "Verdicts per score" }),
};

const FeedbackAnalytics = z
  .object({
    ...Range,
    timeZones: z.array(z.string()),
    totals: z.object(ScoreFigures),
    waitEdgesMinutes: z.array(z.number().int()).openapi({ example: [...FEEDBACK_WAIT_EDGES_MINUTES] }),
    byWait: z
      .array(
        z.object({
          fromMinutes: z.number().int().openapi({ description: "Waits from this many minutes (included)" }),
          toMinutes: z.number().int().nullable().openapi({ description: "to this many (excluded); null for the last bucket" }),
          ...ScoreFigures,
        }),
      )
      .openapi({ description: "The score against the minutes waited (join → call), one entry per bucket, empty ones included" }),
    unmeasuredWaits: z.number().int().openapi({ description: "Verdicts on tickets with no call time (left out of byWait)" }),
    services: z.array(z.object({ serviceId: z.string(), name: z.string().nullable(), ...ScoreFigures })),
    desks: z.array(
      z.object({
        deskId: z.string().nullable().openapi({ description: "null: served without a desk" }),
        name: z.string().nullable(),
        ...ScoreFigures,
      }),
    ),
    operators: z.array(
      z.object({
        operatorId: z.string().nullable().openapi({ description: "The member (or key) that served the ticket" }),
        name: z.string().nullable(),
        ...ScoreFigures,
      }),
    ),
    hours: z
      .array(z.object({ hour: z.number().int(), ...ScoreFigures }))
      .openapi({ description: "24 entries: the local hour (0–23) the tickets joined, in their location's time zone" }),
  })
  .openapi("AnalyticsFeedback");

const feedback = createRoute({
  method: "get",
  path: "/analytics/feedback",
  tags,
  summary: "The customers' verdicts: count, mean, 1–5 distribution, by service, desk, operator and hour, and against the wait",
  description: `${ACCESS} A verdict counts with its ticket's join (docs/visits.md, feedback). byWait buckets the wait join → call: [0, 5), [5, 10), [10, 15), [15, 20), [20, 30), [30, 45), [45, 60), [60, 90), [90, 120) and 120 minutes or more.`,
  security: SECURITY.any,
  request: { query: AnalyticsScopeQuery },
  responses: { 200: jsonResponse(okEnvelope(FeedbackAnalytics), "The verdicts"), ...errors(402) },
});

app.openapi(feedback, async (c) => {
  const scope = await resolveAnalyticsScope(c, c.req.valid("query"));
  return c.json(ok(await analyticsFeedback(deps(c), scope)), 200);
});

export default app;
