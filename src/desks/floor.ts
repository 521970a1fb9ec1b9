import { and, asc, eq, gte, inArray, isNull, sql } from "drizzle-orm";
import { floorAlerts, waitLevel, type FloorAlert, type WaitLevel } from "../domain/floor-alerts";
import { apiKeys, desks, queues, serviceLocations, tickets, users } from "../db/schema";
import type { TicketStatus } from "../domain/tickets";
import { wallTimeAt, zonedWallTimeToUtc } from "../domain/recurrence";
import { iso } from "../lib/time";
import type { TicketView } from "../queue-room/contract";
import { roomOf } from "../tickets/queue-rooms";
import { type Deps } from "../http/deps";

// The floor of a location (docs/floor.md): what a branch manager watches — per desk its
// operator and the ticket at it, per queue its line. Live state is read from the rooms (no
// new room verb: their ticket listings), the desks and names from D1, today's served count
// from the tickets projection (a moment behind the rooms, as every read model).

/** The waiting line is read this far from its head for the longest wait (docs/floor.md). */
export const FLOOR_LINE_WINDOW = 50;
/** A location's desks shown on the floor (far above any branch's counters). */
const FLOOR_DESKS_MAX = 200;
/** Called, serving and held tickets read per queue to find what each desk is at. */
const FLOOR_AT_DESK_MAX = 100;

export interface FloorLocation {
  id: string;
  organizationId: string;
  name: string;
  address: string;
  timezone: string;
}

type Current = { ticketId: string; displayCode: string; status: "called" | "serving" | "held"; since: string };

export interface FloorWaiting {
  ticketId: string;
  displayCode: string;
  name: string | null;
  joinedAt: string;
  waitedSeconds: number;
  vip: boolean;
  appointmentAt: string | null;
  level: WaitLevel;
}

export interface FloorToday {
  served: number;
  noShows: number;
  averageWaitSeconds: number | null;
  averageServiceSeconds: number | null;
}

export interface Floor {
  locationId: string;
  location: { id: string; name: string; address: string; timezone: string };
  at: string;
  desks: {
    id: string;
    name: string;
    status: "open" | "closed";
    queueIds: string[];
    operator: { id: string; name: string } | null;
    current: Current | null;
  }[];
  queues: {
    id: string;
    name: string;
    letter: string;
    waitingCount: number;
    longestWaitSeconds: number;
    heldCount: number;
    servedToday: number;
    targetWaitMinutes: number | null;
    level: WaitLevel;
    waiting: FloorWaiting[];
    today: FloorToday;
  }[];
  alerts: FloorAlert[];
}

/** 00:00 today on the location's clocks, as a UTC instant. */
export function localDayStart(at: number, timeZone: string): number {
  const w = wallTimeAt(at, timeZone);
  return zonedWallTimeToUtc(w.year, w.month, w.day, 0, 0, 0, timeZone);
}

interface QueueLive {
  waiting: TicketView[];
  waitingCount: number;
  heldCount: number;
  atDesks: TicketView[];
}

/** One room's live line; null when the room no longer has the queue (deleted meanwhile). */
async function readQueue(deps: Deps, queueId: string, at: number): Promise<QueueLive | null> {
  const room = roomOf(deps, queueId);
  const page = (status: TicketStatus, limit: number) => room.query({ question: "tickets", query: { status, offset: 0, limit }, at });
  const [waiting, called, serving, held] = await Promise.all([
    page("waiting", FLOOR_LINE_WINDOW),
    page("called", FLOOR_AT_DESK_MAX),
    page("serving", FLOOR_AT_DESK_MAX),
    page("held", FLOOR_AT_DESK_MAX),
  ]);
  if (!waiting.ok || !called.ok || !serving.ok || !held.ok) return null;
  return {
    waiting: waiting.value.items,
    waitingCount: waiting.value.total,
    heldCount: held.value.total,
    atDesks: [...serving.value.items, ...called.value.items, ...held.value.items],
  };
}

function sinceOf(t: TicketView): number {
  if (t.status === "serving") return t.servingAt ?? t.updatedAt;
  if (t.status === "held") return t.heldAt ?? t.updatedAt;
  return t.calledAt ?? t.updatedAt;
}

const RANK: Record<string, number> = { serving: 0, called: 1, held: 2 };

