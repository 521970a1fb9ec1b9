import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { Env } from "../env";
import type { AppEnv } from "./context";
import { validationError } from "./errors";
import { answerHeader } from "./answer-headers";

// D1's Sessions API for the reads that stay on D1 (listings, dashboards, analytics: issue 43,
// docs/hot-path.md). After the caller is known and authorized on the primary (the credential
// batch, the resource guards), a route's own D1 statements go through one session per request:
// a GET starts where the caller's last bookmark says (`X-D1-Bookmark`), else anywhere (a read
// replica may answer), and a write starts on the primary. The response carries the session's
// bookmark in `X-D1-Bookmark`; sent back on the next request, that request sees at least what
// this one wrote or read (read-your-writes), whichever replica answers it.

export const BOOKMARK_HEADER = "X-D1-Bookmark";
/** D1 bookmarks are hexadecimal groups joined by dashes; anything else is refused before it reaches D1. */
const BOOKMARK = /^[0-9a-f]{1,32}(-[0-9a-f]{1,32}){0,7}$/i;

const primaries = new WeakMap<object, Env>();

/** The bindings with the primary D1 (no session): membership reads that decide access use it. */
export function primaryEnv(c: Context<AppEnv>): Env {
  return primaries.get(c.env) ?? c.env;
}

export const d1Session = createMiddleware<AppEnv>(async (c, next) => {
  const sent = c.req.header(BOOKMARK_HEADER);
  if (sent !== undefined && !BOOKMARK.test(sent)) throw validationError(BOOKMARK_HEADER, "not a bookmark answered by this API");
  const read = c.req.method === "GET" || c.req.method === "HEAD";
  const primary = c.env;
  // Opened when the route first reaches D1 (issue 43: join, call-next and most hot routes never do).
  const opened: { session?: D1DatabaseSession } = {};
  c.env = {
    ...primary,
    get DB() {
      return (opened.session ??= primary.DB.withSession(sent ?? (read ? "first-unconstrained" : "first-primary"))) as unknown as D1Database;
    },
  };
  primaries.set(c.env, primary);
  await next();
  const bookmark = opened.session?.getBookmark();
  if (bookmark) answerHeader(c, BOOKMARK_HEADER, bookmark);
});
