import { and, count, eq, gt, isNull, sql } from "drizzle-orm";
import { notificationDeliveries, notifications, pushDevices, subscriptions, usageCounters, users } from "../db/schema";
import type { ListWindow } from "../http/cursor";
import { keysetPage } from "../http/keyset";
import { entitlements, type Plan } from "../domain/plans";
import { ApiError, notFound } from "../http/errors";
import { changingAccess } from "../http/credentials/access-changes";
import { newId, randomString } from "../lib/ids";
import { iso, utcMonth } from "../lib/time";
import { deliver, takeSmsUnit } from "./notification-delivery";
import { takeBusinessSms } from "./sms-guard";
import { isOptedOut } from "./opt-outs";
import { type Deps } from "../http/deps";

// The user-facing side of notifications: devices, preferences, the in-app inbox, and the
// business's own SMS sends (counted in the month's SMS usage, like ticket SMS).

export type Platform = "ios" | "android" | "web";

/** Idempotent per token: a token that moves to another user is re-owned by the latest one. */
export async function registerDevice(
  { db }: Deps,
  userId: string,
  input: { platform: Platform; fcmToken: string; deviceId: string | null },
  at: number,
) {
  const [row] = await db
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
export async function unregisterDevice({ db }: Deps, userId: string, token: string): Promise<void> {
  const gone = await db
    .delete(pushDevices)
    .where(and(eq(pushDevices.token, token), eq(pushDevices.userId, userId)))
    .returning({ id: pushDevices.id });
  if (gone.length === 0) throw notFound("Push registration");
}

export interface Preferences {
  smsNotifications: boolean;
  ticketReminders: boolean;
}

export async function getPreferences({ db }: Deps, userId: string): Promise<Preferences> {
  const row = await db
    .select({ smsNotifications: users.smsNotifications, ticketReminders: users.ticketReminders })
    .from(users)
    .where(eq(users.id, userId))
    .get();
  if (!row) throw notFound("User");
  return row;
}

export async function updatePreferences(
  { db, env }: Deps,
  userId: string,
  changes: Partial<Preferences>,
  at: number,
): Promise<Preferences> {
  // A field left out keeps its value (undefined is not written).
  // The user row is held by the user's object too (issue 43): it hears of the change first.
  const [row] = await changingAccess(env, [userId], () =>
    db
      .update(users)
      .set({ smsNotifications: changes.smsNotifications, ticketReminders: changes.ticketReminders, updatedAt: at })
      .where(eq(users.id, userId))
      .returning({ smsNotifications: users.smsNotifications, ticketReminders: users.ticketReminders }),
  );
  if (!row) throw notFound("User");
  return row;
}

type Notification = Pick<typeof notifications.$inferSelect, "id" | "type" | "title" | "body" | "data" | "readAt" | "createdAt">;

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
export async function listNotifications({ db }: Deps, userId: string, q: { unreadOnly: boolean }, window: ListWindow) {
  const n = notifications;
  const where = and(eq(n.userId, userId), q.unreadOnly ? isNull(n.readAt) : undefined);
  const [page, total] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: n,
        cursorColumn: n.id,
        owner: eq(n.userId, userId),
        where,
        keys: [
          { column: n.createdAt, direction: "desc" },
          { column: n.id, direction: "desc" },
        ],
      },
      (c) =>
        db
          .select({ id: n.id, type: n.type, title: n.title, body: n.body, data: n.data, readAt: n.readAt, createdAt: n.createdAt })
          .from(n)
          .where(c.where)
          .orderBy(...c.orderBy)
          .limit(c.limit)
          .offset(c.offset)
          .all(),
    ),
    db.select({ n: count() }).from(n).where(where).get(),
  ]);
  return { rows: page.rows.map(notificationRecord), hasMore: page.hasMore, total: total?.n ?? 0 };
}

/** Marks one of the caller's notifications read (the first read time stays). */
export async function markRead({ db }: Deps, userId: string, id: string, at: number) {
  const [row] = await db
    .update(notifications)
    .set({ readAt: sql`coalesce(${notifications.readAt}, ${at})` })
    .where(and(eq(notifications.id, id), eq(notifications.userId, userId)))
    .returning();
  if (!row) throw notFound("Notification");
  return notificationRecord(row);
}

export async function markAllRead({ db }: Deps, userId: string, at: number): Promise<number> {
  const read = await db
    .update(notifications)
    .set({ readAt: at })
    .where(and(eq(notifications.userId, userId), isNull(notifications.readAt)))
    .returning({ id: notifications.id });
  return read.length;
}

