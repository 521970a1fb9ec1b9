import { offeredLanguages, placeLanguage, type Language } from "../domain/languages";
import { and, asc, eq, inArray, isNotNull, isNull } from "drizzle-orm";
import { closedByHours, type OpeningHours } from "../domain/opening-hours";
import { apiKeys, desks, locations, organizations, queues, serviceLocations, services, users } from "../db/schema";
import { ApiError, notFound } from "../http/errors";
import { iso, isoOrNull } from "../lib/time";
import {
  boardQueue,
  hubName,
  SOCKET_HUBS,
  type BoardData,
  type QueueStatusData,
  type SubscriptionView,
  type TicketView,
} from "../queue-room/contract";
import type { QueueRow } from "../http/credentials/queues";
import { readRoom, roomOf, socketHub } from "../tickets/queue-rooms";
import type { PhoneVerificationView } from "../visits/phone-verification";
import { joinQueue } from "../tickets/joins";
import type { IntakeValue } from "../domain/intake";
import { occurrencesBetween } from "../calendar/calendar";
import { type Deps } from "../http/deps";

/** The organization's public face for the widget: name, logo, languages and open queues. */
export async function widgetInfo({ db }: Deps, organizationId: string) {
  const [org, rows] = await Promise.all([
    db.select().from(organizations).where(eq(organizations.id, organizationId)).get(),
    db
      .select({ id: queues.id, name: queues.name, status: queues.status })
      .from(queues)
      .where(and(eq(queues.organizationId, organizationId), isNull(queues.archivedAt)))
      .orderBy(asc(queues.createdAt), asc(queues.id))
      .all(),
  ]);
  if (!org) throw notFound("Organization");
  return {
    organizationId: org.id,
    name: org.name,
    logoUrl: org.logoUrl,
    defaultLanguage: org.defaultLanguage,
    languages: offeredLanguages(org.languages),
    queues: rows,
  };
}

/**
 * What the status page's header shows (docs/pages.md): the business, the service and the
 * branch of the queue's service (null when the service is offered at several locations).
 */
export async function ticketPlace({ db }: Deps, queue: Pick<QueueRow, "organizationId" | "serviceId">) {
  const [org, service, places] = await Promise.all([
    db
      .select({
        name: organizations.name,
        logoUrl: organizations.logoUrl,
        defaultLanguage: organizations.defaultLanguage,
        languages: organizations.languages,
      })
      .from(organizations)
      .where(eq(organizations.id, queue.organizationId))
      .get(),
    db.select({ name: services.name }).from(services).where(eq(services.id, queue.serviceId)).get(),
    db
      .select({
        name: locations.name,
        address: locations.address,
        timezone: locations.timezone,
        defaultLanguage: locations.defaultLanguage,
      })
      .from(serviceLocations)
      .innerJoin(locations, eq(locations.id, serviceLocations.locationId))
      .where(eq(serviceLocations.serviceId, queue.serviceId))
      .limit(2)
      .all(),
  ]);
  if (!org || !service) return null;
  const only = places.length === 1 ? places[0]! : null;
  return {
    organization: { name: org.name, logoUrl: org.logoUrl },
    serviceName: service.name,
    location: only && { name: only.name, address: only.address },
    // The branch's clock tells the visitor's times ("Back at 10:30"), as the console shows them.
    timeZone: places[0]?.timezone ?? "UTC",
    // The branch's own default language when the service is at one branch (docs/languages.md).
    defaultLanguage: placeLanguage(only?.defaultLanguage, org.languages, org.defaultLanguage),
    languages: offeredLanguages(org.languages),
  };
}

/** The name comes from D1 (renames show at once); the live figures from the room. */
export async function widgetStatus(deps: Deps, queue: QueueRow, at: number): Promise<QueueStatusData> {
  const status = await readRoom(deps, queue, (room) => room.query({ question: "widgetStatus", at }));
  return { ...status, name: queue.name };
}

