import type { BlendCopy, PlacementRule, TicketKind } from "../domain/blend";
import type { IntakeAnswers } from "../domain/intake";
import type { Language } from "../domain/languages";
import type { RouteLeg } from "../domain/visit-route";
import type { ConfirmMethod, RemoteJoinStatus } from "../domain/remote-join";
import type { QueueStatus, RecoveryOption, TicketSource, TicketStatus } from "../domain/tickets";
import type { WaitRange } from "../domain/wait-estimate";
import type { Result } from "../lib/result";

// What crosses the RPC boundary between the Worker and a QueueRoom: plain data only. Times
// are epoch milliseconds; the Worker turns them into ISO strings.

/** The catalog facts a room needs, from queue creation or, lazily, from the D1 row. */
export interface RoomConfig {
  queueId: string;
  organizationId: string;
  serviceId: string;
  letter: string;
  maxCapacity: number | null;
  noShowTimeoutMinutes: number;
  status: QueueStatus;
  archivedAt: number | null;
  /** Absent from a config made before the setting existed: the room keeps its default. */
  defaultServiceMinutes?: number;
}

/** The settings of a queue its room enforces; absent fields stay as they are. */
export interface RoomSettings {
  maxCapacity?: number | null;
  noShowTimeoutMinutes?: number;
  defaultServiceMinutes?: number;
}

export interface NewTicket {
  userId: string;
  partySize: number;
  isPriority: boolean;
  isGhostMode: boolean;
  visitorName: string | null;
  phone: string | null;
  language: string | null;
  source: TicketSource;
  /** Intake answers checked by the Worker against the service's questions (docs/visits.md). */
  intake?: IntakeAnswers | null;
  intakePersonal?: IntakeAnswers | null;
  /** docs/blend.md: absent for a walk-in. An appointment's check-in names it, its start and whether it is late. */
  kind?: TicketKind;
  appointmentId?: string | null;
  appointmentAt?: number | null;
  appointmentLate?: boolean;
  /** docs/visits.md: the visit's legs, the first being this queue's; absent or null: one service. */
  route?: RouteLeg[] | null;
}

/** Why a waiting ticket stands where it does (docs/blend.md), told in the ticket's language. */
export interface PlacementView {
  rule: PlacementRule;
  reason: string;
  since: number;
}

export interface TicketView {
  id: string;
  queueId: string;
  serviceId: string;
  organizationId: string;
  userId: string;
  number: number;
  displayCode: string;
  status: TicketStatus;
  partySize: number;
  isPriority: boolean;
  isGhostMode: boolean;
  visitorName: string | null;
  assignedToId: string | null;
  calledAt: number | null;
  servedAt: number | null;
  createdAt: number;
  position: number | null;
  estimatedWaitMinutes: number | null;
  estimatedWaitRange: WaitRange | null;
  /** The counter label the ticket was called to (call-next's `counter`, else the member's first name). */
  counter: string | null;
  /** The desk the ticket was called at (docs/desks.md); null for a call made on the queue. */
  deskId: string | null;
  recallCount: number;
  recalledAt: number | null;
  /** Set aside by the operator (docs/desks.md, hold); null unless held. */
  heldAt: number | null;
  holdReason: string | null;
  /** The completion's outcome code and note (docs/desks.md, outcomes); null until completed with them. */
  outcome: string | null;
  note: string | null;
  /** Places the owner stepped back (once); null until then. */
  steppedBackPlaces: number | null;
  /** docs/visits.md, defer: not called before this instant; null when no later turn is pending. */
  deferredUntil: number | null;
  deferCount: number;
  presentAt: number | null;
  servingAt: number | null;
  skipReason: string | null;
  recoveredFromId: string | null;
  transferredToId: string | null;
  source: TicketSource;
  updatedAt: number;
  /** Every intake answer, open and personal (docs/visits.md); {} when none. */
  intake: IntakeAnswers;
  /** Staff's labels (docs/visits.md), in the order they were put; [] when none. */
  labels: string[];
  /** The visitor's phone masked for staff ("+33 6 •• •• •• 78", domain/phone-mask.ts); null when none. */
  phoneMasked: string | null;
  /** docs/blend.md: walk_in or appointment, the appointment's start (null for a walk-in), the placement while waiting. */
  kind: TicketKind;
  appointmentId: string | null;
  appointmentAt: number | null;
  placement: PlacementView | null;
  /** docs/visits.md, several services: the visit's legs and this one (`index` from 1); null for a one-service visit. */
  route: RouteLeg[] | null;
  leg: { index: number; of: number } | null;
  /** The visit's first ticket; the leg this one came from; the leg it went on to (null until handed over). */
  visitId: string | null;
  routedFromId: string | null;
  routedToId: string | null;
  /** The whole visit's estimate (docs/visits.md): set by the Worker on a single ticket's read; null otherwise. */
  estimatedVisitMinutes?: number | null;
}

