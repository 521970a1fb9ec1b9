import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../http/context";
import { sealPendingAudit } from "./audit";

// Sealing happens on writes, never on reads (issue 40): a request that recorded an audit entry
// (it asked for its `auditOrigin`, src/http/audit-origin.ts) seals the pending entries before it
// answers, so the log it then reads already holds them. Entries written outside a request (jobs)
// are sealed by the minute cron, which also signs the checkpoints.
export const sealAuditAfterWrites = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (!c.get("auditWritten")) return;
  try {
    await sealPendingAudit(c.env, 10);
  } catch (err) {
    // The change and its entry are committed; the cron seals what this could not.
    console.error(JSON.stringify({ auditSealing: String(err), requestId: c.get("requestId") }));
  }
});
