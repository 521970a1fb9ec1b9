// What a QR token must point at, by purpose (CONTRACT §5: the purpose decides what a scan does).

export const QR_PURPOSES = ["service_checkin", "queue_join", "operator_access", "verification", "single_use_invite"] as const;
export type QrPurpose = (typeof QR_PURPOSES)[number];

export type QrTargetProblem = { field: "queueId" | "serviceId"; reason: string } | null;

/**
 * - queue_join and single_use_invite join one queue: queueId is required.
 * - service_checkin joins the service's first active queue: serviceId is required and a
 *   queueId would contradict it.
 * - verification and operator_access work on a queue or on every queue of a service: one of
 *   the two is required.
 * When both ids are given, the queue must belong to the service (checked against the catalog).
 */
export function qrTargetProblem(
  purpose: QrPurpose,
  target: { queueId?: string | undefined; serviceId?: string | undefined },
): QrTargetProblem {
  switch (purpose) {
    case "queue_join":
    case "single_use_invite":
      return target.queueId ? null : { field: "queueId", reason: `required for ${purpose}` };
    case "service_checkin":
      if (!target.serviceId) return { field: "serviceId", reason: "required for service_checkin" };
      return target.queueId
        ? { field: "queueId", reason: "service_checkin uses the service's first active queue; leave queueId out" }
        : null;
    case "verification":
    case "operator_access":
      return target.queueId || target.serviceId ? null : { field: "queueId", reason: `${purpose} needs a queueId or a serviceId` };
  }
}

export type QrTokenStatus = "active" | "expired" | "used" | "revoked";

export function qrTokenStatus(t: { revokedAt: number | null; usedAt: number | null; expiresAt: number | null }, at: number): QrTokenStatus {
  if (t.revokedAt !== null) return "revoked";
  if (t.usedAt !== null) return "used";
  if (t.expiresAt !== null && t.expiresAt <= at) return "expired";
  return "active";
}
