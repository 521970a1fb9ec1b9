import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { queueFixture } from "../helpers/fixtures";

// Issue 43: the headers set after a handler answered (request id, cache, rate limit, version,
// D1 bookmark) are set on that answer in place. Hono's c.header made a new Response for each.

const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext;
const Original = globalThis.Response;
afterEach(() => {
  globalThis.Response = Original;
});

/** The answer to `path`, and how many Response objects our code and Hono made for it. */
async function counted(path: string, headers: Record<string, string> = {}): Promise<{ res: Response; made: number }> {
  let made = 0;
  globalThis.Response = new Proxy(Original, {
    construct(target, args, newTarget) {
      // Ours and Hono's only: the test pool's own calls to the objects make Responses too.
      if (/hono\/dist|\/src\//.test(new Error().stack ?? "")) made += 1;
      return Reflect.construct(target, args, newTarget) as object;
    },
  });
  const res = await createApp().request(`https://api.test${path}`, { headers }, env, ctx);
  globalThis.Response = Original;
  return { res, made };
}

describe("the headers after the handler", () => {
  it("are all on the answer, and the answer is not copied once per header", async () => {
    const f = await queueFixture("pro");
    const { res, made } = await counted(`/v1/widget/queue/${f.queueId}/status`, { "X-Request-ID": "req-answer-headers" });
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Request-ID")).toBe("req-answer-headers");
    // The route's own cache header is kept; the default applies only where a route set none.
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=5");
    expect(res.headers.get("X-RateLimit-Limit")).toBe("6000");
    expect(res.headers.get("X-RateLimit-Remaining")).toBe("5999");
    expect(res.headers.get("Queue-Version")).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(((await res.json()) as { data: { queueId: string } }).data.queueId).toBe(f.queueId);
    // The CORS middleware's early answer, the handler's, and Hono's merge of the two: no copy
    // for each of the six headers set after.
    expect(made).toBeLessThanOrEqual(3);
  });

  it("an error answer gets them too, with the default cache header", async () => {
    const { res, made } = await counted("/v1/widget/queue/que_00000000000000000000000000/status");
    expect(res.status).toBe(404);
    expect(res.headers.get("X-Request-ID")).toMatch(/^req_/);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(res.headers.get("X-RateLimit-Limit")).toBe("6000");
    expect(made).toBeLessThanOrEqual(3);
  });
});
