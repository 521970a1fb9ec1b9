import { and, eq, isNull, ne } from "drizzle-orm";
import { isUniqueViolation } from "../db/errors";
import { organizations, queues, ussdCodes } from "../db/schema";
import { languageName, offeredLanguages } from "../domain/languages";
import { readUssdText, ussdLanguageOf, ussdScreens, type TicketFacts } from "../domain/ussd-menu";
import { ApiError, notFound } from "../http/errors";
import { addressKey } from "../lib/addresses";
import { constantTimeEqual, sha256Hex } from "../lib/crypto";
import { randomString } from "../lib/ids";
import { iso } from "../lib/time";
import { barePhone } from "../notifications/opt-outs";
import { joinQueue } from "../tickets/joins";
import { findQueue } from "../tickets/queues";
import { cancelTicket, getTicket, markPresent } from "../tickets/tickets";
import { recordMessage } from "./conversations";
import { liveTickets, PHONE_VISITOR, type LiveTicket } from "./inbound";
import { releaseReceipt, takeReceipt } from "./inbound-receipts";
import { inboundGate } from "./inbound-limits";
import { type Deps } from "../http/deps";

// USSD (docs/conversations.md): a customer on any phone dials the organization's code; the
// aggregator (Africa's Talking and its peers) calls us once per screen with the session's inputs
// joined by `*`, and shows our `CON`/`END` answer. The code names one organization, and only that
// organization's queues and tickets are ever read or touched. The aggregator proves itself with
// the code's secret (and, when listed, its addresses).

export interface UssdCodeRecord {
  serviceCode: string;
  allowedAddresses: string[] | null;
  createdAt: string;
  updatedAt: string;
}

type UssdRow = typeof ussdCodes.$inferSelect;

const recordOf = (r: UssdRow): UssdCodeRecord => ({
  serviceCode: r.serviceCode,
  allowedAddresses: r.allowedAddresses ?? null,
  createdAt: iso(r.createdAt),
  updatedAt: iso(r.updatedAt),
});

/** Creates or replaces the organization's code; every call issues a new secret (answered once). */
export async function registerUssdCode(
  { db }: Deps,
  organizationId: string,
  input: { serviceCode: string; allowedAddresses: string[] | null },
  at: number,
): Promise<UssdCodeRecord & { secret: string }> {
  const secret = `ussd_${randomString(32)}`;
  const secretHash = await sha256Hex(secret);
  try {
    const [row] = await db
      .insert(ussdCodes)
      .values({
        organizationId,
        serviceCode: input.serviceCode,
        secretHash,
        allowedAddresses: input.allowedAddresses,
        createdAt: at,
        updatedAt: at,
      })
      .onConflictDoUpdate({
        target: ussdCodes.organizationId,
        set: { serviceCode: input.serviceCode, secretHash, allowedAddresses: input.allowedAddresses, updatedAt: at },
      })
      .returning();
    return { ...recordOf(row!), secret };
  } catch (err) {
    if (isUniqueViolation(err, "service_code")) {
      throw new ApiError("CONFLICT", "This USSD code is registered by another organization", { field: "serviceCode" });
    }
    throw err;
  }
}

export async function ussdCodeOf({ db }: Deps, organizationId: string): Promise<UssdCodeRecord> {
  const row = await db.select().from(ussdCodes).where(eq(ussdCodes.organizationId, organizationId)).get();
  if (!row) throw notFound("USSD code");
  return recordOf(row);
}

export async function removeUssdCode({ db }: Deps, organizationId: string): Promise<void> {
  const gone = await db.delete(ussdCodes).where(eq(ussdCodes.organizationId, organizationId)).returning();
  if (gone.length === 0) throw notFound("USSD code");
}

/**
 * The organization a callback is for, or null when the code is unknown, the secret wrong or the
 * address not listed (the caller cannot tell which: nothing reveals what codes exist).
 */
export async function authenticateUssd(
  { db }: Deps,
  serviceCode: string,
  secret: string | null,
  address: string,
): Promise<{ organizationId: string; serviceCode: string } | null> {
  const row = await db.select().from(ussdCodes).where(eq(ussdCodes.serviceCode, serviceCode)).get();
  // Hashing a given secret first makes the comparison the same length whatever was sent.
  const given = await sha256Hex(secret ?? "");
  const matches = constantTimeEqual(given, row?.secretHash ?? "0".repeat(64));
  if (!row || !secret || !matches) return null;
  if (row.allowedAddresses && !row.allowedAddresses.map((a) => addressKey(a)).includes(addressKey(address))) return null;
  return { organizationId: row.organizationId, serviceCode: row.serviceCode };
}

export interface UssdSession {
  sessionId: string;
  serviceCode: string;
  phoneNumber: string;
  text: string;
}

const factsOf = (view: { displayCode: string; position: number | null; estimatedWaitMinutes: number | null }): TicketFacts => ({
  code: view.displayCode,
  position: view.position,
  wait: view.estimatedWaitMinutes,
});

/** A room's refusal is an answer on the screen, not a fault. */
async function refusedBy(act: () => Promise<unknown>): Promise<ApiError | null> {
  try {
    await act();
    return null;
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return err;
    throw err;
  }
}

/** The queues a customer may pick, in the order the list screen numbers them. */
async function openQueues({ db }: Deps, organizationId: string): Promise<{ id: string; name: string }[]> {
  return db
    .select({ id: queues.id, name: queues.name })
    .from(queues)
    .where(and(eq(queues.organizationId, organizationId), isNull(queues.archivedAt), ne(queues.status, "closed")))
    .orderBy(queues.createdAt, queues.id);
}

