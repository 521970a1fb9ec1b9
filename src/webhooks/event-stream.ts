// The organization's event stream (issue #32): every domain event the EVENTS consumer sees is
// recorded once per organization, in the webhook envelope, and kept 24 h. An integrator without
// a public URL (a laptop, a branch server behind a NAT) lists them from the last id it saw
// (GET /v1/events?startingAfter=evt_…), which is also what `npm run webhooks:listen` polls.

import type { DomainEventMessage, EventType } from "../domain/events";
import { eventPayload, type WebhookPayload } from "../domain/webhooks";
import type { Env } from "../env";
import { DAY } from "../lib/time";

/** How long events can be read back: a reconnect within a day loses nothing. */
export const EVENT_HISTORY_MS = DAY;

/**
 * Records a batch of events (idempotent by event id: the consumer may see one twice) and drops
 * those past the history window, in one D1 round trip.
 */
export async function recordEvents(env: Env, events: readonly DomainEventMessage[], at: number): Promise<void> {
  if (events.length === 0) return;
  await env.DB.batch([
    ...events.map((e) =>
      env.DB.prepare(
        `INSERT INTO organization_events (id, organization_id, type, queue_id, payload, recorded_at)
         VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
      ).bind(e.id, e.organizationId, e.type, e.queueId, JSON.stringify(eventPayload(e)), at),
    ),
    env.DB.prepare("DELETE FROM organization_events WHERE recorded_at < ?").bind(at - EVENT_HISTORY_MS),
  ]);
}

export interface EventFilter {
  types: readonly EventType[];
  queueIds: readonly string[];
  startingAfter: string | null;
  limit: number;
}

export type EventPage =
  | { kind: "page"; items: WebhookPayload[]; hasMore: boolean }
  /** The cursor names no event of this organization still kept (unknown, or older than 24 h). */
  | { kind: "unknownCursor" };

/** The organization's events in recording order, after the cursor's event, filtered. */
export async function listEvents(db: D1Database, organizationId: string, filter: EventFilter): Promise<EventPage> {
  const where = ["organization_id = ?"];
  const binds: (string | number)[] = [organizationId];
  if (filter.startingAfter !== null) {
    const anchor = await db
      .prepare("SELECT seq FROM organization_events WHERE id = ? AND organization_id = ?")
      .bind(filter.startingAfter, organizationId)
      .first<{ seq: number }>();
    if (!anchor) return { kind: "unknownCursor" };
    where.push("seq > ?");
    binds.push(anchor.seq);
  }
  if (filter.types.length > 0) {
    where.push(`type IN (${filter.types.map(() => "?").join(", ")})`);
    binds.push(...filter.types);
  }
  if (filter.queueIds.length > 0) {
    where.push(`queue_id IN (${filter.queueIds.map(() => "?").join(", ")})`);
    binds.push(...filter.queueIds);
  }
  const rows = await db
    .prepare(`SELECT payload FROM organization_events WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ?`)
    .bind(...binds, filter.limit + 1)
    .all<{ payload: string }>();
  const items = rows.results.slice(0, filter.limit).map((r) => JSON.parse(r.payload) as WebhookPayload);
  return { kind: "page", items, hasMore: rows.results.length > filter.limit };
}
