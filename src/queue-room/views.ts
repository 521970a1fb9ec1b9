import { codeOf, parseRoute } from "./rows";
import { appointmentsDueAhead, blendOrder, placementLanguage, placementOf, placementReason, type BlendCopy } from "../domain/blend";
import type { IntakeAnswers } from "../domain/intake";
import { maskPhone } from "../domain/phone-mask";
import { estimatedWaitMinutes, estimatedWaitRange, minutesPerTicket, type CallRecord, type WaitRange } from "../domain/wait-estimate";
import { blendTicketOf, type ConfigRow, type Configured, type RoomStore, type TicketRow } from "./store";
import type { QueueSummary, TicketPage, TicketQuery, TicketView } from "./types";

// What the room answers about its tickets and its queue: plain data for the Worker. Reads
// only; positions come from the order index (store.ts).

const MINUTE_MS = 60_000;

export class RoomViews {
  constructor(private readonly store: RoomStore) {}

  /** The room's recent calls and its default, read once per answer. */
  pace(cfg: ConfigRow, at: number): Pace {
    const blend = this.store.blendCopy();
    return {
      calls: this.store.calls(),
      at,
      defaultMinutes: cfg.default_service_minutes,
      blend,
      opensAt: this.store.appointmentsOpening(blend.policy, at),
    };
  }

  ticket(cfg: Configured, id: string, at: number): TicketView {
    const row = this.store.row(id);
    return toView(cfg, row, this.store.positionOf(row, at), this.pace(cfg, at));
  }

