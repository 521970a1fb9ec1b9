import { createMiddleware } from "hono/factory";
import { ApiError, validationError } from "./errors";
import type { AppEnv } from "./context";

export const MAX_BODY_BYTES = 64 * 1024;
const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;
/** Messaging providers post forms (Twilio, USSD aggregators): only their inbound routes take one (docs/conversations.md). */
const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;
const FORM_ROUTES = /^\/v1\/inbound\//;

function tooLarge(): ApiError {
  return new ApiError("PAYLOAD_TOO_LARGE", `Request bodies are limited to ${MAX_BODY_BYTES} bytes`, {
    limit: MAX_BODY_BYTES,
  });
}

/**
 * Every body is JSON of at most 64 KiB. Checked once, before routing, so no route can forget;
 * the parsed text stays cached on the request for the route's validator.
 */
export const bodyGuard = createMiddleware<AppEnv>(async (c, next) => {
  const method = c.req.method;
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return next();
  const declared = Number(c.req.header("Content-Length") ?? "");
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  // A body whose length is not declared (chunked, or HTTP/2, which needs neither header) is
  // read and measured like any other: only a declared empty body, or none at all, skips the checks.
  const undeclared = c.req.header("Content-Length") === undefined && c.req.raw.body !== null;
  const hasBody = declared > 0 || c.req.header("Transfer-Encoding") !== undefined || undeclared;
  if (!hasBody) return next();
  const contentType = c.req.header("Content-Type");
  if (contentType && FORM_TYPE.test(contentType) && FORM_ROUTES.test(c.req.path)) {
    if (new TextEncoder().encode(await c.req.text()).byteLength > MAX_BODY_BYTES) throw tooLarge();
    return next();
  }
  if (!contentType || !JSON_TYPE.test(contentType)) {
    throw new ApiError("UNSUPPORTED_MEDIA_TYPE", "Request bodies must be JSON (Content-Type: application/json)", {
      field: "Content-Type",
      reason: contentType ? `unsupported media type ${contentType}` : "missing",
    });
  }
  const text = await c.req.text();
  if (new TextEncoder().encode(text).byteLength > MAX_BODY_BYTES) throw tooLarge();
  if (text.trim() !== "") {
    try {
      JSON.parse(text);
    } catch {
      throw validationError("body", "malformed JSON");
    }
  }
  return next();
});
