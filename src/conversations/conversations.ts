import { count, eq, sql } from "drizzle-orm";
import { notificationDeliveries, ticketMessages, tickets } from "../db/schema";
import type { ListWindow } from "../http/cursor";
import { keysetPage } from "../http/keyset";
import { ApiError, notFound } from "../http/errors";
import { randomString } from "../lib/ids";
import { iso } from "../lib/time";
import { deliver } from "../notifications/notification-delivery";
import { sendBusinessSms } from "../notifications/notifications";
import { isOptedOut } from "../notifications/opt-outs";
import { whatsappReplyNumber } from "../notifications/whatsapp";
import { newId } from "../lib/ids";
import type { Deps } from "../http/deps";

// A ticket's conversation (docs/conversations.md): the customer's texts and our answers, both
// ways, each outbound one with the state of its delivery. Staff replies go by the customer's
// channel: WhatsApp free text when they use WhatsApp and their 24-hour window is open, else the
// business's own SMS (the plan's SMS feature, the day's ceiling and the month's allowance apply).

export type MessageDirection = "in" | "out";
export type MessageChannel = "sms" | "whatsapp" | "ussd";
export type MessageStatus = "received" | "queued" | "sent" | "delivered" | "failed";

export interface NewMessage {
  organizationId: string;
  ticketId: string;
  queueId: string;
  direction: MessageDirection;
  channel: MessageChannel;
  phone: string;
  body: string;
  keyword: string | null;
  authorId: string | null;
  deliveryEventId: string | null;
}

export async function recordMessage({ db }: Deps, m: NewMessage, at: number): Promise<string> {
  const id = `msg_${randomString(20)}`;
  await db.insert(ticketMessages).values({
    id,
    organizationId: m.organizationId,
    ticketId: m.ticketId,
    queueId: m.queueId,
    direction: m.direction,
    channel: m.channel,
    phone: m.phone,
    body: m.body,
    keyword: m.keyword,
    authorId: m.authorId,
    deliveryEventId: m.deliveryEventId,
    createdAt: at,
  });
  return id;
}

/** A message as the conversation lists it: its row and its delivery's state. */
interface MessageRow {
  id: string;
  direction: MessageDirection;
  channel: MessageChannel;
  body: string;
  keyword: string | null;
  authorId: string | null;
  deliveryEventId: string | null;
  deliveryStatus: string | null;
  createdAt: number;
}

/** A delivery row's state, as the conversation shows it. */
export function messageStatusOf(deliveryStatus: string | null, direction: MessageDirection): MessageStatus {
  if (direction === "in") return "received";
  switch (deliveryStatus) {
    case null:
      // An answer carried in the provider's own reply (TwiML): sent with the request's answer.
      return "sent";
    case "pending":
    case "retrying":
    case "queued":
      return "queued";
    case "sent":
      return "sent";
    case "delivered":
      return "delivered";
    default:
      return "failed";
  }
}

export function messageRecord(r: MessageRow) {
  return {
    id: r.id,
    direction: r.direction,
    channel: r.channel,
    body: r.body,
    keyword: r.keyword,
    authorId: r.authorId,
    status: messageStatusOf(r.deliveryStatus, r.direction),
    deliveryEventId: r.deliveryEventId,
    createdAt: iso(r.createdAt),
  };
}
export type MessageRecord = ReturnType<typeof messageRecord>;

/** The conversation, oldest first (a chat reads downwards). */
export async function listMessages({ db }: Deps, ticketId: string, window: ListWindow) {
  const m = ticketMessages;
  const d = notificationDeliveries;
  const [page, total] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: m,
        cursorColumn: m.id,
        owner: eq(m.ticketId, ticketId),
        where: eq(m.ticketId, ticketId),
        // Two messages of the same millisecond keep the order they were written in (rowid).
        keys: [
          { column: m.createdAt, direction: "asc" },
          { column: sql`${m}.rowid`, direction: "asc" },
        ],
      },
      (c) =>
        db
          .select({
            id: m.id,
            direction: m.direction,
            channel: m.channel,
            body: m.body,
            keyword: m.keyword,
            authorId: m.authorId,
            deliveryEventId: m.deliveryEventId,
            deliveryStatus: d.status,
            createdAt: m.createdAt,
          })
          .from(m)
          // A delivery's key is its event, channel and phone (notification-delivery.ts).
          .leftJoin(d, eq(d.key, sql`${m.deliveryEventId} || ':' || ${m.channel} || ':' || ${m.phone}`))
          .where(c.where)
          .orderBy(...c.orderBy)
          .limit(c.limit)
          .offset(c.offset)
          .all(),
    ),
    db.select({ n: count() }).from(m).where(eq(m.ticketId, ticketId)).get(),
  ]);
  return { items: page.rows.map(messageRecord), hasMore: page.hasMore, total: total?.n ?? 0 };
}

