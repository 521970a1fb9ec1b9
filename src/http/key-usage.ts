import { createMiddleware } from "hono/factory";
import { database } from "../db/client";
import { now } from "../lib/clock";
import { recordApiKeyUse } from "../services/api-keys";
import type { AppEnv } from "./context";

/**
 * Notes when an API key was last used, after the response and off its path. The write is
 * conditional, so a busy key causes at most one row write a minute.
 */
export const trackApiKeyUse = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const p = c.get("principal");
  if (p?.kind !== "apiKey") return;
  const write = recordApiKeyUse(database(c.env.DB), p.keyId, now()).catch((err: unknown) =>
    console.error(JSON.stringify({ requestId: c.get("requestId"), error: `lastUsedAt: ${String(err)}` })),
  );
  c.executionCtx.waitUntil(write);
});
