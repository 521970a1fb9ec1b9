import { countryOfPhone } from "../domain/sms-policy";
import {
  isAnswerableSender,
  joinLanguages,
  joinRefusalText,
  keywordOfText,
  LATE_STEP_BACK_PLACES,
  lateMinutes,
  normalizeText,
  readKeyword,
  replyText,
  statusWord,
  type Keyword,
  type Language,
  type ReadText,
  type ReplyKey,
} from "../domain/keywords";
import { isLanguage } from "../domain/languages";
import { and, desc, eq, inArray, isNull, notExists } from "drizzle-orm";
import { inboundThreads, organizations, queues, smsSenders, tickets } from "../db/schema";
import { ApiError } from "../http/errors";
import { findQueue } from "../tickets/queues";
import { cancelTicket, deferTicket, getTicket, markPresent, stepBackTicket } from "../tickets/tickets";
import { joinQueue } from "../tickets/joins";
import type { QueueRow } from "../http/credentials/queues";
import { barePhone, isOptedOut, optIn, optOut } from "../notifications/opt-outs";
import { recordMessage } from "./conversations";
import { safeParagraph } from "../domain/public-text";
import { MINUTE } from "../lib/time";
import { recordFeedback, servedTicketToRate } from "../visits/feedback";
import { inboundGate, type InboundGate } from "./inbound-limits";
import { type Deps } from "../http/deps";

// A customer's text (SMS or WhatsApp), whatever provider carried it: matched to a live
// ticket of the business the conversation is with, read as a keyword or kept as a message for
// the staff, and answered with one short reply in the customer's language (docs/conversations.md).
// Which business: the one owning the number the text was sent to; on a number several businesses
// text from, the ticket the customer chose, or the only business with a live ticket of theirs;
// else the customer is asked (a short menu) and nothing acts until they answer (issue 44).

export type InboundChannel = "sms" | "whatsapp";

export interface InboundText {
  channel: InboundChannel;
  from: string;
  /** The number (or sender) the text was sent to; null when the provider does not say. */
  to: string | null;
  body: string;
  /**
   * The business the conversation is with, when the provider names it (WhatsApp: the receiving
   * phone_number_id's organization); else the owner of `to`, if any.
   */
  organizationId?: string | null;
}

export interface InboundOutcome {
  /** The text to answer with, or null to answer nothing. */
  reply: string | null;
  ticketId: string | null;
  keyword: Keyword | null;
  /**
   * What was done: present, stepped_back, deferred, cancelled, status, opted_out, opted_in, help, message, refused,
   * unknown_number, ignored, asked, feedback, limited (over an inbound limit: nothing acted, nothing answered).
   */
  action: string;
}

export interface LiveTicket {
  id: string;
  queue_id: string;
  organization_id: string;
  display_code: string;
  default_language: string | null;
  name: string;
}

/** Statuses a customer can still act on. */
const LIVE_STATUSES = ["waiting", "called", "serving", "held"];
/** The longest inbound text kept (ten SMS segments); the rest is cut. */
export const INBOUND_TEXT_MAX = 1_600;
/** How long a menu waits for the customer's answer. */
const MENU_TTL_MS = 30 * MINUTE;
/** Businesses listed in a menu at most (a customer with more live tickets is asked among the newest). */
const MENU_SIZE = 5;
/** The number everything without a To is filed under (the local stand-in may omit it). */
const UNKNOWN_TO = "-";

/** Countries where French is the usual language of a text, for a number we know nothing else of. */
const FRENCH_COUNTRIES = new Set([
  "FR",
  "BE",
  "CH",
  "LU",
  "MC",
  "CI",
  "SN",
  "BJ",
  "BF",
  "ML",
  "NE",
  "TG",
  "GN",
  "CM",
  "GA",
  "CG",
  "CD",
  "MG",
  "RE",
  "GP",
  "MQ",
]);

