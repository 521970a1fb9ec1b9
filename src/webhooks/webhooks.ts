import { and, count, desc, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import { chunk, database, nonEmpty } from "../db/client";
import { batchReads, preparedRead, withValues } from "../db/prepared";
import { subscriptions, webhookDeliveries, webhooks } from "../db/schema";
import type { DomainEventMessage } from "../domain/events";
import { entitlements } from "../domain/plans";
import { auditInsertIfChanged } from "../audit/audit";
import { FIRST_API_VERSION, isApiVersion, type ApiVersion } from "../domain/api-versions";
import { changedFields, type AuditOrigin } from "../domain/audit";
import { payloadFor, subscribes, TEST_EVENT, type WebhookPayload, eventPayload } from "../domain/webhooks";
import { ApiError, notFound, validationError } from "../http/errors";
import { newId } from "../lib/ids";
import { sealSecret } from "../lib/secret-box";
import { DAY, iso, isoOrNull } from "../lib/time";
import type { ListWindow } from "../http/cursor";
import { keysetPage } from "../http/keyset";
import { checkDestination, checkUrlShape, OutboundRefusal, ResolverUnavailable } from "../providers/safe-fetch";
import { type Deps } from "../http/deps";

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/**
 * A Worker run by `npm run dev` (ENVIRONMENT=development) may deliver to a receiver on the same
 * machine (http://127.0.0.1, localhost, [::1]); a deployed one, or the tests, never (issue #41).
 */
export function loopbackReceivers(env: { ENVIRONMENT?: string }): boolean {
  return env.ENVIRONMENT === "development";
}

/** After a rotation, the old secret keeps signing for this long. */
export const ROTATION_OVERLAP_MS = DAY;

export function webhookRecord(w: WebhookRow) {
  return {
    id: w.id,
    organizationId: w.organizationId,
    url: w.url,
    events: w.events,
    description: w.description,
    enabled: w.enabled,
    disabledReason: w.disabledReason,
    includePersonalData: w.includePersonalData,
    apiVersion: webhookVersion(w),
    previousSecretExpiresAt: isoOrNull(w.previousSecret ? w.previousSecretExpiresAt : null),
    createdAt: iso(w.createdAt),
    updatedAt: iso(w.updatedAt),
  };
}

/** The version a subscription's payloads follow: subscriptions made before versions follow the first. */
export function webhookVersion(w: Pick<WebhookRow, "apiVersion">): ApiVersion {
  return w.apiVersion !== null && isApiVersion(w.apiVersion) ? w.apiVersion : FIRST_API_VERSION;
}

/** What the audit log records of a subscription (issue 40): never its secrets. */
const AUDITED_FIELDS = ["url", "events", "description", "enabled", "includePersonalData", "apiVersion"] as const;

function auditedView(w: WebhookRow): Record<string, unknown> {
  return { ...w, apiVersion: webhookVersion(w) };
}

export function deliveryRecord(d: DeliveryRow) {
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    responseStatus: d.responseStatus,
    durationMs: d.durationMs,
    lastError: d.lastError,
    nextAttemptAt: isoOrNull(d.status === "pending" ? d.nextAttemptAt : null),
    redeliveryOf: d.redeliveryOf,
    createdAt: iso(d.createdAt),
    completedAt: isoOrNull(d.completedAt),
  };
}

/** `whsec_` + base64 of 32 random bytes: the Standard Webhooks secret format. */
export function mintWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/**
 * The URL must pass the outbound guard now (shape and DNS), or the subscription is refused. When
 * our own resolver cannot be reached the URL is kept on its shape alone: every delivery checks
 * the address again, which is where it matters, and our outage is not the customer's error.
 */
async function guardedUrl({ env }: Deps, url: string): Promise<string> {
  const options = { loopback: loopbackReceivers(env) };
  try {
    return (await checkDestination(env, url, options)).toString();
  } catch (err) {
    if (err instanceof OutboundRefusal) throw validationError("url", err.reason);
    if (err instanceof ResolverUnavailable) return checkUrlShape(url, options).toString();
    throw err;
  }
}

export async function findWebhook({ db }: Deps, organizationId: string, webhookId: string): Promise<WebhookRow> {
  const row = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, webhookId), eq(webhooks.organizationId, organizationId)))
    .get();
  if (!row) throw notFound("Webhook");
  return row;
}

export interface WebhookInput {
  url: string;
  events: string[];
  description?: string | null;
  enabled?: boolean;
  includePersonalData?: boolean;
  apiVersion?: ApiVersion;
}

/**
 * Creates a subscription within the plan's webhook quota, exactly under concurrency: the
 * insert itself counts the organization's subscriptions and inserts nothing at the limit.
 */
