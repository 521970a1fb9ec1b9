import { and, eq, isNull, lte, or, sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { usageCounters, webhookDeliveries, webhooks } from "../db/schema";
import { FAILING_DISABLE_MS, RETRY_WINDOW_MS, retryDelaySeconds, type WebhookDeliveryMessage } from "../domain/webhooks";
import type { Env } from "../env";
import { openSecret } from "../lib/secret-box";
import { now } from "../lib/clock";
import { utcMonth } from "../lib/time";
import { OutboundFailure, OutboundRefusal, safeFetch } from "../providers/safe-fetch";
import { type DeliveryRow, loopbackReceivers, type WebhookRow } from "../webhooks";
import { type Deps, depsOf } from "../http/deps";

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
        const outcome = await attemptDelivery(depsOf(env), message.body.deliveryId, now(), Math.random());
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

function deliveries({ db }: Deps) {
  return db;
}

/** Takes the delivery for LEASE_MS if it is pending, not held and due; null otherwise. */
async function claim(deps: Deps, deliveryId: string, at: number): Promise<DeliveryRow | null> {
  const [row] = await deliveries(deps)
    .update(webhookDeliveries)
    .set({ leaseUntil: at + LEASE_MS, updatedAt: at })
    .where(
      and(
        eq(webhookDeliveries.id, deliveryId),
        eq(webhookDeliveries.status, "pending"),
        or(isNull(webhookDeliveries.leaseUntil), lte(webhookDeliveries.leaseUntil, at)),
        or(isNull(webhookDeliveries.nextAttemptAt), lte(webhookDeliveries.nextAttemptAt, at)),
      ),
    )
    .returning();
  return row ?? null;
}

/** The subscription with its secrets opened (stored sealed, src/lib/secret-box.ts), only to sign. */
async function loadWebhook(deps: Deps, webhookId: string): Promise<WebhookRow | null> {
  const { env } = deps;
  const [r] = await deliveries(deps).select().from(webhooks).where(eq(webhooks.id, webhookId));
  if (!r) return null;
  return {
    ...r,
    secret: await openSecret(env, r.secret),
    previousSecret: r.previousSecret === null ? null : await openSecret(env, r.previousSecret),
    retiredSecrets: await Promise.all(
      r.retiredSecrets.map(async (x) => ({ secret: await openSecret(env, x.secret), expiresAt: x.expiresAt })),
    ),
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
export async function attemptDelivery(deps: Deps, deliveryId: string, at: number, jitter: number): Promise<Outcome> {
  const delivery = await claim(deps, deliveryId, at);
  if (!delivery) {
    const [row] = await deliveries(deps)
      .select({
        status: webhookDeliveries.status,
        nextAttemptAt: webhookDeliveries.nextAttemptAt,
        leaseUntil: webhookDeliveries.leaseUntil,
      })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, deliveryId));
    // A copy that came back before its time waits for it; anything else is a duplicate.
    if (row?.status === "pending" && row.nextAttemptAt !== null && row.nextAttemptAt > at && (row.leaseUntil ?? 0) <= at) {
      return { kind: "retry", delaySeconds: Math.ceil((row.nextAttemptAt - at) / 1000) };
    }
    return { kind: "done" };
  }
  const webhook = await loadWebhook(deps, delivery.webhookId);
  if (!webhook || !webhook.enabled) {
    const reason = webhook?.disabledReason ? `the subscription is disabled: ${webhook.disabledReason}` : "the subscription is disabled";
    await finish(deps, delivery, "failed", { responseStatus: null, durationMs: null, error: reason }, at, false);
    return { kind: "done" };
  }
  const attempt = await send(deps, webhook, delivery, at);
  if (attempt.responseStatus !== null && attempt.responseStatus >= 200 && attempt.responseStatus < 300) {
    await finish(deps, delivery, "succeeded", attempt, at, true);
    if (webhook.failingSince !== null)
      await deliveries(deps).update(webhooks).set({ failingSince: null }).where(eq(webhooks.id, webhook.id));
    return { kind: "done" };
  }
  await noteFailure(deps, webhook, attempt, at);
  const delaySeconds = retryDelaySeconds(delivery.attempts + 1, jitter);
  if (at + delaySeconds * 1000 > delivery.createdAt + RETRY_WINDOW_MS) {
    await finish(deps, delivery, "failed", attempt, at, true);
    return { kind: "done" };
  }
  await deliveries(deps)
    .update(webhookDeliveries)
    .set({
      attempts: sql`${webhookDeliveries.attempts} + 1`,
      responseStatus: attempt.responseStatus,
      durationMs: attempt.durationMs,
      lastError: attempt.error,
      nextAttemptAt: at + delaySeconds * 1000,
      leaseUntil: null,
      updatedAt: at,
    })
    .where(heldBy(delivery));
  return { kind: "retry", delaySeconds };
}

async function send({ env }: Deps, webhook: WebhookRow, delivery: DeliveryRow, at: number): Promise<Attempt> {
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
  deps: Deps,
  delivery: DeliveryRow,
  status: "succeeded" | "failed",
  attempt: Attempt,
  at: number,
  attempted: boolean,
): Promise<void> {
  const db = deliveries(deps);
  // The count first, on the condition that this consumer still holds the delivery; then the close.
  await db.batch([
    db
      .insert(usageCounters)
      .select(
        db
          .select({
            organizationId: sql<string>`${delivery.organizationId}`.as("organization_id"),
            period: sql<string>`${utcMonth(at).key}`.as("period"),
            metric: sql<"webhook_deliveries">`'webhook_deliveries'`.as("metric"),
            used: sql<number>`1`.as("used"),
          })
          .from(webhookDeliveries)
          .where(and(heldBy(delivery), eq(webhookDeliveries.status, "pending"))),
      )
      .onConflictDoUpdate({
        target: [usageCounters.organizationId, usageCounters.period, usageCounters.metric],
        set: { used: sql`${usageCounters.used} + 1` },
      }),
    db
      .update(webhookDeliveries)
      .set({
        status,
        attempts: sql`${webhookDeliveries.attempts} + ${attempted ? 1 : 0}`,
        responseStatus: attempt.responseStatus,
        durationMs: attempt.durationMs,
        lastError: attempt.error,
        leaseUntil: null,
        nextAttemptAt: null,
        completedAt: at,
        updatedAt: at,
      })
      .where(heldBy(delivery)),
  ]);
}

/** The delivery while this consumer's lease on it stands: every write after the send is guarded by it. */
function heldBy(delivery: DeliveryRow) {
  return and(
    eq(webhookDeliveries.id, delivery.id),
    delivery.leaseUntil === null ? isNull(webhookDeliveries.leaseUntil) : eq(webhookDeliveries.leaseUntil, delivery.leaseUntil),
  );
}

/** Every failed attempt extends the subscription's failing streak; 3 days of it disables it. */
async function noteFailure(deps: Deps, webhook: WebhookRow, attempt: Attempt, at: number): Promise<void> {
  const since = webhook.failingSince ?? at;
  if (at - since >= FAILING_DISABLE_MS) {
    const reason = `Every delivery failed for 3 days (last: ${attempt.error ?? "no answer"}); fix the endpoint, then enable the subscription again`;
    await deliveries(deps)
      .update(webhooks)
      .set({ enabled: false, disabledReason: reason, updatedAt: at })
      .where(and(eq(webhooks.id, webhook.id), eq(webhooks.enabled, true)));
    return;
  }
  if (webhook.failingSince === null) {
    await deliveries(deps)
      .update(webhooks)
      .set({ failingSince: at })
      .where(and(eq(webhooks.id, webhook.id), isNull(webhooks.failingSince)));
  }
}
