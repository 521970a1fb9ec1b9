// The organization's event stream (issue #32): every domain event the EVENTS consumer sees is
// recorded once per organization, in the webhook envelope, and kept 24 h. An integrator without
// a public URL (a laptop, a branch server behind a NAT) lists them from the last id it saw
// (GET /v1/events?startingAfter=evt_…), which is also what `npm run webhooks:listen` polls.

import { and, asc, eq, gt, inArray, lt, max, sql, type SQL } from "drizzle-orm";
import { chunk } from "../db/client";
import { batchWrites, preparedWrite, withValues } from "../db/prepared";
import { organizationEvents } from "../db/schema";
import type { DomainEventMessage, EventType } from "../domain/events";
import { eventPayload, splitPersonalData, type PayloadReader, type PersonalFields, type WebhookPayload } from "../domain/webhooks";
import { sealSecret, type SecretBoxEnv } from "../lib/secret-box";
import { readStoredEvent } from "./stored-events";
import { DAY } from "../lib/time";
import type { PendingStart, StreamStart } from "./event-hub";
import type { Deps } from "../http/deps";

/** How long events can be read back: a reconnect within a day loses nothing. */
export const EVENT_HISTORY_MS = DAY;

/** Events of one insert: its rows travel as one JSON parameter (a consumer's batch is at most 50). */
const EVENTS_PER_INSERT = 50;

/** The columns an event's row gives, in the order of its JSON array (json_each below). */
const EVENT_COLUMNS = ["id", "organization_id", "type", "queue_id", "payload", "personal_sealed"] as const;

function eventAt(column: (typeof EVENT_COLUMNS)[number]): SQL.Aliased {
  return sql.raw(`json_extract(j.value, '$[${EVENT_COLUMNS.indexOf(column)}]')`).as(column);
}

/**
 * The events of a batch inserted in one statement built once per isolate (issue 43): the rows go
 * as one JSON array (json_each), in the batch's order, so `seq` follows it. Built through the
 * query builder per batch, a 12-row insert cost a call-next 1.1 ms of isolate time in the
 * EVENTS consumer, mostly Drizzle building it.
 */
const insertEvents = preparedWrite(["events", "recordedAt"], (db, p) =>
  db
    .insert(organizationEvents)
    .select(
      db
        .select({
          // NULL into the AUTOINCREMENT key: the next `seq`, in the rows' order.
          seq: sql`NULL`.as("seq"),
          id: eventAt("id"),
          organizationId: eventAt("organization_id"),
          type: eventAt("type"),
          queueId: eventAt("queue_id"),
          payload: eventAt("payload"),
          personalSealed: eventAt("personal_sealed"),
          recordedAt: sql`CAST(${p.recordedAt} AS INTEGER)`.as("recorded_at"),
        })
        .from(sql`json_each(${p.events}) AS j`)
        .orderBy(sql`j.key`),
    )
    .onConflictDoNothing({ target: organizationEvents.id })
    .prepare(),
);

/** The events past the history window. */
const pruneEvents = preparedWrite(["before"], (db, p) =>
  db
    .delete(organizationEvents)
    .where(lt(organizationEvents.recordedAt, sql`CAST(${p.before} AS INTEGER)`))
    .prepare(),
);

/**
 * Records a batch of events (idempotent by event id: the consumer may see one twice) and drops
 * those past the history window, in one D1 round trip. The payload is stored without personal
 * data (issue 40, docs/security.md): the phone masked, no e-mail; the full values are sealed
 * apart in `personal_sealed`, opened only for a reader that receives them (`readStoredEvent`).
 */
/**
 * Personal fields that are all null (a ticket without a phone: `{"phone":null}`) hide nothing: they
 * are sealed once per isolate and key, and that sealed text is stored for each such event (issue
 * 43: sealing the same nothing for every event cost a call-next 0.2 ms). Fields holding a value
 * are sealed each time, with their own IV.
 */
const sealedNothing = new Map<string, Promise<string>>();

function sealPersonal(env: SecretBoxEnv, personal: PersonalFields): Promise<string> {
  const plain = JSON.stringify(personal);
  if (Object.values(personal).some((value) => value !== null)) return sealSecret(env, plain);
  const key = `${env.SECRETS_KEY_ID ?? ""}.${env.SECRETS_KEY ?? ""}\n${plain}`;
  let sealed = sealedNothing.get(key);
  if (!sealed) {
    sealed = sealSecret(env, plain);
    sealedNothing.set(key, sealed);
    sealed.catch(() => sealedNothing.delete(key));
  }
  return sealed;
}