export async function createWebhook(
  deps: Deps,
  organizationId: string,
  input: WebhookInput & { apiVersion: ApiVersion },
  at: number,
  origin: AuditOrigin,
): Promise<{ row: WebhookRow; secret: string }> {
  const { db, env } = deps;
  const url = await guardedUrl(deps, input.url);
  const sub = await database(env.DB).select().from(subscriptions).where(eq(subscriptions.organizationId, organizationId)).get();
  const limit = entitlements(sub ?? { plan: "starter" }).quotas.webhooks;
  const secret = mintWebhookSecret();
  const row: WebhookRow = {
    id: newId("whk"),
    organizationId,
    url,
    events: [...new Set(input.events)],
    description: input.description ?? null,
    enabled: input.enabled ?? true,
    disabledReason: null,
    secret,
    previousSecret: null,
    previousSecretExpiresAt: null,
    retiredSecrets: [],
    failingSince: null,
    createdAt: at,
    updatedAt: at,
    includePersonalData: input.includePersonalData ?? false,
    apiVersion: input.apiVersion,
  };
  const sealed = await sealSecret(env, secret);
  // A conditional INSERT … SELECT: the row comes from the count of the organization's
  // subscriptions, only while the plan allows one more. Drizzle's insert … select names every
  // column of the table, in the schema's order.
  const existing = db
    .select({ n: count().as("n") })
    .from(webhooks)
    .where(eq(webhooks.organizationId, organizationId))
    .as("existing");
  const insert = db.insert(webhooks).select(
    db
      .select({
        id: sql`${row.id}`.as("id"),
        organizationId: sql`${organizationId}`.as("organization_id"),
        url: sql`${url}`.as("url"),
        events: sql`${JSON.stringify(row.events)}`.as("events"),
        description: sql`${row.description}`.as("description"),
        enabled: sql`${row.enabled ? 1 : 0}`.as("enabled"),
        disabledReason: sql`NULL`.as("disabled_reason"),
        secret: sql`${sealed}`.as("secret"),
        previousSecret: sql`NULL`.as("previous_secret"),
        previousSecretExpiresAt: sql`NULL`.as("previous_secret_expires_at"),
        retiredSecrets: sql`'[]'`.as("retired_secrets"),
        failingSince: sql`NULL`.as("failing_since"),
        createdAt: sql`${at}`.as("created_at"),
        updatedAt: sql`${at}`.as("updated_at"),
        includePersonalData: sql`${row.includePersonalData ? 1 : 0}`.as("include_personal_data"),
        apiVersion: sql`${row.apiVersion}`.as("api_version"),
      })
      .from(existing)
      .where(limit === null ? undefined : lt(existing.n, limit)),
  );
  const change = { organizationId, entityType: "webhook", entityId: row.id, action: "webhook.created" as const };
  const [result] = await db.batch([
    insert,
    auditInsertIfChanged(deps, origin, { ...change, changes: changedFields(null, auditedView(row), AUDITED_FIELDS) }, at),
  ]);
  if (result.meta.changes === 0) {
    throw new ApiError("QUOTA_EXCEEDED", `The plan allows ${limit} webhook subscription${limit === 1 ? "" : "s"}`, {
      limit,
      used: limit,
      resetsAt: null,
    });
  }
  return { row, secret };
}

export async function listWebhooks({ db }: Deps, organizationId: string, window: ListWindow) {
  const where = eq(webhooks.organizationId, organizationId);
  const [page, total] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: webhooks,
        cursorColumn: webhooks.id,
        owner: where,
        where,
        keys: [
          { column: webhooks.createdAt, direction: "desc" },
          { column: webhooks.id, direction: "asc" },
        ],
      },
      (q) =>
        db
          .select()
          .from(webhooks)
          .where(q.where)
          .orderBy(...q.orderBy)
          .limit(q.limit)
          .offset(q.offset)
          .all(),
    ),
    db.select({ n: count() }).from(webhooks).where(where).get(),
  ]);
  return { ...page, total: total?.n ?? 0 };
}