/**
 * What the next leg's room needs to admit a visitor whose leg here was completed (docs/visits.md):
 * the same visitor, code, token and answers. Admitted at most once per `handOffId`.
 */
export interface RouteSnapshot {
  handOffId: string;
  /** The completed leg's ticket. */
  ticketId: string;
  organizationId: string;
  userId: string;
  partySize: number;
  isGhostMode: boolean;
  visitorName: string | null;
  phone: string | null;
  language: string | null;
  source: TicketSource;
  intake: IntakeAnswers | null;
  intakePersonal: IntakeAnswers | null;
  route: RouteLeg[];
  /** The new leg's index in `route` (0-based). */
  legIndex: number;
  visitId: string;
  visitStartedAt: number;
  visitCode: string;
  /** The visitor's token hash (null: the visit has no token). */
  tokenHash: string | null;
}

export interface QueueSummary {
  status: QueueStatus;
  archivedAt: number | null;
  maxCapacity: number | null;
  noShowTimeoutMinutes: number;
  defaultServiceMinutes: number;
  waitingCount: number;
  servingCount: number;
  estimatedWaitMinutes: number;
  estimatedWaitRange: WaitRange;
}

/** What the target room needs to admit a ticket handed over by another queue. */
export interface TransferSnapshot {
  /** This hand-off (`hof_…`): the target admits it at most once, or never once abandoned. */
  handOffId: string;
  ticketId: string;
  organizationId: string;
  userId: string;
  partySize: number;
  isPriority: boolean;
  isGhostMode: boolean;
  visitorName: string | null;
  phone: string | null;
  language: string | null;
  /** The intake answers travel with the visitor (absent in a snapshot from before they existed). */
  intake?: IntakeAnswers | null;
  intakePersonal?: IntakeAnswers | null;
}

export type Reservation =
  | { kind: "reserved"; snapshot: TransferSnapshot }
  /** An earlier hand-off of this ticket never finished: the caller resolves it first. */
  | { kind: "pending"; targetQueueId: string; snapshot: TransferSnapshot };

export interface TicketQuery {
  status: TicketStatus | null;
  /** Only tickets carrying this label (docs/visits.md); absent or null: all. */
  label?: string | null;
  offset: number;
  limit: number;
  /** Cursor pagination (src/http/cursor.ts): the page right after / right before this ticket, in the list's order. */
  startingAfter?: string | null;
  endingBefore?: string | null;
}

/** A page of tickets; with a cursor, `hasMore` says whether more lie beyond it in that direction. */
export interface TicketPage {
  items: TicketView[];
  total: number;
  hasMore?: boolean;
  /** The cursor's ticket is not (or no longer) in this room: the caller refuses the cursor. */
  anchorMissing?: boolean;
}

/**
 * Every refusal a room answers. The first codes are the API's own (tickets/queue-rooms.ts
 * answers them as they are: the compiler checks each is one of the API's error codes); the
 * last are the room's, which the Worker translates:
 * ROOM_UNAVAILABLE: a room asked by another room could not answer (its storage failed); the
 * asking room decides what to do (leave a hand-off open, answer the socket an error).
 * HEAD_MOVED: a desk call's bound no longer holds; the desk reads the heads again (desks.ts).
 * RULES_STALE: the room's copy of the rules is older than the queue's row says, or the instant
 * is outside the window it covers; the Worker gives it a fresh copy and asks again (rules.ts).
 * QUEUE_ROW_STALE: a join sent with a queue row older than the rules the room holds (a row the
 * Worker kept, docs/hot-path.md); the Worker reads the row again and asks again.
 */
