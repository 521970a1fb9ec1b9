import type { Context } from "hono";
import { queueIdOfTicket } from "../lib/ids";
import { findQueue, findQueueWithRole, type QueueRow } from "../services/queues";
import type { Permission } from "../domain/permissions";
import { authorize, rememberRole, type Actor } from "./auth";
import type { AppEnv } from "./context";
import { ApiError, notFound } from "./errors";

/**
 * The queue a route acts on. For a session, the caller's membership of the queue's
 * organization comes in the same read and is remembered for `authorize`.
 */
export async function queueOfCaller(c: Context<AppEnv>, queueId: string): Promise<QueueRow> {
  const principal = c.get("principal");
  if (principal.kind !== "session") return findQueue(c.env, queueId);
  const { queue, role } = await findQueueWithRole(c.env, queueId, principal.user.id);
  rememberRole(c, queue.organizationId, role);
  return queue;
}

/** The queue a ticket id points to (read from the id itself); an id that is not one is unknown. */
export async function ticketQueueOfCaller(c: Context<AppEnv>, ticketId: string): Promise<QueueRow> {
  const queueId = queueIdOfTicket(ticketId);
  if (!queueId) throw notFound("Ticket");
  try {
    return await queueOfCaller(c, queueId);
  } catch (err) {
    if (err instanceof ApiError && err.code === "NOT_FOUND") throw notFound("Ticket");
    throw err;
  }
}

/**
 * `authorize` on a queue's organization. Queues are readable by any signed-in user, so a user
 * outside the organization is told why (still 404, as for any id of another organization).
 */
export async function authorizeOnQueue(c: Context<AppEnv>, queue: QueueRow, permission: Permission): Promise<Actor> {
  try {
    return await authorize(c, queue.organizationId, permission);
  } catch (err) {
    if (err instanceof ApiError && err.code === "NOT_FOUND" && c.get("principal").kind === "session") {
      throw new ApiError(
        "NOT_FOUND",
        "You are not a member of the organization that runs this queue: operating it needs a role there (owner, admin, manager or operator)",
        { reason: "not_a_member", permission },
      );
    }
    throw err;
  }
}
