import type { DomainEventMessage } from "../domain/events";
import { pickLanguage, render, type Language, type TemplateKey, type TemplateValues } from "../domain/notification-templates";
import { ROLES, roleAllows, type Role } from "../domain/permissions";
import { entitlements, type Plan } from "../domain/plans";
import { now } from "../lib/clock";
import { and, eq, inArray } from "drizzle-orm";
import { chunk, nonEmpty } from "../db/client";
import {
  members,
  organizations,
  pushDevices,
  queues,
  subscriptions,
  ticketChannels,
  users,
  visitorPushSubscriptions,
  whatsappSettings,
} from "../db/schema";
import { effectiveTemplate, isCustomerTemplateKey, TICKET_CUSTOMER_KEYS, type TemplateOverride } from "../domain/message-templates";
import {
  deliver,
  type Delivery,
  type DeliveryReport,
  optedOutAmong,
  barePhone,
  templateOverrides,
  whatsappData,
  type WhatsappTemplateKind,
  WHATSAPP_FALLBACK,
} from "../notifications";
import { type Deps } from "../http/deps";

// Domain events → notifications (CONTRACT §7): who receives each event, on which channels,
// in which language. Called by the EVENTS dispatcher (./events-consumer.ts) with a whole
// batch, so the context is read in one D1 batch and written in a few.

/** Events told to the ticket's customer. */
const CUSTOMER_TYPES = new Set<string>(TICKET_CUSTOMER_KEYS);

/** Events told to the organization's members who operate or manage queues. */
const OPERATOR_TYPES = new Set<string>([
  "queue.status_changed",
  "queue.capacity_warning",
  "queue.long_wait",
  "ticket.no_show",
  "member.joined",
]);

/**
 * The customer events worth an SMS (each one costs the business). `review.request` asks for the
 * verdict: a reply of one digit 1–5 is taken as the score (docs/visits.md, feedback).
 */
const SMS_TYPES = new Set<string>(["ticket.created", "ticket.almost_called", "ticket.called", "ticket.recalled", "review.request"]);

/** Silenced by `ticketReminders: false`. */
const REMINDER_TYPES = new Set<string>(["ticket.almost_called", "appointment.reminder"]);

/** Sources whose ticket owner is not the customer (an operator's walk-in, a VIP, a widget key). */
const NOT_CUSTOMER_SOURCES = new Set<string>(["operator", "vip", "widget"]);

/** A ticket that is over: its visitor's browser subscriptions are dropped after this event. */
const FINAL_TYPES = new Set<string>(["ticket.served", "ticket.cancelled", "ticket.expired", "ticket.auto_skipped", "ticket.transferred"]);

type UserRow = Pick<typeof users.$inferSelect, "id" | "language" | "smsNotifications" | "ticketReminders" | "firstName" | "lastName">;
type MemberRow = Pick<typeof members.$inferSelect, "organizationId" | "userId" | "role">;
interface OrgRow {
  id: string;
  defaultLanguage: string;
  plan: Plan | null;
}
type BrowserRow = Pick<typeof visitorPushSubscriptions.$inferSelect, "ticketId" | "endpoint" | "p256dh" | "auth" | "language">;

export interface NotificationContext {
  queues: Map<string, string>;
  orgs: Map<string, OrgRow>;
  users: Map<string, UserRow>;
  members: Map<string, MemberRow[]>;
  devices: Map<string, string[]>;
  browsers: Map<string, BrowserRow[]>;
  /** The organizations' own texts of customer messages (docs/message-templates.md). */
  templates: TemplateOverride[];
  /** The batch's tickets whose customer chose WhatsApp. */
  whatsappTickets: Set<string>;
  /** The organizations' WhatsApp numbers and template names (docs/notifications.md). */
  whatsapp: Map<string, { phoneNumberId: string; templates: Record<WhatsappTemplateKind, string | null> }>;
}

function group<T, K>(rows: T[], key: (r: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const r of rows) {
    const list = out.get(key(r));
    if (list) list.push(r);
    else out.set(key(r), [r]);
  }
  return out;
}

const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);

/** The ticket owner who is a customer with an account, if any. */
function customerUserId(event: DomainEventMessage): string | null {
  const userId = str(event.data.userId);
  if (!userId || !userId.startsWith("usr_")) return null;
  return NOT_CUSTOMER_SOURCES.has(String(event.data.source ?? "")) ? null : userId;
}