function languageOfNumber(phone: string): Language {
  const country = countryOfPhone(phone);
  return country && FRENCH_COUNTRIES.has(country) ? "fr" : "en";
}

/** The organization a number (or sender) belongs to; null for a number several organizations text from. */
async function ownerOfNumber({ db }: Deps, to: string): Promise<string | null> {
  const row = await db.select({ organizationId: smsSenders.organizationId }).from(smsSenders).where(eq(smsSenders.number, to)).get();
  return row?.organizationId ?? null;
}

/**
 * The sender's live tickets, newest first, one per organization (the newest there), limited to
 * `organizationId` when the number belongs to one. The projection finds them; each one's room
 * says whether it is still live (the projection lags the room).
 */
export async function liveTickets(deps: Deps, phone: string, organizationId: string | null, at: number): Promise<LiveTicket[]> {
  const { db } = deps;
  const rows: LiveTicket[] = await db
    .select({
      id: tickets.id,
      queue_id: tickets.queueId,
      organization_id: tickets.organizationId,
      display_code: tickets.displayCode,
      default_language: organizations.defaultLanguage,
      name: organizations.name,
    })
    .from(tickets)
    .innerJoin(organizations, eq(organizations.id, tickets.organizationId))
    .where(
      and(
        eq(tickets.phone, phone),
        inArray(tickets.status, LIVE_STATUSES),
        organizationId ? eq(tickets.organizationId, organizationId) : undefined,
      ),
    )
    .orderBy(desc(tickets.createdAt))
    .limit(20);
  const perOrganization = new Map<string, LiveTicket>();
  for (const row of rows) {
    if (perOrganization.has(row.organization_id)) continue;
    const queue = await findQueue(deps, row.queue_id).catch(() => null);
    if (!queue) continue;
    const view = await getTicket(deps, queue, row.id, at).catch(() => null);
    if (view && LIVE_STATUSES.includes(view.status)) perOrganization.set(row.organization_id, row);
    if (perOrganization.size >= MENU_SIZE) break;
  }
  return [...perOrganization.values()];
}

/** Every organization that ever had a ticket of this number (a STOP on a shared number covers them all). */
async function organizationsOfNumber({ db }: Deps, phone: string): Promise<string[]> {
  const rows = await db.selectDistinct({ organizationId: tickets.organizationId }).from(tickets).where(eq(tickets.phone, phone));
  return rows.map((r) => r.organizationId);
}

interface MenuOption {
  ticketId: string;
  organizationId: string;
}

interface Thread {
  ticketId: string | null;
  menu: MenuOption[] | null;
  pendingBody: string | null;
  updatedAt: number;
}

async function readThread({ db }: Deps, phone: string, to: string): Promise<Thread | null> {
  const row = await db
    .select({
      ticketId: inboundThreads.ticketId,
      menu: inboundThreads.menu,
      pendingBody: inboundThreads.pendingBody,
      updatedAt: inboundThreads.updatedAt,
    })
    .from(inboundThreads)
    .where(and(eq(inboundThreads.phone, phone), eq(inboundThreads.toNumber, to)))
    .get();
  if (!row) return null;
  const menu: MenuOption[] | null = row.menu ? JSON.parse(row.menu) : null;
  return { ...row, menu };
}

async function writeThread({ db }: Deps, phone: string, to: string, thread: Omit<Thread, "updatedAt">, at: number): Promise<void> {
  const row = {
    ticketId: thread.ticketId,
    menu: thread.menu ? JSON.stringify(thread.menu) : null,
    pendingBody: thread.pendingBody,
    updatedAt: at,
  };
  await db
    .insert(inboundThreads)
    .values({ phone, toNumber: to, ...row })
    .onConflictDoUpdate({ target: [inboundThreads.phone, inboundThreads.toNumber], set: row });
}

