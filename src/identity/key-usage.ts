import { createMiddleware } from "hono/factory";
import { now } from "../lib/clock";
import { LAST_USED_GRANULARITY_MS, recordApiKeyUse } from "./api-keys";
import type { AppEnv } from "../http/context";
import { deps } from "../http/deps";

/**
 * Notes when an API key was last used, after the response and off its path. The key's row,
 * read to authenticate, says when it was last noted: a busy key sends one conditional write a
 * minute, and no statement at all on the other requests.
 */
export const trackApiKeyUse = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const p = c.get("principal");
  if (p?.kind !== "apiKey") return;
  const at = now();
  if (p.lastUsedAt !== null && p.lastUsedAt >= at - LAST_USED_GRANULARITY_MS) return;
  const write = recordApiKeyUse(deps(c), p.keyId, at).catch((err: unknown) =>
    console.error(JSON.stringify({ requestId: c.get("requestId"), error: `lastUsedAt: ${String(err)}` })),
  );
  c.executionCtx.waitUntil(write);
});
