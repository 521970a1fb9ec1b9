import worker from "../../src/index";
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { vi } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import type { Env } from "../../src/env";
import type { DeliveryMessage } from "../../src/jobs/notifications-delivery";
import { settle } from "./catalog";

// Notification tests take the events a room really produced (EVENTS.sendBatch is captured, so
// the background consumer never sees them) and feed them to the exported queue handler.

export interface Captured {
  events: DomainEventMessage[];
  retries: DeliveryMessage[];
  /**
   * Events captured and not taken yet that `which` selects (all by default); the others stay for
   * a later take (another queue's events, read after this one's).
   */
  take(which?: (e: DomainEventMessage) => boolean): DomainEventMessage[];
  restore(): void;
}

export function capture(): Captured {
  const events: DomainEventMessage[] = [];
  const retries: DeliveryMessage[] = [];
  const taken = new Set<DomainEventMessage>();
  const a = vi.spyOn(env.EVENTS, "sendBatch").mockImplementation(async (messages) => {
    for (const m of messages) events.push(m.body as DomainEventMessage);
    return undefined as never;
  });
  const single = vi.spyOn(env.EVENTS, "send").mockImplementation(async (body) => {
    events.push(body as DomainEventMessage);
    return undefined as never;
  });
  const b = vi.spyOn(env.NOTIFICATIONS, "sendBatch").mockImplementation(async (messages) => {
    for (const m of messages) retries.push(m.body as DeliveryMessage);
    return undefined as never;
  });
  return {
    events,
    retries,
    take(which = () => true) {
      const out = events.filter((e) => !taken.has(e) && which(e));
      for (const e of out) taken.add(e);
      return out;
    },
    restore() {
      a.mockRestore();
      single.mockRestore();
      b.mockRestore();
    },
  };
}

/**
 * Settles the queue's room, then returns the events it (or the organization) produced since the
 * last take: a room of an earlier test that drains late must not add its events to this one's.
 */
export async function eventsOf(c: Captured, queueId: string): Promise<DomainEventMessage[]> {
  await settle(queueId);
  return c.take((e) => e.queueId === null || e.queueId === queueId);
}

let batchNo = 0;

export async function feed<T>(queue: string, bodies: T[], over: Partial<Env> = {}, attempts = 1) {
  const batch = createMessageBatch<T>(
    queue,
    bodies.map((body) => ({ id: `m${++batchNo}`, timestamp: new Date(), attempts, body })),
  );
  // The delay each retry asks for (getQueueResult lists retried ids only).
  const delays: (number | undefined)[] = [];
  for (const m of batch.messages) {
    const retry = m.retry.bind(m);
    Object.defineProperty(m, "retry", { value: (o?: QueueRetryOptions) => (delays.push(o?.delaySeconds), retry(o)) });
  }
  const ctx = createExecutionContext();
  await worker.queue!(batch as MessageBatch<any>, { ...env, ...over } as Env, ctx);
  return { ...(await getQueueResult(batch, ctx)), delays };
}

export const feedEvents = (events: DomainEventMessage[], over: Partial<Env> = {}) => feed("queue-service-events", events, over);

export async function inbox(userId: string): Promise<{ id: string; type: string; title: string; body: string; data: string }[]> {
  const rows = await env.DB.prepare("SELECT id, type, title, body, data FROM notifications WHERE user_id = ? ORDER BY created_at, rowid")
    .bind(userId)
    .all<any>();
  return rows.results;
}

export async function deliveriesOf(eventIds: string[]): Promise<any[]> {
  if (eventIds.length === 0) return [];
  const rows = await env.DB.prepare(
    `SELECT * FROM notification_deliveries WHERE event_id IN (${eventIds.map(() => "?").join(", ")}) ORDER BY rowid`,
  )
    .bind(...eventIds)
    .all<any>();
  return rows.results;
}

export async function smsUsed(organizationId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT SUM(used) AS n FROM usage_counters WHERE organization_id = ? AND metric = 'sms'")
    .bind(organizationId)
    .first<{ n: number | null }>();
  return row?.n ?? 0;
}

/**
 * The SMS a queue's captured events gave rise to, once fed to the consumer: each message's title
 * and body as the outbox provider keeps them on its delivery row (the provider is sent
 * `title: body`).
 */
export async function smsSent(c: Captured, queueId: string): Promise<{ title: string; body: string }[]> {
  const events = await eventsOf(c, queueId);
  await feedEvents(events);
  const rows = await deliveriesOf(events.map((e) => e.id));
  return rows.filter((r) => r.channel === "sms").map((r) => JSON.parse(r.payload) as { title: string; body: string });
}
