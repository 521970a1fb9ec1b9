import { and, desc, eq, gte, sql } from "drizzle-orm";
import { organizations, ticketFeedback, tickets } from "../db/schema";
import type { DomainEventMessage } from "../domain/events";
import { ApiError, invalidState } from "../http/errors";
import type { QueueRow } from "../http/credentials/queues";
import { sha256Hex } from "../lib/crypto";
import { newId } from "../lib/ids";
import { DAY, iso, MINUTE } from "../lib/time";
import type { TicketView } from "../queue-room/contract";
import { roomOf } from "../tickets/queue-rooms";
import { getTicket } from "../tickets/tickets";
import { publishEvent } from "../webhooks/domain-events";
import { type Deps } from "../http/deps";

// The customer's verdict on a visit (docs/visits.md, feedback): a score 1–5 and an optional
// comment, once per ticket, after it was served and within 7 days of that. Given on the status
// page or the widget with the ticket's token (the room keeps a served ticket's token for this),
// or by an SMS reply of one digit (conversations/inbound.ts). Each verdict raises
// `ticket.feedback`; a score at or under LOW_SCORE_MAX raises `ticket.feedback_low` too.

/** How long after its service a ticket may still be rated. */
export const FEEDBACK_WINDOW_MS = 7 * DAY;
/** Scores at or under this raise `ticket.feedback_low`. */
export const LOW_SCORE_MAX = 2;
export const FEEDBACK_COMMENT_MAX = 1_000;

export type FeedbackChannel = "widget" | "sms";
export type FeedbackRow = typeof ticketFeedback.$inferSelect;

export interface FeedbackInput {
  score: number;
  comment: string | null;
  channel: FeedbackChannel;
}

export function feedbackRecord(row: FeedbackRow) {
  return {
    ticketId: row.ticketId,
    score: row.score,
    comment: row.comment,
    channel: row.channel,
    servedAt: iso(row.servedAt),
    createdAt: iso(row.createdAt),
  };
}

/** Where the customer stands: may they still give their verdict, and the one given. */
export function feedbackState(servedAt: number, given: FeedbackRow | undefined, at: number) {
  const closesAt = servedAt + FEEDBACK_WINDOW_MS;
  return {
    status: given ? ("given" as const) : at <= closesAt ? ("open" as const) : ("closed" as const),
    servedAt: iso(servedAt),
    closesAt: iso(closesAt),
    feedback: given ? feedbackRecord(given) : null,
  };
}

function feedbackEvent(type: "ticket.feedback" | "ticket.feedback_low", ticket: TicketView, row: FeedbackRow, at: number) {
  return {
    id: newId("evt"),
    type,
    organizationId: row.organizationId,
    queueId: row.queueId,
    ticketId: row.ticketId,
    occurredAt: iso(at),
    data: {
      serviceId: row.serviceId,
      displayCode: ticket.displayCode,
      status: ticket.status,
      assignedToId: row.operatorId,
      deskId: row.deskId,
      score: row.score,
      comment: row.comment,
      channel: row.channel,
      waitMinutes: row.waitMs === null ? null : Math.round((row.waitMs / MINUTE) * 10) / 10,
      servedAt: iso(row.servedAt),
      lowScoreMax: LOW_SCORE_MAX,
    },
  } satisfies DomainEventMessage;
}

/**
 * Records the verdict on a served ticket, once: 409 INVALID_STATE before it is served, 410
 * FEEDBACK_WINDOW_CLOSED past the window, 409 FEEDBACK_ALREADY_GIVEN the second time (the
 * primary key decides under concurrency). Then publishes the events.
 */
export async function recordFeedback(deps: Deps, ticket: TicketView, input: FeedbackInput, at: number): Promise<FeedbackRow> {
  const { db } = deps;
  if (ticket.status !== "served") throw invalidState(ticket.status, ["served"], "Feedback is taken once the ticket was served");
  const servedAt = ticket.servedAt ?? ticket.updatedAt;
  if (at > servedAt + FEEDBACK_WINDOW_MS) {
    throw new ApiError("FEEDBACK_WINDOW_CLOSED", "This visit is too old to be rated (7 days after its service)", {
      servedAt: iso(servedAt),
      closedAt: iso(servedAt + FEEDBACK_WINDOW_MS),
    });
  }
  const row = await db
    .insert(ticketFeedback)
    .values({
      ticketId: ticket.id,
      organizationId: ticket.organizationId,
      queueId: ticket.queueId,
      serviceId: ticket.serviceId,
      deskId: ticket.deskId,
      operatorId: ticket.assignedToId,
      score: input.score,
      comment: input.comment,
      channel: input.channel,
      ticketCreatedAt: ticket.createdAt,
      waitMs: ticket.calledAt === null ? null : Math.max(0, ticket.calledAt - ticket.createdAt),
      servedAt,
      createdAt: at,
    })
    .onConflictDoNothing()
    .returning()
    .get();
  if (!row) throw new ApiError("FEEDBACK_ALREADY_GIVEN", "This visit was rated already (once per ticket)");
  await publishEvent(deps, feedbackEvent("ticket.feedback", ticket, row, at));
  if (row.score <= LOW_SCORE_MAX) await publishEvent(deps, feedbackEvent("ticket.feedback_low", ticket, row, at));
  return row;
}