  list(cfg: Configured, query: TicketQuery, at: number): TicketPage {
    const perTicket = this.pace(cfg, at);
    const label = query.label ?? null;
    if (label !== null) return this.labelled(cfg, query, label, perTicket);
    const filter = query.status === null ? "1 = 1" : "status = ?";
    const args = query.status === null ? [] : [query.status];
    const total = this.store.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM tickets WHERE ${filter}`, ...args).one().n;
    const anchorId = query.startingAfter ?? query.endingBefore ?? null;
    if (anchorId !== null) return { ...this.pageFrom(cfg, query, anchorId, filter, args, perTicket), total };
    if (query.status === "waiting") {
      // The page is read from the order index: position = rank in the line, no full scan.
      const rows = this.store.waitingLine(query.limit, query.offset, at);
      return { items: rows.map((r, i) => toView(cfg, r, query.offset + i + 1, perTicket)), total };
    }
    const rows = this.store.sql
      .exec<TicketRow>(`SELECT * FROM tickets WHERE ${filter} ORDER BY number LIMIT ? OFFSET ?`, ...args, query.limit, query.offset)
      .toArray();
    return { items: rows.map((r) => toView(cfg, r, this.store.positionOf(r), perTicket)), total };
  }

  /**
   * A page next to a ticket, read by key rather than by offset (issue #32): the waiting line by
   * (lane, order_key), anything else by number. Tickets that join or leave meanwhile move no
   * other row across the cursor, so reading page after page neither skips nor repeats one. The
   * anchor's keys are read from its row even once it left the status listed (called, served).
   */
  private pageFrom(
    cfg: Configured,
    query: TicketQuery,
    anchorId: string,
    filter: string,
    args: string[],
    perTicket: Pace,
  ): Omit<TicketPage, "total"> {
    const anchor = this.store.find(anchorId);
    if (!anchor) return { items: [], hasMore: false, anchorMissing: true };
    const forward = query.startingAfter != null;
    const line = query.status === "waiting";
    if (line) {
      const blended = this.blendedPage(cfg, query, anchor, forward, perTicket);
      if (blended !== null) return blended;
    }
    const keyOrder = line ? "lane, order_key" : "number";
    const beyond = line ? (forward ? "(lane, order_key) > (?, ?)" : "(lane, order_key) < (?, ?)") : forward ? "number > ?" : "number < ?";
    const keys = line ? [anchor.lane, anchor.order_key] : [anchor.number];
    const direction = forward ? "ASC" : "DESC";
    const order = keyOrder
      .split(", ")
      .map((k) => `${k} ${direction}`)
      .join(", ");
    const rows = this.store.sql
      .exec<TicketRow>(`SELECT * FROM tickets WHERE ${filter} AND ${beyond} ORDER BY ${order} LIMIT ?`, ...args, ...keys, query.limit + 1)
      .toArray();
    const hasMore = rows.length > query.limit;
    const page = rows.slice(0, query.limit);
    if (!forward) page.reverse();
    const first = page[0];
    const firstPosition = line && first ? this.store.positionOf(first) : null;
    const items = page.map((r, i) => toView(cfg, r, firstPosition !== null ? firstPosition + i : this.store.positionOf(r), perTicket));
    return { items, hasMore };
  }

  /**
   * A page of the waiting line next to `anchor` while the blend orders it (docs/blend.md): the
   * line in the blended order at `at`, the anchor placed in it as if it still waited (a cursor
   * on a ticket called meanwhile reads on from its place). Null while the order index is the order.
   */
  private blendedPage(
    cfg: Configured,
    query: TicketQuery,
    anchor: TicketRow,
    forward: boolean,
    pace: Pace,
  ): Omit<TicketPage, "total"> | null {
    const blended = this.store.blendedWaiting(pace.at);
    // No appointment waits: the order index is the order, unless the anchor is an appointment that left it.
    if (blended === null && anchor.kind !== "appointment") return null;
    const line =
      blended ?? this.store.sql.exec<TicketRow>("SELECT * FROM tickets WHERE status = 'waiting' ORDER BY lane, order_key").toArray();
    const rows = line.some((r) => r.id === anchor.id)
      ? line
      : blendOrder([...line, anchor].map(blendTicketOf), pace.blend.policy, pace.at).map((b) => b.ticket.row);
    const index = rows.findIndex((r) => r.id === anchor.id);
    const from = forward ? index + 1 : Math.max(0, index - query.limit);
    const to = forward ? Math.min(rows.length, index + 1 + query.limit) : index;
    const page = rows.slice(from, to);
    const hasMore = forward ? to < rows.length : from > 0;
    const positionOf = (r: TicketRow) => line.indexOf(r) + 1;
    return { items: page.map((r) => toView(cfg, r, positionOf(r), pace)), hasMore };
  }

  /**
   * The tickets carrying `label` (docs/visits.md): few, so each position is counted on its own;
   * waiting ones in calling order, the others by number, as the unfiltered list.
   */
  private labelled(cfg: Configured, query: TicketQuery, label: string, pace: Pace): { items: TicketView[]; total: number } {
    const filter = `labels IS NOT NULL AND EXISTS (SELECT 1 FROM json_each(tickets.labels) WHERE value = ?)${query.status === null ? "" : " AND status = ?"}`;
    const args = query.status === null ? [label] : [label, query.status];
    const order = query.status === "waiting" ? "lane, order_key" : "number";
    const total = this.store.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM tickets WHERE ${filter}`, ...args).one().n;
    const rows = this.store.sql
      .exec<TicketRow>(`SELECT * FROM tickets WHERE ${filter} ORDER BY ${order} LIMIT ? OFFSET ?`, ...args, query.limit, query.offset)
      .toArray();
    return { items: rows.map((r) => toView(cfg, r, this.store.positionOf(r), pace)), total };
  }

  summary(cfg: ConfigRow, at: number): QueueSummary {
    const counts = this.store.countByStatus(["waiting", "serving"]);
    const waitingCount = counts.get("waiting") ?? 0;
    return {
      status: cfg.status,
      archivedAt: cfg.archived_at,
      maxCapacity: cfg.max_capacity,
      noShowTimeoutMinutes: cfg.no_show_ms / MINUTE_MS,
      defaultServiceMinutes: cfg.default_service_minutes,
      waitingCount,
      servingCount: counts.get("serving") ?? 0,
      ...newcomerWait(waitingCount, this.pace(cfg, at)),
    };
  }
}

/** What the estimate is computed from (wait-estimate.ts). */
export interface Pace {
  calls: readonly CallRecord[];
  at: number;
  defaultMinutes: number;
  /** The queue's blend policy (docs/blend.md): a waiting ticket's placement is told under it. */
  blend: BlendCopy;
  /** When each appointment waiting early goes ahead of walk-ins (a walk-in's estimate counts those due before its turn). */
  opensAt: readonly number[];
}

/**
 * A newcomer walk-in's wait: behind everyone waiting but the appointments checked in early
 * (placed behind walk-ins), of which those due before its turn pass it.
 */
function newcomerWait(waitingCount: number, pace: Pace): ReturnType<typeof waitAt> {
  return walkInWaitAt(waitingCount - pace.opensAt.length, pace.at, pace);
}

/** The wait of a walk-in (or a late appointment) at `position` that joined at `joinedAt`, counting the appointments that will pass it. */
export function walkInWaitAt(position: number, joinedAt: number, pace: Pace): ReturnType<typeof waitAt> {
  if (pace.opensAt.length === 0) return waitAt(position, pace);
  const ahead = appointmentsDueAhead(
    pace.opensAt,
    pace.blend.policy,
    joinedAt,
    position,
    (p) => waitAt(p, pace).estimatedWaitMinutes,
    pace.at,
  );
  return waitAt(position + ahead, pace);
}