/** A room refusal (the ticket moved on meanwhile) is an answer to the customer, not a fault. */
async function attempt(act: () => Promise<unknown>): Promise<boolean> {
  return (await attemptValue(async () => (await act(), true))) ?? false;
}

/** What `act` answered, or null when it was refused (a 4xx). */
async function attemptValue<T>(act: () => Promise<T>): Promise<T | null> {
  try {
    return await act();
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return null;
    throw err;
  }
}

/** "1 Boulangerie Martin, 2 Mairie (B-003)": what the customer picks from. */
function menuText(tickets: LiveTicket[]): string {
  return tickets
    .map((t, i) => {
      const name = t.name.length > 30 ? `${t.name.slice(0, 29)}…` : t.name;
      return `${i + 1} ${name} (${t.display_code})`;
    })
    .join(", ");
}

/** The keyword's language (the organization's when the word is in several, as ESTADO), else the organization's, else the number's. */
const languageOf = (read: ReadText, ticket: LiveTicket | null, phone: string): Language => {
  const own = isLanguage(ticket?.default_language) ? ticket.default_language : null;
  if (own && read.languages.includes(own)) return own;
  return read.language ?? own ?? languageOfNumber(phone);
};

export async function receiveText(deps: Deps, input: InboundText, at: number): Promise<InboundOutcome> {
  const phone = barePhone(input.from);
  // Short codes, premium and non-mobile senders are never answered: a reply to them costs the business.
  if (!isAnswerableSender(phone)) return { reply: null, ticketId: null, keyword: null, action: "ignored" };
  const body = safeParagraph(input.body, INBOUND_TEXT_MAX);
  const to = input.to ? barePhone(input.to) : UNKNOWN_TO;
  const owner = input.organizationId ?? (input.to ? await ownerOfNumber(deps, to) : null);
  // Inbound limits (./inbound-limits.ts): the number first, then the business once it is known.
  const gate = inboundGate(deps, phone, at);
  if (!(await gate.number()) || (owner && !(await gate.organization(owner)))) return limited(deps, body, phone, owner, input.channel, at);
  const [tickets, thread] = await Promise.all([liveTickets(deps, phone, owner, at), readThread(deps, phone, to)]);

  // An answer to the menu: the chosen ticket takes the text the menu held.
  const menuAnswer = /^\s*(\d{1,2})\s*[.)]?\s*$/.exec(body);
  if (thread?.menu && menuAnswer && thread.updatedAt > at - MENU_TTL_MS) {
    const picked = thread.menu[Number(menuAnswer[1]) - 1];
    const ticket = picked ? tickets.find((t) => t.id === picked.ticketId) : undefined;
    if (ticket) {
      if (!(await gate.organization(ticket.organization_id))) return LIMITED;
      await writeThread(deps, phone, to, { ticketId: ticket.id, menu: null, pendingBody: null }, at);
      return actOn(deps, ticket, { ...input, body: thread.pendingBody ?? "STATUS" }, phone, at);
    }
  }

  // A queue's join keyword ("MAIRIE", "JOIN MAIRIE"): a ticket through the one join.
  const asked = keywordOfText(body);
  const queue = asked ? await queueOfKeyword(deps, asked, owner) : null;
  if (queue) {
    if (!(await gate.organization(queue.organizationId))) return LIMITED;
    return joinByText(deps, queue, { ...input, body }, phone, to, at);
  }

  const read = readKeyword(body);
  if (read.keyword === "stop" || read.keyword === "start") {
    // STOP on a number several businesses text from silences every one of them that texted this number.
    const organizations = owner ? [owner] : await organizationsOfNumber(deps, phone);
    for (const org of organizations) {
      if (read.keyword === "stop") await optOut(deps, org, phone, input.channel, at);
      else await optIn(deps, org, phone);
    }
    const only = tickets.length === 1 ? tickets[0]! : null;
    const reply = replyText(languageOf(read, only, phone), read.keyword);
    if (only) await recordExchange(deps, only, { ...input, body }, phone, read.keyword, reply, at);
    return { reply, ticketId: only?.id ?? null, keyword: read.keyword, action: read.keyword === "stop" ? "opted_out" : "opted_in" };
  }

  // No live ticket: one digit 1–5 rates the visit just served (docs/visits.md, feedback).
  const score = /^\s*([1-5])\s*[.!]?\s*$/.exec(body);
  if (tickets.length === 0 && score) {
    const rated = await rateByText(deps, { ...input, body }, phone, owner, Number(score[1]), gate, at);
    if (rated) return rated;
  }

  if (tickets.length === 0) {
    return {
      reply: replyText(languageOf(read, null, phone), read.keyword === "help" ? "help" : "unknownNumber"),
      ticketId: null,
      keyword: read.keyword,
      action: "unknown_number",
    };
  }

  const chosen = thread?.ticketId ? tickets.find((t) => t.id === thread.ticketId) : undefined;
  const ticket = chosen ?? (tickets.length === 1 ? tickets[0]! : null);
  if (ticket) return (await gate.organization(ticket.organization_id)) ? actOn(deps, ticket, { ...input, body }, phone, at) : LIMITED;

  // Live tickets at several businesses and no choice yet: ask, and keep the text until the answer.
  const language = read.language ?? languageOfNumber(phone);
  if (read.keyword === "help") return { reply: replyText(language, "help"), ticketId: null, keyword: "help", action: "help" };
  const menu = tickets.map((t) => ({ ticketId: t.id, organizationId: t.organization_id }));
  await writeThread(deps, phone, to, { ticketId: null, menu, pendingBody: body }, at);
  return { reply: replyText(language, "choose", { options: menuText(tickets) }), ticketId: null, keyword: read.keyword, action: "asked" };
}