/** Everything the batch's events need, in one D1 round trip (at most 100 values per IN). */
export async function loadContext(deps: Deps, events: DomainEventMessage[]): Promise<NotificationContext> {
  const { db } = deps;
  const queueIds = [...new Set(events.map((e) => e.queueId).filter((q): q is string => !!q))].slice(0, 100);
  const orgIds = [...new Set(events.map((e) => e.organizationId))].slice(0, 100);
  const operatorOrgs = [...new Set(events.filter((e) => OPERATOR_TYPES.has(e.type)).map((e) => e.organizationId))].slice(0, 100);
  const userIds = new Set<string>();
  for (const e of events) {
    const customer = customerUserId(e);
    if (customer) userIds.add(customer);
    if (e.type === "member.joined" && str(e.data.userId)) userIds.add(String(e.data.userId));
  }
  const ticketIds = [...new Set(events.map((e) => e.ticketId).filter((t): t is string => !!t))].slice(0, 100);
  const [queueRows, orgs, memberRows, browsers, channels, whatsapp] = await db.batch([
    db.select({ id: queues.id, name: queues.name }).from(queues).where(inArray(queues.id, queueIds)),
    db
      .select({ id: organizations.id, defaultLanguage: organizations.defaultLanguage, plan: subscriptions.plan })
      .from(organizations)
      .leftJoin(subscriptions, eq(subscriptions.organizationId, organizations.id))
      .where(inArray(organizations.id, orgIds)),
    db
      .select({ organizationId: members.organizationId, userId: members.userId, role: members.role })
      .from(members)
      .where(inArray(members.organizationId, operatorOrgs)),
    db
      .select({
        ticketId: visitorPushSubscriptions.ticketId,
        endpoint: visitorPushSubscriptions.endpoint,
        p256dh: visitorPushSubscriptions.p256dh,
        auth: visitorPushSubscriptions.auth,
        language: visitorPushSubscriptions.language,
      })
      .from(visitorPushSubscriptions)
      .where(inArray(visitorPushSubscriptions.ticketId, ticketIds)),
    db
      .select({ ticketId: ticketChannels.ticketId })
      .from(ticketChannels)
      .where(and(eq(ticketChannels.channel, "whatsapp"), inArray(ticketChannels.ticketId, ticketIds))),
    db.select().from(whatsappSettings).where(inArray(whatsappSettings.organizationId, orgIds)),
  ]);
  for (const m of memberRows) userIds.add(m.userId);
  // At most 100 bound values per statement: large organizations are read in chunks (users and
  // their devices side by side, one batch each).
  const chunks = chunk([...userIds], 90);
  const userReads = nonEmpty(
    chunks.map((ids) =>
      db
        .select({
          id: users.id,
          language: users.language,
          smsNotifications: users.smsNotifications,
          ticketReminders: users.ticketReminders,
          firstName: users.firstName,
          lastName: users.lastName,
        })
        .from(users)
        .where(inArray(users.id, ids)),
    ),
  );
  const deviceReads = nonEmpty(
    chunks.map((ids) =>
      db.select({ userId: pushDevices.userId, token: pushDevices.token }).from(pushDevices).where(inArray(pushDevices.userId, ids)),
    ),
  );
  const [userRows, deviceRows] = await Promise.all([userReads ? db.batch(userReads) : [], deviceReads ? db.batch(deviceReads) : []]);
  const deviceMap = new Map<string, string[]>();
  for (const d of deviceRows.flat()) deviceMap.set(d.userId, [...(deviceMap.get(d.userId) ?? []), d.token]);
  return {
    queues: new Map(queueRows.map((q) => [q.id, q.name])),
    orgs: new Map(orgs.map((o) => [o.id, o])),
    users: new Map(userRows.flat().map((u) => [u.id, u])),
    members: group(memberRows, (m) => m.organizationId),
    devices: deviceMap,
    browsers: group(browsers, (b) => b.ticketId),
    templates: events.some((e) => CUSTOMER_TYPES.has(e.type)) ? await templateOverrides(deps, orgIds) : [],
    whatsappTickets: new Set(channels.map((r) => r.ticketId)),
    whatsapp: new Map(
      whatsapp.map((r) => [
        r.organizationId,
        {
          phoneNumberId: r.phoneNumberId,
          templates: {
            joined: r.joinedTemplate,
            called: r.calledTemplate,
            almostCalled: r.almostCalledTemplate,
            reminder: r.reminderTemplate,
          },
        },
      ]),
    ),
  };
}