/** The wait at `position` (1 = next) and its range; a newcomer to the queue waits at `waitingCount`. */
export function waitAt(position: number, pace: Pace): { estimatedWaitMinutes: number; estimatedWaitRange: WaitRange } {
  return {
    estimatedWaitMinutes: estimatedWaitMinutes(position, minutesPerTicket(pace.calls, pace.at, pace.defaultMinutes)),
    estimatedWaitRange: estimatedWaitRange(position, pace.calls, pace.at, pace.defaultMinutes),
  };
}

/** `position` comes from `positionOf` or from the rank in an ordered page; null unless waiting. */
export function toView(cfg: Configured, row: TicketRow, position: number | null, pace: Pace): TicketView {
  const walkIn = row.lane !== 0 && (row.kind !== "appointment" || row.appointment_late === 1);
  const inLine =
    position === null ? null : walkIn ? walkInWaitAt(position, row.lined_up_at ?? row.created_at, pace) : waitAt(position, pace);
  const deferredUntil = row.status === "waiting" && row.deferred_until !== null && row.deferred_until > pace.at ? row.deferred_until : null;
  const wait = inLine === null || deferredUntil === null ? inLine : notBefore(inLine, deferredUntil, pace.at);
  return {
    id: row.id,
    queueId: cfg.queue_id,
    serviceId: cfg.service_id,
    organizationId: cfg.organization_id,
    userId: row.user_id,
    number: row.number,
    displayCode: codeOf(cfg.letter, row),
    status: row.status,
    partySize: row.party_size,
    isPriority: row.is_priority === 1,
    isGhostMode: row.is_ghost_mode === 1,
    visitorName: row.visitor_name,
    assignedToId: row.assigned_to_id,
    calledAt: row.called_at,
    servedAt: row.served_at,
    createdAt: row.created_at,
    position,
    estimatedWaitMinutes: wait?.estimatedWaitMinutes ?? null,
    estimatedWaitRange: wait?.estimatedWaitRange ?? null,
    counter: row.counter,
    deskId: row.desk_id,
    recallCount: row.recall_count,
    recalledAt: row.recalled_at,
    heldAt: row.held_at,
    holdReason: row.hold_reason,
    outcome: row.outcome,
    note: row.note,
    steppedBackPlaces: row.stepped_back_places,
    deferredUntil,
    deferCount: row.defer_count,
    presentAt: row.present_at,
    servingAt: row.serving_at,
    skipReason: row.skip_reason,
    recoveredFromId: row.recovered_from_id,
    transferredToId: row.transferred_to_id,
    source: row.source,
    updatedAt: row.updated_at,
    intake: { ...parseAnswers(row.intake), ...parseAnswers(row.intake_personal) },
    labels: row.labels === null ? [] : (JSON.parse(row.labels) as string[]),
    phoneMasked: maskPhone(row.phone),
    kind: row.kind,
    appointmentId: row.appointment_id,
    appointmentAt: row.appointment_at,
    placement: row.status === "waiting" ? placementView(row, pace) : null,
    ...routeView(row),
  };
}

/** docs/visits.md: the visit's legs and this one (`index` from 1). */
function routeView(row: TicketRow): Pick<TicketView, "route" | "leg" | "visitId" | "routedFromId" | "routedToId"> {
  const route = parseRoute(row.route);
  return {
    route,
    leg: route === null || row.leg_index === null ? null : { index: row.leg_index + 1, of: route.length },
    visitId: row.visit_id,
    routedFromId: row.routed_from_id,
    routedToId: row.routed_to_id,
  };
}

/**
 * The wait of a ticket deferred to `until` (docs/visits.md): it keeps its place but is not called
 * before then, so it waits at least the minutes left until `until`, and at least what its place says.
 */
function notBefore(wait: ReturnType<typeof waitAt>, until: number, at: number): ReturnType<typeof waitAt> {
  const left = Math.ceil((until - at) / MINUTE_MS);
  return {
    estimatedWaitMinutes: Math.max(wait.estimatedWaitMinutes, left),
    estimatedWaitRange: { low: Math.max(wait.estimatedWaitRange.low, left), high: Math.max(wait.estimatedWaitRange.high, left) },
  };
}

/** Where a waiting ticket stands and why, in its language (domain/blend.ts). */
function placementView(row: TicketRow, pace: Pace): TicketView["placement"] {
  const ticket = blendTicketOf(row);
  const { policy, timeZone } = pace.blend;
  const placement = placementOf(ticket, policy, pace.at);
  return {
    rule: placement.rule,
    reason: placementReason(ticket, placement, policy, placementLanguage(row.language), timeZone),
    since: placement.since,
  };
}

/** A row's JSON answers (store.ts answersJson); {} for none. */
export function parseAnswers(json: string | null): IntakeAnswers {
  return json === null ? {} : (JSON.parse(json) as IntakeAnswers);
}
