import type { queues } from "../db/schema";
import { ApiError, notFound } from "../http/errors";
import { roomClient, type RoomClient, type RoomConfig, type RoomError, type RoomResult } from "../queue-room/contract";
import type { Deps } from "../http/deps";

// The Worker's one way to reach a queue's room (queue-room/contract.ts). Services (never
// routes) go through here:
//  - `openRoom` teaches a new queue's room its queue, once, before the queue exists in D1
//    (createQueue is the only caller; the demo seed creates its queue through the API), so
//    a room reached through a D1 row always knows its queue;
//  - `inRoom` runs one command (or a query answering a result) and turns the room's refusal
//    into an ApiError;
//  - `readRoom` reads what the room answers null for once its queue is gone.

type QueueRow = typeof queues.$inferSelect;

/** A queue's room. Services use the functions below; the rooms reach each other by the contract. */
export function roomOf({ env }: Deps, queueId: string): RoomClient {
  return roomClient(env.QUEUE_ROOM, queueId);
}

/** A socket hub (queue-room/socket-hub.ts), by its name: only its `fetch` (a spec-flow socket) is for the Worker. */
export function socketHub({ env }: Deps, name: string): Pick<RoomClient, "fetch"> {
  return roomClient(env.SOCKET_HUB, name);
}

/** What a room learns of its queue from the catalog row. */
export function roomConfig(q: QueueRow): RoomConfig {
  return {
    queueId: q.id,
    organizationId: q.organizationId,
    serviceId: q.serviceId,
    letter: q.letter,
    maxCapacity: q.maxCapacity,
    noShowTimeoutMinutes: q.noShowTimeoutMinutes,
    defaultServiceMinutes: q.defaultServiceMinutes,
    status: q.status,
    archivedAt: q.archivedAt,
  };
}

/** Gives a new queue's room its configuration (a room keeps the first it was given). */
export async function openRoom(deps: Deps, queue: QueueRow): Promise<void> {
  await roomOf(deps, queue.id).configure(roomConfig(queue));
}

/** A room's refusal as the API answers it. */
export function roomFailure(error: RoomError): ApiError {
  if (error.code === "TRANSFER_ABANDONED") return new ApiError("INVALID_STATE", error.message, error.details);
  // Every queue's room is configured before its D1 row exists: a room that does not know its
  // queue is a fault, not something a caller can fix.
  // RULES_STALE is answered by a fresh copy and one retry (room-rules.ts); one left is a fault.
  if (
    error.code === "ROOM_UNCONFIGURED" ||
    error.code === "ROOM_UNAVAILABLE" ||
    error.code === "RULES_STALE" ||
    error.code === "QUEUE_ROW_STALE"
  )
    return new ApiError("INTERNAL_ERROR", error.message);
  // Handled by the desk call (desks/desks.ts); should one escape, the caller may retry.
  if (error.code === "HEAD_MOVED") return new ApiError("CONFLICT", error.message, error.details);
  return new ApiError(error.code, error.message, error.details);
}

/** The value of a room's answer; a refusal is thrown as its ApiError. */
export function unwrap<T>(result: RoomResult<T>): T {
  if (!result.ok) throw roomFailure(result.error);
  return result.value;
}

/** Runs one command (or query) in the queue's room; a refusal is thrown as its ApiError. */
export async function inRoom<T>(deps: Deps, queue: { id: string }, command: (room: RoomClient) => Promise<RoomResult<T>>): Promise<T> {
  return unwrap(await command(roomOf(deps, queue.id)));
}

/** A read the room answers null once its queue is gone (deleted): that is a 404. */
export async function readRoom<T>(deps: Deps, queue: { id: string }, read: (room: RoomClient) => Promise<T | null>): Promise<T> {
  const value = await read(roomOf(deps, queue.id));
  if (value === null) throw notFound("Queue");
  return value;
}

/** Called after queues are deleted from the catalog, so their rooms cancel what was live. */
export async function retireQueues(deps: Deps, queueIds: readonly string[], at: number): Promise<void> {
  await Promise.all(queueIds.map((id) => roomOf(deps, id).command({ verb: "retire", at })));
}