function valuesOf(event: DomainEventMessage, ctx: NotificationContext): TemplateValues {
  const d = event.data;
  const memberName = () => {
    const u = ctx.users.get(String(d.userId));
    return u ? `${u.firstName} ${u.lastName}` : null;
  };
  return {
    code: str(d.displayCode),
    queue: event.queueId ? (ctx.queues.get(event.queueId) ?? null) : null,
    position: typeof d.position === "number" ? d.position : null,
    wait: typeof d.estimatedWaitMinutes === "number" ? d.estimatedWaitMinutes : null,
    ahead: typeof d.ahead === "number" ? d.ahead : 3,
    reason: str(d.reason),
    from: str(d.from),
    to: str(d.to),
    used: typeof d.used === "number" ? d.used : null,
    max: typeof d.maxCapacity === "number" ? d.maxCapacity : null,
    name: event.type === "member.joined" ? memberName() : null,
    role: str(d.role),
    counter: str(d.counter),
  };
}

function dataOf(event: DomainEventMessage): Record<string, string> {
  const out: Record<string, string> = { type: event.type, eventId: event.id };
  if (event.ticketId) out.ticketId = event.ticketId;
  if (event.queueId) out.queueId = event.queueId;
  if (typeof event.data.displayCode === "string") out.displayCode = event.data.displayCode;
  return out;
}

/**
 * A ghost ticket (a clerk's walk-in or VIP) tells nobody, except by SMS the number the clerk typed
 * for the customer: that number is the customer's own request to be texted.
 */
function ghostWithPhone(event: DomainEventMessage): boolean {
  return event.data?.isGhostMode === true && CUSTOMER_TYPES.has(event.type) && str(event.data.phone) !== null;
}

/** Whether an event is one anybody hears of. */
function told(event: DomainEventMessage): boolean {
  return (CUSTOMER_TYPES.has(event.type) || OPERATOR_TYPES.has(event.type)) && (event.data?.isGhostMode !== true || ghostWithPhone(event));
}

