import { and, eq, inArray, sql } from "drizzle-orm";
import { calendarEvents, locations, queues, serviceLocations, services, subscriptions } from "../db/schema";
import { DEFAULT_BLEND_POLICY } from "../domain/blend";
import { closedByHours, type OpeningHours } from "../domain/opening-hours";
import { entitlements } from "../domain/plans";
import { expandOccurrences, isValidTimeZone, MAX_OCCURRENCES } from "../domain/recurrence";
import { DAY } from "../lib/time";
import type { RoomResult, RoomRulesCopy, RuleBlock } from "../queue-room/contract";
import { BLOCKING_TYPES } from "../calendar/availability";
import { candidateEventsQuery, organizationZonesQuery, zoneOf, zonesOf } from "../calendar/calendar";
import { ApiError } from "../http/errors";
import { roomFailure, roomOf } from "./queue-rooms";
import { type Deps } from "../http/deps";

// The rules each queue's room holds (docs/room-rules.md, queue-room/rules.ts), loaded from D1
// (their source of truth) in one batch and pushed to the rooms:
//  - `rulesChanged`: a service's status, a closure or break, a plan changed. The queues it
//    concerns take a new rules version in the same batch that reads the new rules, and every
//    room is given its copy before the change is answered. The change is answered only once
//    every room acknowledged it (one more try, else a 503 saying so): a join may be judged on
//    a queue row the Worker kept (docs/hot-path.md), so the row's version alone cannot tell a
//    room that missed a push that it is stale. A room that did not acknowledge still refuses its
//    old copy (RULES_STALE) to any request that reads the row afresh.
//  - `withRules`: runs a room command that checks the rules; on RULES_STALE (a new queue, a
//    copy past its horizon, a push that failed) loads this queue's copy, pushes it, asks again.

/** A copy covers this far ahead: past it, the room asks for a new one. */
export const RULES_HORIZON_MS = 7 * DAY;
/** …and this far back, so requests whose clocks are a little behind the loader's still fit. */
const RULES_LOOKBACK_MS = DAY;

/** Seconds a client waits before sending an unconfirmed rule change again (a room restarts in well under that). */
export const CHANGE_RETRY_AFTER_S = 1;

type QueueScope = { queueId: string } | { serviceId: string } | null;

interface QueueCopy {
  queueId: string;
  copy: RoomRulesCopy;
}

/** A rule of the organization changed (in D1 already): every room it concerns gets the new rules now. */
export async function rulesChanged(
  deps: Deps,
  organizationId: string,
  at: number,
  scope: { serviceId: string } | null = null,
): Promise<void> {
  const copies = await loadCopies(deps, organizationId, scope, at, true);
  const push = (list: readonly QueueCopy[]) =>
    Promise.allSettled(list.map(({ queueId, copy }) => roomOf(deps, queueId).command({ verb: "applyRules", copy })));
  const first = await push(copies);
  const missed = copies.filter((_, i) => first[i]!.status === "rejected");
  if (missed.length === 0) return;
  // Once more; then the change is not acknowledged. A join may be judged on a queue row the
  // Worker kept (docs/hot-path.md), which would not show the new version to a room that missed
  // it: only the room's acknowledgement makes the change safe to answer.
  const again = await push(missed);
  const failed = again.flatMap((p, i) => (p.status === "rejected" ? [{ queueId: missed[i]!.queueId, reason: p.reason }] : []));
  if (failed.length === 0) return;
  console.warn(`room rules: ${failed.length} of ${copies.length} room(s) not reached: ${String(failed[0]!.reason)}`);
  // 503 with Retry-After, not 500: the change is saved and sending it again is the remedy (it
  // pushes again); clients that retry 503s on their own (clients/typescript does) get it done.
  throw new ApiError(
    "CHANGE_NOT_CONFIRMED",
    "The change is saved but not every queue confirmed it yet; send the same request again before relying on it",
    { queueIds: failed.map((f) => f.queueId) },
    { "Retry-After": String(CHANGE_RETRY_AFTER_S) },
  );
}

