import { env } from "cloudflare:test";
import { vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";

/**
 * The domain events the rooms' drains send to the EVENTS queue from now on, caught at the
 * binding (nothing reaches the consumers while it listens); `restore` puts the binding back.
 */
export function captureEvents(): { sent: DomainEventMessage[]; restore: () => void } {
  const sent: DomainEventMessage[] = [];
  const spy = vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
    for (const m of messages) sent.push(m.body as DomainEventMessage);
    return undefined as never;
  });
  return { sent, restore: () => spy.mockRestore() };
}
