import { database, type Database } from "../db/client";
import type { Env } from "../env";

/**
 * What a use case needs from the outside world (issue 36), passed as one object: the Drizzle
 * client on this request's D1 session (./d1-sessions.ts) and the other bindings (queues, Durable
 * Objects, secrets). A router builds it with `deps(c)` and never names the D1 binding; a job or
 * a consumer with `depsOf(env)`. Use cases query through `db`; only the allow-listed raw-SQL
 * files (scripts/check-data-access.mjs) reach `env.DB` themselves.
 */
export interface Deps {
  readonly db: Database;
  readonly env: Env;
}

export function depsOf(env: Env): Deps {
  // Reached on first use (issue 43): a request's D1 session and its client are made only by a
  // route that queries D1 (./d1-sessions.ts); join and call-next never do.
  return {
    get db() {
      return database(env.DB);
    },
    env,
  };
}

/** The request's dependencies: its D1 session, through one cached Drizzle client per binding. */
export function deps(c: { env: Env }): Deps {
  return depsOf(c.env);
}