/**
 * The ticket a desk is at: one called at this desk, or called on a queue by the desk's
 * operator without a desk. Serving before called before held; then the latest.
 */
function currentAt(desk: { id: string; operatorId: string | null }, live: readonly TicketView[]): Current | null {
  const mine = live.filter(
    (t) => t.deskId === desk.id || (t.deskId === null && desk.operatorId !== null && t.assignedToId === desk.operatorId),
  );
  mine.sort((a, b) => RANK[a.status]! - RANK[b.status]! || sinceOf(b) - sinceOf(a));
  const t = mine[0];
  if (!t) return null;
  return { ticketId: t.id, displayCode: t.displayCode, status: t.status as Current["status"], since: iso(sinceOf(t)) };
}

const QUEUE_FIELDS = {
  id: queues.id,
  name: queues.name,
  letter: queues.letter,
  createdAt: queues.createdAt,
  targetWaitMinutes: queues.targetWaitMinutes,
};

const NO_DAY: FloorToday = { served: 0, noShows: 0, averageWaitSeconds: null, averageServiceSeconds: null };

function waitingEntry(t: TicketView, at: number, target: number | null): FloorWaiting {
  const waitedSeconds = Math.max(0, Math.floor((at - t.createdAt) / 1000));
  return {
    ticketId: t.id,
    displayCode: t.displayCode,
    name: t.visitorName,
    joinedAt: iso(t.createdAt),
    waitedSeconds,
    vip: t.isPriority,
    appointmentAt: t.kind === "appointment" && t.appointmentAt !== null ? iso(t.appointmentAt) : null,
    level: waitLevel(waitedSeconds, target),
  };
}

export async function locationFloor(deps: Deps, location: FloorLocation, at: number): Promise<Floor> {
  const { db } = deps;
  const [deskRows, locationQueues] = await Promise.all([
    db
      .select()
      .from(desks)
      .where(eq(desks.locationId, location.id))
      .orderBy(asc(desks.createdAt), asc(desks.id))
      .limit(FLOOR_DESKS_MAX)
      .all(),
    db
      .select(QUEUE_FIELDS)
      .from(queues)
      .innerJoin(serviceLocations, eq(serviceLocations.serviceId, queues.serviceId))
      .where(and(eq(serviceLocations.locationId, location.id), isNull(queues.archivedAt)))
      .orderBy(asc(queues.createdAt), asc(queues.id))
      .all(),
  ]);
  // A desk may call from a queue of a service that is not linked to this location: it is on the floor too.
  const known = new Set(locationQueues.map((q) => q.id));
  const extraIds = [...new Set(deskRows.flatMap((d) => d.queueIds))].filter((id) => !known.has(id));
  const extra =
    extraIds.length === 0
      ? []
      : await db
          .select(QUEUE_FIELDS)
          .from(queues)
          .where(and(eq(queues.organizationId, location.organizationId), inArray(queues.id, extraIds), isNull(queues.archivedAt)))
          .orderBy(asc(queues.createdAt), asc(queues.id))
          .all();
  const floorQueues = [...locationQueues, ...extra];
  const queueIds = floorQueues.map((q) => q.id);

  const operatorIds = [...new Set(deskRows.map((d) => d.operatorId).filter((id): id is string => id !== null))];
  const [live, today, names] = await Promise.all([
    Promise.all(queueIds.map((id) => readQueue(deps, id, at))),
    todayOf(deps, location.organizationId, queueIds, localDayStart(at, location.timezone)),
    operatorNames(deps, location.organizationId, operatorIds),
  ]);
  const atDesks = live.flatMap((l) => l?.atDesks ?? []);
  const floorDesks = deskRows.map((d) => ({
    id: d.id,
    name: d.displayName ?? d.name,
    status: d.operatorId === null ? ("closed" as const) : ("open" as const),
    queueIds: d.queueIds,
    operator: d.operatorId === null ? null : { id: d.operatorId, name: names.get(d.operatorId) ?? "" },
    current: currentAt(d, atDesks),
  }));
  const lines = floorQueues.flatMap((q, i) => {
    const l = live[i];
    if (!l) return [];
    const oldest = l.waiting.reduce<TicketView | null>((min, t) => (min === null || t.createdAt < min.createdAt ? t : min), null);
    const longestWaitSeconds = oldest ? Math.max(0, Math.floor((at - oldest.createdAt) / 1000)) : 0;
    const day = today.get(q.id) ?? NO_DAY;
    return [
      {
        line: {
          id: q.id,
          name: q.name,
          letter: q.letter,
          waitingCount: l.waitingCount,
          longestWaitSeconds,
          heldCount: l.heldCount,
          servedToday: day.served,
          targetWaitMinutes: q.targetWaitMinutes,
          level: oldest ? waitLevel(longestWaitSeconds, q.targetWaitMinutes) : ("ok" as const),
          waiting: l.waiting.map((t) => waitingEntry(t, at, q.targetWaitMinutes)),
          today: day,
        },
        longest: oldest ? { ticketId: oldest.id, displayCode: oldest.displayCode, joinedAt: oldest.createdAt } : null,
      },
    ];
  });
  const alerts = floorAlerts(
    lines.map((x) => ({ id: x.line.id, targetWaitMinutes: x.line.targetWaitMinutes, longest: x.longest })),
    deskRows.map((d, i) => ({
      id: d.id,
      name: floorDesks[i]!.name,
      open: d.operatorId !== null,
      busy: floorDesks[i]!.current !== null,
      queueIds: d.queueIds,
    })),
    at,
  );

  return {
    locationId: location.id,
    location: { id: location.id, name: location.name, address: location.address, timezone: location.timezone },
    at: iso(at),
    desks: floorDesks,
    queues: lines.map((x) => x.line),
    alerts,
  };
}