const LIMITED: InboundOutcome = { reply: null, ticketId: null, keyword: null, action: "limited" };

/**
 * Over an inbound limit: nothing acts and nothing is answered, except that a STOP is still
 * honoured (silently): a number's refusal of our texts is never lost to a limit.
 */
async function limited(
  deps: Deps,
  body: string,
  phone: string,
  owner: string | null,
  channel: InboundChannel,
  at: number,
): Promise<InboundOutcome> {
  if (readKeyword(body).keyword !== "stop") return LIMITED;
  for (const org of owner ? [owner] : await organizationsOfNumber(deps, phone)) await optOut(deps, org, phone, channel, at);
  return { ...LIMITED, keyword: "stop" };
}

/** The text read on the one ticket it belongs to. */
async function actOn(deps: Deps, ticket: LiveTicket, input: InboundText, phone: string, at: number): Promise<InboundOutcome> {
  const read = readKeyword(input.body);
  const say = (key: ReplyKey, values: Parameters<typeof replyText>[2] = {}) => replyText(languageOf(read, ticket, phone), key, values);
  const queue = await findQueue(deps, ticket.queue_id);
  const code = ticket.display_code;
  let action: string;
  let key: ReplyKey;
  let values: Parameters<typeof replyText>[2] = { code };
  switch (read.keyword) {
    case "here":
      [action, key] = (await attempt(() => markPresent(deps, queue, ticket.id, at))) ? ["present", "here"] : ["refused", "refused"];
      break;
    case "late": {
      // "RETARD 15": not called in the next 15 minutes (docs/visits.md, defer); a bare LATE lets a few pass.
      const minutes = lateMinutes(input.body);
      if (minutes === null) {
        [action, key] = (await attempt(() => stepBackTicket(deps, queue, ticket.id, LATE_STEP_BACK_PLACES, at)))
          ? ["stepped_back", "late"]
          : ["refused", "refused"];
        break;
      }
      if (minutes > queue.maxDeferMinutes && queue.maxDefers > 0) {
        [action, key, values] = ["refused", "deferTooFar", { code, max: queue.maxDeferMinutes }];
        break;
      }
      const after = await attemptValue(() => deferTicket(deps, queue, ticket.id, { until: at + minutes * MINUTE }, at));
      [action, key, values] = after
        ? ["deferred", "deferred", { code, minutes, wait: after.estimatedWaitMinutes }]
        : ["refused", "refused", { code }];
      break;
    }
    case "cancel":
      [action, key] = (await attempt(() => cancelTicket(deps, queue, ticket.id, at))) ? ["cancelled", "cancel"] : ["refused", "refused"];
      break;
    case "status": {
      const view = await getTicket(deps, queue, ticket.id, at);
      values = { code, position: view.position, wait: view.estimatedWaitMinutes };
      [action, key] = ["status", "status"];
      break;
    }
    case "help":
      [action, key] = ["help", "help"];
      break;
    default:
      [action, key] = ["message", "received"];
  }
  // A number that said STOP still acts on its ticket, but hears back only to HELP.
  const reply = read.keyword !== "help" && (await isOptedOut(deps, ticket.organization_id, phone)) ? null : say(key, values);
  await recordExchange(deps, ticket, input, phone, read.keyword, reply, at);
  return { reply, ticketId: ticket.id, keyword: read.keyword, action };
}

