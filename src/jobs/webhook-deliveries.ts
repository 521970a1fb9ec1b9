import { Webhook } from "standardwebhooks";
import { FAILING_DISABLE_MS, RETRY_WINDOW_MS, retryDelaySeconds, type WebhookDeliveryMessage } from "../domain/webhooks";
import type { Env } from "../env";
import { openSecret } from "../lib/secret-box";
import { now } from "../lib/clock";
import { utcMonth } from "../lib/time";
import { OutboundFailure, OutboundRefusal, safeFetch } from "../providers/safe-fetch";
import { type DeliveryRow, loopbackReceivers, type WebhookRow } from "../webhooks";

/** The queue's name as Queues reports it in `batch.queue` (wrangler.toml). */
export const WEBHOOKS_QUEUE = "queue-service-webhooks";

/** How long one consumer holds a delivery while sending it (the exchange itself is cut at 5 s). */
const LEASE_MS = 30_000;

type Outcome = { kind: "done" } | { kind: "retry"; delaySeconds: number };

/**
 * The WEBHOOKS queue consumer: each message is one delivery, acknowledged once it succeeded
 * or failed for good, otherwise retried with its own growing delay. A message that arrives
 * again (at least once) finds its delivery finished or leased and sends nothing.
 */
export async function consumeWebhookDeliveries(batch: MessageBatch<WebhookDeliveryMessage>, env: Env): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      try {
        const outcome = await attemptDelivery(env, message.body.deliveryId, now(), Math.random());
        if (outcome.kind === "retry") message.retry({ delaySeconds: outcome.delaySeconds });
        else message.ack();
      } catch (err) {
        console.error(JSON.stringify({ webhookDelivery: message.body.deliveryId, error: String(err) }));
        message.retry({ delaySeconds: retryDelaySeconds(1, Math.random()) });
      }
    }),
  );
}

/** Standard Webhooks signatures: the current secret, plus every replaced one younger than 24 h. */
export function signatureHeader(webhook: WebhookRow, id: string, at: number, body: string): string {
  const secrets = [webhook.secret];
  if (webhook.previousSecret && (webhook.previousSecretExpiresAt ?? 0) > at) secrets.push(webhook.previousSecret);
  for (const r of webhook.retiredSecrets ?? []) if (r.expiresAt > at) secrets.push(r.secret);
  const timestamp = new Date(Math.floor(at / 1000) * 1000);
  return secrets.map((s) => new Webhook(s).sign(id, timestamp, body)).join(" ");
}

async function claim(env: Env, deliveryId: string, at: number): Promise<DeliveryRow | null> {
  return env.DB.prepare(
    `UPDATE webhook_deliveries SET lease_until = ?, updated_at = ?
     WHERE id = ? AND status = 'pending' AND (lease_until IS NULL OR lease_until <= ?) AND (next_attempt_at IS NULL OR next_attempt_at <= ?)
     RETURNING *`,
  )
    .bind(at + LEASE_MS, at, deliveryId, at, at)
    .first<Record<string, unknown>>()
    .then((r) => (r ? toDelivery(r) : null));
}

function toDelivery(r: Record<string, unknown>): DeliveryRow {
  return {
    id: r.id as string,
    webhookId: r.webhook_id as string,
    organizationId: r.organization_id as string,
    eventId: r.event_id as string,
    eventType: r.event_type as string,
    payload: r.payload as string,
    status: r.status as DeliveryRow["status"],
    attempts: r.attempts as number,
    responseStatus: r.response_status as number | null,
    durationMs: r.duration_ms as number | null,
    lastError: r.last_error as string | null,
    nextAttemptAt: r.next_attempt_at as number | null,
    leaseUntil: r.lease_until as number | null,
    redeliveryOf: r.redelivery_of as string | null,
    createdAt: r.created_at as number,
    updatedAt: r.updated_at as number,
    completedAt: r.completed_at as number | null,
  };
}

async function loadWebhook(env: Env, webhookId: string): Promise<WebhookRow | null> {
  const r = await env.DB.prepare("SELECT * FROM webhooks WHERE id = ?").bind(webhookId).first<Record<string, unknown>>();
  if (!r) return null;
  return {
    id: r.id as string,
    organizationId: r.organization_id as string,
    url: r.url as string,
    events: JSON.parse(r.events as string) as string[],
    description: r.description as string | null,
    enabled: Boolean(r.enabled),
    disabledReason: r.disabled_reason as string | null,
    // Stored sealed (src/lib/secret-box.ts); opened here, only to sign.
    secret: await openSecret(env, r.secret as string),
    previousSecret: r.previous_secret === null ? null : await openSecret(env, r.previous_secret as string),
    previousSecretExpiresAt: r.previous_secret_expires_at as number | null,
    retiredSecrets: await Promise.all(
      (JSON.parse((r.retired_secrets as string | undefined) ?? "[]") as { secret: string; expiresAt: number }[]).map(async (x) => ({
        secret: await openSecret(env, x.secret),
        expiresAt: x.expiresAt,
      })),
    ),
    failingSince: r.failing_since as number | null,
    includePersonalData: Boolean(r.include_personal_data),
    apiVersion: r.api_version as string | null,
    createdAt: r.created_at as number,
    updatedAt: r.updated_at as number,
  };
}

interface Attempt {
  responseStatus: number | null;
  durationMs: number | null;
  error: string | null;
}

/**
 * One attempt at one delivery, at `at`. Returns whether the message is done or must come back
 * after a delay. Exported for the tests of the retry schedule (they move the clock).
 */