/** One screen of the session: its answer, `CON …` or `END …`. */
export async function answerUssd(deps: Deps, organizationId: string, session: UssdSession, at: number): Promise<string> {
  const { db } = deps;
  const [org] = await db
    .select({ name: organizations.name, defaultLanguage: organizations.defaultLanguage, languages: organizations.languages })
    .from(organizations)
    .where(eq(organizations.id, organizationId));
  const orgLanguage = ussdLanguageOf(org?.defaultLanguage);
  // The languages the organization offers, its default first: the "0" screen numbers them in this order.
  const offered = offeredLanguages(org?.languages);
  const choices = [orgLanguage, ...offered.filter((l) => l !== orgLanguage)];
  const { languageChoice, step } = readUssdText(session.text);
  const chosen = languageChoice === null ? orgLanguage : choices[languageChoice - 1];
  const language = chosen ?? orgLanguage;
  const phone = barePhone(session.phoneNumber);
  const screens = ussdScreens;
  // Every screen counts towards the inbound limits of the number and of the organization.
  const gate = inboundGate(deps, phone, at);
  if (!(await gate.number()) || !(await gate.organization(organizationId))) return screens.busy(language);

  if (!chosen || step.step === "invalid") return screens.invalid(language, session.serviceCode);
  if (step.step === "languages") return screens.languages(choices.map(languageName)).screen;
  if (step.step === "main") return screens.main(language, org?.name ?? "", choices.filter((l) => l !== language).map(languageName));
  if (step.step === "queues")
    return screens.queues(
      language,
      (await openQueues(deps, organizationId)).map((q) => q.name),
    ).screen;

  // Steps that act are taken once per session and input: the aggregator's retry of the same
  // screen tells the customer where they stand instead of acting again.
  const acts = step.step === "join" || step.step === "here" || step.step === "cancel";
  const receipt = `${session.serviceCode}:${session.sessionId}:${session.text}`;
  if (acts && !(await takeReceipt(deps, "ussd", receipt, at))) {
    const [ticket] = await liveTickets(deps, phone, organizationId, at);
    return ticket ? screens.position(language, await factsOfLive(deps, ticket, at)) : screens.noTicket(language);
  }
  try {
    return await act();
  } catch (err) {
    if (acts) await releaseReceipt(deps, "ussd", receipt);
    throw err;
  }

  async function act(): Promise<string> {
    if (step.step === "join") {
      const queues = await openQueues(deps, organizationId);
      const { shown } = screens.queues(
        language,
        queues.map((q) => q.name),
      );
      const picked = step.choice <= shown ? queues[step.choice - 1] : undefined;
      if (!picked) return screens.invalid(language, session.serviceCode);
      const queue = await findQueue(deps, picked.id);
      const [held] = await liveTickets(deps, phone, organizationId, at);
      if (held && held.queue_id === queue.id) return screens.already(language, await factsOfLive(deps, held, at));
      let joined;
      const refusal = await refusedBy(async () => {
        joined = await joinQueue(
          deps,
          queue,
          {
            ticket: {
              userId: PHONE_VISITOR.ussd,
              partySize: 1,
              isPriority: false,
              isGhostMode: false,
              visitorName: null,
              phone,
              language,
              source: "ussd",
            },
            // The operator's network carried the session from this number: it is its own caller, and proven.
            caller: { address: phone, widgetKeyId: null },
            staffVouched: true,
          },
          at,
        );
      });
      if (refusal || !joined) return screens.refused(language, refusal?.code ?? "other");
      const { ticket } = joined as Awaited<ReturnType<typeof joinQueue>>;
      const answer = screens.joined(language, factsOf(ticket), queue.name, session.serviceCode);
      await record(deps, { id: ticket.id, queue_id: queue.id, organization_id: organizationId }, phone, session.text, answer, at);
      return answer;
    }

    const [ticket] = await liveTickets(deps, phone, organizationId, at);
    if (!ticket) return screens.noTicket(language);
    const facts = await factsOfLive(deps, ticket, at);
    const queue = await findQueue(deps, ticket.queue_id);
    let answer: string;
    switch (step.step) {
      case "position":
        return screens.position(language, facts);
      case "confirmCancel":
        return screens.confirmCancel(language, facts);
      case "keep":
        return screens.kept(language, facts);
      case "here":
        answer = (await refusedBy(() => markPresent(deps, queue, ticket.id, at)))
          ? screens.hereRefused(language, facts)
          : screens.here(language, facts);
        break;
      case "cancel":
        answer = (await refusedBy(() => cancelTicket(deps, queue, ticket.id, at)))
          ? screens.cancelRefused(language, facts)
          : screens.cancelled(language, facts);
        break;
      default:
        return screens.invalid(language, session.serviceCode);
    }
    await record(deps, ticket, phone, session.text, answer, at);
    return answer;
  }
}

async function factsOfLive(deps: Deps, ticket: LiveTicket, at: number): Promise<TicketFacts> {
  const queue = await findQueue(deps, ticket.queue_id);
  return factsOf(await getTicket(deps, queue, ticket.id, at));
}

/** What the customer chose and what we answered, on the ticket's conversation (channel `ussd`). */
async function record(
  deps: Deps,
  ticket: Pick<LiveTicket, "id" | "queue_id" | "organization_id">,
  phone: string,
  inputs: string,
  answer: string,
  at: number,
): Promise<void> {
  const base = { organizationId: ticket.organization_id, ticketId: ticket.id, queueId: ticket.queue_id, channel: "ussd" as const, phone };
  await recordMessage(deps, { ...base, direction: "in", body: inputs, keyword: null, authorId: null, deliveryEventId: null }, at);
  await recordMessage(deps, { ...base, direction: "out", body: answer, keyword: null, authorId: null, deliveryEventId: null }, at + 1);
}