/**
 * A score sent after the visit: the verdict on the served ticket the number's organization (or
 * the only one on a shared number) served last within the window; null when there is none, and
 * the text goes on as any other.
 */
async function rateByText(
  deps: Deps,
  input: InboundText,
  phone: string,
  owner: string | null,
  score: number,
  gate: InboundGate,
  at: number,
): Promise<InboundOutcome | null> {
  const served = await servedTicketToRate(deps, phone, owner, at);
  if (!served) return null;
  if (!(await gate.organization(served.organizationId))) return LIMITED;
  const queue = await findQueue(deps, served.queueId).catch(() => null);
  if (!queue) return null;
  let key: ReplyKey = "feedbackAlready";
  if (!served.rated) {
    try {
      await recordFeedback(deps, await getTicket(deps, queue, served.id, at), { score, comment: null, channel: "sms" }, at);
      key = "feedback";
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      if (err.code !== "FEEDBACK_ALREADY_GIVEN") return null;
    }
  }
  const ticket: LiveTicket = {
    id: served.id,
    queue_id: served.queueId,
    organization_id: served.organizationId,
    display_code: served.displayCode,
    default_language: served.defaultLanguage,
    name: queue.name,
  };
  const language = languageOf({ keyword: null, language: null, languages: [] }, ticket, phone);
  const reply = (await isOptedOut(deps, served.organizationId, phone))
    ? null
    : replyText(language, key, { code: served.displayCode, score });
  await recordExchange(deps, ticket, input, phone, null, reply, at);
  return { reply, ticketId: served.id, keyword: null, action: key === "feedback" ? "feedback" : "refused" };
}

/** The customer's text and our answer, on the ticket's conversation. */
async function recordExchange(
  deps: Deps,
  ticket: LiveTicket,
  input: InboundText,
  phone: string,
  keyword: Keyword | null,
  reply: string | null,
  at: number,
): Promise<void> {
  const base = { organizationId: ticket.organization_id, ticketId: ticket.id, queueId: ticket.queue_id, channel: input.channel, phone };
  await recordMessage(deps, { ...base, direction: "in", body: input.body, keyword, authorId: null, deliveryEventId: null }, at);
  if (reply !== null) {
    await recordMessage(deps, { ...base, direction: "out", body: reply, keyword: null, authorId: null, deliveryEventId: null }, at + 1);
  }
}

/**
 * The queue a join keyword names: among the queues of the number's organization; on a number
 * several organizations text from, among those without a number of their own, and only when
 * exactly one queue answers to it (two organizations with the same word: neither is guessed).
 */
