import { eq } from "drizzle-orm";
import { database } from "../db/client";
import { queues } from "../db/schema";
import { DEFAULT_BLEND_POLICY, type BlendPolicy } from "../domain/blend";
import type { Env } from "../env";
import type { QueueRow } from "../http/credentials/queues";
import { rulesChanged } from "./room-rules";

// A queue's blend policy (docs/blend.md): kept on the queue's row, carried to its room with the
// room's copy of the rules (docs/room-rules.md), so the room applies it at its next call.

export interface BlendAnswer {
  queueId: string;
  policy: BlendPolicy;
  /** No policy of its own: the defaults apply. */
  isDefault: boolean;
}

export function blendOf(queue: QueueRow): BlendAnswer {
  return {
    queueId: queue.id,
    policy: { ...DEFAULT_BLEND_POLICY, ...(queue.blendPolicy ?? {}) },
    isDefault: queue.blendPolicy === null,
  };
}

/** Writes the policy (fields left out take their defaults), then gives every room of the service its new rules before answering. */
export async function setBlend(env: Env, queue: QueueRow, given: Partial<BlendPolicy>, at: number): Promise<BlendAnswer> {
  const policy: BlendPolicy = { ...DEFAULT_BLEND_POLICY, ...given };
  await database(env.DB).update(queues).set({ blendPolicy: policy, updatedAt: at }).where(eq(queues.id, queue.id)).run();
  await rulesChanged(env, queue.organizationId, at, { serviceId: queue.serviceId });
  return { queueId: queue.id, policy, isDefault: false };
}
