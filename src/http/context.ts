import type { Env } from "../env";
import type { Role } from "../domain/permissions";
import type { Principal } from "./auth";

/** The Hono environment every router shares. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    principal: Principal;
    rateLimitHeaders: Record<string, string>;
    /** Roles of the session's user already read along with another row (see `rememberRole`). */
    knownRoles: Map<string, Role | null>;
  };
};
