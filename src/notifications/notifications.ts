import { and, count, eq, gt, isNull, sql } from "drizzle-orm";
import { database } from "../db/client";
import { notificationDeliveries, notifications, pushDevices, subscriptions, usageCounters, users } from "../db/schema";
import type { Env } from "../env";
import type { ListWindow } from "../http/cursor";
import { keysetPageSql } from "../http/keyset";
import { entitlements, type Plan } from "../domain/plans";
import { ApiError, notFound } from "../http/errors";
import { changingAccess } from "../http/credentials/access-changes";
import { newId, randomString } from "../lib/ids";
import { iso, utcMonth } from "../lib/time";
import { deliver } from "./notification-delivery";
import { takeBusinessSms } from "./sms-guard";
import { isOptedOut } from "./opt-outs";

// The user-facing side of notifications: devices, preferences, the in-app inbox, and the
// business's own SMS sends (counted in the month's SMS usage, like ticket SMS).

export type Platform = "ios" | "android" | "web";

/** Idempotent per token: a token that moves to another user is re-owned by the latest one. */
export async function registerDevice(
  env: Env,
  userId: string,
  input: { platform: Platform; fcmToken: string; deviceId: string | null },
  at: number,
) {
  const [row] = await database(env.DB)
    .insert(pushDevices)
    .values({
      id: `dev_${randomString(20)}`,
      userId,
      platform: input.platform,
      token: input.fcmToken,
      deviceId: input.deviceId,
      createdAt: at,
      updatedAt: at,
    })
    .onConflictDoUpdate({
      target: pushDevices.token,
      set: {
        userId: sql`excluded.user_id`,
        platform: sql`excluded.platform`,
        deviceId: sql`excluded.device_id`,
        updatedAt: sql`excluded.updated_at`,
      },
    })
    .returning();
  return {
    id: row!.id,
    platform: row!.platform,
    fcmToken: row!.token,
    deviceId: row!.deviceId,
    createdAt: iso(row!.createdAt),
    updatedAt: iso(row!.updatedAt),
  };
}

/** Only the caller's own token goes; another user's token is the same 404 as an unknown one. */
export async function unregisterDevice(env: Env, userId: string, token: string): Promise<void> {
  const gone = await database(env.DB)
    .delete(pushDevices)
    .where(and(eq(pushDevices.token, token), eq(pushDevices.userId, userId)))
    .returning({ id: pushDevices.id });
  if (gone.length === 0) throw notFound("Push registration");
}

export interface Preferences {
  smsNotifications: boolean;
  ticketReminders: boolean;
}

export async function getPreferences(env: Env, userId: string): Promise<Preferences> {
  const row = await database(env.DB)
    .select({ smsNotifications: users.smsNotifications, ticketReminders: users.ticketReminders })
    .from(users)
    .where(eq(users.id, userId))
    .get();
  if (!row) throw notFound("User");
  return row;
}

export async function updatePreferences(env: Env, userId: string, changes: Partial<Preferences>, at: number): Promise<Preferences> {
  // A field left out keeps its value (undefined is not written).
  // The user row is held by the user's object too (issue 43): it hears of the change first.
  const [row] = await changingAccess(env, [userId], () =>
    database(env.DB)
      .update(users)
      .set({ smsNotifications: changes.smsNotifications, ticketReminders: changes.ticketReminders, updatedAt: at })
      .where(eq(users.id, userId))
      .returning({ smsNotifications: users.smsNotifications, ticketReminders: users.ticketReminders }),
  );
  if (!row) throw notFound("User");
  return row;
}

interface NotificationRow {
  id: string;
  type: string;
  title: string;
  body: string;
  data: string;
  read_at: number | null;
  created_at: number;
}

type Notification = Pick<typeof notifications.$inferSelect, "id" | "type" | "title" | "body" | "data" | "readAt" | "createdAt">;

/** A row of the list's prepared read, in the schema's shape. */
function notificationOf(r: NotificationRow): Notification {
  const data: Record<string, string> = JSON.parse(r.data);
  return { id: r.id, type: r.type, title: r.title, body: r.body, data, readAt: r.read_at, createdAt: r.created_at };
}

export function notificationRecord(r: Notification) {
  const data = r.data;
  return {
    id: r.id,
    type: r.type,
    title: r.title,
    body: r.body,
    data: {
      ...(data.ticketId ? { ticketId: data.ticketId } : {}),
      ...(data.queueId ? { queueId: data.queueId } : {}),
      ...(data.displayCode ? { displayCode: data.displayCode } : {}),
      ...(data.invitationId ? { invitationId: data.invitationId, organizationId: data.organizationId } : {}),
    },
    readAt: r.readAt === null ? null : iso(r.readAt),
    createdAt: iso(r.createdAt),
  };
}