export async function feedbackOf({ db }: Deps, ticketId: string): Promise<FeedbackRow | undefined> {
  return db.select().from(ticketFeedback).where(eq(ticketFeedback.ticketId, ticketId)).get();
}

/**
 * The ticket the token opens, for its verdict; null for a wrong token (a 404, as for the
 * ticket's read). A live ticket is answered too: the caller refuses it (not served yet).
 */
async function ticketOfToken(deps: Deps, queue: QueueRow, ticketId: string, token: string, at: number): Promise<TicketView | null> {
  const opened = await roomOf(deps, queue.id).query({ question: "visitorVerdict", ticketId, tokenHash: await sha256Hex(token) });
  if (opened === null) return null;
  const ticket = await getTicket(deps, queue, ticketId, at).catch(() => null);
  if (ticket === null) return null;
  return opened.state === "served" && ticket.servedAt === null ? { ...ticket, servedAt: opened.servedAt } : ticket;
}

/** The visitor's verdict, with the ticket's token; null for a wrong token. */
export async function giveVisitorFeedback(
  deps: Deps,
  queue: QueueRow,
  ticketId: string,
  token: string,
  input: Omit<FeedbackInput, "channel">,
  at: number,
): Promise<FeedbackRow | null> {
  const ticket = await ticketOfToken(deps, queue, ticketId, token, at);
  if (ticket === null) return null;
  return recordFeedback(deps, ticket, { ...input, channel: "widget" }, at);
}

/** Where the visitor's verdict stands, with the ticket's token; null for a wrong token. */
export async function visitorFeedbackState(deps: Deps, queue: QueueRow, ticketId: string, token: string, at: number) {
  const ticket = await ticketOfToken(deps, queue, ticketId, token, at);
  if (ticket === null) return null;
  if (ticket.status !== "served" || ticket.servedAt === null) {
    return { status: "not_served" as const, servedAt: null, closesAt: null, feedback: null };
  }
  return feedbackState(ticket.servedAt, await feedbackOf(deps, ticketId), at);
}

/**
 * A served ticket of this phone that a one-digit SMS rates (conversations/inbound.ts): the
 * newest served within the window, of `organizationId` when the number texted belongs to one;
 * on a shared number, only when a single organization has one (never a guess between two).
 */
export async function servedTicketToRate(
  { db }: Deps,
  phone: string,
  organizationId: string | null,
  at: number,
): Promise<{
  id: string;
  queueId: string;
  organizationId: string;
  displayCode: string;
  defaultLanguage: string | null;
  rated: boolean;
} | null> {
  const rows = await db
    .select({
      id: tickets.id,
      queueId: tickets.queueId,
      organizationId: tickets.organizationId,
      displayCode: tickets.displayCode,
      defaultLanguage: organizations.defaultLanguage,
      rated: sql<number>`EXISTS (SELECT 1 FROM ${ticketFeedback} WHERE ${ticketFeedback.ticketId} = ${tickets.id})`,
    })
    .from(tickets)
    .innerJoin(organizations, eq(organizations.id, tickets.organizationId))
    .where(
      and(
        eq(tickets.phone, phone),
        eq(tickets.status, "served"),
        gte(tickets.servedAt, at - FEEDBACK_WINDOW_MS),
        organizationId ? eq(tickets.organizationId, organizationId) : undefined,
      ),
    )
    .orderBy(desc(tickets.servedAt))
    .limit(20)
    .all();
  const first = rows[0];
  if (!first) return null;
  if (rows.some((r) => r.organizationId !== first.organizationId)) return null;
  return { ...first, rated: Number(first.rated) === 1 };
}
