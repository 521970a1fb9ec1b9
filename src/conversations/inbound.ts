import { countryOfPhone } from "../domain/sms-policy";
import {
  isAnswerableSender,
  LATE_STEP_BACK_PLACES,
  readKeyword,
  replyText,
  type Keyword,
  type Language,
  type ReadText,
  type ReplyKey,
} from "../domain/keywords";
import { isLanguage } from "../domain/languages";
import type { Env } from "../env";
import { ApiError } from "../http/errors";
import { findQueue } from "../tickets/queues";
import { cancelTicket, getTicket, markPresent, stepBackTicket } from "../tickets/tickets";
import { barePhone, isOptedOut, optIn, optOut } from "../notifications/opt-outs";
import { recordMessage } from "./conversations";
import { safeParagraph } from "../domain/public-text";
import { MINUTE } from "../lib/time";

// A customer's text (SMS today, WhatsApp later), whatever provider carried it: matched to a live
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
}

export interface InboundOutcome {
  /** The text to answer with, or null to answer nothing. */
  reply: string | null;
  ticketId: string | null;
  keyword: Keyword | null;
  /** What was done: present, stepped_back, cancelled, status, opted_out, opted_in, help, message, refused, unknown_number, ignored, asked. */
  action: string;
}

interface LiveTicket {
  id: string;
  queue_id: string;
  organization_id: string;
  display_code: string;
  default_language: string | null;
  name: string;
}

/** Statuses a customer can still act on. */
const LIVE_STATUSES = ["waiting", "called", "serving", "held"];
const LIVE = `(${LIVE_STATUSES.map((s) => `'${s}'`).join(", ")})`;
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
async function ownerOfNumber(env: Env, to: string): Promise<string | null> {
  const row = await env.DB.prepare("SELECT organization_id FROM sms_senders WHERE number = ?")
    .bind(to)
    .first<{ organization_id: string }>();
  return row?.organization_id ?? null;
}

/**
 * The sender's live tickets, newest first, one per organization (the newest there), limited to
 * `organizationId` when the number belongs to one. The projection finds them; each one's room
 * says whether it is still live (the projection lags the room).
 */
async function liveTickets(env: Env, phone: string, organizationId: string | null, at: number): Promise<LiveTicket[]> {
  const rows = await env.DB.prepare(
    `SELECT t.id, t.queue_id, t.organization_id, t.display_code, o.default_language, o.name FROM tickets t
     JOIN organizations o ON o.id = t.organization_id
     WHERE t.phone = ? AND t.status IN ${LIVE} ${organizationId ? "AND t.organization_id = ?" : ""}
     ORDER BY t.created_at DESC LIMIT 20`,
  )
    .bind(...(organizationId ? [phone, organizationId] : [phone]))
    .all<LiveTicket>();
  const perOrganization = new Map<string, LiveTicket>();
  for (const row of rows.results) {
    if (perOrganization.has(row.organization_id)) continue;
    const queue = await findQueue(env, row.queue_id).catch(() => null);
    if (!queue) continue;
    const view = await getTicket(env, queue, row.id, at).catch(() => null);
    if (view && LIVE_STATUSES.includes(view.status)) perOrganization.set(row.organization_id, row);
    if (perOrganization.size >= MENU_SIZE) break;
  }
  return [...perOrganization.values()];
}