/** Newest first; `unreadOnly` keeps those with readAt null. */
export async function listNotifications(env: Env, userId: string, q: { unreadOnly: boolean }, window: ListWindow) {
  const filter = q.unreadOnly ? "AND read_at IS NULL" : "";
  const [page, total] = await Promise.all([
    keysetPageSql(
      env.DB,
      window,
      {
        table: "notifications",
        cursorColumn: "id",
        owner: { sql: "user_id = ?", binds: [userId] },
        where: { sql: `user_id = ? ${filter}`, binds: [userId] },
        keys: [
          { column: "created_at", direction: "desc" },
          { column: "id", direction: "desc" },
        ],
      },
      async (c) =>
        (
          await env.DB.prepare(
            `SELECT id, type, title, body, data, read_at, created_at FROM notifications WHERE ${c.where}
             ORDER BY ${c.orderBy} LIMIT ? OFFSET ?`,
          )
            .bind(...c.binds, c.limit, c.offset)
            .all<NotificationRow>()
        ).results,
    ),
    database(env.DB)
      .select({ n: count() })
      .from(notifications)
      .where(and(eq(notifications.userId, userId), q.unreadOnly ? isNull(notifications.readAt) : undefined))
      .get(),
  ]);
  return { rows: page.rows.map((r) => notificationRecord(notificationOf(r))), hasMore: page.hasMore, total: total?.n ?? 0 };
}

/** Marks one of the caller's notifications read (the first read time stays). */
export async function markRead(env: Env, userId: string, id: string, at: number) {
  const [row] = await database(env.DB)
    .update(notifications)
    .set({ readAt: sql`coalesce(${notifications.readAt}, ${at})` })
    .where(and(eq(notifications.id, id), eq(notifications.userId, userId)))
    .returning();
  if (!row) throw notFound("Notification");
  return notificationRecord(row);
}

export async function markAllRead(env: Env, userId: string, at: number): Promise<number> {
  const read = await database(env.DB)
    .update(notifications)
    .set({ readAt: at })
    .where(and(eq(notifications.userId, userId), isNull(notifications.readAt)))
    .returning({ id: notifications.id });
  return read.length;
}

export const SMS_PURPOSES = ["ticket_update", "reminder", "announcement", "appointment"] as const;
export type SmsPurpose = (typeof SMS_PURPOSES)[number];

async function planOf(env: Env, organizationId: string): Promise<Plan> {
  const row = await database(env.DB)
    .select({ plan: subscriptions.plan })
    .from(subscriptions)
    .where(eq(subscriptions.organizationId, organizationId))
    .get();
  return row?.plan ?? "starter";
}

/**
 * A business's own SMS: 402 on a plan without SMS, 403 QUOTA_EXCEEDED once the month's
 * allowance is used (the unit is taken before sending, exactly under concurrency).
 */
export async function sendBusinessSms<P extends SmsPurpose | "ticket_reply">(
  env: Env,
  organizationId: string,
  // "ticket_reply": a member's answer in a ticket's conversation (./conversations.ts).
  input: { phone: string; message: string; purpose: P; sentBy: string },
  at: number,
) {
  const plan = await planOf(env, organizationId);
  const features = entitlements({ plan }).features;
  if (!features.sms) throw new ApiError("PLAN_REQUIRED", "Sending SMS needs the pro plan", { requiredPlan: "pro", currentPlan: plan });
  if (await isOptedOut(env, organizationId, input.phone)) {
    throw new ApiError("CONFLICT", "This number sent STOP: nothing is sent to it until it sends START", {
      field: "phone",
      reason: "opted_out",
    });
  }
  const limit = features.smsPerMonth;
  const period = utcMonth(at);
  // The day's ceiling first (whole, the public's share plus the business's reserve), then the month.
  const giveBackDay = await takeBusinessSms(env, organizationId, input.phone, at, deliver);
  const taken = await env.DB.prepare(
    `INSERT INTO usage_counters (organization_id, period, metric, used) SELECT ?, ?, 'sms', 1 WHERE ? IS NULL OR ? > 0
     ON CONFLICT (organization_id, period, metric) DO UPDATE SET used = used + 1 WHERE ? IS NULL OR used < ?
     RETURNING used`,
  )
    .bind(organizationId, period.key, limit, limit, limit, limit)
    .first<{ used: number }>();
  if (!taken) {
    await giveBackDay();
    const row = await database(env.DB)
      .select({ used: usageCounters.used })
      .from(usageCounters)
      .where(and(eq(usageCounters.organizationId, organizationId), eq(usageCounters.period, period.key), eq(usageCounters.metric, "sms")))
      .get();
    throw new ApiError("QUOTA_EXCEEDED", `The monthly allowance of ${limit} SMS is used up`, {
      limit,
      used: row?.used ?? limit,
      resetsAt: iso(period.end),
    });
  }
  const id = newId("ntf");
  // The unit is already counted, so the delivery row carries no allowance of its own (null).
  const d = {
    eventId: id,
    organizationId,
    type: `sms.${input.purpose}`,
    channel: "sms" as const,
    target: { kind: "phone" as const, phone: input.phone },
    title: "",
    body: input.message,
    data: { purpose: input.purpose, sentBy: input.sentBy },
    smsLimit: null,
  };
  const report = await deliverBusinessSms(env, d, at);
  let used = taken.used;
  if (report === "failed") {
    // Refused for good by the provider: nothing was sent, the unit goes back.
    await database(env.DB)
      .update(usageCounters)
      .set({ used: sql`${usageCounters.used} - 1` })
      .where(
        and(
          eq(usageCounters.organizationId, organizationId),
          eq(usageCounters.period, period.key),
          eq(usageCounters.metric, "sms"),
          gt(usageCounters.used, 0),
        ),
      );
    used -= 1;
  }
  return {
    id,
    phone: input.phone,
    purpose: input.purpose,
    status: report,
    usage: { used, limit, resetsAt: iso(period.end) },
    createdAt: iso(at),
  };
}

