import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";

/**
 * The minute cron, run once at `at` (epoch ms or an ISO date) the way the platform runs it,
 * and finished: everything it handed to waitUntil has settled when this returns.
 */
export async function sweep(at: number | string): Promise<void> {
  const scheduledTime = typeof at === "string" ? new Date(at).getTime() : at;
  const ctx = createExecutionContext();
  await worker.scheduled!(createScheduledController({ scheduledTime, cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}