export interface WidgetJoin {
  actingId: string;
  visitorName: string | null;
  phone: string | null;
  partySize: number;
  /** The caller's address and widget key: what the SMS caps count (./sms-guard.ts). */
  address: string;
  widgetKeyId: string | null;
  /** The page's Turnstile token (the `CF-Turnstile-Response` header), for an organization that asks for the bot check. */
  botToken?: string | null;
  /** The visitor's intake answers, checked with the join (docs/visits.md). */
  answers?: Record<string, IntakeValue | null> | undefined;
  /** The language the visitor chose on the page (null: the organization's). */
  language?: Language | null;
  /** SMS (default) or WhatsApp for the ticket's messages (docs/notifications.md). */
  notifyBy?: "sms" | "whatsapp" | undefined;
  /** docs/visits.md: the visit's services in order. */
  route?: string[] | undefined;
}

/** A widget ticket and the visitor's token for it (visitor-tickets.ts). */
export async function widgetJoin(
  deps: Deps,
  queue: QueueRow,
  input: WidgetJoin,
  at: number,
): Promise<{ ticket: TicketView; token: string; phoneVerification: PhoneVerificationView; notifyBy: "sms" | "whatsapp" | null }> {
  const joined = await joinQueue(
    deps,
    queue,
    {
      ticket: {
        userId: input.actingId,
        partySize: input.partySize,
        isPriority: false,
        isGhostMode: false,
        visitorName: input.visitorName,
        phone: input.phone,
        language: input.language ?? null,
        source: "widget",
        answers: input.answers,
      },
      caller: { address: input.address, widgetKeyId: input.widgetKeyId, botToken: input.botToken ?? null },
      withToken: true,
      notifyBy: input.notifyBy,
      route: input.route,
    },
    at,
  );
  return { ticket: joined.ticket, token: joined.token!, phoneVerification: joined.phoneVerification, notifyBy: joined.notifyBy };
}

/** What a widget page sees of its ticket: no user, organization or internal ids. */
export function widgetTicket(t: TicketView) {
  return {
    id: t.id,
    queueId: t.queueId,
    number: t.number,
    displayCode: t.displayCode,
    status: t.status,
    position: t.position,
    estimatedWaitMinutes: t.estimatedWaitMinutes,
    estimatedWaitRange: t.estimatedWaitRange,
    partySize: t.partySize,
    visitorName: t.visitorName,
    source: t.source,
    createdAt: iso(t.createdAt),
    // The visitor's own answers, echoed to the page that just gave them.
    intake: t.intake,
    kind: t.kind,
    appointmentAt: isoOrNull(t.appointmentAt),
    placement: t.placement === null ? null : { ...t.placement, since: iso(t.placement.since) },
  };
}

/** At most 100 bound parameters per D1 statement. */
const ID_CHUNK = 90;

/**
 * Who is at each counter, as a waiting room may see it: a member's first name, or the name
 * of the API key that called (a kiosk or counter integration names its key after the desk).
 */
async function callerNames({ db }: Deps, organizationId: string, ids: string[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    const chunk = ids.slice(i, i + ID_CHUNK);
    const [people, keys] = await Promise.all([
      db.select({ id: users.id, name: users.firstName }).from(users).where(inArray(users.id, chunk)).all(),
      db
        .select({ id: apiKeys.id, name: apiKeys.name })
        .from(apiKeys)
        .where(and(eq(apiKeys.organizationId, organizationId), inArray(apiKeys.id, chunk)))
        .all(),
    ]);
    for (const row of [...people, ...keys]) names.set(row.id, row.name);
  }
  return names;
}

/** Which part of the organization a board shows (docs/display-board.md): one branch, some queues. */
export interface BoardFilter {
  /** Only the queues of services offered at this location; its name, clock and closures. */
  locationId?: string;
  /** Only these queues (ids of other organizations or locations are ignored). */
  queueIds?: string[];
}