/**
 * Today's figures per queue, from the tickets projection: served, no-shows (called today, then
 * expired or skipped), the average wait (join to call) of tickets called today and the average
 * service (start to completion) of tickets completed today. Reads the organization's tickets
 * created since the day before (its created-at index): a ticket waits less than a day.
 */
async function todayOf({ db }: Deps, organizationId: string, queueIds: readonly string[], since: number): Promise<Map<string, FloorToday>> {
  if (queueIds.length === 0) return new Map();
  const rows = await db
    .select({
      queueId: tickets.queueId,
      served: sql<number>`sum(case when ${tickets.status} = 'served' and ${tickets.servedAt} >= ${since} then 1 else 0 end)`,
      noShows: sql<number>`sum(case when ${tickets.status} in ('expired', 'skipped') and ${tickets.calledAt} >= ${since} then 1 else 0 end)`,
      averageWait: sql<number | null>`avg(case when ${tickets.calledAt} >= ${since} then ${tickets.calledAt} - ${tickets.createdAt} end)`,
      averageService: sql<
        number | null
      >`avg(case when ${tickets.status} = 'served' and ${tickets.servedAt} >= ${since} and ${tickets.servingAt} is not null then ${tickets.servedAt} - ${tickets.servingAt} end)`,
    })
    .from(tickets)
    .where(
      and(
        eq(tickets.organizationId, organizationId),
        gte(tickets.createdAt, since - 24 * 3600_000),
        inArray(tickets.queueId, [...queueIds]),
      ),
    )
    .groupBy(tickets.queueId)
    .all();
  const seconds = (ms: number | null) => (ms === null ? null : Math.round(Number(ms) / 1000));
  return new Map(
    rows.map((r) => [
      r.queueId,
      {
        served: Number(r.served ?? 0),
        noShows: Number(r.noShows ?? 0),
        averageWaitSeconds: seconds(r.averageWait),
        averageServiceSeconds: seconds(r.averageService),
      },
    ]),
  );
}

/** A member's full name; an API key (a kiosk integration) by its name, which only staff see here. */
async function operatorNames({ db }: Deps, organizationId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const [people, keys] = await Promise.all([
    db
      .select({ id: users.id, firstName: users.firstName, lastName: users.lastName })
      .from(users)
      .where(inArray(users.id, [...ids]))
      .all(),
    db
      .select({ id: apiKeys.id, name: apiKeys.name })
      .from(apiKeys)
      .where(and(eq(apiKeys.organizationId, organizationId), inArray(apiKeys.id, [...ids])))
      .all(),
  ]);
  return new Map([...people.map((u) => [u.id, `${u.firstName} ${u.lastName}`] as const), ...keys.map((k) => [k.id, k.name] as const)]);
}
