import type { DeskCandidate } from "../domain/desks";
import type { IntakeAnswers } from "../domain/intake";
import type { ConfirmMethod } from "../domain/remote-join";
import type { PreviousOutcome, QueueStatus, RecoveryOption } from "../domain/tickets";
import { iso } from "../lib/time";
import { isLanguage } from "../domain/languages";
import type {
  ArchiveResult,
  BoardData,
  BoardQueueData,
  Completion,
  DeferBounds,
  DeferRequest,
  NewTicket,
  PreviousCalls,
  QueueStatusData,
  QueueSummary,
  RemoteJoinAndTicket,
  RemoteLocation,
  Reservation,
  ReturnPlace,
  RouteSnapshot,
  RoomConfig,
  RoomResult,
  RoomRulesCopy,
  RoomSettings,
  SubjectErasure,
  SubjectMatch,
  SubjectTicket,
  TicketPage,
  TicketQuery,
  TicketView,
  TransferSnapshot,
  VerdictToken,
  VisitorTicketData,
} from "./types";

// The contract between a queue's room and everything outside it (docs/queue-room.md): the
// only module of queue-room/ that code outside imports. A room answers four calls besides the
// platform's handlers (fetch, alarm, the socket events):
//  - `configure`: the queue's catalog facts, once;
//  - `command`: a change of the line, one member of RoomCommand per verb;
//  - `query`: a read, one member of RoomQuery per question;
//  - `peer`: what a room (or a socket hub) asks another, one member of PeerMessage.
// Each union member names its answer in the map beside it (CommandResults, QueryResults,
// PeerResults), so a caller gets the answer of the verb it sent, without a cast. A new verb is
// one member here, one entry in its map and one handler in the room's table: the room's face
// does not change.

export type * from "./types";

/** The analytics drain's statements, which the backfill job replays over D1's projection (jobs/analytics-backfill.ts). */
export { analyticsDrainStatements } from "./projection";

// ---- commands: each changes the line in one storage transaction ------------------------------

