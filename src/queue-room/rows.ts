import type { TicketKind } from "../domain/blend";
import type { RouteLeg } from "../domain/visit-route";
import { displayCode } from "../domain/display-code";
import type { Lane, QueueStatus, TicketSource, TicketStatus } from "../domain/tickets";

// The shapes of the room's SQLite rows (schema.ts), and the two reads every module needs: the
// room row and whether it has learnt its queue. Kept apart from store.ts so the modules that
// only read rows (the outbox, remote joins, the projection) do not depend on the store.

export type ConfigRow = {
  id: number;
  queue_id: string | null;
  organization_id: string | null;
  service_id: string | null;
  letter: string | null;
  max_capacity: number | null;
  status: QueueStatus;
  archived_at: number | null;
  retired_at: number | null;
  no_show_ms: number;
  next_number: number;
  priority_seq: number;
  version: number;
  /** When the current long-wait episode began (queue.long_wait sent); null when none. */
  long_wait_at: number | null;
  /** One operator's minutes per visitor before there is call history (wait-estimate.ts). */
  default_service_minutes: number;
};

/** A room that has learnt its queue: the identity every view and event carries is present. */
export type Configured = ConfigRow & { queue_id: string; organization_id: string; service_id: string; letter: string };

export type TicketRow = {
  id: string;
  number: number;
  lane: Lane;
  order_key: number;
  status: TicketStatus;
  user_id: string;
  party_size: number;
  is_priority: number;
  is_ghost_mode: number;
  source: TicketSource;
  visitor_name: string | null;
  phone: string | null;
  language: string | null;
  assigned_to_id: string | null;
  called_at: number | null;
  serving_at: number | null;
  served_at: number | null;
  present_at: number | null;
  skip_reason: string | null;
  recovered_from_id: string | null;
  transferred_to_id: string | null;
  transferring_to: string | null;
  transferring_since: number | null;
  /** The open hand-off's id (hand-offs.ts); null when the ticket is not being moved. */
  hand_off_id: string | null;
  /** The wait (minutes) the join answered, kept for estimate accuracy (null: none, or a row from before the column). */
  first_estimate_minutes: number | null;
  /** The desk the ticket was called at (docs/desks.md); null for a call made on the queue. */
  desk_id: string | null;
  /** When the ticket took its place in its lane: never decreases along a lane (domain/desks.ts). */
  lined_up_at: number | null;
  /** Times the called ticket was announced again (docs/desks.md, recall); reset by a new call. */
  recall_count: number;
  recalled_at: number | null;
  /** The counter label of the call (shown on the display board); null before any call. */
  counter: string | null;
  /** Set aside by the operator (docs/desks.md, hold): when, the state resume goes back to, why. */
  held_at: number | null;
  held_from: "called" | "serving" | null;
  hold_reason: string | null;
  /** The completion's outcome code (one of the service's) and the operator's note. */
  outcome: string | null;
  note: string | null;
  /** Places the owner stepped back (once per ticket); null until then. */
  stepped_back_places: number | null;
  /** docs/visits.md, defer: not called before this instant (null: no later turn asked); times deferred. */
  deferred_until: number | null;
  defer_count: number;
  almost_called_sent: number;
  /** Intake answers (docs/visits.md), JSON objects: open ones, personal ones; null when none. */
  intake: string | null;
  intake_personal: string | null;
  /** Staff's labels (docs/visits.md), a JSON array; null when none. */
  labels: string | null;
  /** docs/blend.md: walk_in or appointment; the appointment it checks in, its start, whether it came late. */
  kind: TicketKind;
  appointment_id: string | null;
  appointment_at: number | null;
  appointment_late: number;
  /** docs/visits.md, several services: the legs (JSON RouteLeg[]), this leg (0-based); null for a one-service visit. */
  route: string | null;
  leg_index: number | null;
  /** The visit's first ticket, when it began, and its display code (every leg shows the first leg's). */
  visit_id: string | null;
  visit_started_at: number | null;
  visit_code: string | null;
  /** The leg this one came from, and the leg it went on to once handed over. */
  routed_from_id: string | null;
  routed_to_id: string | null;
  /** The visitor's token hash, kept from the leg's completion until the next leg holds it. */
  route_token_hash: string | null;
  created_at: number;
  updated_at: number;
  version: number;
};

/** Every column of a ticket (rows.ts), the order a new one is written in; the compiler checks none is missing. */
export const ROOM_TICKET_COLUMNS = everyColumn([
  "id",
  "number",
  "lane",
  "order_key",
  "status",
  "user_id",
  "party_size",
  "is_priority",
  "is_ghost_mode",
  "source",
  "visitor_name",
  "phone",
  "language",
  "assigned_to_id",
  "called_at",
  "serving_at",
  "served_at",
  "present_at",
  "skip_reason",
  "recovered_from_id",
  "transferred_to_id",
  "transferring_to",
  "almost_called_sent",
  "created_at",
  "updated_at",
  "version",
  "transferring_since",
  "hand_off_id",
  "first_estimate_minutes",
  "counter",
  "desk_id",
  "lined_up_at",
  "recall_count",
  "recalled_at",
  "held_at",
  "held_from",
  "hold_reason",
  "outcome",
  "note",
  "stepped_back_places",
  "intake",
  "intake_personal",
  "labels",
  "kind",
  "appointment_id",
  "appointment_at",
  "appointment_late",
  "deferred_until",
  "defer_count",
  "route",
  "leg_index",
  "visit_id",
  "visit_started_at",
  "visit_code",
  "routed_from_id",
  "routed_to_id",
  "route_token_hash",
] as const);

function everyColumn<const C extends readonly (keyof TicketRow)[]>(
  columns: C & ([Exclude<keyof TicketRow, C[number]>] extends [never] ? unknown : { missing: Exclude<keyof TicketRow, C[number]> }),
): C {
  return columns;
}

export type Cell = string | number | null;
export type TicketFields = Partial<Record<keyof TicketRow, Cell>>;

/** The code a ticket shows: a later leg of a visit keeps the first leg's (docs/visits.md). */
export function codeOf(letter: string, row: Pick<TicketRow, "number"> & { visit_code?: string | null }): string {
  return row.visit_code ?? displayCode(letter, row.number);
}

/** The room row checked once: its identity is present, or the room has not learnt its queue. */
export function configuredOf(row: ConfigRow): Configured | null {
  const { queue_id, organization_id, service_id, letter } = row;
  if (queue_id === null || organization_id === null || service_id === null || letter === null) return null;
  return { ...row, queue_id, organization_id, service_id, letter };
}

export function readRoom(sql: SqlStorage): ConfigRow {
  return sql.exec<ConfigRow>("SELECT * FROM room WHERE id = 1").one();
}

/** A ticket's visit route as stored (JSON legs); null when it has none. */
export function parseRoute(json: string | null): RouteLeg[] | null {
  return json === null ? null : (JSON.parse(json) as RouteLeg[]);
}
