import { createRoute, z } from "@hono/zod-openapi";
import { errors, SECURITY } from "../http/openapi";
import { router } from "../http/router";
import { EXPORT_COLUMNS, ticketsCsvStream } from "./analytics-export";
import { AnalyticsScopeQuery, resolveAnalyticsScope } from "./analytics-scope";
import { deps } from "../http/deps";

const app = router();

const exportCsv = createRoute({
  method: "get",
  path: "/analytics/export.csv",
  tags: ["Analytics"],
  summary: "Tickets of the range as CSV, one row per ticket (streamed)",
  description:
    "Same access, plan and scope as the other analytics reads (ANALYTICS_VIEW; pro or enterprise, else 402 PLAN_REQUIRED; range at most a year). " +
    "Tickets created in the range, ordered by creation, times in ISO 8601 with the offset of the queue's location. " +
    "RFC 4180, UTF-8 with a byte order mark; a text field starting with = + - @ is prefixed with ' (formula injection). " +
    `Columns: ${EXPORT_COLUMNS.join(", ")}. See docs/retention.md.`,
  security: SECURITY.any,
  request: { query: AnalyticsScopeQuery },
  responses: {
    200: {
      description: "The CSV file (Content-Disposition: attachment)",
      content: { "text/csv": { schema: z.string().openapi({ example: `\uFEFF${EXPORT_COLUMNS.join(",")}\r\n` }) } },
    },
    ...errors(402),
  },
});

/** "2026-03-01T00:00:00.000Z" → "20260301T0000Z": safe in a file name. */
const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 16).replaceAll("-", "").replaceAll(":", "") + "Z";

app.openapi(exportCsv, async (c) => {
  const query = c.req.valid("query");
  const scope = await resolveAnalyticsScope(c, query, "analytics_export");
  const stream = await ticketsCsvStream(deps(c), scope, query.locationId);
  return c.body(stream, 200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="tickets-${stamp(scope.from)}-${stamp(scope.to)}.csv"`,
    "Cache-Control": "no-store",
  });
});

export default app;