export async function recordEvents({ env }: Deps, events: readonly DomainEventMessage[], at: number): Promise<void> {
  if (events.length === 0) return;
  const rows = await Promise.all(
    events.map(async (e) => {
      const { masked, personal } = splitPersonalData(eventPayload(e));
      const sealed = personal === null ? null : await sealPersonal(env, personal);
      return [e.id, e.organizationId, e.type, e.queueId, JSON.stringify(masked), sealed];
    }),
  );
  await batchWrites(env.DB, [
    ...chunk(rows, EVENTS_PER_INSERT).map((group) => withValues(insertEvents, { events: JSON.stringify(group), recordedAt: at })),
    withValues(pruneEvents, { before: at - EVENT_HISTORY_MS }),
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

/** The organization's events in recording order, after the cursor's event, filtered, as `reader` receives them. */
export async function listEvents(deps: Deps, organizationId: string, filter: EventFilter, reader: PayloadReader): Promise<EventPage> {
  const { env, db } = deps;
  const where: SQL[] = [eq(organizationEvents.organizationId, organizationId)];
  if (filter.startingAfter !== null) {
    const anchor = await seqOf(deps, organizationId, filter.startingAfter);
    if (anchor === null) return { kind: "unknownCursor" };
    where.push(gt(organizationEvents.seq, anchor));
  }
  if (filter.types.length > 0) where.push(inArray(organizationEvents.type, [...filter.types]));
  if (filter.queueIds.length > 0) where.push(inArray(organizationEvents.queueId, [...filter.queueIds]));
  const rows = await db
    .select({ payload: organizationEvents.payload, personalSealed: organizationEvents.personalSealed })
    .from(organizationEvents)
    .where(and(...where))
    .orderBy(asc(organizationEvents.seq))
    .limit(filter.limit + 1);
  const items = await Promise.all(rows.slice(0, filter.limit).map((r) => readStoredEvent(env, r, reader)));
  return { kind: "page", items, hasMore: rows.length > filter.limit };
}

/** The recording sequence of the organization's event `id`, or null when it is not kept (unknown, or older than 24 h). */
async function seqOf({ db }: Deps, organizationId: string, id: string): Promise<number | null> {
  const row = await db
    .select({ seq: organizationEvents.seq })
    .from(organizationEvents)
    .where(and(eq(organizationEvents.id, id), eq(organizationEvents.organizationId, organizationId)))
    .get();
  return row?.seq ?? null;
}

/**
 * Where a live socket starts (the recording sequence after which it is sent events): after the
 * event `after` names, or after the organization's last event so far. Null: `after` names no
 * event of this organization still kept.
 */
export async function streamStartSeq(deps: Deps, organizationId: string, after: string | null): Promise<number | null> {
  const { db } = deps;
  if (after !== null) return seqOf(deps, organizationId, after);
  const last = await db
    .select({ seq: max(organizationEvents.seq) })
    .from(organizationEvents)
    .where(eq(organizationEvents.organizationId, organizationId))
    .get();
  return last?.seq ?? 0;
}

/** Hands an upgrade without a credential to the organization's event hub, which waits for its login message (event-hub.ts). */
export function openPendingStream({ env }: Deps, pending: PendingStart): Promise<Response> {
  const hub = env.EVENT_HUB.get(env.EVENT_HUB.idFromName(pending.organizationId));
  return hub.fetch(
    new Request("https://event-hub/stream", { headers: { Upgrade: "websocket", "X-Stream-Pending": JSON.stringify(pending) } }),
  );
}

/** Hands an authorized upgrade to the organization's event hub (event-hub.ts). */
export function openEventStream({ env }: Deps, start: StreamStart): Promise<Response> {
  const hub = env.EVENT_HUB.get(env.EVENT_HUB.idFromName(start.organizationId));
  return hub.fetch(new Request("https://event-hub/stream", { headers: { Upgrade: "websocket", "X-Stream-Start": JSON.stringify(start) } }));
}

/**
 * Tells each organization's hub that its events were recorded, so its sockets get them now. A
 * hub that cannot be reached is logged, not retried: its sockets get the events with the next poke.
 */
export async function announceEvents({ env }: Deps, events: readonly DomainEventMessage[]): Promise<void> {
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
