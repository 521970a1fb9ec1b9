import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/** One per queue: the single writer of that queue's tickets (built out by the queue-engine issue). */
export class QueueRoom extends DurableObject<Env> {
  /**
   * The queue is being deleted (its service, location or organization went): cancel its live
   * tickets and refuse everything afterwards. Idempotent.
   */
  async retire(_at: number): Promise<void> {}
}
