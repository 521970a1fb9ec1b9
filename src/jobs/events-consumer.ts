import type { DomainEventMessage } from "../domain/events";
import type { Env } from "../env";
import { now } from "../lib/clock";
import { fanOutEvent } from "../services/webhooks";

/**
 * The EVENTS queue consumer. Delivery is at least once; the notification and webhook work
 * (and its de-duplication by event id) hangs off here.
 */
export async function consumeEvents(batch: MessageBatch<DomainEventMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const event = message.body;
    console.log(JSON.stringify({ event: event.type, id: event.id, queueId: event.queueId, ticketId: event.ticketId }));
    await fanOutEvent(env, event, now());
    message.ack();
  }
}
