import type { Env } from "../env";
import type { Principal } from "./auth";

/** The Hono environment every router shares. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    principal: Principal;
    rateLimitHeaders: Record<string, string>;
  };
};
