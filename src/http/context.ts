import type { Env } from "../env";
import type { Role } from "../domain/permissions";
import type { Principal } from "./auth";
import type { ApiError } from "./errors";
import type { QueueRow } from "../services/queues";

/** The Hono environment every router shares. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    principal: Principal;
    rateLimitHeaders: Record<string, string>;
    /** Roles of the session's user already read along with another row (see `rememberRole`). */
    knownRoles: Map<string, Role | null>;
    /** Why an optional credential (the session cookie) was not accepted; thrown by routes that need one. */
    credentialError: ApiError;
    /** The response clears the session cookie (it was invalid, or the caller logged out). */
    clearSessionCookie: boolean;
    /** The queue the path names, read with the credential (null: no such queue); see `queueOfCaller`. */
    prefetchedQueue: { queueId: string; queue: QueueRow | null; role: Role | null };
  };
};