export type RoomCommand =
  | { verb: "reconfigure"; settings: RoomSettings; at: number }
  | { verb: "setStatus"; status: QueueStatus; at: number }
  | { verb: "clear"; at: number }
  | { verb: "archive"; at: number }
  | { verb: "retire"; at: number }
  | { verb: "expireDue"; at: number }
  | { verb: "applyRules"; copy: RoomRulesCopy }
  /**
   * With `tokenHash`, the visitor's token for the new ticket is kept beside it. The rules of
   * `rulesVersion` (the queue row's) are checked first, then a unit of the organization's
   * monthly quota is taken from its ledger, given back if the join is refused. Every join
   * goes through both: there is no path around the rules and the quota.
   */
  | {
      verb: "join";
      input: NewTicket;
      at: number;
      tokenHash?: string;
      rulesVersion: number;
      /** The queue row may be one the Worker kept: refuse QUEUE_ROW_STALE if the room holds newer rules than it. */
      rowMayBeKept?: boolean;
    }
  /** `userId`: the calling member, refused while a break, closure or unavailability covers them. */
  | { verb: "callNext"; operatorId: string; at: number; counter?: string | null; userId?: string | null; rulesVersion?: number }
  /**
   * call-next after settling the caller's previous calls here (docs/floor.md), in one hop: with
   * `outcome` each of their open calls is served and completed or marked absent, without it the
   * latest is reported; both commit even when nothing is left to call.
   */
  | {
      verb: "callNextAfterPrevious";
      operatorId: string;
      at: number;
      counter: string | null;
      userId: string | null;
      rulesVersion: number;
      outcome: PreviousOutcome | null;
    }
  /**
   * A desk's call-next, first read of this queue (docs/desks.md): settles the caller's previous
   * calls at `deskId` here as `callNextAfterPrevious` does, then answers this queue's head; both
   * in one hop (issue 43). The rules are checked first: a caller on a break changes nothing.
   */
  | {
      verb: "deskHeadAfterPrevious";
      operatorId: string;
      deskId: string;
      at: number;
      userId: string | null;
      rulesVersion: number;
      outcome: PreviousOutcome | null;
    }
  /** Refused HEAD_MOVED when this queue's head no longer beats `bound` (docs/desks.md). */
  | {
      verb: "callAtDesk";
      operatorId: string;
      deskId: string;
      counter: string | null;
      bound: DeskCandidate | null;
      at: number;
      weights?: Record<string, number>;
    }
  | { verb: "finishServingOf"; operatorId: string; at: number }
  | { verb: "returnToLine"; ticketId: string; place: ReturnPlace; at: number }
  | { verb: "recall"; ticketId: string; at: number }
  | { verb: "hold"; ticketId: string; reason: string | null; at: number }
  | { verb: "resume"; ticketId: string; at: number }
  | { verb: "stepBack"; ticketId: string; places: number; at: number }
  /** A later turn (docs/visits.md): the owner's or staff's; the Worker gives the queue's bounds. */
  | { verb: "defer"; ticketId: string; request: DeferRequest; bounds: DeferBounds; at: number }
  | { verb: "present"; ticketId: string; at: number }
  /** `requiredAnswers`: the intake keys that must be answered first (the service's `at_serve` questions). */
  | { verb: "serve"; ticketId: string; at: number; requiredAnswers?: string[] }
  | { verb: "complete"; ticketId: string; at: number; result?: Completion; requiredAnswers?: string[] }
  | { verb: "skipAbsent"; ticketId: string; reason: string; at: number }
  | { verb: "cancel"; ticketId: string; at: number }
  | { verb: "assign"; ticketId: string; operatorId: string; at: number }
  | { verb: "recover"; ticketId: string; option: RecoveryOption; at: number }
  /** A verification scan: the scanner's live ticket is present; a remote join arrives by qr_scan. */
  | { verb: "presentOwn"; userId: string; at: number }
  /** The visitor's "let others pass" and "leave the queue", with the ticket's token (null: wrong token). */
  | { verb: "visitorStepBack"; ticketId: string; tokenHash: string; places: number; queueName: string; at: number }
  | { verb: "visitorCancel"; ticketId: string; tokenHash: string; queueName: string; at: number }
  | { verb: "visitorDefer"; ticketId: string; tokenHash: string; request: DeferRequest; bounds: DeferBounds; queueName: string; at: number }
  | { verb: "updateRemoteLocation"; ticketId: string; location: RemoteLocation; at: number }
  | { verb: "confirmRemote"; ticketId: string; method: ConfirmMethod; at: number }
  | { verb: "reserveTransfer"; ticketId: string; targetQueueId: string; at: number }
  | { verb: "releaseTransfer"; ticketId: string; handOffId: string; at: number }
  | { verb: "completeTransfer"; ticketId: string; handOffId: string; newTicketId: string; at: number }
  /** Answers the ticket the target admitted, or null once the hand-off is released here. */
  | { verb: "settleTransfer"; ticketId: string; at: number }
  | { verb: "admitTransferred"; snapshot: TransferSnapshot; prioritize: boolean; at: number }
  /** The next leg of a visit (docs/visits.md), admitted at most once per hand-off id (another room asks). */
  | { verb: "admitRouted"; snapshot: RouteSnapshot; at: number }
  /** One chunk of finished tickets leaves the room once D1 holds them (the alarm runs it). */
  | { verb: "archiveFinished"; at: number }
  /** Staff's intake answers, checked by the Worker (docs/visits.md). */
  | { verb: "setIntake"; ticketId: string; intake: IntakeAnswers | null; intakePersonal: IntakeAnswers | null; at: number }
  /** Staff put a label on a ticket (`add`) or take it off (docs/visits.md). */
  | { verb: "label"; ticketId: string; label: string; add: boolean; at: number }
  /** Staff make a waiting ticket VIP: into the priority lane, behind the VIPs already waiting (issue 27). */
  | { verb: "prioritize"; ticketId: string; at: number }
  | { verb: "unprioritize"; ticketId: string; at: number }
  /** A person's erasure (docs/personal-data.md): refused, changing nothing, while one of their tickets is live here. */
  | { verb: "eraseSubject"; match: SubjectMatch; at: number };

