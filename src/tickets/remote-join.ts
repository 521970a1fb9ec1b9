import { and, eq, gt, gte, isNull, or } from "drizzle-orm";
import type { IntakeValue } from "../domain/intake";
import { entryScans, locations, organizations, remoteJoinExpiries, serviceLocations, services } from "../db/schema";
import { distanceKm, type Point } from "../domain/geo";
import { allowedRadiusKm, penaltyLookback, penaltyUntil, SCAN_PROOF_MS, type ConfirmMethod } from "../domain/remote-join";
import { ApiError } from "../http/errors";
import { iso, isoOrNull } from "../lib/time";
import type { RemoteJoinAndTicket, RemoteJoinView } from "../queue-room/contract";
import { liveSummary, type QueueRow } from "./queues";
import { inRoom } from "./queue-rooms";
import { ticketRecord } from "./tickets";
import { joinQueue } from "./joins";
import { type Deps } from "../http/deps";

/** Distances are reported to the metre. */
export function roundKm(km: number): number {
  return Math.round(km * 1000) / 1000;
}

export interface Reach {
  /** To the nearest location of the service; null when the service has no location. */
  distanceKm: number | null;
  maxRadiusKm: number;
}

/** How far `point` is from the service and how far it may be (CONTRACT §5's allowed radius). */
export async function reachOf({ db }: Deps, serviceId: string, point: Point): Promise<Reach> {
  const rows = await db
    .select({
      serviceRadius: services.maxRemoteJoinRadiusKm,
      organizationRadius: organizations.availabilityRadiusKm,
      latitude: locations.latitude,
      longitude: locations.longitude,
    })
    .from(services)
    .innerJoin(organizations, eq(organizations.id, services.organizationId))
    .leftJoin(serviceLocations, eq(serviceLocations.serviceId, services.id))
    .leftJoin(locations, eq(locations.id, serviceLocations.locationId))
    .where(eq(services.id, serviceId))
    .all();
  const first = rows[0];
  const maxRadiusKm = first ? allowedRadiusKm(first.serviceRadius, first.organizationRadius) : allowedRadiusKm(null, null);
  let nearest: number | null = null;
  for (const r of rows) {
    if (r.latitude === null || r.longitude === null) continue;
    const d = distanceKm(point, { latitude: r.latitude, longitude: r.longitude });
    if (nearest === null || d < nearest) nearest = d;
  }
  return { distanceKm: nearest, maxRadiusKm };
}

export function isWithin(reach: Reach): boolean {
  return reach.distanceKm !== null && reach.distanceKm <= reach.maxRadiusKm;
}

export function outOfRange(reach: Reach, maxKm = reach.maxRadiusKm): ApiError {
  return new ApiError("OUT_OF_RANGE", `You are farther than ${maxKm} km from this place`, {
    distanceKm: reach.distanceKm === null ? null : roundKm(reach.distanceKm),
    maxKm,
  });
}

/** The end of the user's remote-join penalty, or null (3 expiries in 7 days → 24 hours). */
export async function penaltyOf({ db }: Deps, userId: string, at: number): Promise<number | null> {
  const rows = await db
    .select({ expiredAt: remoteJoinExpiries.expiredAt })
    .from(remoteJoinExpiries)
    .where(and(eq(remoteJoinExpiries.userId, userId), gt(remoteJoinExpiries.expiredAt, penaltyLookback(at))))
    .all();
  return penaltyUntil(
    rows.map((r) => r.expiredAt),
    at,
  );
}

export interface Eligibility {
  eligible: boolean;
  distanceKm: number | null;
  maxRadiusKm: number;
  reason?: "penalty" | "queue_paused" | "queue_closed" | "no_location" | "out_of_range";
  penaltyUntil?: string;
}

/**
 * Whether a customer at `point` may start a remote join now. The reasons, first that applies:
 * the user's penalty, the queue's state, a service without a location, the distance.
 */
export async function eligibility(deps: Deps, queue: QueueRow, point: Point, userId: string | null, at: number): Promise<Eligibility> {
  const [reach, penalty, live] = await Promise.all([
    reachOf(deps, queue.serviceId, point),
    userId === null ? null : penaltyOf(deps, userId, at),
    liveSummary(deps, queue, at),
  ]);
  const base = { distanceKm: reach.distanceKm === null ? null : roundKm(reach.distanceKm), maxRadiusKm: reach.maxRadiusKm };
  if (penalty !== null) return { eligible: false, ...base, reason: "penalty", penaltyUntil: iso(penalty) };
  if (live.archivedAt !== null || live.status === "closed") return { eligible: false, ...base, reason: "queue_closed" };
  if (live.status === "paused") return { eligible: false, ...base, reason: "queue_paused" };
  if (reach.distanceKm === null) return { eligible: false, ...base, reason: "no_location" };
  if (!isWithin(reach)) return { eligible: false, ...base, reason: "out_of_range" };
  return { eligible: true, ...base };
}

