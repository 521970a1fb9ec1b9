// The Worker `npm run dev` runs (scripts/dev.mjs: `wrangler dev scripts/dev-worker.ts`, the
// bindings of ../wrangler.toml): the production Worker's handlers and Durable Objects, plus
// one route only local development needs, none of it in src/ and never deployed (`wrangler
// deploy` builds src/index.ts; test/integration/dev-seed.test.ts proves the route absent there):
//
//   POST /__dev/demo-queue {id, organizationId, serviceId, name}
//
// creates the demo queue under the id the documentation's examples name
// (src/http/openapi-examples.ts), through the same createQueue as POST /v1/business/queues
// (room configured first, plan limit, letter), so the reference page's samples work against
// `npm run dev`. Idempotent: an existing queue with that id is answered as it is.

import type { Env } from "../src/env";
import worker from "../src/index";
import { now } from "../src/lib/clock";
import { createQueue, describeQueue, findQueue } from "../src/tickets/queues";

export { OrganizationLedger, QueueRoom, RateLimiter } from "../src/index";

interface DemoQueue {
  id: string;
  organizationId: string;
  serviceId: string;
  name: string;
}

async function demoQueue(request: Request, env: Env): Promise<Response> {
  const input = (await request.json()) as DemoQueue;
  const existing = await env.DB.prepare("SELECT 1 AS found FROM queues WHERE id = ?").bind(input.id).first();
  const at = now();
  const queue = existing
    ? await describeQueue(env, await findQueue(env, input.id), at)
    : await createQueue(env, input.organizationId, { serviceId: input.serviceId, name: input.name }, at, input.id);
  return Response.json({ data: queue }, { status: existing ? 200 : 201 });
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/__dev/demo-queue" && request.method === "POST") {
      try {
        return await demoQueue(request, env);
      } catch (err) {
        return Response.json({ error: { message: String(err) } }, { status: 500 });
      }
    }
    return worker.fetch(request, env, ctx);
  },
  queue: worker.queue,
  scheduled: worker.scheduled,
} satisfies ExportedHandler<Env, Parameters<typeof worker.queue>[0]["messages"][number]["body"]>;
