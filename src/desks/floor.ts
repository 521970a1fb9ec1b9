import { and, asc, eq, gte, inArray, isNull, sql } from "drizzle-orm";
import { database } from "../db/client";
import { apiKeys, desks, locations, queues, serviceLocations, tickets, users } from "../db/schema";
import type { TicketStatus } from "../domain/tickets";
import { wallTimeAt, zonedWallTimeToUtc } from "../domain/recurrence";
import type { Env } from "../env";
import { notFound } from "../http/errors";
import { iso } from "../lib/time";
import type { TicketView } from "../queue-room/contract";
import { roomOf } from "../tickets/queue-rooms";

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
  timezone: string;
}

export async function findFloorLocation(env: Env, locationId: string): Promise<FloorLocation> {
  const row = await database(env.DB)
    .select({ id: locations.id, organizationId: locations.organizationId, timezone: locations.timezone })
    .from(locations)
    .where(eq(locations.id, locationId))
    .get();
  if (!row) throw notFound("Location");
  return row;
}

type Current = { ticketId: string; displayCode: string; status: "called" | "serving" | "held"; since: string };

export interface Floor {
  locationId: string;
  at: string;
  desks: {
    id: string;
    name: string;
    status: "open" | "closed";
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
  }[];
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
async function readQueue(env: Env, queueId: string, at: number): Promise<QueueLive | null> {
  const room = roomOf(env, queueId);
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

export async function locationFloor(env: Env, location: FloorLocation, at: number): Promise<Floor> {
  const db = database(env.DB);
  const [deskRows, locationQueues] = await Promise.all([
    db
      .select()
      .from(desks)
      .where(eq(desks.locationId, location.id))
      .orderBy(asc(desks.createdAt), asc(desks.id))
      .limit(FLOOR_DESKS_MAX)
      .all(),
    db
      .select({ id: queues.id, name: queues.name, letter: queues.letter, createdAt: queues.createdAt })
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
          .select({ id: queues.id, name: queues.name, letter: queues.letter, createdAt: queues.createdAt })
          .from(queues)
          .where(and(eq(queues.organizationId, location.organizationId), inArray(queues.id, extraIds), isNull(queues.archivedAt)))
          .orderBy(asc(queues.createdAt), asc(queues.id))
          .all();
  const floorQueues = [...locationQueues, ...extra];
  const queueIds = floorQueues.map((q) => q.id);

  const operatorIds = [...new Set(deskRows.map((d) => d.operatorId).filter((id): id is string => id !== null))];
  const [live, served, names] = await Promise.all([
    Promise.all(queueIds.map((id) => readQueue(env, id, at))),
    servedSince(env, queueIds, localDayStart(at, location.timezone)),
    operatorNames(env, location.organizationId, operatorIds),
  ]);
  const atDesks = live.flatMap((l) => l?.atDesks ?? []);

  return {
    locationId: location.id,
    at: iso(at),
    desks: deskRows.map((d) => ({
      id: d.id,
      name: d.displayName ?? d.name,
      status: d.operatorId === null ? ("closed" as const) : ("open" as const),
      operator: d.operatorId === null ? null : { id: d.operatorId, name: names.get(d.operatorId) ?? "" },
      current: currentAt(d, atDesks),
    })),
    queues: floorQueues.flatMap((q, i) => {
      const l = live[i];
      if (!l) return [];
      const oldest = l.waiting.reduce((min, t) => Math.min(min, t.createdAt), at);
      return [
        {
          id: q.id,
          name: q.name,
          letter: q.letter,
          waitingCount: l.waitingCount,
          longestWaitSeconds: Math.max(0, Math.floor((at - oldest) / 1000)),
          heldCount: l.heldCount,
          servedToday: served.get(q.id) ?? 0,
        },
      ];
    }),
  };
}

async function servedSince(env: Env, queueIds: readonly string[], since: number): Promise<Map<string, number>> {
  if (queueIds.length === 0) return new Map();
  const rows = await database(env.DB)
    .select({ queueId: tickets.queueId, n: sql<number>`count(*)` })
    .from(tickets)
    .where(and(inArray(tickets.queueId, [...queueIds]), eq(tickets.status, "served"), gte(tickets.servedAt, since)))
    .groupBy(tickets.queueId)
    .all();
  return new Map(rows.map((r) => [r.queueId, Number(r.n)]));
}

/** A member's full name; an API key (a kiosk integration) by its name, which only staff see here. */
async function operatorNames(env: Env, organizationId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const db = database(env.DB);
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
