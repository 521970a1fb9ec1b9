import type { DomainEventMessage } from "../domain/events";
import type { Env } from "../env";
import { now } from "../lib/clock";
import { newId } from "../lib/ids";
import { database, nonEmpty } from "../db/client";
import { notificationDeliveries } from "../db/schema";
import { announceEvents, recordEvents, fanOutEvents } from "../webhooks";
import { notifyEvents } from "./notifications";
import { depsOf, type Deps } from "../http/deps";

/**
 * The EVENTS queue consumer: a small dispatcher. Each handler takes the whole batch and is
 * idempotent per event id (delivery is at least once). A handler that throws makes the whole
 * batch retry with backoff; the others' de-duplication keeps the retry harmless.
 */
const HANDLERS: ((deps: Deps, events: DomainEventMessage[]) => Promise<unknown>)[] = [
  notifyEvents,
  (deps, events) => recordEvents(deps, events, now()),
  // After recording: the live sockets read what was recorded (webhooks/event-hub.ts).
  announceEvents,
  (deps, events) => fanOutEvents(deps, events, now()),
];

export async function consumeEvents(batch: MessageBatch<DomainEventMessage>, env: Env): Promise<void> {
  const events = batch.messages.map((m) => m.body);
  const deps = depsOf(env);
  try {
    for (const handle of HANDLERS) await handle(deps, events);
  } catch (err) {
    console.error(JSON.stringify({ consumer: "events", error: String(err) }));
    const attempts = Math.max(...batch.messages.map((m) => m.attempts), 1);
    for (const m of batch.messages) m.retry({ delaySeconds: Math.min(30 * 2 ** (attempts - 1), 3600) });
    return;
  }
  for (const m of batch.messages) m.ack();
}

export const EVENTS_DLQ = "queue-service-events-dlq";

/**
 * Events whose consumer failed every retry land here: each becomes a visible record (a
 * delivery row of channel `event`, status `dead_lettered`, listed by
 * GET /v1/organizations/{id}/notification-deliveries) instead of being dropped.
 */
export async function consumeDeadEvents(batch: MessageBatch<DomainEventMessage>, env: Env): Promise<void> {
  const at = Date.now();
  const db = database(env.DB);
  const records = nonEmpty(
    batch.messages.map((m) =>
      db
        .insert(notificationDeliveries)
        .values({
          key: `${m.body.id}:event:consumer`,
          id: newId("dlv"),
          eventId: m.body.id,
          organizationId: m.body.organizationId,
          type: m.body.type,
          channel: "event",
          recipient: "consumer",
          provider: null,
          status: "dead_lettered",
          attempts: m.attempts,
          payload: JSON.stringify(m.body),
          providerResponse: "the EVENTS consumer failed on every retry; the event was not processed",
          createdAt: at,
          updatedAt: at,
        })
        .onConflictDoNothing({ target: notificationDeliveries.key }),
    ),
  );
  if (records) await db.batch(records);
  for (const m of batch.messages) {
    console.error(JSON.stringify({ event: "dead_lettered", id: m.body.id, type: m.body.type }));
    m.ack();
  }
}
