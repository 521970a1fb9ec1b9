import type { queues } from "../db/schema";
import type { Env } from "../env";
import { ApiError, notFound } from "../http/errors";
import type { QueueRoom } from "../queue-room/queue-room";
import type { RoomConfig, RoomError, RoomResult } from "../queue-room/types";

// The Worker's one way to reach a queue's room. Services (never routes) go through here:
//  - `openRoom` teaches a new queue's room its queue, once, before the queue exists in D1
//    (createQueue is the only caller; the demo seed creates its queue through the API), so
//    a room reached through a D1 row always knows its queue;
//  - `inRoom` runs one command and turns the room's refusal into an ApiError;
//  - `readRoom` reads what the room answers null for once its queue is gone.

type QueueRow = typeof queues.$inferSelect;
export type RoomStub = DurableObjectStub<QueueRoom>;

/** The stub of a queue's room. Services use the functions below; the rooms call each other with it. */
export function roomOf(env: Env, queueId: string): RoomStub {
  return env.QUEUE_ROOM.get(env.QUEUE_ROOM.idFromName(queueId));
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
export async function openRoom(env: Env, queue: QueueRow): Promise<void> {
  await roomOf(env, queue.id).configure(roomConfig(queue));
}

/** A room's refusal as the API answers it. */
export function roomFailure(error: RoomError): ApiError {
  if (error.code === "TRANSFER_ABANDONED") return new ApiError("INVALID_STATE", error.message, error.details);
  // Every queue's room is configured before its D1 row exists: a room that does not know its
  // queue is a fault, not something a caller can fix.
  // RULES_STALE is answered by a fresh copy and one retry (room-rules.ts); one left is a fault.
  if (error.code === "ROOM_UNCONFIGURED" || error.code === "ROOM_UNAVAILABLE" || error.code === "RULES_STALE")
    return new ApiError("INTERNAL_ERROR", error.message);
  // Handled by the desk call (services/desks.ts); should one escape, the caller may retry.
  if (error.code === "HEAD_MOVED") return new ApiError("CONFLICT", error.message, error.details);
  return new ApiError(error.code, error.message, error.details);
}

/** Runs one command in the queue's room; a refusal is thrown as its ApiError. */
export async function inRoom<T>(env: Env, queue: { id: string }, command: (room: RoomStub) => Promise<RoomResult<T>>): Promise<T> {
  const result = await command(roomOf(env, queue.id));
  if (!result.ok) throw roomFailure(result.error);
  return result.value;
}

/** A read the room answers null once its queue is gone (deleted): that is a 404. */
export async function readRoom<T>(env: Env, queue: { id: string }, read: (room: RoomStub) => Promise<T | null>): Promise<T> {
  const value = await read(roomOf(env, queue.id));
  if (value === null) throw notFound("Queue");
  return value;
}

/** Called after queues are deleted from the catalog, so their rooms cancel what was live. */
export async function retireQueues(env: Env, queueIds: readonly string[], at: number): Promise<void> {
  await Promise.all(queueIds.map((id) => roomOf(env, id).retire(at)));
}