export async function updateWebhook(
  deps: Deps,
  organizationId: string,
  webhookId: string,
  patch: Partial<WebhookInput>,
  at: number,
  origin: AuditOrigin,
): Promise<WebhookRow> {
  const { db } = deps;
  const before = await findWebhook(deps, organizationId, webhookId);
  const set: Partial<WebhookRow> = { updatedAt: at };
  if (patch.url !== undefined) set.url = await guardedUrl(deps, patch.url);
  if (patch.events !== undefined) set.events = [...new Set(patch.events)];
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.enabled !== undefined) {
    set.enabled = patch.enabled;
    // Turning a subscription back on starts its failure count afresh.
    if (patch.enabled) Object.assign(set, { disabledReason: null, failingSince: null });
  }
  if (patch.includePersonalData !== undefined) set.includePersonalData = patch.includePersonalData;
  if (patch.apiVersion !== undefined) set.apiVersion = patch.apiVersion;
  const changes = changedFields(auditedView(before), auditedView({ ...before, ...set }), AUDITED_FIELDS);
  const [rows] = await db.batch([
    db
      .update(webhooks)
      .set(set)
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.organizationId, organizationId)))
      .returning(),
    auditInsertIfChanged(
      deps,
      origin,
      { organizationId, entityType: "webhook", entityId: webhookId, action: "webhook.updated", changes },
      at,
    ),
  ]);
  const row = rows[0];
  if (!row) throw notFound("Webhook");
  return row;
}

export async function deleteWebhook(
  deps: Deps,
  organizationId: string,
  webhookId: string,
  at: number,
  origin: AuditOrigin,
): Promise<WebhookRow> {
  const { db } = deps;
  const [rows] = await db.batch([
    db
      .delete(webhooks)
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.organizationId, organizationId)))
      .returning(),
    auditInsertIfChanged(deps, origin, { organizationId, entityType: "webhook", entityId: webhookId, action: "webhook.deleted" }, at),
  ]);
  const row = rows[0];
  if (!row) throw notFound("Webhook");
  return row;
}

/** A new secret; the one it replaces keeps signing for 24 h so receivers can switch without a gap. */
export async function rotateWebhookSecret(
  deps: Deps,
  organizationId: string,
  webhookId: string,
  at: number,
  origin: AuditOrigin,
): Promise<{ row: WebhookRow; secret: string }> {
  const { db, env } = deps;
  const current = await findWebhook(deps, organizationId, webhookId);
  const secret = mintWebhookSecret();
  // Every secret younger than 24 h keeps signing (issue 26): the one being replaced, and the
  // earlier ones still inside their overlap.
  const retiredSecrets = [
    ...(current.previousSecret && (current.previousSecretExpiresAt ?? 0) > at
      ? [{ secret: current.previousSecret, expiresAt: current.previousSecretExpiresAt! }]
      : []),
    ...(current.retiredSecrets ?? []).filter((r) => r.expiresAt > at),
  ];
  const [rows] = await db.batch([
    db
      .update(webhooks)
      .set({
        secret: await sealSecret(env, secret),
        previousSecret: current.secret,
        previousSecretExpiresAt: at + ROTATION_OVERLAP_MS,
        retiredSecrets,
        updatedAt: at,
      })
      .where(and(eq(webhooks.id, webhookId), eq(webhooks.organizationId, organizationId), eq(webhooks.secret, current.secret)))
      .returning(),
    auditInsertIfChanged(
      deps,
      origin,
      {
        organizationId,
        entityType: "webhook",
        entityId: webhookId,
        action: "webhook.secret_rotated",
        changes: changedFields({ secret: 1 }, { secret: 2 }, ["secret"]),
      },
      at,
    ),
  ]);
  const row = rows[0];
  if (!row) throw new ApiError("CONFLICT", "The secret was rotated at the same moment; try again", { field: "secret" });
  return { row, secret };
}

export async function listDeliveries(deps: Deps, organizationId: string, webhookId: string, window: ListWindow) {
  const { db } = deps;
  await findWebhook(deps, organizationId, webhookId);
  const where = eq(webhookDeliveries.webhookId, webhookId);
  const [page, total] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: webhookDeliveries,
        cursorColumn: webhookDeliveries.id,
        owner: where,
        where,
        keys: [
          { column: webhookDeliveries.createdAt, direction: "desc" },
          { column: webhookDeliveries.id, direction: "desc" },
        ],
      },
      (q) =>
        db
          .select()
          .from(webhookDeliveries)
          .where(q.where)
          .orderBy(...q.orderBy)
          .limit(q.limit)
          .offset(q.offset)
          .all(),
    ),
    db.select({ n: count() }).from(webhookDeliveries).where(where).get(),
  ]);
  return { ...page, total: total?.n ?? 0 };
}

function newDelivery(webhook: WebhookRow, payload: WebhookPayload, at: number, redeliveryOf: string | null): DeliveryRow {
  return {
    id: newId("dlv"),
    webhookId: webhook.id,
    organizationId: webhook.organizationId,
    eventId: payload.id,
    eventType: payload.type,
    payload: JSON.stringify(payload),
    status: "pending",
    attempts: 0,
    responseStatus: null,
    durationMs: null,
    lastError: null,
    nextAttemptAt: at,
    leaseUntil: null,
    redeliveryOf,
    createdAt: at,
    updatedAt: at,
    completedAt: null,
  };
}

