import { and, eq, isNull } from "drizzle-orm";
import { entryScans, qrTokens, queues } from "../db/schema";
import { distanceKm, type Point } from "../domain/geo";
import { qrTokenStatus } from "../domain/qr";
import { NFC_MAX_DISTANCE_KM } from "../domain/remote-join";
import type { TicketSource } from "../domain/tickets";
import { memberRole } from "../http/auth";
import { ApiError, forbidden, invalidState, notFound } from "../http/errors";
import { roleAllows } from "../domain/permissions";
import { sha256Hex } from "../lib/crypto";
import { isTwinOrganizationId, newId } from "../lib/ids";
import { iso } from "../lib/time";
import type { TicketView } from "../queue-room/contract";
import { recordNfcScan, tagByNfcId } from "./nfc-tags";
import { describeQueue, findQueue, liveSummary, type QueueRecord, type QueueRow } from "../tickets/queues";
import { inRoom } from "../tickets/queue-rooms";
import { isWithin, outOfRange, reachOf } from "../tickets/remote-join";
import { ticketRecord } from "../tickets/tickets";
import { joinQueue } from "../tickets/joins";
import { type Deps } from "../http/deps";

// What a scan of a QR code or an NFC tag does (CONTRACT §5). Every accepted scan is recorded
// with its user and time: a remote join confirms arrival with it (`qr_scan` / `nfc_scan`).

export interface Scanner {
  id: string;
  language: string;
}

export type ScanAction = "joined" | "already_in_queue" | "present" | "operator_access";

export interface ScanOutcome {
  action: ScanAction;
  ticket: TicketView | null;
  queues: QueueRecord[];
}

interface ScanRecord {
  userId: string;
  organizationId: string;
  channel: "qr" | "nfc";
  sourceId: string;
  serviceId: string | null;
  queueId: string | null;
  phoneModel?: string | null;
  osVersion?: string | null;
}

async function recordScan({ db }: Deps, scan: ScanRecord, at: number): Promise<void> {
  await db.insert(entryScans).values({ id: newId("scn"), phoneModel: null, osVersion: null, ...scan, scannedAt: at });
}

/**
 * Joins the queue unless the scanner already holds a live ticket in it: scanning the code at
 * the door on arrival must not give someone who joined remotely a second place.
 */
async function joinOnce(deps: Deps, queue: QueueRow, scanner: Scanner, source: TicketSource, at: number): Promise<ScanOutcome> {
  const live = await inRoom(deps, queue, (room) => room.query({ question: "liveTicketOf", userId: scanner.id, at }));
  if (live) return { action: "already_in_queue", ticket: live, queues: [] };
  const { ticket } = await joinQueue(deps, queue, { ticket: newTicketOf(scanner, source) }, at);
  return { action: "joined", ticket, queues: [] };
}

function newTicketOf(scanner: Scanner, source: TicketSource) {
  return {
    userId: scanner.id,
    partySize: 1,
    isPriority: false,
    isGhostMode: false,
    visitorName: null,
    phone: null,
    language: scanner.language,
    source,
  };
}

/** Queues a service-wide token works on: the service's queues that are not archived, oldest first. */
async function queuesOfService({ db }: Deps, serviceId: string): Promise<QueueRow[]> {
  return db
    .select()
    .from(queues)
    .where(and(eq(queues.serviceId, serviceId), isNull(queues.archivedAt)))
    .orderBy(queues.createdAt, queues.id)
    .all();
}

/** The first of these queues whose room takes tickets now (the room holds the status). */
async function firstActive(deps: Deps, candidates: QueueRow[], at: number): Promise<QueueRow | undefined> {
  for (const queue of candidates) {
    if ((await liveSummary(deps, queue, at)).status === "active") return queue;
  }
  return undefined;
}

type QrTokenRow = typeof qrTokens.$inferSelect;

function assertUsable(token: QrTokenRow, at: number): void {
  const status = qrTokenStatus(token, at);
  if (status === "revoked")
    throw new ApiError("QR_TOKEN_EXPIRED", "This QR code has been withdrawn", { status, revokedAt: iso(token.revokedAt!) });
  if (status === "used") throw new ApiError("QR_TOKEN_USED", "This QR code has already been used", { status, usedAt: iso(token.usedAt!) });
  if (status === "expired")
    throw new ApiError("QR_TOKEN_EXPIRED", "This QR code has expired", { status, expiredAt: iso(token.expiresAt!) });
}

