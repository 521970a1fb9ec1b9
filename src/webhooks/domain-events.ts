import type { DomainEventMessage } from "../domain/events";
import type { Deps } from "../http/deps";

/** Hands a domain event to the EVENTS queue; consumers de-duplicate by `message.id`. */
export async function publishEvent({ env }: Deps, message: DomainEventMessage): Promise<void> {
  await env.EVENTS.send(message);
}
