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

export { EventHub, OrganizationLedger, QueueRoom, RateLimiter, Simulation, SocketHub } from "../../src/index";

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

const unlimitedRules = (rules: WindowRule[]) => rules.map((r) => ({ ...r, limit: null }));

/**
 * Answers every limiter call (hit, peek, record) as allowed, without a Durable Object call. A
 * session's own calls to its user's object (issue 43: it judges the session and counts in one
 * call) reach the real object, with the per-user limit lifted: that call is the hot path's cost.
 */
function unlimited(real: Env["RATE_LIMITER"]): Env["RATE_LIMITER"] {
  return {
    idFromName: (name: string) => name,
    get: (name: string) => {
      const object = () => real.get(real.idFromName(name));
      return {
        hit: async (rules: WindowRule[]) => allowAll(rules),
        peek: async (rules: WindowRule[]) => allowAll(rules),
        record: async () => undefined,
        admitSession: (tokenHash: string, at: number, slide: never, rules: WindowRule[]) =>
          object().admitSession(tokenHash, at, slide, unlimitedRules(rules)),
        admitLoadedSession: (generation: string, tokenHash: string, rows: never, at: number, slide: never, rules: WindowRule[]) =>
          object().admitLoadedSession(generation, tokenHash, rows, at, slide, unlimitedRules(rules)),
        accessChanging: (changeId: string, at: number) => object().accessChanging(changeId, at),
        accessChanged: (changeId: string, at: number) => object().accessChanged(changeId, at),
      };
    },
  } as unknown as Env["RATE_LIMITER"];
}

const bench = benchRoutes().onError((err, c) => errorResponse(err, c as never));

export default {
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname.startsWith("/__bench/")) return bench.fetch(request, env, ctx);
    return worker.fetch(request, { ...env, RATE_LIMITER: unlimited(env.RATE_LIMITER) }, ctx);
  },
  queue: worker.queue,
  scheduled: worker.scheduled,
} satisfies ExportedHandler<BenchEnv, Parameters<typeof worker.queue>[0]["messages"][number]["body"]>;
