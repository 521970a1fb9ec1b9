import type { Context } from "hono";
import { queueIdOfTicket } from "../lib/ids";
import { findQueue, findQueueWithRole, type QueueRow } from "./queues";
import type { Permission } from "../domain/permissions";
import { authorize, rememberRole, type Actor } from "../http/auth";
import type { AppEnv } from "../http/context";
import { ApiError, notFound } from "../http/errors";
import { deps } from "../http/deps";

/**
 * The queue a route acts on. For a session, the caller's membership of the queue's
 * organization comes in the same read and is remembered for `authorize`.
 */
export async function queueOfCaller(c: Context<AppEnv>, queueId: string): Promise<QueueRow> {
  const principal = c.get("principal");
  // Read along with the credential when the path named this queue (src/http/auth.ts).
  const prefetched = c.get("prefetchedQueue");
  if (prefetched?.queueId === queueId) {
    if (!prefetched.queue) throw notFound("Queue");
    if (principal.kind === "session") rememberRole(c, prefetched.queue.organizationId, prefetched.membership);
    return prefetched.queue;
  }
  if (principal.kind !== "session") return findQueue(deps(c), queueId);
  const { queue, role, locationIds } = await findQueueWithRole(deps(c), queueId, principal.user.id);
  rememberRole(c, queue.organizationId, role ? { role, locationIds } : null);
  return queue;
}

/** How long a public read may serve a queue row from this isolate's memory (docs/hot-path.md). */
export const PUBLIC_QUEUE_TTL_MS = 5_000;
const PUBLIC_QUEUE_CACHE_SIZE = 1_000;
const publicQueues = new Map<string, { queue: QueueRow; until: number }>();

/**
 * The queue of a public read (the widget's status): from this isolate's memory for up to
 * PUBLIC_QUEUE_TTL_MS, the time the answer itself may be cached (`max-age=5`). Only the name
 * and the organization are used from it: the organization never changes, the status and counts
 * come from the room, and a deleted queue's room answers 404 itself. Unknown ids are not kept.
 */
export async function publicQueue(c: Context<AppEnv>, queueId: string): Promise<QueueRow> {
  const at = Date.now();
  const cached = publicQueues.get(queueId);
  if (cached && cached.until > at) return cached.queue;
  const queue = await findQueue(deps(c), queueId);
  publicQueues.delete(queueId);
  if (publicQueues.size >= PUBLIC_QUEUE_CACHE_SIZE) publicQueues.delete(publicQueues.keys().next().value!);
  publicQueues.set(queueId, { queue, until: at + PUBLIC_QUEUE_TTL_MS });
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
 * `authorize` on a queue's organization. The queue's guard (./guard.ts) already decided the
 * caller's reach; an outsider reaches this only on an operation open to customers (a ticket's
 * owner), and a signed-in user outside the organization is told why (still 404, as for any id
 * of another organization).
 */
export async function authorizeOnQueue(c: Context<AppEnv>, queue: QueueRow, permission: Permission): Promise<Actor> {
  try {
    return await authorize(c, queue.organizationId, permission);
  } catch (err) {
    if (err instanceof ApiError && err.code === "NOT_FOUND" && c.get("principal").kind === "session") {
      throw new ApiError(
        "NOT_FOUND",
        "You are not a member of the organization that runs this queue: operating it needs a role there (owner, admin, manager or operator)",
        { reason: "not_a_member" },
      );
    }
    throw err;
  }
}
