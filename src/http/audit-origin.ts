import type { Context } from "hono";
import type { AuditOrigin } from "../domain/audit";
import type { Actor } from "./auth";
import type { AppEnv } from "./context";
import { clientIp } from "./rate-limit";

/** Who made a change and from where, as the audit log records it (docs/security.md). */
export function auditOrigin(c: Context<AppEnv>, actor: Pick<Actor, "userId" | "apiKeyId">): AuditOrigin {
  const ip = clientIp(c);
  c.set("auditWritten", true);
  return {
    actor: actor.userId ? { type: "user", id: actor.userId } : { type: "api_key", id: actor.apiKeyId },
    ip: ip === "unknown" ? null : ip,
    requestId: c.get("requestId") ?? null,
  };
}

/** `auditOrigin` for the request's own credential (the session's user or the key), once it was authorized. */
export function requestAuditOrigin(c: Context<AppEnv>): AuditOrigin {
  const principal = c.get("principal");
  if (principal?.kind === "session") return auditOrigin(c, { userId: principal.user.id, apiKeyId: null });
  if (principal?.kind === "apiKey") return auditOrigin(c, { userId: null, apiKeyId: principal.keyId });
  throw new Error("requestAuditOrigin: no authenticated credential");
}