export type RoomErrorCode =
  | "NOT_FOUND"
  | "INVALID_STATE"
  | "CONFLICT"
  | "QUEUE_CLOSED"
  | "QUEUE_EMPTY"
  | "QUEUE_FULL"
  | "QUEUE_PAUSED"
  | "RECALL_LIMIT_REACHED"
  | "INTAKE_REQUIRED"
  | "DEFER_TOO_FAR"
  | "DEFER_LIMIT_REACHED"
  | "OPERATOR_UNAVAILABLE"
  | "QUOTA_EXCEEDED"
  | "ROOM_UNCONFIGURED"
  | "TRANSFER_ABANDONED"
  | "ROOM_UNAVAILABLE"
  | "HEAD_MOVED"
  | "RULES_STALE"
  | "QUEUE_ROW_STALE";

export interface RoomError {
  code: RoomErrorCode;
  message: string;
  details: Record<string, unknown>;
}

/** Refusals are values, not exceptions: errors lose their shape across RPC. */
export type RoomResult<T> = Result<T, RoomError>;

export type { RecoveryOption };

export interface RemoteJoinView {
  id: string;
  ticketId: string;
  queueId: string;
  userId: string;
  status: RemoteJoinStatus;
  geofenceRadiusM: number;
  latitude: number | null;
  longitude: number | null;
  accuracyM: number | null;
  distanceM: number | null;
  lastLocationAt: number;
  warnedAt: number | null;
  reachedFrontAt: number | null;
  /** When the join expires if it has not arrived: 30 minutes after it reached the front. */
  expiresAt: number | null;
  arrivedAt: number | null;
  confirmMethod: ConfirmMethod | null;
  createdAt: number;
  updatedAt: number;
}

export interface RemoteJoinAndTicket {
  remoteJoin: RemoteJoinView;
  ticket: TicketView;
}

/** A location update, measured by the Worker against the service's nearest location. */
export interface RemoteLocation {
  latitude: number;
  longitude: number;
  accuracyM: number;
  distanceM: number;
}

/** An occurrence of a closure, break or unavailability, as the room's copy of the rules holds it. */
export interface RuleBlock {
  eventId: string;
  start: number;
  end: number;
  /** The members it makes unavailable; empty: everyone. */
  attendees: string[];
  /** A closure of this queue's service: joins are refused while it runs. */
  closesService: boolean;
}

/**
 * What a join and a call-next check, as the Worker loads it from D1 (tickets/room-rules.ts):
 * valid for instants in [validFrom, validUntil); `blocks` in the order D1's reads gave them
 * (the first of the latest-ending covering ones is the one answered).
 */
export interface RoomRulesCopy {
  version: number;
  validFrom: number;
  validUntil: number;
  serviceStatus: string;
  /** The organization's monthly ticket quota (null: unlimited). */
  ticketsPerMonth: number | null;
  blocks: RuleBlock[];
  /** The queue's blend policy and its place's time zone (docs/blend.md); absent: the defaults. */
  blend?: BlendCopy;
}

/** What a completion records (docs/desks.md, outcomes): the outcome's code and label, the operator's note. */
export interface Completion {
  outcome?: string | null;
  outcomeLabel?: string | null;
  note?: string | null;
}

/** Where a ticket goes back in the line (POST /v1/tickets/{id}/return). */
/** A later turn (docs/visits.md): not called before `until` (epoch ms), or `places` further back; one of the two. */
export type DeferRequest = { until: number } | { places: number };

/** The queue's bounds on deferral, from its D1 row (the room holds no catalog). */
export interface DeferBounds {
  maxDeferMinutes: number;
  maxDefers: number;
}

export type ReturnPlace = { position: "first" } | { position: "last" } | { position: "after"; afterTicketId: string };

/** What the widget shows of the visitor's own ticket: the GET route and the `ticket_update` payload. */
/** What a ticket token still opens (docs/visits.md, feedback): a live ticket, or a served one for its verdict. */
export type VerdictToken = { state: "live" } | { state: "served"; servedAt: number };