async function deliverBusinessSms(env: Env, d: Parameters<typeof deliver>[1][number], at: number): Promise<"sent" | "queued" | "failed"> {
  // Counted above: `deliver` must not take a second unit (countUsage false).
  const report = await deliver(env, [{ ...d, countUsage: false }], at);
  if (report.sent > 0) return "sent";
  if (report.retrying > 0) return "queued";
  return "failed";
}

/** `delivered`: the provider's status callback confirmed it reached the phone (docs/conversations.md). */
export const DELIVERY_STATUSES = ["pending", "retrying", "sent", "delivered", "failed", "dead_lettered"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

interface DeliveryRow {
  id: string;
  event_id: string;
  type: string;
  channel: string;
  recipient: string;
  provider: string | null;
  status: string;
  attempts: number;
  provider_response: string | null;
  fallback_from: string | null;
  created_at: number;
  updated_at: number;
}

/** Tokens and endpoints are credentials of a device: only their end is shown. */
function maskRecipient(channel: string, recipient: string): string {
  if (channel === "push" || channel === "web_push") return `…${recipient.slice(-8)}`;
  return recipient;
}

/** The organization's delivery records, newest first: where support sees failed and dead-lettered sends. */
export async function listDeliveries(env: Env, organizationId: string, q: { status?: DeliveryStatus | undefined }, window: ListWindow) {
  const filter = q.status ? "AND status = ?" : "";
  const args = q.status ? [organizationId, q.status] : [organizationId];
  const [page, total] = await Promise.all([
    keysetPageSql(
      env.DB,
      window,
      {
        table: "notification_deliveries",
        cursorColumn: "id",
        owner: { sql: "organization_id = ?", binds: [organizationId] },
        where: { sql: `organization_id = ? ${filter}`, binds: args },
        keys: [
          { column: "created_at", direction: "desc" },
          { column: "rowid", direction: "desc" },
        ],
      },
      async (c) =>
        (
          await env.DB.prepare(
            `SELECT id, event_id, type, channel, recipient, provider, status, attempts, provider_response,
             json_extract(payload, '$.data.fallbackFrom') AS fallback_from, created_at, updated_at
             FROM notification_deliveries WHERE ${c.where} ORDER BY ${c.orderBy} LIMIT ? OFFSET ?`,
          )
            .bind(...c.binds, c.limit, c.offset)
            .all<DeliveryRow>()
        ).results,
    ),
    database(env.DB)
      .select({ n: count() })
      .from(notificationDeliveries)
      .where(
        and(eq(notificationDeliveries.organizationId, organizationId), q.status ? eq(notificationDeliveries.status, q.status) : undefined),
      )
      .get(),
  ]);
  return {
    hasMore: page.hasMore,
    rows: page.rows.map((r) => ({
      id: r.id,
      eventId: r.event_id,
      type: r.type,
      channel: r.channel,
      recipient: maskRecipient(r.channel, r.recipient),
      provider: r.provider,
      status: r.status,
      attempts: r.attempts,
      providerResponse: r.provider_response,
      fallbackFrom: r.fallback_from === "whatsapp" ? ("whatsapp" as const) : null,
      createdAt: iso(r.created_at),
      updatedAt: iso(r.updated_at),
    })),
    total: total?.n ?? 0,
  };
}
