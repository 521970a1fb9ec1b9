import type { Env } from "../env";
import { now } from "../lib/clock";
import { isMeteredChannel } from "../domain/deliveries";
import {
  deliver,
  fellBack,
  outcomeStatements,
  retryDelaySeconds,
  sendOne,
  smsFallbackOf,
  type Channel,
  type Delivery,
  type Target,
} from "../notifications";

export type { DeliveryMessage } from "../notifications";
import type { DeliveryMessage } from "../notifications";

// The NOTIFICATIONS queue: one message per push/SMS/web push delivery whose provider failed
// for a reason that may pass (5xx, 429, network). Each attempt re-reads the delivery row, so a
// delivery that succeeded meanwhile is not sent again; after max_retries (wrangler.toml) the
// message goes to the dead-letter queue, whose consumer marks the row `dead_lettered`.

export const NOTIFICATIONS_QUEUE = "queue-service-notifications";
export const NOTIFICATIONS_DLQ = "queue-service-notifications-dlq";

interface Row {
  key: string;
  event_id: string;
  type: string;
  organization_id: string | null;
  channel: Channel;
  status: string;
  attempts: number;
  payload: string;
}

export async function consumeDeliveries(batch: MessageBatch<DeliveryMessage>, env: Env): Promise<void> {
  const keys = batch.messages.map((m) => m.body.key);
  const rows = await env.DB.prepare(
    `SELECT key, event_id, type, organization_id, channel, status, attempts, payload FROM notification_deliveries WHERE key IN (${keys.map(() => "?").join(", ")})`,
  )
    .bind(...keys)
    .all<Row>();
  const byKey = new Map(rows.results.map((r) => [r.key, r]));
  const at = now();
  const writes: D1PreparedStatement[] = [];
  const fallbacks: Delivery[] = [];
  await Promise.all(
    batch.messages.map(async (message) => {
      const row = byKey.get(message.body.key);
      if (!row || (row.status !== "retrying" && row.status !== "pending")) {
        message.ack();
        return;
      }
      const payload = JSON.parse(row.payload) as { target: Target; title: string; body: string; data: Record<string, string> };
      let outcome = await sendOne(env, row.channel, payload, row.organization_id, row.key);
      // A WhatsApp message that still does not go falls back to SMS (its unit held for it).
      const fallback = smsFallbackOf(
        { ...payload, eventId: row.event_id, organizationId: row.organization_id, type: row.type, channel: row.channel },
        outcome,
      );
      if (fallback) {
        fallbacks.push(fallback);
        outcome = fellBack(outcome);
      }
      const counted = isMeteredChannel(row.channel) && !fallback;
      writes.push(...outcomeStatements(env, row.key, row.channel, payload.target, outcome, at, row.organization_id, counted));
      if (!outcome.ok && outcome.transient) message.retry({ delaySeconds: retryDelaySeconds(message.attempts + 1) });
      else message.ack();
    }),
  );
  if (writes.length > 0) await env.DB.batch(writes);
  if (fallbacks.length > 0) await deliver(env, fallbacks, at);
}

/** Dead letters become a visible record: the delivery row, `dead_lettered`, with the last answer. */
export async function consumeDeadDeliveries(batch: MessageBatch<DeliveryMessage>, env: Env): Promise<void> {
  const at = now();
  await env.DB.batch(
    batch.messages.map((m) =>
      env.DB.prepare(
        "UPDATE notification_deliveries SET status = 'dead_lettered', updated_at = ? WHERE key = ? AND status IN ('pending', 'retrying')",
      ).bind(at, m.body.key),
    ),
  );
  for (const m of batch.messages) console.error(JSON.stringify({ notification: "dead_lettered", key: m.body.key }));
  for (const m of batch.messages) m.ack();
}
