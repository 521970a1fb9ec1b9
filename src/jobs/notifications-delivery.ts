import { and, eq, inArray } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { database, nonEmpty } from "../db/client";
import { notificationDeliveries } from "../db/schema";
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
  type Delivery,
  type Target,
} from "../notifications";

export type { DeliveryMessage } from "../notifications";
import type { DeliveryMessage } from "../notifications";
import { depsOf } from "../http/deps";

// The NOTIFICATIONS queue: one message per push/SMS/web push delivery whose provider failed
// for a reason that may pass (5xx, 429, network). Each attempt re-reads the delivery row, so a
// delivery that succeeded meanwhile is not sent again; after max_retries (wrangler.toml) the
// message goes to the dead-letter queue, whose consumer marks the row `dead_lettered`.

export const NOTIFICATIONS_QUEUE = "queue-service-notifications";
export const NOTIFICATIONS_DLQ = "queue-service-notifications-dlq";

export async function consumeDeliveries(batch: MessageBatch<DeliveryMessage>, env: Env): Promise<void> {
  const keys = batch.messages.map((m) => m.body.key);
  const deps = depsOf(env);
  const { db } = deps;
  const rows = await db
    .select({
      key: notificationDeliveries.key,
      eventId: notificationDeliveries.eventId,
      type: notificationDeliveries.type,
      organizationId: notificationDeliveries.organizationId,
      channel: notificationDeliveries.channel,
      status: notificationDeliveries.status,
      attempts: notificationDeliveries.attempts,
      payload: notificationDeliveries.payload,
    })
    .from(notificationDeliveries)
    .where(inArray(notificationDeliveries.key, keys));
  const byKey = new Map(rows.map((r) => [r.key, r]));
  const at = now();
  const writes: BatchItem<"sqlite">[] = [];
  const fallbacks: Delivery[] = [];
  await Promise.all(
    batch.messages.map(async (message) => {
      const row = byKey.get(message.body.key);
      // (A row of channel `event` is a dead-lettered domain event, never a message of this queue.)
      if (!row || row.channel === "event" || (row.status !== "retrying" && row.status !== "pending")) {
        message.ack();
        return;
      }
      const payload = JSON.parse(row.payload) as { target: Target; title: string; body: string; data: Record<string, string> };
      let outcome = await sendOne(deps, row.channel, payload, row.organizationId, row.key);
      // A WhatsApp message that still does not go falls back to SMS (its unit held for it).
      const fallback = smsFallbackOf(
        { ...payload, eventId: row.eventId, organizationId: row.organizationId, type: row.type, channel: row.channel },
        outcome,
      );
      if (fallback) {
        fallbacks.push(fallback);
        outcome = fellBack(outcome);
      }
      const counted = isMeteredChannel(row.channel) && !fallback;
      writes.push(...outcomeStatements(deps, row.key, row.channel, payload.target, outcome, at, row.organizationId, counted));
      if (!outcome.ok && outcome.transient) message.retry({ delaySeconds: retryDelaySeconds(message.attempts + 1) });
      else message.ack();
    }),
  );
  const settled = nonEmpty(writes);
  if (settled) await db.batch(settled);
  if (fallbacks.length > 0) await deliver(deps, fallbacks, at);
}

/** Dead letters become a visible record: the delivery row, `dead_lettered`, with the last answer. */
export async function consumeDeadDeliveries(batch: MessageBatch<DeliveryMessage>, env: Env): Promise<void> {
  const at = now();
  const db = database(env.DB);
  const marks = nonEmpty(
    batch.messages.map((m) =>
      db
        .update(notificationDeliveries)
        .set({ status: "dead_lettered", updatedAt: at })
        .where(and(eq(notificationDeliveries.key, m.body.key), inArray(notificationDeliveries.status, ["pending", "retrying"]))),
    ),
  );
  if (marks) await db.batch(marks);
  for (const m of batch.messages) console.error(JSON.stringify({ notification: "dead_lettered", key: m.body.key }));
  for (const m of batch.messages) m.ack();
}