/** Every organization that ever had a ticket of this number (a STOP on a shared number covers them all). */
async function organizationsOfNumber(env: Env, phone: string): Promise<string[]> {
  const rows = await env.DB.prepare("SELECT DISTINCT organization_id FROM tickets WHERE phone = ?")
    .bind(phone)
    .all<{ organization_id: string }>();
  return rows.results.map((r) => r.organization_id);
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

async function readThread(env: Env, phone: string, to: string): Promise<Thread | null> {
  const row = await env.DB.prepare(
    "SELECT ticket_id, menu, pending_body, updated_at FROM inbound_threads WHERE phone = ? AND to_number = ?",
  )
    .bind(phone, to)
    .first<{ ticket_id: string | null; menu: string | null; pending_body: string | null; updated_at: number }>();
  if (!row) return null;
  return {
    ticketId: row.ticket_id,
    menu: row.menu ? (JSON.parse(row.menu) as MenuOption[]) : null,
    pendingBody: row.pending_body,
    updatedAt: row.updated_at,
  };
}

async function writeThread(env: Env, phone: string, to: string, thread: Omit<Thread, "updatedAt">, at: number): Promise<void> {
  await env.DB.prepare(
    `INSERT INTO inbound_threads (phone, to_number, ticket_id, menu, pending_body, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (phone, to_number) DO UPDATE SET ticket_id = excluded.ticket_id, menu = excluded.menu,
     pending_body = excluded.pending_body, updated_at = excluded.updated_at`,
  )
    .bind(phone, to, thread.ticketId, thread.menu ? JSON.stringify(thread.menu) : null, thread.pendingBody, at)
    .run();
}

/** A room refusal (the ticket moved on meanwhile) is an answer to the customer, not a fault. */
async function attempt(act: () => Promise<unknown>): Promise<boolean> {
  try {
    await act();
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return false;
    throw err;
  }
}

/** "1 Boulangerie Martin (A-042), 2 Mairie (B-003)": what the customer picks from. */
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

export async function receiveText(env: Env, input: InboundText, at: number): Promise<InboundOutcome> {
  const phone = barePhone(input.from);
  // Short codes, premium and non-mobile senders are never answered: a reply to them costs the business.
  if (!isAnswerableSender(phone)) return { reply: null, ticketId: null, keyword: null, action: "ignored" };
  const body = safeParagraph(input.body, INBOUND_TEXT_MAX);
  const to = input.to ? barePhone(input.to) : UNKNOWN_TO;
  const owner = input.to ? await ownerOfNumber(env, to) : null;
  const [tickets, thread] = await Promise.all([liveTickets(env, phone, owner, at), readThread(env, phone, to)]);

  // An answer to the menu: the chosen ticket takes the text the menu held.
  const menuAnswer = /^\s*(\d{1,2})\s*[.)]?\s*$/.exec(body);
  if (thread?.menu && menuAnswer && thread.updatedAt > at - MENU_TTL_MS) {
    const picked = thread.menu[Number(menuAnswer[1]) - 1];
    const ticket = picked ? tickets.find((t) => t.id === picked.ticketId) : undefined;
    if (ticket) {
      await writeThread(env, phone, to, { ticketId: ticket.id, menu: null, pendingBody: null }, at);
      return actOn(env, ticket, { ...input, body: thread.pendingBody ?? "STATUS" }, phone, at);
    }
  }

  const read = readKeyword(body);
  if (read.keyword === "stop" || read.keyword === "start") {
    // STOP on a number several businesses text from silences every one of them that texted this number.
    const organizations = owner ? [owner] : await organizationsOfNumber(env, phone);
    for (const org of organizations) {
      if (read.keyword === "stop") await optOut(env, org, phone, input.channel, at);
      else await optIn(env, org, phone);
    }
    const only = tickets.length === 1 ? tickets[0]! : null;
    const reply = replyText(languageOf(read, only, phone), read.keyword);
    if (only) await recordExchange(env, only, { ...input, body }, phone, read.keyword, reply, at);
    return { reply, ticketId: only?.id ?? null, keyword: read.keyword, action: read.keyword === "stop" ? "opted_out" : "opted_in" };
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
  if (ticket) return actOn(env, ticket, { ...input, body }, phone, at);

  // Live tickets at several businesses and no choice yet: ask, and keep the text until the answer.
  const language = read.language ?? languageOfNumber(phone);
  if (read.keyword === "help") return { reply: replyText(language, "help"), ticketId: null, keyword: "help", action: "help" };
  const menu = tickets.map((t) => ({ ticketId: t.id, organizationId: t.organization_id }));
  await writeThread(env, phone, to, { ticketId: null, menu, pendingBody: body }, at);
  return { reply: replyText(language, "choose", { options: menuText(tickets) }), ticketId: null, keyword: read.keyword, action: "asked" };
}

/** The text read on the one ticket it belongs to. */
async function actOn(env: Env, ticket: LiveTicket, input: InboundText, phone: string, at: number): Promise<InboundOutcome> {
  const read = readKeyword(input.body);
  const say = (key: ReplyKey, values: Parameters<typeof replyText>[2] = {}) => replyText(languageOf(read, ticket, phone), key, values);
  const queue = await findQueue(env, ticket.queue_id);
  const code = ticket.display_code;
  let action: string;
  let key: ReplyKey;
  let values: Parameters<typeof replyText>[2] = { code };
  switch (read.keyword) {
    case "here":
      [action, key] = (await attempt(() => markPresent(env, queue, ticket.id, at))) ? ["present", "here"] : ["refused", "refused"];
      break;
    case "late":
      [action, key] = (await attempt(() => stepBackTicket(env, queue, ticket.id, LATE_STEP_BACK_PLACES, at)))
        ? ["stepped_back", "late"]
        : ["refused", "refused"];
      break;
    case "cancel":
      [action, key] = (await attempt(() => cancelTicket(env, queue, ticket.id, at))) ? ["cancelled", "cancel"] : ["refused", "refused"];
      break;
    case "status": {
      const view = await getTicket(env, queue, ticket.id, at);
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
  const reply = read.keyword !== "help" && (await isOptedOut(env, ticket.organization_id, phone)) ? null : say(key, values);
  await recordExchange(env, ticket, input, phone, read.keyword, reply, at);
  return { reply, ticketId: ticket.id, keyword: read.keyword, action };
}

/** The customer's text and our answer, on the ticket's conversation. */
async function recordExchange(
  env: Env,
  ticket: LiveTicket,
  input: InboundText,
  phone: string,
  keyword: Keyword | null,
  reply: string | null,
  at: number,
): Promise<void> {
  const base = { organizationId: ticket.organization_id, ticketId: ticket.id, queueId: ticket.queue_id, channel: input.channel, phone };
  await recordMessage(env, { ...base, direction: "in", body: input.body, keyword, authorId: null, deliveryEventId: null }, at);
  if (reply !== null) {
    await recordMessage(env, { ...base, direction: "out", body: reply, keyword: null, authorId: null, deliveryEventId: null }, at + 1);
  }
}