export const SMS_PURPOSES = ["ticket_update", "reminder", "announcement", "appointment"] as const;
export type SmsPurpose = (typeof SMS_PURPOSES)[number];

async function planOf({ db }: Deps, organizationId: string): Promise<Plan> {
  const row = await db
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
  deps: Deps,
  organizationId: string,
  // "ticket_reply": a member's answer in a ticket's conversation (./conversations.ts).
  input: { phone: string; message: string; purpose: P; sentBy: string },
  at: number,
) {
  const { db } = deps;
  const plan = await planOf(deps, organizationId);
  const features = entitlements({ plan }).features;
  if (!features.sms) throw new ApiError("PLAN_REQUIRED", "Sending SMS needs the pro plan", { requiredPlan: "pro", currentPlan: plan });
  if (await isOptedOut(deps, organizationId, input.phone)) {
    throw new ApiError("CONFLICT", "This number sent STOP: nothing is sent to it until it sends START", {
      field: "phone",
      reason: "opted_out",
    });
  }
  const limit = features.smsPerMonth;
  const period = utcMonth(at);
  // The day's ceiling first (whole, the public's share plus the business's reserve), then the month.
  const giveBackDay = await takeBusinessSms(deps, organizationId, input.phone, at, deliver);
  // A conditional upsert: the unit is taken only while the month's count is under the limit.
  const taken = limit !== null && limit <= 0 ? undefined : await takeSmsUnit(deps, organizationId, period.key, limit).get();
  if (!taken) {
    await giveBackDay();
    const row = await db
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
  const report = await deliverBusinessSms(deps, d, at);
  let used = taken.used;
  if (report === "failed") {
    // Refused for good by the provider: nothing was sent, the unit goes back.
    await db
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

async function deliverBusinessSms(deps: Deps, d: Parameters<typeof deliver>[1][number], at: number): Promise<"sent" | "queued" | "failed"> {
  // Counted above: `deliver` must not take a second unit (countUsage false).
  const report = await deliver(deps, [{ ...d, countUsage: false }], at);
  if (report.sent > 0) return "sent";
  if (report.retrying > 0) return "queued";
  return "failed";
}

/** `delivered`: the provider's status callback confirmed it reached the phone (docs/conversations.md). */
export const DELIVERY_STATUSES = ["pending", "retrying", "sent", "delivered", "failed", "dead_lettered"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Tokens and endpoints are credentials of a device: only their end is shown. */
function maskRecipient(channel: string, recipient: string): string {
  if (channel === "push" || channel === "web_push") return `…${recipient.slice(-8)}`;
  return recipient;
}

/** The organization's delivery records, newest first: where support sees failed and dead-lettered sends. */
export async function listDeliveries({ db }: Deps, organizationId: string, q: { status?: DeliveryStatus | undefined }, window: ListWindow) {
  const d = notificationDeliveries;
  const where = and(eq(d.organizationId, organizationId), q.status ? eq(d.status, q.status) : undefined);
  const [page, total] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: d,
        cursorColumn: d.id,
        owner: eq(d.organizationId, organizationId),
        where,
        // Deliveries of the same millisecond keep the order they were written in (rowid).
        keys: [
          { column: d.createdAt, direction: "desc" },
          { column: sql`${d}.rowid`, direction: "desc" },
        ],
      },
      (c) =>
        db
          .select({
            id: d.id,
            eventId: d.eventId,
            type: d.type,
            channel: d.channel,
            recipient: d.recipient,
            provider: d.provider,
            status: d.status,
            attempts: d.attempts,
            providerResponse: d.providerResponse,
            fallbackFrom: sql<string | null>`json_extract(${d.payload}, '$.data.fallbackFrom')`,
            createdAt: d.createdAt,
            updatedAt: d.updatedAt,
          })
          .from(d)
          .where(c.where)
          .orderBy(...c.orderBy)
          .limit(c.limit)
          .offset(c.offset)
          .all(),
    ),
    db.select({ n: count() }).from(d).where(where).get(),
  ]);
  return {
    hasMore: page.hasMore,
    rows: page.rows.map((r) => ({
      id: r.id,
      eventId: r.eventId,
      type: r.type,
      channel: r.channel,
      recipient: maskRecipient(r.channel, r.recipient),
      provider: r.provider,
      status: r.status,
      attempts: r.attempts,
      providerResponse: r.providerResponse,
      fallbackFrom: r.fallbackFrom === "whatsapp" ? ("whatsapp" as const) : null,
      createdAt: iso(r.createdAt),
      updatedAt: iso(r.updatedAt),
    })),
    total: total?.n ?? 0,
  };
}
