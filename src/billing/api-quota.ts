import { createMiddleware } from "hono/factory";
import { now } from "../lib/clock";
import { takeApiCall } from "./usage";
import type { AppEnv } from "../http/context";
import { deps } from "../http/deps";

/**
 * The monthly API-call quota of the organization's plan (spec §8 Monthly quotas): every
 * request made with an API key counts, except a widget key's (public traffic, CONTRACT §10).
 * Sessions (the dashboard) are not API calls. Runs after the rate limit, so a 429 is not counted.
 */
export const apiCallQuota = createMiddleware<AppEnv>(async (c, next) => {
  const p = c.get("principal");
  if (p.kind === "apiKey" && !p.widgetOnly) {
    await takeApiCall(deps(c), p.organizationId, p.apiCallsPerMonth, now());
  }
  await next();
});