/** Sends the same event again as a new delivery (same body and `webhook-id`, new attempts). */
export async function redeliver(
  deps: Deps,
  organizationId: string,
  webhookId: string,
  deliveryId: string,
  at: number,
): Promise<DeliveryRow> {
  const { db, env } = deps;
  const webhook = await findWebhook(deps, organizationId, webhookId);
  const original = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId)))
    .get();
  if (!original) throw notFound("Delivery");
  const row: DeliveryRow = {
    ...newDelivery(webhook, { id: original.eventId, type: original.eventType } as WebhookPayload, at, original.id),
    payload: original.payload,
  };
  await db.insert(webhookDeliveries).values(row);
  await env.WEBHOOKS.send({ deliveryId: row.id });
  return row;
}

/** A `webhook.test` event sent to this subscription only, enabled or not. */
export async function sendTestEvent(deps: Deps, organizationId: string, webhookId: string, at: number): Promise<DeliveryRow> {
  const { db, env } = deps;
  const webhook = await findWebhook(deps, organizationId, webhookId);
  const payload: WebhookPayload = {
    id: newId("evt"),
    type: TEST_EVENT,
    createdAt: iso(at),
    organizationId,
    data: { webhookId, message: "A test event: your endpoint is reachable and checks signatures." },
  };
  const row = newDelivery(webhook, payload, at, null);
  await db.insert(webhookDeliveries).values(row);
  await env.WEBHOOKS.send({ deliveryId: row.id });
  return row;
}

/** Events, organizations or deliveries named in one statement: well below D1's 100 bound values. */
const FAN_OUT_CHUNK = 50;

/**
 * The enabled subscriptions of the organizations named by a JSON array: built and prepared once
 * per isolate (issue 43: the EVENTS consumer built this select through Drizzle for every batch).
 */
const enabledSubscriptionsRead = preparedRead(["organizationIds"], (db, p) =>
  db
    .select()
    .from(webhooks)
    .where(
      and(
        inArray(webhooks.organizationId, db.select({ id: sql`value` }).from(sql`json_each(${p.organizationIds})`)),
        eq(webhooks.enabled, true),
      ),
    )
    .prepare(),
);

/**
 * Fan-out of a batch of domain events to their organizations' enabled subscriptions for each
 * event's type. The subscriptions of every organization in the batch are read once (not once
 * per event: a batch of joins is one read), the deliveries inserted in one D1 batch, read back
 * and queued together. Safe to run again for the same events (the EVENTS queue is at least
 * once): the (event, subscription) row is unique, and a delivery not yet attempted is queued
 * again in case the first run stopped between the insert and the send (two copies never both
 * send: the consumer leases the row). Answers the number of deliveries queued.
 */
export async function fanOutEvents({ db, env }: Deps, events: readonly DomainEventMessage[], at: number): Promise<number> {
  if (events.length === 0) return 0;
  const organizationIds = [...new Set(events.map((e) => e.organizationId))];
  const subscribed = new Map<string, WebhookRow[]>();
  const [enabled] = await batchReads(env.DB, [withValues(enabledSubscriptionsRead, { organizationIds: JSON.stringify(organizationIds) })]);
  for (const w of enabled) subscribed.set(w.organizationId, [...(subscribed.get(w.organizationId) ?? []), w]);
  const rows: DeliveryRow[] = [];
  const fannedOut: DomainEventMessage[] = [];
  for (const event of events) {
    const targets = (subscribed.get(event.organizationId) ?? []).filter((w) => subscribes(w.events, event.type));
    if (targets.length === 0) continue;
    fannedOut.push(event);
    const payload = eventPayload(event);
    // Each subscription gets the payload of its own version and opt-in (issue 40).
    for (const w of targets)
      rows.push(newDelivery(w, payloadFor(payload, { version: webhookVersion(w), personalData: w.includePersonalData }), at, null));
  }
  const inserts = nonEmpty(rows.map((r) => db.insert(webhookDeliveries).values(r).onConflictDoNothing()));
  if (!inserts) return 0;
  await db.batch(inserts);
  let queued = 0;
  for (const group of chunk(fannedOut, FAN_OUT_CHUNK)) {
    const unsent = await db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        and(
          inArray(
            webhookDeliveries.eventId,
            group.map((e) => e.id),
          ),
          isNull(webhookDeliveries.redeliveryOf),
          eq(webhookDeliveries.status, "pending"),
          eq(webhookDeliveries.attempts, 0),
        ),
      );
    // An event id is ours (evt_ + random), so it names one organization's deliveries only.
    for (const ids of chunk(unsent, 100)) await env.WEBHOOKS.sendBatch(ids.map((r) => ({ body: { deliveryId: r.id } })));
    queued += unsent.length;
  }
  return queued;
}
