import type { Env } from "../env";

export function roomOf(env: Env, queueId: string) {
  return env.QUEUE_ROOM.get(env.QUEUE_ROOM.idFromName(queueId));
}

/** Called after queues are deleted from the catalog, so their rooms cancel what was live. */
export async function retireQueues(env: Env, queueIds: readonly string[], at: number): Promise<void> {
  await Promise.all(queueIds.map((id) => roomOf(env, id).retire(at)));
}