export async function scanQrToken(deps: Deps, scanner: Scanner, input: { token: string } & Point, at: number): Promise<ScanOutcome> {
  const { db, env } = deps;
  const token = await db.select().from(qrTokens).where(eq(qrTokens.token, input.token)).get();
  // A twin's codes are for its test keys, and a scanner is a user, always live (docs/test-mode.md).
  if (!token || isTwinOrganizationId(token.organizationId)) throw new ApiError("NOT_FOUND", "QR code not found", { field: "token" });
  assertUsable(token, at);
  const reach = token.serviceId === null ? { distanceKm: null, maxRadiusKm: 0 } : await reachOf(deps, token.serviceId, input);
  if (!isWithin(reach)) throw outOfRange(reach);
  await recordScan(
    deps,
    {
      userId: scanner.id,
      organizationId: token.organizationId,
      channel: "qr",
      sourceId: token.id,
      serviceId: token.serviceId,
      queueId: token.queueId,
    },
    at,
  );
  const scoped = token.queueId !== null ? [await findQueue(deps, token.queueId)] : await queuesOfService(deps, token.serviceId!);

  switch (token.purpose) {
    case "queue_join":
      return joinOnce(deps, scoped[0]!, scanner, "qr", at);
    case "service_checkin": {
      const queue = await firstActive(deps, scoped, at);
      if (!queue) throw new ApiError("QUEUE_CLOSED", "No queue of this service is taking tickets", { reason: "no_active_queue" });
      return joinOnce(deps, queue, scanner, "qr", at);
    }
    case "single_use_invite":
      return joinWithInvite(deps, token, scoped[0]!, scanner, at);
    case "verification":
      return verifyPresence(deps, scoped, scanner, at);
    case "operator_access": {
      const role = await memberRole(env, token.organizationId, scanner.id);
      if (!role || !roleAllows(role, "QUEUE_OPERATE")) throw forbidden("This code gives access to the queue's operators only");
      return { action: "operator_access", ticket: null, queues: await Promise.all(scoped.map((q) => describeQueue(deps, q, at))) };
    }
  }
}

/**
 * The invitation is claimed before the join (a conditional update, so two scanners cannot
 * both use it) and handed back if the join is refused.
 */
async function joinWithInvite(deps: Deps, token: QrTokenRow, queue: QueueRow, scanner: Scanner, at: number): Promise<ScanOutcome> {
  const { db } = deps;
  const live = await inRoom(deps, queue, (room) => room.query({ question: "liveTicketOf", userId: scanner.id, at }));
  if (live) return { action: "already_in_queue", ticket: live, queues: [] };
  const claimed = await db
    .update(qrTokens)
    .set({ usedAt: at, usedByUserId: scanner.id })
    .where(and(eq(qrTokens.id, token.id), isNull(qrTokens.usedAt), isNull(qrTokens.revokedAt)))
    .returning({ id: qrTokens.id })
    .get();
  if (!claimed) throw new ApiError("QR_TOKEN_USED", "This QR code has already been used", { status: "used" });
  try {
    return { action: "joined", ticket: (await joinQueue(deps, queue, { ticket: newTicketOf(scanner, "qr") }, at)).ticket, queues: [] };
  } catch (err) {
    await db
      .update(qrTokens)
      .set({ usedAt: null, usedByUserId: null })
      .where(and(eq(qrTokens.id, token.id), eq(qrTokens.usedByUserId, scanner.id), eq(qrTokens.usedAt, at)));
    throw err;
  }
}

/** Marks present the scanner's live ticket in the token's queue (or the first of the service's queues holding one). */
async function verifyPresence(deps: Deps, scoped: QueueRow[], scanner: Scanner, at: number): Promise<ScanOutcome> {
  for (const queue of scoped) {
    const live = await inRoom(deps, queue, (room) => room.query({ question: "liveTicketOf", userId: scanner.id, at }));
    if (live)
      return {
        action: "present",
        ticket: await inRoom(deps, queue, (room) => room.command({ verb: "presentOwn", userId: scanner.id, at })),
        queues: [],
      };
  }
  throw notFound("Ticket");
}

export interface DeviceInfo {
  phoneModel: string;
  osVersion: string;
}

/** A tap on a tag: enabled, within 200 m of it, counted in its statistics, then a join of its queue. */
export async function scanNfcTag(
  deps: Deps,
  scanner: Scanner,
  input: { nfcId: string; deviceInfo?: DeviceInfo | undefined } & Point,
  at: number,
): Promise<ScanOutcome> {
  const tag = await tagByNfcId(deps, input.nfcId);
  if (isTwinOrganizationId(tag.organizationId)) throw notFound("NFC tag");
  if (!tag.enabled) throw invalidState("disabled", ["enabled"], "This NFC tag is disabled");
  const distance = distanceKm(input, tag);
  if (distance > NFC_MAX_DISTANCE_KM) throw outOfRange({ distanceKm: distance, maxRadiusKm: NFC_MAX_DISTANCE_KM });
  const queue = await findQueue(deps, tag.queueId);
  // One device = one user's phone model and OS version; only a hash is kept for the count.
  const device = input.deviceInfo ?? null;
  const deviceHash = await sha256Hex(`${scanner.id}|${device?.phoneModel ?? ""}|${device?.osVersion ?? ""}`);
  await recordNfcScan(deps, tag.id, deviceHash, at);
  await recordScan(
    deps,
    {
      userId: scanner.id,
      organizationId: tag.organizationId,
      channel: "nfc",
      sourceId: tag.id,
      serviceId: queue.serviceId,
      queueId: queue.id,
      phoneModel: device?.phoneModel ?? null,
      osVersion: device?.osVersion ?? null,
    },
    at,
  );
  return joinOnce(deps, queue, scanner, "nfc", at);
}

export function scanOutcomeRecord(o: ScanOutcome) {
  return { action: o.action, ticket: o.ticket ? ticketRecord(o.ticket) : null, queues: o.queues };
}
