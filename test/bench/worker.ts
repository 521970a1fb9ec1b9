import { DurableObject } from "cloudflare:workers";
import { errorResponse } from "../../src/app";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import type { RateDecision, WindowRule } from "../../src/rate-limiter/rate-limiter";
import { benchRoutes } from "./routes";

// The Worker `npm run bench` runs (test/bench/wrangler.toml): the production Worker's own
// handlers and Durable Objects, plus what only the benchmark needs, none of it in src/:
//  - /__bench/* (baselines and bulk seeding, ./routes.ts);
//  - EmptyRoom, the Durable Object of the "empty room RPC" baseline;
//  - no rate limits: the bench loads one Worker from one IP far above every tier, and limits
//    would only measure themselves. The production code reads its limiter from the
//    RATE_LIMITER binding; here that binding is handed over as a limiter that allows all.

export { OrganizationLedger, QueueRoom, RateLimiter, SocketHub } from "../../src/index";

/** Baseline B: a Durable Object whose one method does nothing. */
export class EmptyRoom extends DurableObject {
  ping(): number {
    return 1;
  }
}

export interface BenchEnv extends Env {
  EMPTY_ROOM: DurableObjectNamespace<EmptyRoom>;
}

function allowAll(rules: WindowRule[]): RateDecision {
  return {
    allowed: true,
    windows: rules.map((r) => ({ name: r.name, limit: r.limit, remaining: r.limit, resetAt: 0 })),
    retryAfterSeconds: 0,
  };
}

/** Answers every limiter call (hit, peek, record) as allowed, without a Durable Object call. */
const unlimited = {
  idFromName: (name: string) => name,
  get: () => ({
    hit: async (rules: WindowRule[]) => allowAll(rules),
    peek: async (rules: WindowRule[]) => allowAll(rules),
    record: async () => undefined,
  }),
} as unknown as Env["RATE_LIMITER"];

const bench = benchRoutes().onError((err, c) => errorResponse(err, c as never));

export default {
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname.startsWith("/__bench/")) return bench.fetch(request, env, ctx);
    return worker.fetch(request, { ...env, RATE_LIMITER: unlimited }, ctx);
  },
  queue: worker.queue,
  scheduled: worker.scheduled,
} satisfies ExportedHandler<BenchEnv, Parameters<typeof worker.queue>[0]["messages"][number]["body"]>;