export interface VisitorTicketData {
  ticketId: string;
  queueId: string;
  queueName: string;
  displayCode: string;
  status: TicketStatus;
  /** 1 = next; null unless waiting. */
  position: number | null;
  estimatedWaitMinutes: number | null;
  estimatedWaitRange: WaitRange | null;
  /** Where to go: the call's counter label (call-next's `counter`, else the member's first name); null until called. */
  counter: string | null;
  calledAt: string | null;
  /** Not called before this time (docs/visits.md, defer); null when no later turn is pending. */
  deferredUntil: string | null;
  deferCount: number;
  /** docs/blend.md */
  kind: TicketKind;
  appointmentAt: string | null;
  placement: { rule: PlacementRule; reason: string; since: string } | null;
  /** docs/visits.md, several services: this leg of the visit (`index` from 1); null for a one-service visit. */
  leg: { index: number; of: number } | null;
  /** A served leg handed on: the next leg's ticket, read with the same token; null otherwise (and while the hand-off is in flight). */
  routedToId: string | null;
  /** The language the visitor chose at the join (the status page speaks it unless the visitor picks another); null: none given. */
  language: Language | null;
}

export type TicketMessage = { type: "ticket_update"; data: VisitorTicketData };

/** What the widget shows of a queue: the status route's data and the `queue_update` payload. */
export interface QueueStatusData {
  queueId: string;
  name: string;
  status: QueueStatus;
  waitingCount: number;
  estimatedWaitMinutes: number;
  estimatedWaitRange: WaitRange;
  nowServing: string[];
}

/**
 * One queue as the display board renders it: the `board_update` payload, and an item of the
 * display-board route's `queues`. `generatedAt` lets the board age its calls by the server's clock.
 */
export interface BoardQueueData {
  queueId: string;
  name: string;
  status: QueueStatus;
  waitingCount: number;
  estimatedWaitMinutes: number;
  estimatedWaitRange: WaitRange;
  called: {
    displayCode: string;
    status: "called" | "serving";
    counter: string | null;
    calledAt: string;
    kind: TicketKind;
    /** The ticket's language (the board says the call in it when it offers it); null: none given. */
    language: Language | null;
  }[];
  nextWaiting: string[];
  generatedAt: string;
}

/** What a subscription asks for: the status widget's `queue_update`, or the board's `board_update`. */
export type SubscriptionView = "status" | "board";

export interface BoardData {
  status: QueueStatusData;
  called: {
    displayCode: string;
    status: "called" | "serving";
    assignedToId: string | null;
    counter: string | null;
    calledAt: number;
    kind: TicketKind;
    language: string | null;
  }[];
  nextWaiting: string[];
}

export type ArchiveResult = { archived: number; more: boolean };

/** What a room learns from the catalog (D1) about a queue: its facts and its display name. */
export interface QueueFacts {
  config: RoomConfig;
  name: string;
}

/** The caller's previous calls as call-next settled them (issue 43: inside the call's own hop). */
export interface PreviousCalls {
  /** Without an outcome: the caller's latest call here never started, left as it is. */
  open: { ticketId: string; displayCode: string; calledAt: number } | null;
  /** With one: the caller's calls here closed by it. */
  closed: { ticketId: string; displayCode: string; status: "served" | "skipped" }[];
}

// ---- a person's data on request (docs/personal-data.md) -----------------------------------

/** Who a data-subject request is about, as a room can recognise them on its tickets. */
export interface SubjectMatch {
  phones: string[];
  userIds: string[];
  ticketIds: string[];
}

/** Everything a room holds about one of the person's tickets (times in epoch ms). */
export interface SubjectTicket {
  id: string;
  number: number;
  status: TicketStatus;
  source: TicketSource;
  userId: string;
  visitorName: string | null;
  phone: string | null;
  language: string | null;
  partySize: number;
  intake: string | null;
  intakePersonal: string | null;
  labels: string | null;
  outcome: string | null;
  note: string | null;
  holdReason: string | null;
  createdAt: number;
  updatedAt: number;
  remoteJoin: { latitude: number | null; longitude: number | null; accuracyM: number | null; lastLocationAt: number } | null;
}

/** An erasure in a room: nothing is changed while one of the person's tickets is still in the line. */
export interface SubjectErasure {
  erased: number;
  live: { id: string; status: TicketStatus }[];
}