export interface CommandResults {
  reconfigure: RoomResult<QueueSummary>;
  setStatus: RoomResult<QueueSummary>;
  clear: RoomResult<{ cancelled: number }>;
  archive: RoomResult<QueueSummary>;
  retire: null;
  expireDue: { expired: number; nextDeadline: number | null; gone: boolean };
  applyRules: boolean;
  join: RoomResult<TicketView>;
  callNext: RoomResult<TicketView>;
  callNextAfterPrevious: RoomResult<{ ticket: TicketView; previous: PreviousCalls }>;
  deskHeadAfterPrevious: RoomResult<{ head: DeskCandidate | null; previous: PreviousCalls }>;
  callAtDesk: RoomResult<TicketView>;
  finishServingOf: RoomResult<number>;
  returnToLine: RoomResult<TicketView>;
  recall: RoomResult<TicketView>;
  hold: RoomResult<TicketView>;
  resume: RoomResult<TicketView>;
  stepBack: RoomResult<TicketView>;
  defer: RoomResult<TicketView>;
  present: RoomResult<TicketView>;
  serve: RoomResult<TicketView>;
  complete: RoomResult<TicketView>;
  skipAbsent: RoomResult<TicketView>;
  cancel: RoomResult<TicketView>;
  assign: RoomResult<TicketView>;
  recover: RoomResult<TicketView>;
  presentOwn: RoomResult<TicketView>;
  visitorStepBack: RoomResult<VisitorTicketData | null>;
  visitorCancel: RoomResult<VisitorTicketData | null>;
  visitorDefer: RoomResult<VisitorTicketData | null>;
  updateRemoteLocation: RoomResult<RemoteJoinAndTicket>;
  confirmRemote: RoomResult<RemoteJoinAndTicket>;
  reserveTransfer: RoomResult<Reservation>;
  releaseTransfer: RoomResult<null>;
  completeTransfer: RoomResult<TicketView>;
  settleTransfer: RoomResult<string | null>;
  admitTransferred: RoomResult<TicketView>;
  admitRouted: RoomResult<TicketView>;
  archiveFinished: ArchiveResult;
  setIntake: RoomResult<TicketView>;
  label: RoomResult<TicketView>;
  prioritize: RoomResult<TicketView>;
  unprioritize: RoomResult<TicketView>;
  eraseSubject: SubjectErasure;
}

// ---- queries: reads, no change of the line ---------------------------------------------------

export type RoomQuery =
  /** Null until configured, or once the queue is deleted (as for widgetStatus and widgetBoard). */
  | { question: "summary"; at: number }
  /** The ticket this queue would call next for a desk; refused OPERATOR_UNAVAILABLE when `userId` may not call now. */
  | { question: "deskHead"; at: number; userId?: string | null; rulesVersion?: number }
  | { question: "ticket"; ticketId: string; at: number }
  | { question: "tickets"; query: TicketQuery; at: number }
  /** The user's live (waiting or called) ticket here, the oldest first; null when none. */
  | { question: "liveTicketOf"; userId: string; at: number }
  /** The ticket for the holder of its token; null for a wrong token or a finished ticket. */
  | { question: "visitorTicket"; ticketId: string; tokenHash: string; queueName: string; at: number }
  /** Whether the token is the ticket's, live or served (docs/visits.md, feedback); null for a wrong token. */
  | { question: "visitorVerdict"; ticketId: string; tokenHash: string }
  | { question: "remoteJoin"; ticketId: string; at: number }
  | { question: "widgetStatus"; at: number }
  | { question: "widgetBoard"; at: number }
  /** Every ticket here of a person (docs/personal-data.md), live or finished, with what it holds about them. */
  | { question: "subjectTickets"; match: SubjectMatch };

export interface QueryResults {
  summary: QueueSummary | null;
  deskHead: RoomResult<DeskCandidate | null>;
  ticket: RoomResult<TicketView>;
  tickets: RoomResult<TicketPage>;
  liveTicketOf: RoomResult<TicketView | null>;
  visitorTicket: VisitorTicketData | null;
  visitorVerdict: VerdictToken | null;
  remoteJoin: RoomResult<RemoteJoinAndTicket>;
  widgetStatus: QueueStatusData | null;
  widgetBoard: BoardData | null;
  subjectTickets: SubjectTicket[];
}

// ---- the protocol between rooms and socket hubs ----------------------------------------------

