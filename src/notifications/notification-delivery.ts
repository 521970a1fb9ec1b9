import { and, eq, gt, lt, notExists, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { nonEmpty } from "../db/client";
import { batchWrites, preparedWrite, withValues } from "../db/prepared";
import { notificationDeliveries, notifications, pushDevices, usageCounters, users, visitorPushSubscriptions } from "../db/schema";
import { smsText } from "../domain/message-templates";
import { isTwinOrganizationId, newId } from "../lib/ids";
import { outboxSend } from "../providers";
import { utcMonth } from "../lib/time";
import { now } from "../lib/clock";
import { sendPush, sendSms, sendWebPush, type SendOutcome } from "../providers";
import { gatePublicSms } from "./sms-guard";
import { sendWhatsappDelivery } from "./whatsapp";
import { isMeteredChannel } from "../domain/deliveries";

// Delivering notifications exactly once to the person, from an at-least-once queue.
// Every delivery has a key (event id, channel, recipient). The first run that inserts the key
// owns the send; a redelivered event finds the key and sends nothing again. A run that died
// between claiming and sending leaves a `pending` row that a later redelivery reclaims once it
// is older than STALE_CLAIM_MS. Failures that may pass are retried on the NOTIFICATIONS queue.

export type { Channel, Delivery, Target } from "../domain/deliveries";
import type { Channel, Delivery, Target } from "../domain/deliveries";

/** What a retry message carries: the delivery row holds everything else. */
export type { DeliveryMessage } from "../domain/deliveries";
import type { DeliveryMessage } from "../domain/deliveries";
import { type Deps } from "../http/deps";

export interface DeliveryReport {
  inApp: number;
  sent: number;
  retrying: number;
  failed: number;
}

const STALE_CLAIM_MS = 60_000;
const SEND_PARALLEL = 10;

export function recipientOf(target: Target): string {
  switch (target.kind) {
    case "user":
      return target.userId;
    case "device":
      return target.token;
    case "phone":
      return target.phone;
    case "browser":
      return target.endpoint;
  }
}

export function deliveryKey(d: Pick<Delivery, "eventId" | "channel" | "target">): string {
  return `${d.eventId}:${d.channel}:${recipientOf(d.target)}`;
}

/** Backoff of the n-th retry (1-based): 30 s, 1 min, 2 min, 4 min, 8 min, … at most 1 h. */
export function retryDelaySeconds(attempt: number): number {
  return Math.min(30 * 2 ** Math.max(0, attempt - 1), 3600);
}

interface StoredPayload {
  target: Target;
  title: string;
  body: string;
  data: Record<string, string>;
}

/**
 * Where Twilio reports an SMS's fate (delivered, failed: docs/conversations.md), signed like any
 * of its webhooks; only with a public origin to give it.
 */
function statusCallbackOf({ env }: Deps, key: string | undefined): string | undefined {
  const base = env.PUBLIC_BASE_URL?.replace(/\/+$/, "");
  return base && key ? `${base}/v1/inbound/sms/twilio/status?delivery=${encodeURIComponent(key)}` : undefined;
}

export async function sendOne(
  deps: Deps,
  channel: Channel,
  p: StoredPayload,
  organizationId: string | null,
  key?: string,
): Promise<SendOutcome> {
  const { env } = deps;
  const t = p.target;
  // A test-mode twin's notifications never leave through a real provider (docs/test-mode.md):
  // the outbox records them, whatever secrets are configured.
  if (organizationId !== null && isTwinOrganizationId(organizationId)) return outboxSend(channel, recipientOf(t), p);
  if (channel === "push" && t.kind === "device") return sendPush(env, t.token, { title: p.title, body: p.body, data: p.data });
  if (channel === "sms" && t.kind === "phone") return sendSms(env, t.phone, smsText(p), statusCallbackOf(deps, key));
  if (channel === "whatsapp" && t.kind === "phone") return sendWhatsappDelivery(deps, t.phone, p, now());
  if (channel === "web_push" && t.kind === "browser") {
    return sendWebPush(env, t, { title: p.title, body: p.body, data: p.data });
  }
  return { ok: false, provider: "none", transient: false, response: `no sender for ${channel} to ${t.kind}` };
}

async function inParallel<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The statements that record one provider answer (and drop a dead token or refund an SMS). */
export function outcomeStatements(
  { db }: Deps,
  key: string,
  channel: Channel,
  target: Target,
  outcome: SendOutcome,
  at: number,
  organizationId: string | null,
  smsCounted: boolean,
): BatchItem<"sqlite">[] {
  const status = outcome.ok ? "sent" : outcome.transient ? "retrying" : "failed";
  const out: BatchItem<"sqlite">[] = [
    db
      .update(notificationDeliveries)
      .set({
        status,
        attempts: sql`${notificationDeliveries.attempts} + 1`,
        provider: outcome.provider,
        providerResponse: outcome.response,
        updatedAt: at,
      })
      .where(eq(notificationDeliveries.key, key)),
  ];
  if (!outcome.ok && outcome.deadToken) {
    if (target.kind === "device") out.push(db.delete(pushDevices).where(eq(pushDevices.token, target.token)));
    if (target.kind === "browser")
      out.push(db.delete(visitorPushSubscriptions).where(eq(visitorPushSubscriptions.endpoint, target.endpoint)));
  }
  if (!outcome.ok && !outcome.transient && isMeteredChannel(channel) && smsCounted && organizationId) {
    // Nothing was sent: the unit goes back to the month's allowance.
    out.push(
      db
        .update(usageCounters)
        .set({ used: sql`${usageCounters.used} - 1` })
        .where(
          and(
            eq(usageCounters.organizationId, organizationId),
            eq(usageCounters.period, utcMonth(at).key),
            eq(usageCounters.metric, "sms"),
            gt(usageCounters.used, 0),
          ),
        ),
    );
  }
  return out;
}

/** The data flag of a WhatsApp delivery whose customer also gets SMS: a failed send falls back to it. */
export const WHATSAPP_FALLBACK = "waFallback";

/**
 * A WhatsApp message that did not go (Meta refused it, answered 5xx, could not be reached, or it
 * was free text outside the 24-hour window) goes once by SMS instead (docs/notifications.md,
 * "Falling back to SMS"): the same text, to the same number, under the same event, as the delivery
 * `<event>:sms:<phone>` (so a redelivered event, or a retry, never sends it twice). Null when the
 * delivery is not a WhatsApp one with the fallback, or it was refused by the caps and the month's
 * allowance, which refuse an SMS all the same.
 */
export function smsFallbackOf(
  d: Pick<Delivery, "eventId" | "organizationId" | "type" | "channel" | "target" | "title" | "body" | "data">,
  outcome: SendOutcome,
): Delivery | null {
  if (d.channel !== "whatsapp" || outcome.ok || d.target.kind !== "phone" || d.data[WHATSAPP_FALLBACK] !== "sms") return null;
  const whatsappFailure = outcome.provider === "whatsapp" || (outcome.provider === "policy" && outcome.response.startsWith("WHATSAPP_"));
  if (!whatsappFailure) return null;
  const data = Object.fromEntries(Object.entries(d.data).filter(([k]) => !k.startsWith("wa")));
  return {
    eventId: d.eventId,
    organizationId: d.organizationId,
    type: d.type,
    channel: "sms",
    target: d.target,
    title: d.title,
    body: d.body,
    data: { ...data, fallbackFrom: "whatsapp" },
    // The WhatsApp attempt took the message's unit of every cap and of the month's allowance and
    // keeps it: the fallback is that same message, so it is not counted again.
    countUsage: false,
  };
}

/** What the WhatsApp row records when its message went by SMS instead: final, with the reason. */
export function fellBack(outcome: SendOutcome): SendOutcome {
  return outcome.ok ? outcome : { ...outcome, transient: false, response: `${outcome.response.slice(0, 970)} → sent by SMS instead` };
}

/**
 * Takes one SMS unit of the month's allowance: the counter is created at 1 or raised by 1 while
 * under `limit` (null: no limit); answers the new count, or no row when the allowance is used up.
 * A limit of 0 takes nothing: callers do not ask.
 */
export function takeSmsUnit({ db }: Deps, organizationId: string, period: string, limit: number | null) {
  return db
    .insert(usageCounters)
    .values({ organizationId, period, metric: "sms", used: 1 })
    .onConflictDoUpdate({
      target: [usageCounters.organizationId, usageCounters.period, usageCounters.metric],
      set: { used: sql`${usageCounters.used} + 1` },
      setWhere: limit === null ? undefined : lt(usageCounters.used, limit),
    })
    .returning({ used: usageCounters.used });
}

/** An in-app delivery's values, in the order of its JSON array (json_each in the two statements below). */
const IN_APP_FIELDS = [
  "key",
  "notificationId",
  "deliveryId",
  "userId",
  "eventId",
  "organizationId",
  "type",
  "title",
  "body",
  "data",
  "payload",
] as const;

function inAppAt(field: (typeof IN_APP_FIELDS)[number]): SQL {
  return sql.raw(`json_extract(j.value, '$[${IN_APP_FIELDS.indexOf(field)}]')`);
}

/** The batch's in-app notifications, each only while its delivery key is unclaimed and its user exists. */
const insertInAppNotifications = preparedWrite(["deliveries", "at"], (db, p) =>
  db
    .insert(notifications)
    .select(
      db
        .select({
          id: inAppAt("notificationId").as("id"),
          userId: users.id,
          organizationId: inAppAt("organizationId").as("organization_id"),
          type: inAppAt("type").as("type"),
          title: inAppAt("title").as("title"),
          body: inAppAt("body").as("body"),
          data: inAppAt("data").as("data"),
          readAt: sql`NULL`.as("read_at"),
          createdAt: sql`CAST(${p.at} AS INTEGER)`.as("created_at"),
        })
        .from(sql`json_each(${p.deliveries}) AS j`)
        .innerJoin(users, eq(users.id, inAppAt("userId")))
        .where(
          notExists(
            db
              .select({ found: sql`1` })
              .from(notificationDeliveries)
              .where(eq(notificationDeliveries.key, inAppAt("key"))),
          ),
        ),
    )
    .prepare(),
);

/** Their delivery keys, claimed as sent (a key claimed before stays as it is). */
const claimInAppDeliveries = preparedWrite(["deliveries", "at"], (db, p) =>
  db
    .insert(notificationDeliveries)
    .select(
      db
        .select({
          key: inAppAt("key").as("key"),
          id: inAppAt("deliveryId").as("id"),
          eventId: inAppAt("eventId").as("event_id"),
          organizationId: inAppAt("organizationId").as("organization_id"),
          type: inAppAt("type").as("type"),
          channel: sql`'in_app'`.as("channel"),
          recipient: inAppAt("userId").as("recipient"),
          provider: sql`'in_app'`.as("provider"),
          status: sql`'sent'`.as("status"),
          attempts: sql`1`.as("attempts"),
          payload: inAppAt("payload").as("payload"),
          providerResponse: sql`NULL`.as("provider_response"),
          createdAt: sql`CAST(${p.at} AS INTEGER)`.as("created_at"),
          updatedAt: sql`CAST(${p.at} AS INTEGER)`.as("updated_at"),
        })
        .from(sql`json_each(${p.deliveries}) AS j`)
        // WHERE: SQLite reads the ON CONFLICT below as the upsert's, not a join's.
        .where(sql`true`),
    )
    .onConflictDoNothing({ target: notificationDeliveries.key })
    .prepare(),
);

/**
 * Stores in-app notifications and sends the other channels, once per delivery key. D1 sees
 * four batches at most (the in-app and the other claims side by side, SMS allowance, outcomes),
 * whatever the number of deliveries.
 */
export async function deliver(deps: Deps, deliveries: Delivery[], at: number): Promise<DeliveryReport> {
  const { db, env } = deps;
  const report: DeliveryReport = { inApp: 0, sent: 0, retrying: 0, failed: 0 };
  if (deliveries.length === 0) return report;
  // In-app notifications: a notification is written only while its delivery key is unclaimed and
  // its user still exists, then the keys are claimed, in that order: two statements for the whole
  // batch (issue 43), their rows as one JSON parameter, built once per isolate.
  const inApp: (string | null)[][] = [];
  const inAppKeys = new Set<string>();
  const claimIndex: { delivery: Delivery; key: string }[] = [];
  const sendClaims = [];
  for (const d of deliveries) {
    const key = deliveryKey(d);
    const payload = JSON.stringify({ target: d.target, title: d.title, body: d.body, data: d.data } satisfies StoredPayload);
    if (d.channel === "in_app" && d.target.kind === "user") {
      // The same delivery twice in one batch is written once, as one after the other would be.
      if (inAppKeys.has(key)) continue;
      inAppKeys.add(key);
      const values: Record<(typeof IN_APP_FIELDS)[number], string | null> = {
        key,
        notificationId: newId("ntf"),
        deliveryId: newId("dlv"),
        userId: d.target.userId,
        eventId: d.eventId,
        organizationId: d.organizationId,
        type: d.type,
        title: d.title,
        body: d.body,
        data: JSON.stringify(d.data),
        payload,
      };
      inApp.push(IN_APP_FIELDS.map((field) => values[field]));
      continue;
    }
    claimIndex.push({ delivery: d, key });
    // A key is claimed by its first run, or reclaimed from a run that died before sending.
    sendClaims.push(
      db
        .insert(notificationDeliveries)
        .values({
          key,
          id: newId("dlv"),
          eventId: d.eventId,
          organizationId: d.organizationId,
          type: d.type,
          channel: d.channel,
          recipient: recipientOf(d.target),
          status: "pending",
          attempts: 0,
          payload,
          createdAt: at,
          updatedAt: at,
        })
        .onConflictDoUpdate({
          target: notificationDeliveries.key,
          set: { updatedAt: sql`excluded.updated_at` },
          setWhere: and(eq(notificationDeliveries.status, "pending"), lt(notificationDeliveries.updatedAt, at - STALE_CLAIM_MS)),
        })
        .returning({ key: notificationDeliveries.key }),
    );
  }
  const sendBatch = nonEmpty(sendClaims);
  const inAppRows = JSON.stringify(inApp);
  const [inAppWritten, claimed] = await Promise.all([
    inApp.length > 0
      ? batchWrites(env.DB, [
          withValues(insertInAppNotifications, { deliveries: inAppRows, at }),
          withValues(claimInAppDeliveries, { deliveries: inAppRows, at }),
        ])
      : [],
    sendBatch ? db.batch(sendBatch) : [],
  ]);
  // A new in-app notification is one changed row of the first statement.
  report.inApp += inAppWritten[0]?.meta.changes ?? 0;
  const mine = claimIndex.filter((_c, i) => (claimed[i]?.length ?? 0) > 0);
  if (mine.length === 0) return report;
  // Visitors' SMS (and WhatsApp messages) first pass the organization's caps (./sms-guard.ts); the business's own do not.
  const refusedByPolicy = await gatePublicSms(
    deps,
    mine.filter((c) => isMeteredChannel(c.delivery.channel) && c.delivery.countUsage !== false),
    at,
    deliver,
  );
  // SMS: one unit of the month's allowance each, taken with a conditional upsert.
  const smsClaims = mine.filter(
    (c) => isMeteredChannel(c.delivery.channel) && c.delivery.countUsage !== false && !refusedByPolicy.has(c.key),
  );
  const overQuota = new Set<string>();
  if (smsClaims.length > 0) {
    const period = utcMonth(at).key;
    // Conditional upsert: a unit is taken only while the month's count is under the limit (none with a limit of 0).
    // (A claim without an organization was refused by the policy gate above.)
    const withUnits = smsClaims.flatMap((c) => {
      const { organizationId, smsLimit = null } = c.delivery;
      return organizationId !== null && (smsLimit === null || smsLimit > 0) ? [{ key: c.key, organizationId, smsLimit }] : [];
    });
    for (const c of smsClaims) if (!withUnits.some((u) => u.key === c.key)) overQuota.add(c.key);
    const takes = nonEmpty(withUnits.map((u) => takeSmsUnit(deps, u.organizationId, period, u.smsLimit)));
    const taken = takes ? await db.batch(takes) : [];
    withUnits.forEach((u, i) => {
      if ((taken[i]?.length ?? 0) === 0) overQuota.add(u.key);
    });
  }

  const outcomes = await inParallel(mine, SEND_PARALLEL, async (c): Promise<SendOutcome> => {
    const policy = refusedByPolicy.get(c.key);
    if (policy) return { ok: false, provider: "policy", transient: false, response: policy.reason };
    if (overQuota.has(c.key))
      return {
        ok: false,
        provider: "quota",
        transient: false,
        response: "QUOTA_EXCEEDED: the organization's monthly SMS allowance is used up",
      };
    const d = c.delivery;
    return sendOne(deps, d.channel, { target: d.target, title: d.title, body: d.body, data: d.data }, d.organizationId, c.key);
  });

  const writes: BatchItem<"sqlite">[] = [];
  const retries: MessageSendRequest<DeliveryMessage>[] = [];
  const fallbacks: Delivery[] = [];
  mine.forEach((c, i) => {
    let outcome = outcomes[i]!;
    // A fallback SMS holds the unit its WhatsApp attempt took: it goes back if the SMS fails too.
    const holdsUnit = c.delivery.data.fallbackFrom === "whatsapp";
    let counted =
      isMeteredChannel(c.delivery.channel) &&
      (c.delivery.countUsage !== false || holdsUnit) &&
      !overQuota.has(c.key) &&
      !refusedByPolicy.has(c.key);
    const fallback = refusedByPolicy.has(c.key) || overQuota.has(c.key) ? null : smsFallbackOf(c.delivery, outcome);
    if (fallback) {
      fallbacks.push(fallback);
      // The unit stays taken for the SMS that carries the message now.
      [outcome, counted] = [fellBack(outcome), false];
    }
    writes.push(...outcomeStatements(deps, c.key, c.delivery.channel, c.delivery.target, outcome, at, c.delivery.organizationId, counted));
    if (outcome.ok) report.sent += 1;
    else if (outcome.transient) {
      report.retrying += 1;
      retries.push({ body: { key: c.key }, contentType: "json", delaySeconds: retryDelaySeconds(1) });
    } else report.failed += 1;
  });
  const settled = nonEmpty(writes);
  if (settled) await db.batch(settled);
  if (retries.length > 0) await env.NOTIFICATIONS.sendBatch(retries);
  if (fallbacks.length > 0) {
    const more = await deliver(deps, fallbacks, at);
    report.sent += more.sent;
    report.retrying += more.retrying;
    report.failed += more.failed;
  }
  return report;
}
