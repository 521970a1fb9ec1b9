import type { DomainEventMessage } from "../domain/events";
import type { Env } from "../env";

/** Hands a domain event to the EVENTS queue; consumers de-duplicate by `message.id`. */
export async function publishEvent(env: Env, message: DomainEventMessage): Promise<void> {
  await env.EVENTS.send(message);
}