/**
 * A member's free text to the customer by WhatsApp, inside the window: not counted in the SMS
 * allowance (as the replies to the customer's own messages are not). The delivery's event id and
 * its state (sent, queued for a retry, failed).
 */
export async function sendWhatsappStaffReply(
  deps: Deps,
  ticket: { id: string; organizationId: string },
  input: { phone: string; phoneNumberId: string; text: string; sentBy: string },
  at: number,
): Promise<{ id: string; status: "sent" | "queued" | "failed" }> {
  const id = newId("ntf");
  const report = await deliver(
    deps,
    [
      {
        eventId: id,
        organizationId: ticket.organizationId,
        type: "whatsapp.ticket_reply",
        channel: "whatsapp",
        target: { kind: "phone", phone: input.phone },
        title: "",
        body: input.text,
        data: { waOrganizationId: ticket.organizationId, waPhoneNumberId: input.phoneNumberId, ticketId: ticket.id, sentBy: input.sentBy },
        countUsage: false,
      },
    ],
    at,
  );
  return { id, status: report.sent > 0 ? "sent" : report.retrying > 0 ? "queued" : "failed" };
}

/** The phone the customer gave at the join, as the tickets projection holds it. */
async function phoneOfTicket({ db }: Deps, ticketId: string): Promise<string | null> {
  const row = await db.select({ phone: tickets.phone }).from(tickets).where(eq(tickets.id, ticketId)).get();
  if (!row) throw notFound("Ticket");
  return row.phone;
}

/**
 * A member's free text to the ticket's customer, through the channel they use: WhatsApp inside
 * the window, else SMS. 409 CONFLICT when the ticket has no phone or the number said STOP; the
 * plan and caps of any business SMS for an SMS (402, 403 QUOTA_EXCEEDED).
 */
export async function sendStaffReply(
  deps: Deps,
  ticket: { id: string; queueId: string; organizationId: string },
  text: string,
  authorId: string,
  at: number,
): Promise<MessageRecord> {
  const phone = await phoneOfTicket(deps, ticket.id);
  if (!phone) {
    throw new ApiError("CONFLICT", "This ticket's customer gave no phone number to answer on", { field: "ticketId", reason: "no_phone" });
  }
  if (await isOptedOut(deps, ticket.organizationId, phone)) {
    throw new ApiError("CONFLICT", "This number sent STOP: nothing is sent to it until it sends START", {
      field: "ticketId",
      reason: "opted_out",
    });
  }
  const phoneNumberId = await whatsappReplyNumber(deps, ticket, phone, at);
  const channel = phoneNumberId ? "whatsapp" : "sms";
  const sent = phoneNumberId
    ? await sendWhatsappStaffReply(deps, ticket, { phone, phoneNumberId, text, sentBy: authorId }, at)
    : await sendBusinessSms(deps, ticket.organizationId, { phone, message: text, purpose: "ticket_reply", sentBy: authorId }, at);
  const id = await recordMessage(
    deps,
    {
      organizationId: ticket.organizationId,
      ticketId: ticket.id,
      queueId: ticket.queueId,
      direction: "out",
      channel,
      phone,
      body: text,
      keyword: null,
      authorId,
      deliveryEventId: sent.id,
    },
    at,
  );
  return {
    id,
    direction: "out",
    channel,
    body: text,
    keyword: null,
    authorId,
    status: messageStatusOf(sent.status === "queued" ? "retrying" : sent.status, "out"),
    deliveryEventId: sent.id,
    createdAt: iso(at),
  };
}