export type PeerMessage =
  /** Another room (or a hub) relays this queue's updates to its sockets; answers the status now. */
  | { kind: "watch"; watcher: string; config: RoomConfig; name: string }
  /** An update of `queueId` for the sockets of the receiver that follow it; answers how many took it. */
  | { kind: "deliverUpdate"; queueId: string; text: string; boardText?: string }
  | { kind: "board"; at: number }
  /** A socket in `watcher` follows a ticket of this queue with its token. */
  | { kind: "watchTicket"; watcher: string; ticketId: string; token: string; at: number }
  | { kind: "deliverTicketUpdate"; ticketId: string; text: string; final: boolean }
  /** The source of a hand-off gives it up: the target will never admit it (answers the ticket it admitted, if any). */
  | { kind: "abandonTransfer"; handOffId: string };

export interface PeerResults {
  watch: RoomResult<QueueStatusData | null>;
  deliverUpdate: number;
  board: BoardData | null;
  watchTicket: VisitorTicketData | null;
  deliverTicketUpdate: number;
  abandonTransfer: RoomResult<string | null>;
}

export type CommandResult<C extends RoomCommand> = CommandResults[C["verb"]];
export type QueryResult<Q extends RoomQuery> = QueryResults[Q["question"]];
export type PeerResult<M extends PeerMessage> = PeerResults[M["kind"]];

/** What the room's handler tables hold: one handler per member, answering that member's result. */
export type CommandHandlers = {
  [V in RoomCommand["verb"]]: (command: Extract<RoomCommand, { verb: V }>) => CommandResults[V] | Promise<CommandResults[V]>;
};
export type QueryHandlers = {
  [Q in RoomQuery["question"]]: (query: Extract<RoomQuery, { question: Q }>) => QueryResults[Q] | Promise<QueryResults[Q]>;
};
export type PeerHandlers<K extends PeerMessage["kind"] = PeerMessage["kind"]> = {
  [M in K]: (message: Extract<PeerMessage, { kind: M }>) => PeerResults[M] | Promise<PeerResults[M]>;
};

/** A queue's room as its callers see it: each call answers the result of the member it sent. */
export interface RoomClient {
  configure(config: RoomConfig): Promise<void>;
  command<C extends RoomCommand>(command: C): Promise<CommandResult<C>>;
  query<Q extends RoomQuery>(query: Q): Promise<QueryResult<Q>>;
  peer<M extends PeerMessage>(message: M): Promise<PeerResult<M>>;
  /** A widget WebSocket for this queue (the Worker checked the queue exists). */
  fetch(request: Request): Promise<Response>;
}

/** A socket hub as rooms see it: it takes the updates of the queues its sockets follow. */
export interface HubClient {
  peer<M extends Extract<PeerMessage, { kind: "deliverUpdate" | "deliverTicketUpdate" }>>(message: M): Promise<PeerResult<M>>;
  fetch(request: Request): Promise<Response>;
}

/** The Durable Object namespace of rooms or hubs, as far as a client needs it. */
export interface ObjectNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): unknown;
}

/**
 * The room named `name` (a queue id). The platform types a stub's `command` as answering the
 * union of every verb's result (a generic method loses its type parameter across RPC); the
 * contract restores the pairing of each member with its result, here and only here.
 */
export function roomClient(rooms: ObjectNamespace, name: string): RoomClient {
  return rooms.get(rooms.idFromName(name)) as RoomClient;
}

// ---- the widget's wire forms (routes and sockets send the same) ------------------------------

/** Socket hubs for the spec's flow; each connection picks one at random. */
export const SOCKET_HUBS = 8;

/** The hub a spec-flow socket lands in: a SocketHub (socket-hub.ts) of this name. */
export function hubName(shard: number): string {
  return `socket-hub:${shard}`;
}

/** True for the name of a SocketHub: rooms reach their watchers by name, hubs in their own namespace. */
export function isHubName(name: string): boolean {
  return name.startsWith("socket-hub:");
}

/** The board's wire form of one queue (names from the room; times as ISO strings). */
export function boardQueue(board: BoardData, at: number): BoardQueueData {
  const s = board.status;
  return {
    queueId: s.queueId,
    name: s.name,
    status: s.status,
    waitingCount: s.waitingCount,
    estimatedWaitMinutes: s.estimatedWaitMinutes,
    estimatedWaitRange: s.estimatedWaitRange,
    called: board.called.map((c) => ({
      displayCode: c.displayCode,
      status: c.status,
      counter: c.counter,
      calledAt: iso(c.calledAt),
      kind: c.kind,
      language: isLanguage(c.language) ? c.language : null,
    })),
    nextWaiting: board.nextWaiting,
    generatedAt: iso(at),
  };
}