/** Loads the queue's rules from D1 and gives them to its room. */
export async function refreshRoomRules(deps: Deps, queue: { id: string; organizationId: string }, at: number): Promise<void> {
  const copies = await loadCopies(deps, queue.organizationId, { queueId: queue.id }, at, false);
  await Promise.all(copies.map(({ queueId, copy }) => roomOf(deps, queueId).command({ verb: "applyRules", copy })));
}

/** Runs a command that checks the rules; a room whose copy is stale gets a fresh one and is asked once more. */
export async function withRules<T>(
  deps: Deps,
  queue: { id: string; organizationId: string },
  at: number,
  command: () => Promise<RoomResult<T>>,
): Promise<T> {
  const result = await withRulesResult(deps, queue, at, command);
  if (!result.ok) throw roomFailure(result.error);
  return result.value;
}

/** `withRules`, answering the room's refusal as it is. */
export async function withRulesResult<T>(
  deps: Deps,
  queue: { id: string; organizationId: string },
  at: number,
  command: () => Promise<RoomResult<T>>,
): Promise<RoomResult<T>> {
  const result = await command();
  if (result.ok || result.error.code !== "RULES_STALE") return result;
  await refreshRoomRules(deps, queue, at);
  return command();
}

/**
 * One D1 batch (one transaction): with `bump`, the queues in scope take a new rules version
 * first, so every copy read here carries a version no older copy can beat.
 */
async function loadCopies(deps: Deps, organizationId: string, scope: QueueScope, at: number, bump: boolean): Promise<QueueCopy[]> {
  const { db } = deps;
  const from = at - RULES_LOOKBACK_MS;
  const until = at + RULES_HORIZON_MS;
  const inScope = and(
    eq(queues.organizationId, organizationId),
    scope !== null && "queueId" in scope ? eq(queues.id, scope.queueId) : undefined,
    scope !== null && "serviceId" in scope ? eq(queues.serviceId, scope.serviceId) : undefined,
  );
  const queueRead = db
    .select({ id: queues.id, serviceId: queues.serviceId, rulesVersion: queues.rulesVersion, blendPolicy: queues.blendPolicy })
    .from(queues)
    .where(inScope);
  const serviceRead = db
    .select({ id: services.id, status: services.status })
    .from(services)
    .where(eq(services.organizationId, organizationId));
  const eventRead = candidateEventsQuery(deps, organizationId, from, until, inArray(calendarEvents.eventType, [...BLOCKING_TYPES]));
  const zoneRead = organizationZonesQuery(deps, organizationId);
  const planRead = db
    .select({ plan: subscriptions.plan, rateTierOverride: subscriptions.rateTierOverride })
    .from(subscriptions)
    .where(eq(subscriptions.organizationId, organizationId));
  const bumpVersions = db
    .update(queues)
    .set({ rulesVersion: sql`${queues.rulesVersion} + 1` })
    .where(inScope);
  const placesRead = db
    .select({ serviceId: serviceLocations.serviceId, timeZone: locations.timezone, openingHours: locations.openingHours })
    .from(serviceLocations)
    .innerJoin(locations, eq(locations.id, serviceLocations.locationId))
    .where(eq(locations.organizationId, organizationId));
  const [queueRows, serviceRows, events, zoneRows, planRows, placeRows] = bump
    ? await db.batch([bumpVersions, queueRead, serviceRead, eventRead, zoneRead, planRead, placesRead]).then(([, ...reads]) => reads)
    : await db.batch([queueRead, serviceRead, eventRead, zoneRead, planRead, placesRead]);
  if (queueRows.length === 0) return [];

  // The occurrences in the order the calendar's own reads give them (availability.ts): events
  // by start then id, each expanded in time order.
  const zones = zonesOf(zoneRows);
  const occurrences: { block: Omit<RuleBlock, "closesService">; closureOf: string | null }[] = [];
  for (const event of events) {
    for (const o of expandOccurrences(event, from, until, zoneOf(zones, event.locationId))) {
      occurrences.push({
        block: { eventId: event.id, start: o.occurrenceStart, end: o.occurrenceEnd, attendees: event.attendees },
        closureOf: event.eventType === "closure" ? event.serviceId : null,
      });
    }
  }
  // A copy stays bounded: past MAX_OCCURRENCES, it covers only up to the first start left out
  // (no occurrence left out can cover an earlier instant).
  let validUntil = until;
  let kept = occurrences;
  if (occurrences.length > MAX_OCCURRENCES) {
    const starts = occurrences.map((o) => o.block.start).sort((a, b) => a - b);
    validUntil = Math.max(starts[MAX_OCCURRENCES]!, at + 1);
    kept = occurrences.filter((o) => o.block.start < validUntil);
  }

  const statusOf = new Map(serviceRows.map((s) => [s.id, s.status]));
  const plan = planRows[0] ?? { plan: "starter" as const };
  const ticketsPerMonth = entitlements(plan).quotas.ticketsPerMonth;
  const hoursOf = hoursClosures(placeRows, from, validUntil);
  // Appointment times are told on the wall clock of the service's (first) location.
  const zoneOfService = new Map<string, string>();
  for (const p of placeRows) if (!zoneOfService.has(p.serviceId) && isValidTimeZone(p.timeZone)) zoneOfService.set(p.serviceId, p.timeZone);
  return queueRows.map((q) => ({
    queueId: q.id,
    copy: {
      version: q.rulesVersion,
      validFrom: from,
      validUntil,
      serviceStatus: statusOf.get(q.serviceId) ?? "deleted",
      ticketsPerMonth,
      blocks: [
        ...kept.map((o) => ({ ...o.block, closesService: o.closureOf !== null && o.closureOf === q.serviceId })),
        ...(hoursOf.get(q.serviceId) ?? []),
      ],
      blend: { policy: { ...DEFAULT_BLEND_POLICY, ...(q.blendPolicy ?? {}) }, timeZone: zoneOfService.get(q.serviceId) ?? "UTC" },
    },
  }));
}

