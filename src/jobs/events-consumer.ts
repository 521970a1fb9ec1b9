import type { DomainEventMessage } from "../domain/events";
import type { Env } from "../env";
import { notifyEvents } from "./notifications";

/**
 * The EVENTS queue consumer: a small dispatcher. Each handler takes the whole batch and is
 * idempotent per event id (delivery is at least once). A handler that throws makes the whole
 * batch retry with backoff; the others' de-duplication keeps the retry harmless.
 */
const HANDLERS: ((env: Env, events: DomainEventMessage[]) => Promise<unknown>)[] = [
  notifyEvents,
];

export async function consumeEvents(batch: MessageBatch<DomainEventMessage>, env: Env): Promise<void> {
  const events = batch.messages.map((m) => m.body);
  for (const event of events) {
    console.log(JSON.stringify({ event: event.type, id: event.id, queueId: event.queueId, ticketId: event.ticketId }));
  }
  try {
    for (const handle of HANDLERS) await handle(env, events);
  } catch (err) {
    console.error(JSON.stringify({ consumer: "events", error: String(err) }));
    const attempts = Math.max(...batch.messages.map((m) => m.attempts), 1);
    for (const m of batch.messages) m.retry({ delaySeconds: Math.min(30 * 2 ** (attempts - 1), 3600) });
    return;
  }
  for (const m of batch.messages) m.ack();
}
