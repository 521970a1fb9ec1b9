import type { Plan } from "./plans";

// The audit log's rules (docs/security.md, "Audit log"): what an entry says, which fields
// never appear in it, how its hash is computed and how long it is kept.

export type AuditActorType = "user" | "api_key" | "system";

/** The person or key that made a change (system: a job acting on its own, e.g. retention). */
export interface AuditActor {
  type: AuditActorType;
  id: string | null;
}

/** Where a request came from: written with every entry it causes. */
export interface AuditOrigin {
  actor: AuditActor;
  ip: string | null;
  requestId: string | null;
}

export interface FieldChange {
  before: unknown;
  after: unknown;
}

export type AuditChanges = Record<string, FieldChange>;

/** The change to record, before the origin and time are added. */
export interface AuditChange {
  organizationId: string;
  entityType: string;
  entityId: string;
  action: AuditAction;
  changes?: AuditChanges;
}

/** The stored entry as the chain hashes it. */
export interface AuditEntry {
  id: string;
  organizationId: string;
  seq: number;
  actorType: AuditActorType;
  actorId: string | null;
  entityType: string;
  entityId: string;
  action: string;
  changes: string;
  ip: string | null;
  requestId: string | null;
  createdAt: number;
  prevHash: string | null;
}

/**
 * Field names whose value is never written to the log, whatever the entity: a change to one is
 * recorded as `"[redacted]"` on both sides, so the log still says the secret changed.
 */
const SECRET_FIELD = /secret|password|token|keyhash|key_hash|apikey|^key$|credential|private/i;
export const REDACTED = "[redacted]";

export function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name);
}

/**
 * Field names that hold a person's contact data (a phone number, an e-mail address, a visitor's
 * or customer's name): recorded as `"[redacted]"` too, so the log never holds personal data of
 * its own and an erasure has nothing to chase there (docs/personal-data.md).
 */
const PERSONAL_FIELD = /^(phone|e-?mail|visitorName|customerName)$|(Phone|Email|E-mail)$/;

export function isPersonalField(name: string): boolean {
  return PERSONAL_FIELD.test(name);
}

function comparable(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/**
 * The fields of `fields` whose value differs between `before` and `after` (absent = null),
 * secrets and personal data redacted. Missing `before` (a creation) or `after` (a deletion) records one side only.
 */
export function changedFields(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  fields: readonly string[],
): AuditChanges {
  const out: AuditChanges = {};
  for (const field of fields) {
    const b = before ? (before[field] ?? null) : null;
    const a = after ? (after[field] ?? null) : null;
    if (before && after && comparable(b) === comparable(a)) continue;
    if (!before && a === null) continue;
    if (!after && b === null) continue;
    out[field] =
      isSecretField(field) || isPersonalField(field)
        ? { before: before ? REDACTED : null, after: after ? REDACTED : null }
        : { before: b, after: a };
  }
  return out;
}

/**
 * The text an entry's hash is computed over: every stored field in a fixed order, and the hash
 * of the entry before it, so changing, removing or reordering any entry breaks every later hash.
 */
export function auditHashInput(e: AuditEntry): string {
  return JSON.stringify([
    e.prevHash,
    e.seq,
    e.id,
    e.organizationId,
    e.actorType,
    e.actorId,
    e.entityType,
    e.entityId,
    e.action,
    e.changes,
    e.ip,
    e.requestId,
    e.createdAt,
  ]);
}

const DAY_MS = 86_400_000;

/** How long entries are kept, per plan (issue 31): starter 30 days, pro 1 year, enterprise 7 years. */
export const AUDIT_RETENTION_DAYS: Record<Plan, number> = { starter: 30, pro: 365, enterprise: 7 * 365 };

export function auditRetentionCutoff(plan: Plan, at: number): number {
  return at - AUDIT_RETENTION_DAYS[plan] * DAY_MS;
}

/** The opaque cursor of a listing: the number of the last entry returned (lists go newest first). */
export function encodeAuditCursor(seq: number): string {
  return btoa(`seq:${seq}`).replaceAll("=", "");
}

export function decodeAuditCursor(cursor: string): number | null {
  try {
    const match = /^seq:(\d{1,15})$/.exec(atob(cursor));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Every action the log records (docs/security.md lists them with their entity types): an entry's
 * `action` is typed by this list, and audit-coverage.test checks the recorder's table against it.
 */
export const AUDIT_ACTIONS = [
  "organization.created",
  "organization.updated",
  "organization.ownership_transferred",
  "invitation.created",
  "invitation.revoked",
  "invitation.declined",
  "member.joined",
  "member.role_changed",
  "member.removed",
  "member.erased",
  "api_key.created",
  "api_key.revoked",
  "location.created",
  "location.updated",
  "location.deleted",
  "service.created",
  "service.updated",
  "service.deleted",
  "service.outcome_created",
  "service.outcome_deleted",
  "service.intake_updated",
  "queue.created",
  "queue.updated",
  "queue.status_changed",
  "queue.cleared",
  "queue.archived",
  "queue.blend_updated",
  "desk.created",
  "desk.updated",
  "desk.deleted",
  "desk.opened",
  "desk.closed",
  "qr_token.created",
  "qr_token.revoked",
  "nfc_tag.created",
  "nfc_tag.updated",
  "calendar_event.created",
  "calendar_event.updated",
  "calendar_event.deleted",
  "subscription.plan_changed",
  "subscription.cancelled",
  "subscription.checkout_created",
  "sms.sent",
  "sms_policy.updated",
  "message_template.updated",
  "message_template.reset",
  "domain_verification.token_created",
  "domain_verification.checked",
  "webhook.created",
  "webhook.updated",
  "webhook.deleted",
  "webhook.secret_rotated",
  "webhook.test_sent",
  "webhook.redelivered",
  "ussd.registered",
  "ussd.removed",
  "whatsapp.updated",
  "whatsapp.removed",
  "sso.configured",
  "sso.updated",
  "sso.deleted",
  "sso.signed_in",
  "sso.sign_in_refused",
  "session.signed_in",
  "export.analytics",
  "export.audit",
  "export.data_subject",
  "data_subject.erased",
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export function isAuditAction(action: string): action is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(action);
}