/** What a join refused outside the opening hours names as the closure's `eventId`. */
export const OPENING_HOURS_EVENT_ID = "opening_hours";
const HOURS_LOOKAHEAD_MS = 8 * DAY;

/**
 * The opening hours of each service's locations (docs/appointments.md) as closures of the
 * service: a join outside them is refused exactly like one during a calendar closure
 * (QUEUE_CLOSED, reason closure). Their one attendee is "" (no member): the hours close
 * joins, not the staff, who may still call the tickets taken before closing time.
 */
function hoursClosures(
  places: readonly { serviceId: string; timeZone: string; openingHours: OpeningHours | null }[],
  from: number,
  until: number,
): Map<string, RuleBlock[]> {
  const byService = new Map<string, { openingHours: OpeningHours | null; timeZone: string }[]>();
  for (const p of places) {
    const list = byService.get(p.serviceId) ?? [];
    list.push({ openingHours: p.openingHours, timeZone: isValidTimeZone(p.timeZone) ? p.timeZone : "UTC" });
    byService.set(p.serviceId, list);
  }
  const out = new Map<string, RuleBlock[]>();
  for (const [serviceId, list] of byService) {
    // Computed past the copy's window so a closure running at its end reports its real end
    // (`until` in the refusal); only those starting inside the window are kept.
    const closed = closedByHours(list, from, until + HOURS_LOOKAHEAD_MS).filter((i) => i.start < until);
    if (closed.length > 0) {
      out.set(
        serviceId,
        closed.map((i) => ({ eventId: OPENING_HOURS_EVENT_ID, start: i.start, end: i.end, attendees: [""], closesService: true })),
      );
    }
  }
  return out;
}

/** A calendar event was created, changed or deleted: rooms learn it when a closure, break or unavailability is involved. */
export async function calendarChanged(
  deps: Deps,
  organizationId: string,
  events: readonly ({ eventType: string } | null)[],
  at: number,
): Promise<void> {
  const blocking: readonly string[] = BLOCKING_TYPES;
  if (events.some((e) => e !== null && blocking.includes(e.eventType))) await rulesChanged(deps, organizationId, at);
}

/** A service was changed: its queues' rooms learn a new status. */
export async function serviceChanged(
  deps: Deps,
  before: { id: string; organizationId: string; status: string },
  after: { status: string },
  at: number,
  /** The request named the status: pushed even unchanged, so sending a change again after a 500 re-pushes it. */
  named = false,
) {
  if (named || before.status !== after.status) await rulesChanged(deps, before.organizationId, at, { serviceId: before.id });
}