/** The deliveries one event gives rise to (empty for ghost tickets without a phone and untold events). */
export function deliveriesFor(event: DomainEventMessage, ctx: NotificationContext): Delivery[] {
  if (!told(event)) return [];
  if (event.data.isGhostMode === true)
    return deliveriesFor({ ...event, data: { ...event.data, isGhostMode: false } }, ctx).filter(
      (d) => d.channel === "sms" || d.channel === "whatsapp",
    );
  const org = ctx.orgs.get(event.organizationId);
  if (!org) return [];
  const type = event.type as string as TemplateKey;
  const values = valuesOf(event, ctx);
  const data = dataOf(event);
  const base = { eventId: event.id, organizationId: event.organizationId, type: event.type, data };
  const out: Delivery[] = [];
  // A customer's message in the business's own words when it wrote some (queue, then organization).
  const say = (language: Language) =>
    render(
      type,
      language,
      values,
      isCustomerTemplateKey(type)
        ? effectiveTemplate(ctx.templates, event.organizationId, type, language, event.queueId ?? null)
        : undefined,
    );
  const toUser = (user: UserRow) => {
    const text = say(pickLanguage(user.language, org.defaultLanguage));
    out.push({ ...base, ...text, channel: "in_app", target: { kind: "user", userId: user.id } });
    for (const token of ctx.devices.get(user.id) ?? []) out.push({ ...base, ...text, channel: "push", target: { kind: "device", token } });
  };

  if (CUSTOMER_TYPES.has(event.type)) {
    // A transfer's new ticket is announced by ticket.transferred on the old one.
    if (event.type === "ticket.created" && event.data.transferredFromId) return [];
    // A join by text (SMS or WhatsApp) was answered in the conversation with its code and place:
    // the join's own message by phone would say it twice (docs/conversations.md, join by text).
    const joinedByText = event.type === "ticket.created" && event.data.source === "sms";
    const userId = customerUserId(event);
    const user = userId ? ctx.users.get(userId) : undefined;
    if (user && REMINDER_TYPES.has(event.type) && !user.ticketReminders) return [];
    if (user) toUser(user);
    const ticketLanguage = str(event.data.language);
    // Joins accept spaces, dots and brackets in a number; providers want the bare digits.
    const phone = str(event.data.phone)?.replace(/[\s().-]/g, "") ?? null;
    const plan = entitlements({ plan: org.plan ?? "starter" });
    if (phone && !joinedByText && SMS_TYPES.has(event.type) && plan.features.sms && (!user || user.smsNotifications)) {
      const language = pickLanguage(user?.language, ticketLanguage, org.defaultLanguage);
      const text = say(language);
      // The customer chose WhatsApp at the join: the same message, from the business's WhatsApp number.
      const whatsapp = event.ticketId && ctx.whatsappTickets.has(event.ticketId) ? ctx.whatsapp.get(event.organizationId) : undefined;
      if (whatsapp) {
        const parameters = [String(values.code ?? ""), String(values.queue ?? "")];
        out.push({
          ...base,
          ...text,
          // A WhatsApp message that does not go is sent once by SMS instead (docs/notifications.md).
          data: { ...data, ...whatsappData(whatsapp, event.organizationId, event.type, language, parameters), [WHATSAPP_FALLBACK]: "sms" },
          channel: "whatsapp",
          target: { kind: "phone", phone },
          smsLimit: plan.features.smsPerMonth,
        });
      } else out.push({ ...base, ...text, channel: "sms", target: { kind: "phone", phone }, smsLimit: plan.features.smsPerMonth });
    }
    for (const b of event.ticketId ? (ctx.browsers.get(event.ticketId) ?? []) : []) {
      const text = say(pickLanguage(b.language, ticketLanguage, org.defaultLanguage));
      out.push({
        ...base,
        ...text,
        channel: "web_push",
        target: { kind: "browser", endpoint: b.endpoint, p256dh: b.p256dh, auth: b.auth },
      });
    }
    return out;
  }

  if (OPERATOR_TYPES.has(event.type)) {
    for (const m of ctx.members.get(event.organizationId) ?? []) {
      if (!ROLES.includes(m.role) || !(roleAllows(m.role, "QUEUE_OPERATE") || roleAllows(m.role, "ORG_MANAGE"))) continue;
      if (event.type === "member.joined" && m.userId === event.data.userId) continue;
      const user = ctx.users.get(m.userId);
      if (user) toUser(user);
    }
  }
  return out;
}

/** Terminal ticket events end the visitor's browser subscriptions for those tickets. */
async function dropBrowserSubscriptions({ db }: Deps, events: DomainEventMessage[]): Promise<void> {
  const done = [...new Set(events.filter((e) => FINAL_TYPES.has(e.type) && e.ticketId).map((e) => e.ticketId!))];
  const deletes = nonEmpty(done.map((id) => db.delete(visitorPushSubscriptions).where(eq(visitorPushSubscriptions.ticketId, id))));
  if (deletes) await db.batch(deletes);
}

/** The customer events whose ticket's phone sent STOP to the organization (docs/conversations.md). */
async function silencedEvents(deps: Deps, events: DomainEventMessage[]): Promise<Set<string>> {
  const withPhone = events
    .filter((e) => CUSTOMER_TYPES.has(e.type) && str(e.data.phone))
    .map((e) => ({ eventId: e.id, organizationId: e.organizationId, phone: barePhone(String(e.data.phone)) }));
  if (withPhone.length === 0) return new Set();
  const out = await optedOutAmong(deps, withPhone);
  return new Set(withPhone.filter((p) => out.has(`${p.organizationId}|${p.phone}`)).map((p) => p.eventId));
}

/** Turns a batch of domain events into notifications; throws (so the batch is retried) only on D1 faults. */
export async function notifyEvents(deps: Deps, events: DomainEventMessage[]): Promise<DeliveryReport> {
  const relevant = events.filter(told);
  if (relevant.length === 0) return { inApp: 0, sent: 0, retrying: 0, failed: 0 };
  const ctx = await loadContext(deps, relevant);
  const silenced = await silencedEvents(deps, relevant);
  // A number that sent STOP hears nothing more of that ticket: no SMS, push nor web push (the in-app list stays).
  const deliveries = relevant.flatMap((e) => deliveriesFor(e, ctx)).filter((d) => d.channel === "in_app" || !silenced.has(d.eventId));
  const report = await deliver(deps, deliveries, now());
  await dropBrowserSubscriptions(deps, relevant);
  return report;
}

export type { Language };
