import { countryOfPhone } from "../domain/sms-policy";
import {
  isAnswerableSender,
  LATE_STEP_BACK_PLACES,
  readKeyword,
  replyText,
  type Keyword,
  type Language,
  type ReplyKey,
} from "../domain/keywords";
import type { Env } from "../env";
import { ApiError } from "../http/errors";
import { findQueue } from "./queues";
import { cancelTicket, getTicket, markPresent, stepBackTicket } from "./tickets";
import { barePhone, isOptedOut, optIn, optOut } from "./opt-outs";
import { recordMessage } from "./conversations";

// A customer's text (SMS today, WhatsApp later), whatever provider carried it: matched to the
// sender's newest live ticket, read as a keyword or kept as a message for the staff, and
// answered with one short reply in the customer's language (docs/conversations.md).

export type InboundChannel = "sms" | "whatsapp";

export interface InboundText {
  channel: InboundChannel;
  from: string;
  body: string;
}

export interface InboundOutcome {
  /** The text to answer with, or null to answer nothing. */
  reply: string | null;
  ticketId: string | null;
  keyword: Keyword | null;
  /** What was done: present, stepped_back, cancelled, status, opted_out, opted_in, help, message, refused, unknown_number, ignored. */
  action: string;
}

interface LiveTicket {
  id: string;
  queue_id: string;
  organization_id: string;
  display_code: string;
  default_language: string | null;
}

/** Statuses a customer can still act on. */
const LIVE = "('waiting', 'called', 'serving', 'held')";

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

async function newestLiveTicket(env: Env, phone: string): Promise<LiveTicket | null> {
  return env.DB.prepare(
    `SELECT t.id, t.queue_id, t.organization_id, t.display_code, o.default_language FROM tickets t
     LEFT JOIN organizations o ON o.id = t.organization_id
     WHERE t.phone = ? AND t.status IN ${LIVE} ORDER BY t.created_at DESC LIMIT 1`,
  )
    .bind(phone)
    .first<LiveTicket>();
}

/** Every organization that ever had a ticket of this number (a STOP without a live ticket covers them all). */
async function organizationsOfNumber(env: Env, phone: string): Promise<string[]> {
  const rows = await env.DB.prepare("SELECT DISTINCT organization_id FROM tickets WHERE phone = ?")
    .bind(phone)
    .all<{ organization_id: string }>();
  return rows.results.map((r) => r.organization_id);
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

export async function receiveText(env: Env, input: InboundText, at: number): Promise<InboundOutcome> {
  const phone = barePhone(input.from);
  // Short codes, premium and non-mobile senders are never answered: a reply to them costs the business.
  if (!isAnswerableSender(phone)) return { reply: null, ticketId: null, keyword: null, action: "ignored" };
  const read = readKeyword(input.body);
  const ticket = await newestLiveTicket(env, phone);
  const language: Language =
    read.language ??
    (ticket?.default_language === "fr" || ticket?.default_language === "en" ? ticket.default_language : languageOfNumber(phone));
  const say = (key: ReplyKey, values: Parameters<typeof replyText>[2] = {}) => replyText(language, key, values);

  if (read.keyword === "stop" || read.keyword === "start") {
    const organizations = ticket ? [ticket.organization_id] : await organizationsOfNumber(env, phone);
    for (const org of organizations) {
      if (read.keyword === "stop") await optOut(env, org, phone, input.channel, at);
      else await optIn(env, org, phone);
    }
    const reply = say(read.keyword);
    if (ticket) await recordExchange(env, ticket, input, phone, read.keyword, reply, at);
    return { reply, ticketId: ticket?.id ?? null, keyword: read.keyword, action: read.keyword === "stop" ? "opted_out" : "opted_in" };
  }

  if (!ticket) {
    return {
      reply: say(read.keyword === "help" ? "help" : "unknownNumber"),
      ticketId: null,
      keyword: read.keyword,
      action: "unknown_number",
    };
  }

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
