import { eq } from "drizzle-orm";
import { queues } from "../db/schema";
import { DEFAULT_BLEND_POLICY, type BlendPolicy } from "../domain/blend";
import type { QueueRow } from "../http/credentials/queues";
import { rulesChanged } from "./room-rules";
import type { Deps } from "../http/deps";

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
export async function setBlend(deps: Deps, queue: QueueRow, given: Partial<BlendPolicy>, at: number): Promise<BlendAnswer> {
  const { db } = deps;
  const policy: BlendPolicy = { ...DEFAULT_BLEND_POLICY, ...given };
  await db.update(queues).set({ blendPolicy: policy, updatedAt: at }).where(eq(queues.id, queue.id)).run();
  await rulesChanged(deps, queue.organizationId, at, { serviceId: queue.serviceId });
  return { queueId: queue.id, policy, isDefault: false };
}
