import { createMiddleware } from "hono/factory";
import { randomString } from "../lib/ids";
import type { AppEnv } from "./context";
import { answerHeader } from "./answer-headers";

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;

/** Echo the caller's X-Request-ID when it is safe to, else make one. */
export const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const incoming = c.req.header("X-Request-ID");
  const id = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : `req_${randomString(20)}`;
  c.set("requestId", id);
  await next();
  answerHeader(c, "X-Request-ID", id);
  if (!c.res.headers.has("Cache-Control")) answerHeader(c, "Cache-Control", "no-store");
});
