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
import { and, eq, gt, inArray, lt, max } from "drizzle-orm";
import { database, type Database } from "../db/client";
import { organizationEvents } from "../db/schema";

/** How long events can be read back: a reconnect within a day loses nothing. */
export const EVENT_HISTORY_MS = DAY;

/**
 * Records a batch of events (idempotent by event id: the consumer may see one twice) and drops
 * those past the history window, in one D1 round trip.
 */
export async function recordEvents(env: Env, events: readonly DomainEventMessage[], at: number): Promise<void> {
  if (events.length === 0) return;
  const db = database(env.DB);
  await db.batch([
    db.delete(organizationEvents).where(lt(organizationEvents.recordedAt, at - EVENT_HISTORY_MS)),
    ...events.map((e) =>
      db
        .insert(organizationEvents)
        .values({
          id: e.id,
          organizationId: e.organizationId,
          type: e.type,
          queueId: e.queueId,
          payload: JSON.stringify(eventPayload(e)),
          recordedAt: at,
        })
        .onConflictDoNothing({ target: organizationEvents.id }),
    ),
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
export async function listEvents({ db }: Deps, organizationId: string, filter: EventFilter): Promise<EventPage> {
  const e = organizationEvents;
  let after: number | null = null;
  if (filter.startingAfter !== null) {
    after = await seqOf(db, organizationId, filter.startingAfter);
    if (after === null) return { kind: "unknownCursor" };
  }
  const rows = await db
    .select({ payload: e.payload })
    .from(e)
    .where(
      and(
        eq(e.organizationId, organizationId),
        after === null ? undefined : gt(e.seq, after),
        filter.types.length > 0 ? inArray(e.type, [...filter.types]) : undefined,
        filter.queueIds.length > 0 ? inArray(e.queueId, [...filter.queueIds]) : undefined,
      ),
    )
    .orderBy(e.seq)
    .limit(filter.limit + 1);
  const items = rows.slice(0, filter.limit).map((r): WebhookPayload => JSON.parse(r.payload));
  return { kind: "page", items, hasMore: rows.length > filter.limit };
}

/** The recording sequence of one of the organization's kept events; null when it has none by that id. */
async function seqOf(db: Database, organizationId: string, eventId: string): Promise<number | null> {
  const anchor = await db
    .select({ seq: organizationEvents.seq })
    .from(organizationEvents)
    .where(and(eq(organizationEvents.id, eventId), eq(organizationEvents.organizationId, organizationId)))
    .get();
  return anchor?.seq ?? null;
}

/**
 * Where a live socket starts (the recording sequence after which it is sent events): after the
 * event `after` names, or after the organization's last event so far. Null: `after` names no
 * event of this organization still kept.
 */
export async function streamStartSeq({ db }: Deps, organizationId: string, after: string | null): Promise<number | null> {
  if (after !== null) return seqOf(db, organizationId, after);
  const last = await db
    .select({ seq: max(organizationEvents.seq) })
    .from(organizationEvents)
    .where(eq(organizationEvents.organizationId, organizationId))
    .get();
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
