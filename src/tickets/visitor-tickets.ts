import { sha256Hex } from "../lib/crypto";
import { credentialForm, signCredential, type CredentialForm } from "../lib/credentials";
import type { DeferRequest, TicketView, VisitorTicketData } from "../queue-room/contract";
import type { QueueRow } from "../http/credentials/queues";
import { inRoom, roomOf } from "./queue-rooms";
import { deferBounds, issueTicket, type JoinInput } from "./tickets";
import type { Deps } from "../http/deps";

// The visitor's ticket token (docs/widget.md): a capability for one ticket, handed once by the
// widget join. 128 random bits and their MAC (src/lib/credentials.ts), base64url; the queue's
// room keeps only its SHA-256 and forgets it when the ticket is cancelled or finished.

const TOKEN_BYTES = 16;
/** A token we signed: 22 base64url characters of randomness, then 22 of their MAC. */
const SIGNED_TICKET_TOKEN = /^[A-Za-z0-9_-]{44}$/;
/** The tokens handed before they were signed (256 random bits): judged by the room only. */
const LEGACY_TICKET_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function ticketTokenForm({ env }: Deps, token: string): Promise<CredentialForm> {
  return credentialForm(env, token, { signed: SIGNED_TICKET_TOKEN, legacy: LEGACY_TICKET_TOKEN }, "base64url");
}

function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function newTicketToken({ env }: Deps): Promise<string> {
  return signCredential(env, base64url(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES))), "base64url");
}

/** Takes a ticket whose token is kept (as its hash) by the room in the same change. */
export async function issueVisitorTicket(
  deps: Deps,
  queue: QueueRow,
  input: JoinInput,
  at: number,
): Promise<{ ticket: TicketView; token: string }> {
  const token = await newTicketToken(deps);
  const ticket = await issueTicket(deps, queue, input, at, await sha256Hex(token));
  return { ticket, token };
}

/** The ticket for its token's holder; null for a wrong token or a ticket no longer live. */
export async function readVisitorTicket(
  deps: Deps,
  queue: QueueRow,
  ticketId: string,
  token: string,
  at: number,
): Promise<VisitorTicketData | null> {
  return roomOf(deps, queue.id).query({
    question: "visitorTicket",
    ticketId,
    tokenHash: await sha256Hex(token),
    queueName: queue.name,
    at,
  });
}

/** "Leave the queue"; null for a wrong token. A ticket the room cannot cancel (being served) is its refusal. */
export async function leaveQueue(
  deps: Deps,
  queue: QueueRow,
  ticketId: string,
  token: string,
  at: number,
): Promise<VisitorTicketData | null> {
  const hash = await sha256Hex(token);
  return inRoom(deps, queue, (room) => room.command({ verb: "visitorCancel", ticketId, tokenHash: hash, queueName: queue.name, at }));
}

/** "Let others pass" for the holder of the ticket's token; null for a wrong token. */
export async function visitorStepBack(
  deps: Deps,
  queue: QueueRow,
  ticketId: string,
  token: string,
  places: number,
  at: number,
): Promise<VisitorTicketData | null> {
  const hash = await sha256Hex(token);
  return inRoom(deps, queue, (room) =>
    room.command({ verb: "visitorStepBack", ticketId, tokenHash: hash, places, queueName: queue.name, at }),
  );
}

/** "I'm running late" for the holder of the ticket's token (docs/visits.md, defer); null for a wrong token. */
export async function visitorDefer(
  deps: Deps,
  queue: QueueRow,
  ticketId: string,
  token: string,
  request: DeferRequest,
  at: number,
): Promise<VisitorTicketData | null> {
  const hash = await sha256Hex(token);
  const bounds = deferBounds(queue);
  return inRoom(deps, queue, (room) =>
    room.command({ verb: "visitorDefer", ticketId, tokenHash: hash, request, bounds, queueName: queue.name, at }),
  );
}