export async function attemptDelivery(env: Env, deliveryId: string, at: number, jitter: number): Promise<Outcome> {
  const delivery = await claim(env, deliveryId, at);
  if (!delivery) {
    const row = await env.DB.prepare("SELECT status, next_attempt_at, lease_until FROM webhook_deliveries WHERE id = ?")
      .bind(deliveryId)
      .first<{ status: string; next_attempt_at: number | null; lease_until: number | null }>();
    // A copy that came back before its time waits for it; anything else is a duplicate.
    if (row?.status === "pending" && row.next_attempt_at !== null && row.next_attempt_at > at && (row.lease_until ?? 0) <= at) {
      return { kind: "retry", delaySeconds: Math.ceil((row.next_attempt_at - at) / 1000) };
    }
    return { kind: "done" };
  }
  const webhook = await loadWebhook(env, delivery.webhookId);
  if (!webhook || !webhook.enabled) {
    const reason = webhook?.disabledReason ? `the subscription is disabled: ${webhook.disabledReason}` : "the subscription is disabled";
    await finish(env, delivery, "failed", { responseStatus: null, durationMs: null, error: reason }, at, false);
    return { kind: "done" };
  }
  const attempt = await send(env, webhook, delivery, at);
  if (attempt.responseStatus !== null && attempt.responseStatus >= 200 && attempt.responseStatus < 300) {
    await finish(env, delivery, "succeeded", attempt, at, true);
    if (webhook.failingSince !== null) await env.DB.prepare("UPDATE webhooks SET failing_since = NULL WHERE id = ?").bind(webhook.id).run();
    return { kind: "done" };
  }
  await noteFailure(env, webhook, attempt, at);
  const delaySeconds = retryDelaySeconds(delivery.attempts + 1, jitter);
  if (at + delaySeconds * 1000 > delivery.createdAt + RETRY_WINDOW_MS) {
    await finish(env, delivery, "failed", attempt, at, true);
    return { kind: "done" };
  }
  await env.DB.prepare(
    `UPDATE webhook_deliveries SET attempts = attempts + 1, response_status = ?, duration_ms = ?, last_error = ?,
       next_attempt_at = ?, lease_until = NULL, updated_at = ?
     WHERE id = ? AND lease_until = ?`,
  )
    .bind(attempt.responseStatus, attempt.durationMs, attempt.error, at + delaySeconds * 1000, at, delivery.id, delivery.leaseUntil)
    .run();
  return { kind: "retry", delaySeconds };
}

async function send(env: Env, webhook: WebhookRow, delivery: DeliveryRow, at: number): Promise<Attempt> {
  const headers = {
    "Content-Type": "application/json",
    "User-Agent": "queue-service-webhooks/1",
    "webhook-id": delivery.eventId,
    "webhook-timestamp": String(Math.floor(at / 1000)),
    "webhook-signature": signatureHeader(webhook, delivery.eventId, at, delivery.payload),
  };
  try {
    const res = await safeFetch(env, webhook.url, {
      method: "POST",
      headers,
      body: delivery.payload,
      loopback: loopbackReceivers(env),
    });
    return { responseStatus: res.status, durationMs: res.durationMs, error: res.status >= 300 ? `HTTP ${res.status}` : null };
  } catch (err) {
    if (err instanceof OutboundRefusal) return { responseStatus: null, durationMs: null, error: `refused: ${err.reason}` };
    if (err instanceof OutboundFailure) return { responseStatus: null, durationMs: null, error: err.reason };
    throw err;
  }
}

/**
 * Closes the delivery, while this consumer still holds it; a finished attempt counts once in
 * the period's webhook usage, in the same atomic batch.
 */
async function finish(
  env: Env,
  delivery: DeliveryRow,
  status: "succeeded" | "failed",
  attempt: Attempt,
  at: number,
  attempted: boolean,
): Promise<void> {
  const held = "EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = ? AND status = 'pending' AND lease_until = ?)";
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO usage_counters (organization_id, period, metric, used)
       SELECT ?, ?, 'webhook_deliveries', 1 WHERE ${held}
       ON CONFLICT (organization_id, period, metric) DO UPDATE SET used = used + 1`,
    ).bind(delivery.organizationId, utcMonth(at).key, delivery.id, delivery.leaseUntil),
    env.DB.prepare(
      `UPDATE webhook_deliveries SET status = ?, attempts = attempts + ?, response_status = ?, duration_ms = ?, last_error = ?,
         lease_until = NULL, next_attempt_at = NULL, completed_at = ?, updated_at = ?
       WHERE id = ? AND lease_until = ?`,
    ).bind(status, attempted ? 1 : 0, attempt.responseStatus, attempt.durationMs, attempt.error, at, at, delivery.id, delivery.leaseUntil),
  ]);
}

/** Every failed attempt extends the subscription's failing streak; 3 days of it disables it. */
async function noteFailure(env: Env, webhook: WebhookRow, attempt: Attempt, at: number): Promise<void> {
  const since = webhook.failingSince ?? at;
  if (at - since >= FAILING_DISABLE_MS) {
    const reason = `Every delivery failed for 3 days (last: ${attempt.error ?? "no answer"}); fix the endpoint, then enable the subscription again`;
    await env.DB.prepare("UPDATE webhooks SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ? AND enabled = 1")
      .bind(reason, at, webhook.id)
      .run();
    return;
  }
  if (webhook.failingSince === null) {
    await env.DB.prepare("UPDATE webhooks SET failing_since = ? WHERE id = ? AND failing_since IS NULL").bind(at, webhook.id).run();
  }
}