/**
 * Per open queue of the organization (or of one location): calls newest first with their
 * counter, and the next codes; with the organization's name, logo and the time zone of the
 * board's clock (the location's, else the organization's first location's, else UTC); the
 * location's open desks, so a desks layout shows a counter before its first call.
 */
export async function displayBoard(deps: Deps, organizationId: string, at: number, filter: BoardFilter = {}) {
  const { db } = deps;
  const locationId = filter.locationId ?? null;
  const placeColumns = {
    id: locations.id,
    name: locations.name,
    address: locations.address,
    timezone: locations.timezone,
    openingHours: locations.openingHours,
  };
  const [org, place, rows, openDesks] = await Promise.all([
    db
      .select({
        name: organizations.name,
        logoUrl: organizations.logoUrl,
        defaultLanguage: organizations.defaultLanguage,
        languages: organizations.languages,
      })
      .from(organizations)
      .where(eq(organizations.id, organizationId))
      .get(),
    locationId
      ? db
          .select(placeColumns)
          .from(locations)
          .where(and(eq(locations.id, locationId), eq(locations.organizationId, organizationId)))
          .get()
      : db
          .select(placeColumns)
          .from(locations)
          .where(eq(locations.organizationId, organizationId))
          .orderBy(asc(locations.createdAt), asc(locations.id))
          .limit(1)
          .get(),
    locationId
      ? db
          .selectDistinct({ queue: queues })
          .from(queues)
          .innerJoin(serviceLocations, eq(serviceLocations.serviceId, queues.serviceId))
          .where(and(eq(queues.organizationId, organizationId), eq(serviceLocations.locationId, locationId), isNull(queues.archivedAt)))
          .orderBy(asc(queues.createdAt), asc(queues.id))
          .all()
          .then((r) => r.map((x) => x.queue))
      : db
          .select()
          .from(queues)
          .where(and(eq(queues.organizationId, organizationId), isNull(queues.archivedAt)))
          .orderBy(asc(queues.createdAt), asc(queues.id))
          .all(),
    db
      .select({ name: desks.name, displayName: desks.displayName, queueIds: desks.queueIds })
      .from(desks)
      .where(
        and(
          eq(desks.organizationId, organizationId),
          isNotNull(desks.operatorId),
          ...(locationId ? [eq(desks.locationId, locationId)] : []),
        ),
      )
      .orderBy(asc(desks.createdAt), asc(desks.id))
      .limit(BOARD_DESKS_MAX)
      .all(),
  ]);
  if (!org) throw notFound("Organization");
  if (locationId && !place) throw notFound("Location");
  const wanted = filter.queueIds ? new Set(filter.queueIds) : null;
  const shown = wanted ? rows.filter((q) => wanted.has(q.id)) : rows;
  const boards = await Promise.all(
    shown.map((q) => readRoom<BoardData>(deps, q, (room) => room.query({ question: "widgetBoard", at })).catch(() => null)),
  );
  const callerIds = [
    ...new Set(boards.flatMap((b) => b?.called.map((c) => c.assignedToId) ?? []).filter((id): id is string => id !== null)),
  ];
  const [names, closures] = await Promise.all([
    callerNames(deps, organizationId, callerIds),
    boardClosures(deps, organizationId, place ?? null, at),
  ]);
  const shownIds = new Set(shown.map((q) => q.id));
  return {
    organizationId,
    organization: { name: org.name, logoUrl: org.logoUrl },
    location: locationId && place ? { id: place.id, name: place.name, address: place.address } : null,
    timeZone: place?.timezone ?? "UTC",
    generatedAt: iso(at),
    closures,
    // Open desks calling from a shown queue (or from none listed yet), by their counter label.
    desks: openDesks
      .filter((d) => d.queueIds.length === 0 || d.queueIds.some((id) => shownIds.has(id)))
      .map((d) => ({ counter: d.displayName ?? d.name })),
    queues: shown.flatMap((q, i) => {
      const board = boards[i];
      if (!board) return [];
      // The D1 name (renames show at once); the rest as the socket's board_update carries it.
      const wire = boardQueue(board, at);
      return [
        {
          ...wire,
          name: q.name,
          called: board.called.map((c, j) => ({
            ...wire.called[j]!,
            assignedTo: c.assignedToId === null ? null : (names.get(c.assignedToId) ?? null),
          })),
        },
      ];
    }),
  };
}

