import type { DomainEventMessage } from "../domain/events";
import type { Env } from "../env";

/**
 * The EVENTS queue consumer. Delivery is at least once; the notification and webhook work
 * (and its de-duplication by event id) hangs off here.
 */
export async function consumeEvents(batch: MessageBatch<DomainEventMessage>, _env: Env): Promise<void> {
  for (const message of batch.messages) {
    message.ack();
  }
}