export function remoteJoinRecord(r: RemoteJoinView) {
  return {
    id: r.id,
    ticketId: r.ticketId,
    queueId: r.queueId,
    userId: r.userId,
    status: r.status,
    geofenceRadiusM: r.geofenceRadiusM,
    lastLocation:
      r.latitude === null || r.longitude === null
        ? null
        : { latitude: r.latitude, longitude: r.longitude, accuracyM: r.accuracyM ?? 0, distanceM: Math.round(r.distanceM ?? 0) },
    lastLocationAt: iso(r.lastLocationAt),
    warnedAt: isoOrNull(r.warnedAt),
    reachedFrontAt: isoOrNull(r.reachedFrontAt),
    expiresAt: isoOrNull(r.expiresAt),
    arrivedAt: isoOrNull(r.arrivedAt),
    confirmMethod: r.confirmMethod,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  };
}

export function remoteJoinAndTicket(r: RemoteJoinAndTicket) {
  return { remoteJoin: remoteJoinRecord(r.remoteJoin), ticket: ticketRecord(r.ticket) };
}

/** Penalty first (403), then the distance (422), then the usual ticket rules. */
export async function startRemoteJoin(
  deps: Deps,
  queue: QueueRow,
  user: { id: string; language: string },
  point: Point,
  at: number,
  answers?: Record<string, IntakeValue | null>,
): Promise<RemoteJoinAndTicket> {
  const penalty = await penaltyOf(deps, user.id, at);
  if (penalty !== null) {
    throw new ApiError("REMOTE_JOIN_PENALTY", "Remote join is suspended after repeated expired remote joins", {
      status: "penalty",
      until: iso(penalty),
    });
  }
  const reach = await reachOf(deps, queue.serviceId, point);
  if (!isWithin(reach)) throw outOfRange(reach);
  const { ticket } = await joinQueue(
    deps,
    queue,
    {
      ticket: {
        userId: user.id,
        partySize: 1,
        isPriority: false,
        isGhostMode: false,
        visitorName: null,
        phone: null,
        language: user.language,
        source: "remote",
        answers,
      },
    },
    at,
  );
  return inRoom(deps, queue, (room) => room.query({ question: "remoteJoin", ticketId: ticket.id, at }));
}

/** A remote join and its ticket as they stand. */
export async function remoteJoinOf(deps: Deps, queue: QueueRow, ticketId: string, at: number): Promise<RemoteJoinAndTicket> {
  return inRoom(deps, queue, (room) => room.query({ question: "remoteJoin", ticketId, at }));
}

export async function updateRemoteLocation(
  deps: Deps,
  queue: QueueRow,
  ticketId: string,
  location: Point & { accuracyM: number },
  at: number,
): Promise<RemoteJoinAndTicket> {
  const reach = await reachOf(deps, queue.serviceId, location);
  // A service without a location has no geofence to enter: the join stays travelling.
  const distanceM = reach.distanceKm === null ? Number.MAX_SAFE_INTEGER : reach.distanceKm * 1000;
  return inRoom(deps, queue, (room) => room.command({ verb: "updateRemoteLocation", ticketId, location: { ...location, distanceM }, at }));
}

/**
 * A scan by `userId` in the last 10 minutes of a QR code or NFC tag of this queue (or, for a
 * QR code made for the whole service, of its service).
 */
export async function hasRecentScan({ db }: Deps, userId: string, channel: "qr" | "nfc", queue: QueueRow, at: number): Promise<boolean> {
  const row = await db
    .select({ id: entryScans.id })
    .from(entryScans)
    .where(
      and(
        eq(entryScans.userId, userId),
        gte(entryScans.scannedAt, at - SCAN_PROOF_MS),
        eq(entryScans.channel, channel),
        or(eq(entryScans.queueId, queue.id), and(isNull(entryScans.queueId), eq(entryScans.serviceId, queue.serviceId))),
      ),
    )
    .limit(1)
    .get();
  return row !== undefined;
}

export async function confirmArrival(
  deps: Deps,
  queue: QueueRow,
  ticketId: string,
  method: ConfirmMethod,
  ownerId: string,
  at: number,
): Promise<RemoteJoinAndTicket> {
  if (method === "qr_scan" || method === "nfc_scan") {
    const channel = method === "qr_scan" ? "qr" : "nfc";
    if (!(await hasRecentScan(deps, ownerId, channel, queue, at))) {
      throw new ApiError(
        "INVALID_STATE",
        `No scan of this queue's ${method === "qr_scan" ? "QR code" : "NFC tag"} by the ticket's owner in the last 10 minutes`,
        {
          status: "no_recent_scan",
          allowed: ["recent_scan"],
          method,
        },
      );
    }
  }
  return inRoom(deps, queue, (room) => room.command({ verb: "confirmRemote", ticketId, method, at }));
}