async function queueOfKeyword(deps: Deps, keyword: string, owner: string | null): Promise<QueueRow | null> {
  const { db } = deps;
  const named = and(eq(queues.smsKeyword, keyword), isNull(queues.archivedAt));
  const rows = owner
    ? await db
        .select({ id: queues.id })
        .from(queues)
        .where(and(eq(queues.organizationId, owner), named))
    : await db
        .select({ id: queues.id })
        .from(queues)
        .where(
          and(
            named,
            notExists(
              db.select({ number: smsSenders.number }).from(smsSenders).where(eq(smsSenders.organizationId, queues.organizationId)),
            ),
          ),
        )
        .limit(2);
  if (rows.length !== 1) return null;
  return findQueue(deps, rows[0]!.id).catch(() => null);
}

/** The userId of a ticket taken by text or USSD: no account, the phone is the customer's handle. */
export const PHONE_VISITOR = { sms: "visitor_sms", ussd: "visitor_ussd" } as const;

/**
 * Join by text: the one join (capacity, pause, quota, SMS caps refuse as anywhere), the phone
 * vouched for by the carrier that delivered its text. A number with a live ticket in that queue
 * is told its place instead of taking a second one. The answer is the code and the place.
 */
async function joinByText(deps: Deps, queue: QueueRow, input: InboundText, phone: string, to: string, at: number): Promise<InboundOutcome> {
  const { db } = deps;
  const org = await db
    .select({ name: organizations.name, defaultLanguage: organizations.defaultLanguage })
    .from(organizations)
    .where(eq(organizations.id, queue.organizationId))
    .get();
  // The join verb's language ("REJOINDRE": fr; the organization's when the verb is in several), else the organization's, else the number's.
  const verbLanguages = joinLanguages(input.body);
  const orgLanguage = isLanguage(org?.defaultLanguage) ? org.defaultLanguage : null;
  const language: Language =
    (orgLanguage && verbLanguages.includes(orgLanguage) ? orgLanguage : verbLanguages[0]) ?? orgLanguage ?? languageOfNumber(phone);
  const [held] = await liveTickets(deps, phone, queue.organizationId, at);
  if (held && held.queue_id === queue.id) return actOn(deps, held, { ...input, body: statusWord(language) }, phone, at);
  let ticket;
  try {
    ({ ticket } = await joinQueue(
      deps,
      queue,
      {
        ticket: {
          userId: PHONE_VISITOR.sms,
          partySize: 1,
          isPriority: false,
          isGhostMode: false,
          visitorName: null,
          phone,
          language,
          source: "sms",
        },
        // The carrier delivered the text from this number: it is its own caller and proven.
        caller: { address: phone, widgetKeyId: null },
        staffVouched: true,
        // Joined by WhatsApp (the wa.me link's text): the ticket's messages go back by WhatsApp.
        ...(input.channel === "whatsapp" ? { notifyBy: "whatsapp" as const } : {}),
      },
      at,
    ));
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    const reply = replyText(language, "joinRefused", { queue: queue.name, reason: joinRefusalText(language, err.code) });
    return { reply, ticketId: null, keyword: null, action: "join_refused" };
  }
  if (to !== UNKNOWN_TO) await writeThread(deps, phone, to, { ticketId: ticket.id, menu: null, pendingBody: null }, at);
  const reply = (await isOptedOut(deps, queue.organizationId, phone))
    ? null
    : replyText(language, "joined", {
        queue: queue.name,
        code: ticket.displayCode,
        position: ticket.position,
        wait: ticket.estimatedWaitMinutes,
      });
  const live: LiveTicket = {
    id: ticket.id,
    queue_id: queue.id,
    organization_id: queue.organizationId,
    display_code: ticket.displayCode,
    default_language: org?.defaultLanguage ?? null,
    name: org?.name ?? "",
  };
  await recordExchange(deps, live, input, phone, null, reply, at);
  return { reply, ticketId: ticket.id, keyword: null, action: "joined" };
}
