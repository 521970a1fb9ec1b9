import { and, asc, eq, inArray, isNull } from "drizzle-orm";
import { locations, queues, services } from "../db/schema";
import type { TicketStatus } from "../domain/tickets";
import { notFound } from "../http/errors";
import { iso } from "../lib/time";
import type { TicketView } from "../queue-room/contract";
import { roomOf } from "../tickets/queue-rooms";
import { ticketRecord } from "../tickets/tickets";
import { deskRecord, type DeskRow } from "./desks";
import { type Deps } from "../http/deps";

// What a counter console shows of its desk, in one read (docs/pages.md, issue 39): the branch,
// the desk's queues with their counts, the line in the desk's order, the held tickets, and the
// caller's ticket at the desk. Live state comes from the queues' rooms (their ticket listings, read
// in parallel), names from D1. The console reads it again on every live signal of its queues.

/** Waiting tickets listed per queue, from its head (each queue's `waitingCount` says how many wait in all). */
export const CONSOLE_LINE_MAX = 50;
/** Called, serving and held tickets read per queue. */
const CONSOLE_AT_DESKS_MAX = 100;

type Ticket = ReturnType<typeof ticketRecord>;

export interface DeskConsole {
  at: string;
  desk: ReturnType<typeof deskRecord>;
  location: { id: string; name: string; address: string; timezone: string };
  queues: {
    id: string;
    name: string;
    letter: string;
    status: "active" | "paused" | "closed";
    serviceId: string;
    serviceName: string;
    waitingCount: number;
    heldCount: number;
  }[];
  waiting: Ticket[];
  held: Ticket[];
  current: Ticket | null;
}

interface QueueLive {
  waiting: TicketView[];
  waitingCount: number;
  held: TicketView[];
  heldCount: number;
  atDesks: TicketView[];
}

async function readQueue(deps: Deps, queueId: string, at: number): Promise<QueueLive | null> {
  const room = roomOf(deps, queueId);
  const page = (status: TicketStatus, limit: number) => room.query({ question: "tickets", query: { status, offset: 0, limit }, at });
  const [waiting, called, serving, held] = await Promise.all([
    page("waiting", CONSOLE_LINE_MAX),
    page("called", CONSOLE_AT_DESKS_MAX),
    page("serving", CONSOLE_AT_DESKS_MAX),
    page("held", CONSOLE_AT_DESKS_MAX),
  ]);
  if (!waiting.ok || !called.ok || !serving.ok || !held.ok) return null;
  return {
    waiting: waiting.value.items,
    waitingCount: waiting.value.total,
    held: held.value.items,
    heldCount: held.value.total,
    atDesks: [...serving.value.items, ...called.value.items],
  };
}

/**
 * The line as the desk sees it. One queue: its own calling order (a ticket returned "first" is
 * called first without being VIP). Across queues: the priority lane first, then each ticket's place
 * in its queue, then the longest wait (docs/desks.md).
 */
function deskLine(lines: TicketView[][]): TicketView[] {
  if (lines.length === 1) return lines[0]!;
  const byPlace = (a: TicketView, b: TicketView) => (a.position ?? 0) - (b.position ?? 0) || a.createdAt - b.createdAt;
  return lines.flat().sort((a, b) => Number(b.isPriority) - Number(a.isPriority) || byPlace(a, b));
}

/** The caller's ticket at this desk: serving before called, then the latest call. */
function currentOf(actorId: string, deskId: string, live: readonly TicketView[]): TicketView | null {
  const mine = live.filter((t) => t.assignedToId === actorId && (t.deskId === deskId || t.deskId === null));
  mine.sort((a, b) => Number(b.status === "serving") - Number(a.status === "serving") || (b.calledAt ?? 0) - (a.calledAt ?? 0));
  return mine[0] ?? null;
}

export async function deskConsole(deps: Deps, desk: DeskRow, actorId: string, at: number): Promise<DeskConsole> {
  const { db } = deps;
  const [location, rows] = await Promise.all([
    db
      .select({ id: locations.id, name: locations.name, address: locations.address, timezone: locations.timezone })
      .from(locations)
      .where(eq(locations.id, desk.locationId))
      .get(),
    desk.queueIds.length === 0
      ? Promise.resolve([])
      : db
          .select({
            id: queues.id,
            name: queues.name,
            letter: queues.letter,
            status: queues.status,
            serviceId: queues.serviceId,
            serviceName: services.name,
          })
          .from(queues)
          .innerJoin(services, eq(services.id, queues.serviceId))
          .where(and(eq(queues.organizationId, desk.organizationId), inArray(queues.id, desk.queueIds), isNull(queues.archivedAt)))
          .orderBy(asc(queues.createdAt), asc(queues.id))
          .all(),
  ]);
  if (!location) throw notFound("Location");
  // The desk's order of its queues, not the catalog's.
  const order = new Map(desk.queueIds.map((id, i) => [id, i]));
  rows.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  const live = await Promise.all(rows.map((q) => readQueue(deps, q.id, at)));
  const present = rows.flatMap((q, i) => (live[i] ? [{ q, l: live[i]! }] : []));
  const current = currentOf(
    actorId,
    desk.id,
    present.flatMap((p) => p.l.atDesks),
  );
  return {
    at: iso(at),
    desk: deskRecord(desk),
    location,
    queues: present.map(({ q, l }) => ({
      id: q.id,
      name: q.name,
      letter: q.letter,
      status: q.status,
      serviceId: q.serviceId,
      serviceName: q.serviceName,
      waitingCount: l.waitingCount,
      heldCount: l.heldCount,
    })),
    waiting: deskLine(present.map((p) => p.l.waiting)).map(ticketRecord),
    held: present.flatMap((p) => p.l.held).map(ticketRecord),
    current: current ? ticketRecord(current) : null,
  };
}
