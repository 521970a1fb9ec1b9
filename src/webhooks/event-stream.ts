// The organization's event stream (issue #32): every domain event the EVENTS consumer sees is
// recorded once per organization, in the webhook envelope, and kept 24 h. An integrator without
// a public URL (a laptop, a branch server behind a NAT) lists them from the last id it saw
// (GET /v1/events?startingAfter=evt_…), which is also what `npm run webhooks:listen` polls.

import type { DomainEventMessage, EventType } from "../domain/events";
import { eventPayload, type WebhookPayload } from "../domain/webhooks";
import type { Env } from "../env";
import { DAY } from "../lib/time";
import type { StreamStart } from "./event-hub";
import type { Deps } from "../http/deps";

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
export async function listEvents({ env: { DB: db } }: Deps, organizationId: string, filter: EventFilter): Promise<EventPage> {
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

/**
 * Where a live socket starts (the recording sequence after which it is sent events): after the
 * event `after` names, or after the organization's last event so far. Null: `after` names no
 * event of this organization still kept.
 */
export async function streamStartSeq({ env: { DB: db } }: Deps, organizationId: string, after: string | null): Promise<number | null> {
  if (after !== null) {
    const anchor = await db
      .prepare("SELECT seq FROM organization_events WHERE id = ? AND organization_id = ?")
      .bind(after, organizationId)
      .first<{ seq: number }>();
    return anchor?.seq ?? null;
  }
  const last = await db
    .prepare("SELECT MAX(seq) AS seq FROM organization_events WHERE organization_id = ?")
    .bind(organizationId)
    .first<{ seq: number | null }>();
  return last?.seq ?? 0;
}

/** Hands an authorized upgrade to the organization's event hub (event-hub.ts). */
export function openEventStream(env: Env, start: StreamStart): Promise<Response> {
  const hub = env.EVENT_HUB.get(env.EVENT_HUB.idFromName(start.organizationId));
  return hub.fetch(new Request("https://event-hub/stream", { headers: { Upgrade: "websocket", "X-Stream-Start": JSON.stringify(start) } }));
}

/**
 * Tells each organization's hub that its events were recorded, so its sockets get them now. A
 * hub that cannot be reached is logged, not retried: its sockets get the events with the next poke.
 */
export async function announceEvents(env: Env, events: readonly DomainEventMessage[]): Promise<void> {
  const organizations = [...new Set(events.map((e) => e.organizationId))];
  await Promise.all(
    organizations.map(async (organizationId) => {
      try {
        await env.EVENT_HUB.get(env.EVENT_HUB.idFromName(organizationId)).eventsRecorded();
      } catch (err) {
        console.error(JSON.stringify({ hub: "events", organizationId, error: String(err) }));
      }
    }),
  );
}
