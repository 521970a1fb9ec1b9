// Remote join (CONTRACT §5): the allowed radius, the geofence, the deadlines a remote ticket
// lives under, and the abuse penalty. Pure rules; the QueueRoom and the services apply them.

export const REMOTE_JOIN_STATUSES = ["pending", "travelling", "within_geofence", "arrived", "expired", "cancelled", "penalty"] as const;
export type RemoteJoinStatus = (typeof REMOTE_JOIN_STATUSES)[number];

/** Statuses of a remote join still on its way: deadlines apply and location updates are taken. */
export const ACTIVE_REMOTE_STATUSES = ["pending", "travelling", "within_geofence"] as const satisfies readonly RemoteJoinStatus[];

export function isActiveRemote(status: RemoteJoinStatus): boolean {
  return (ACTIVE_REMOTE_STATUSES as readonly RemoteJoinStatus[]).includes(status);
}

export const CONFIRM_METHODS = ["geofence", "qr_scan", "nfc_scan", "manual"] as const;
export type ConfirmMethod = (typeof CONFIRM_METHODS)[number];

export const DEFAULT_RADIUS_KM = 5;
export const GEOFENCE_RADIUS_M = 100;
export const FRONT_EXPIRY_MS = 30 * 60_000;
export const INACTIVITY_WARNING_MS = 7 * 60_000;
export const INACTIVITY_SKIP_MS = 10 * 60_000;
/** How recent a scan of the location's code or tag must be to confirm arrival with it. */
export const SCAN_PROOF_MS = 10 * 60_000;
export const PENALTY_THRESHOLD = 3;
export const PENALTY_WINDOW_MS = 7 * 24 * 3_600_000;
export const PENALTY_MS = 24 * 3_600_000;
/** A scan of an NFC tag must be made this close to the tag. */
export const NFC_MAX_DISTANCE_KM = 0.2;

/** The service's own radius, else the organization's availability radius, else 5 km. */
export function allowedRadiusKm(serviceRadiusKm: number | null, organizationRadiusKm: number | null): number {
  return serviceRadiusKm ?? organizationRadiusKm ?? DEFAULT_RADIUS_KM;
}

/** Inside the geofence when the position, given the reported accuracy, may be within its radius. */
export function geofenceStatus(distanceM: number, accuracyM: number, radiusM = GEOFENCE_RADIUS_M): "travelling" | "within_geofence" {
  return distanceM - accuracyM <= radiusM ? "within_geofence" : "travelling";
}

export interface RemoteClock {
  status: RemoteJoinStatus;
  lastLocationAt: number;
  warnedAt: number | null;
  reachedFrontAt: number | null;
}

/** When each rule falls due for a remote join on its way (null: never, as things stand). */
export function remoteDeadlines(r: RemoteClock): { warning: number | null; autoSkip: number | null; expiry: number | null } {
  if (!isActiveRemote(r.status)) return { warning: null, autoSkip: null, expiry: null };
  return {
    warning: r.warnedAt === null ? r.lastLocationAt + INACTIVITY_WARNING_MS : null,
    autoSkip: r.lastLocationAt + INACTIVITY_SKIP_MS,
    expiry: r.reachedFrontAt === null ? null : r.reachedFrontAt + FRONT_EXPIRY_MS,
  };
}

export function nextRemoteDeadline(r: RemoteClock): number | null {
  const d = remoteDeadlines(r);
  const times = [d.warning, d.autoSkip, d.expiry].filter((t): t is number => t !== null);
  return times.length === 0 ? null : Math.min(...times);
}

/**
 * The end of the user's penalty at `at`, or null. Each expiry that is the third (or later)
 * within 7 days starts a 24-hour penalty; `expiries` are the user's expiry times in any order.
 */
export function penaltyUntil(expiries: readonly number[], at: number): number | null {
  const sorted = [...expiries].sort((a, b) => a - b);
  let until: number | null = null;
  for (let i = PENALTY_THRESHOLD - 1; i < sorted.length; i++) {
    const trigger = sorted[i]!;
    if (trigger - sorted[i - (PENALTY_THRESHOLD - 1)]! > PENALTY_WINDOW_MS) continue;
    const end = trigger + PENALTY_MS;
    if (trigger <= at && end > at) until = Math.max(until ?? 0, end);
  }
  return until;
}

/** How far back the expiries that may still penalise at `at` go. */
export function penaltyLookback(at: number): number {
  return at - PENALTY_MS - PENALTY_WINDOW_MS;
}
