import type { Context } from "hono";
import type { AppEnv } from "./context";

/**
 * Sets a header on the answer a handler already made. Hono's `c.header` makes a new Response on
 * every call once the answer exists (issue 43: the middleware after the handlers set five to
 * eight headers, each a copy of the Response, 0.1–0.2 ms a request). The answer's headers are set
 * in place instead; only an answer whose headers are immutable (one passed on from a `fetch`, a
 * room's WebSocket upgrade) is copied, once, by Hono, and the copy's headers are its own.
 */
export function answerHeader(c: Context<AppEnv>, name: string, value: string, options: { append?: boolean } = {}): void {
  try {
    if (options.append) c.res.headers.append(name, value);
    else c.res.headers.set(name, value);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    c.header(name, value, options);
  }
}
