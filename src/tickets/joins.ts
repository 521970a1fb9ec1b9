import { joinLanguages } from "../catalog/join-languages";
import { isLanguage } from "../domain/languages";
import type { TicketView } from "../queue-room/contract";
import { NO_PHONE_VERIFICATION, startPhoneVerification, vouchForPhone, type PhoneVerificationView } from "../visits/phone-verification";
import type { QueueRow } from "../http/credentials/queues";
import { admitVisitorPhone } from "../notifications/sms-guard";
import { checkWhatsappChoice, chooseWhatsapp } from "../notifications/whatsapp";
import { issueTicket, type JoinInput } from "./tickets";
import { issueVisitorTicket } from "./visitor-tickets";
import { resolveRoute, withVisitEstimate } from "./visit-route";
import type { Deps } from "../http/deps";

// The one join (issue 36): every entry channel takes its ticket here: the app, the widget and
// the kiosk, the clerk's walk-in and VIP, remote join, QR and NFC scans. A join that gives a
// phone is admitted by the SMS guard first (exact counters per number, address and widget key,
// so a refused number never reaches a ticket); the units it took are given back when the join
// is then refused (a missing intake answer, a paused, closed or full queue, the month's quota),
// so only an accepted join spends them: three typos at a kiosk cost the number nothing.

export interface Join {
  /** The ticket's facts and the visitor's intake answers, as the channel gives them. */
  ticket: JoinInput;
  /**
   * Where a phone's SMS units are counted: the caller's address (CF-Connecting-IP) and the widget
   * key the join came through (null for a customer's own account). Needed when `ticket.phone` is set.
   */
  caller?: {
    address: string;
    widgetKeyId: string | null;
    /** A public join's Turnstile token (null: none sent); absent for a customer's own account (docs/limits.md). */
    botToken?: string | null;
  };
  /** The visitor is handed a token for the ticket (the widget and the kiosk: docs/widget.md). */
  withToken?: boolean;
  /**
   * Staff typed the phone for the person in front of them (a clerk's walk-in): under
   * `requirePhoneCode` no code is texted, the number counts as verified (docs/limits.md).
   */
  staffVouched?: boolean;
  /** The customer chose WhatsApp for the ticket's messages (docs/notifications.md); SMS otherwise. */
  notifyBy?: "sms" | "whatsapp" | undefined;
  /** docs/visits.md: the visit's services in order (the joined queue's first); checked before anything is spent. */
  route?: string[] | undefined;
}

export interface Joined {
  ticket: TicketView;
  /** The visitor's ticket token, when the join asked for one. */
  token: string | null;
  phoneVerification: PhoneVerificationView;
  /** How the ticket's messages reach its phone; null without a phone. */
  notifyBy: "sms" | "whatsapp" | null;
}

/**
 * The ticket's language (docs/languages.md): the visitor's when the organization offers it; else
 * (none chosen, or one not offered) the default of the queue's location (the service's only
 * location, or the one its locations agree on) when set and offered, else, for a language not
 * offered, the organization's default: never an error. null: no choice and no location default
 * (later messages take the account's, else the organization's).
 */
async function ticketLanguageOf(deps: Deps, queue: QueueRow, language: string | null): Promise<string | null> {
  if (language !== null && !isLanguage(language)) return language;
  const facts = await joinLanguages(deps, queue.organizationId, queue.serviceId);
  if (!facts) return language;
  const { offered } = facts;
  if (language !== null && offered.includes(language)) return language;
  const defaults = new Set(facts.locationDefaults);
  const [only] = defaults.size === 1 ? [...defaults] : [null];
  if (only && offered.includes(only)) return only;
  return language === null ? null : facts.organizationDefault;
}

export async function joinQueue(deps: Deps, queue: QueueRow, given: Join, at: number): Promise<Joined> {
  const [route, language] = await Promise.all([
    resolveRoute(deps, queue, given.route),
    ticketLanguageOf(deps, queue, given.ticket.language),
  ]);
  const ticket = { ...given.ticket, language, ...(route === null ? {} : { route }) };
  const join: Join = { ...given, ticket };
  const phone = join.ticket.phone;
  if (phone && !join.caller) throw new Error("a join with a phone needs its caller's address");
  const whatsapp = join.notifyBy === "whatsapp";
  if (whatsapp) await checkWhatsappChoice(deps, queue.organizationId, phone);
  const admitted =
    phone && join.caller
      ? await admitVisitorPhone(
          deps,
          {
            organizationId: queue.organizationId,
            phone,
            address: join.caller.address,
            widgetKeyId: join.caller.widgetKeyId,
            ...(join.caller.botToken !== undefined ? { botToken: join.caller.botToken } : {}),
          },
          at,
        )
      : null;
  let issued: { ticket: TicketView; token: string | null };
  try {
    issued = join.withToken
      ? await issueVisitorTicket(deps, queue, join.ticket, at)
      : { ticket: await issueTicket(deps, queue, join.ticket, at), token: null };
  } catch (refusal) {
    await admitted?.giveBack();
    throw refusal;
  }
  // Written as the join answers, before the room's events reach the notification consumer.
  if (whatsapp) await chooseWhatsapp(deps, queue.organizationId, issued.ticket.id, at);
  // Where the organization requires it, the number's first SMS is a one-time code (docs/limits.md),
  // unless staff vouch for the person.
  const verify = join.staffVouched ? vouchForPhone : startPhoneVerification;
  const phoneVerification =
    admitted && phone
      ? await verify(deps, { ...issued.ticket, queueName: queue.name }, phone, join.ticket.language, admitted, at)
      : NO_PHONE_VERIFICATION;
  return {
    ...issued,
    ticket: await withVisitEstimate(deps, issued.ticket, at),
    phoneVerification,
    notifyBy: phone ? (whatsapp ? "whatsapp" : "sms") : null,
  };
}