/** Open desks a board lists (far above any branch's counters). */
const BOARD_DESKS_MAX = 100;

/** How far ahead the board learns the closures (it reloads them every hour). */
const BOARD_CLOSURES_AHEAD_MS = 24 * 3_600_000;

/**
 * The closures that close the whole branch in the next 24 hours: calendar closures with no
 * service and no attendees, of the whole organization or of the board's location. A calendar
 * too busy to expand (the range's cap) leaves the board open rather than failing it.
 */
async function boardClosures(
  deps: Deps,
  organizationId: string,
  place: { id: string; timezone: string; openingHours: OpeningHours | null } | null,
  at: number,
) {
  const locationId = place?.id ?? null;
  // Outside its location's opening hours the board shows its closed screen too (docs/appointments.md).
  const hours = place
    ? closedByHours([{ openingHours: place.openingHours, timeZone: place.timezone }], at, at + BOARD_CLOSURES_AHEAD_MS)
    : [];
  const closedHours = hours.map((i) => ({ start: iso(i.start), end: iso(i.end) }));
  try {
    const occurrences = await occurrencesBetween(deps, organizationId, at, at + BOARD_CLOSURES_AHEAD_MS);
    return occurrences
      .filter(
        (o) =>
          o.event.eventType === "closure" &&
          o.event.serviceId === null &&
          o.event.attendees.length === 0 &&
          (o.event.locationId === null || o.event.locationId === locationId),
      )
      .map((o) => ({ start: iso(o.occurrence.occurrenceStart), end: iso(o.occurrence.occurrenceEnd) }))
      .concat(closedHours)
      .sort((a, b) => a.start.localeCompare(b.start));
  } catch (err) {
    if (err instanceof ApiError && err.code === "VALIDATION_ERROR") return closedHours;
    throw err;
  }
}

// ---- the live channel ----------------------------------------------------------------------

function roomSocketRequest(queueId: string, view: SubscriptionView = "status"): Request {
  const url = `https://queue-room/ws?queueId=${encodeURIComponent(queueId)}${view === "board" ? "&view=board" : ""}`;
  return new Request(url, { headers: { Upgrade: "websocket" } });
}

/** Fast path: the queue is known from the URL, so the socket goes straight to its room. */
export async function connectToRoom(
  deps: Deps,
  queueId: string,
  view: SubscriptionView = "status",
  reaches: (organizationId: string) => boolean = () => true,
): Promise<Response> {
  const { db } = deps;
  const queue = await db.select({ id: queues.id, organizationId: queues.organizationId }).from(queues).where(eq(queues.id, queueId)).get();
  if (!queue || !reaches(queue.organizationId)) throw notFound("Queue");
  return roomOf(deps, queueId).fetch(roomSocketRequest(queueId, view));
}

/**
 * The spec's flow (connect, then `{action: "subscribe", queueId}`): the socket is handed at
 * once to a socket hub, picked at random, which accepts it with the hibernation API like a
 * queue's room does on the fast path; no Worker invocation stays open per socket. The hub
 * answers subscribes by watching the queues' rooms (sockets.ts).
 */
export async function connectToHub(deps: Deps, twinId: string | null = null): Promise<Response> {
  const name = hubName(Math.floor(Math.random() * SOCKET_HUBS));
  // A test key's socket may follow its twin's queues (and only those); no other socket may follow a twin's.
  const twin = twinId === null ? "" : `&twin=${encodeURIComponent(twinId)}`;
  const request = new Request(`https://queue-room/ws?hub=${encodeURIComponent(name)}${twin}`, { headers: { Upgrade: "websocket" } });
  return socketHub(deps, name).fetch(request);
}
