import { codeOf } from "./rows";
import {
  ALMOST_CALLED_AHEAD,
  LANE,
  allowedFrom,
  allows,
  crossesCapacityWarning,
  NO_SHOW_REASON,
  type HoldableStatus,
  type PreviousOutcome,
  type QueueStatus,
  type RecoveryOption,
  type TicketOperation,
} from "../domain/tickets";
import { compareCandidates, type DeskCandidate } from "../domain/desks";
import { longWaitChange } from "../domain/wait-estimate";
import { newTicketId } from "../lib/ids";
import { invalidState, refuse } from "./refusals";
import type { RemoteJoins } from "./remote";
import { reserveNextLeg } from "./visit-routes";
import { answersJson, type Configured, type RoomStore, type TicketRow } from "./store";
import type { IntakeAnswers } from "../domain/intake";
import type {
  Completion,
  DeferBounds,
  DeferRequest,
  NewTicket,
  PreviousCalls,
  QueueSummary,
  ReturnPlace,
  RoomSettings,
  TicketView,
} from "./types";
import { parseAnswers, toView, type RoomViews } from "./views";

// The room's commands on its own line: joining, calling, the ticket transitions, recovery and
// the queue-level settings. Each runs inside the room's one change path (QueueRoom.mutate),
// so it may refuse at any point and nothing it wrote remains.

const MINUTE_MS = 60_000;

export class Commands {
  constructor(
    private readonly store: RoomStore,
    private readonly views: RoomViews,
    private readonly remote: RemoteJoins,
  ) {}

  // ---- the queue ---------------------------------------------------------------------------

  /**
   * A lower capacity refuses joins until the line is under it (nobody is removed); a new
   * no-show timeout applies to tickets already called.
   */
  reconfigure(cfg: Configured, settings: RoomSettings, at: number): QueueSummary {
    this.assertNotArchived(cfg);
    const changes: Record<string, unknown> = {};
    if (settings.maxCapacity !== undefined && settings.maxCapacity !== cfg.max_capacity) {
      this.store.setRoom({ max_capacity: settings.maxCapacity });
      changes.maxCapacity = settings.maxCapacity;
    }
    const noShowMs = settings.noShowTimeoutMinutes === undefined ? undefined : settings.noShowTimeoutMinutes * MINUTE_MS;
    if (noShowMs !== undefined && noShowMs !== cfg.no_show_ms) {
      this.store.setRoom({ no_show_ms: noShowMs });
      changes.noShowTimeoutMinutes = settings.noShowTimeoutMinutes;
    }
    if (settings.defaultServiceMinutes !== undefined && settings.defaultServiceMinutes !== cfg.default_service_minutes) {
      this.store.setRoom({ default_service_minutes: settings.defaultServiceMinutes });
      changes.defaultServiceMinutes = settings.defaultServiceMinutes;
    }
    // The event also carries the room's new deadline to D1 through the outbox.
    if (Object.keys(changes).length > 0) this.store.emit(cfg, "queue.updated", null, at, changes);
    return this.summary(at);
  }

  setStatus(cfg: Configured, status: QueueStatus, at: number): QueueSummary {
    this.assertNotArchived(cfg);
    if (cfg.status !== status) {
      this.store.setRoom({ status });
      this.store.emit(cfg, "queue.status_changed", null, at, { from: cfg.status, to: status });
    }
    return this.summary(at);
  }

  /**
   * Cancels the waiting and called tickets (a ticket being served stays with its operator; one
   * still in a hand-off, which the room could not settle first, ends with its hand-off).
   */
  clear(cfg: Configured, at: number): { cancelled: number } {
    this.assertNotArchived(cfg);
    const cancelled = this.cancelLive(cfg, at, "cleared", false);
    this.store.emit(cfg, "queue.cleared", null, at, { cancelled });
    return { cancelled };
  }

  /** Closes the queue for good: waiting and called cancelled, serving completed, readable after. */
  archive(cfg: Configured, at: number): QueueSummary {
    this.assertNotArchived(cfg);
    this.cancelLive(cfg, at, "archived", false, true);
    for (const row of this.store.rowsWhere("status = 'serving'")) this.completeServing(cfg, row, at);
    this.store.setRoom({ status: "closed", archived_at: at });
    if (cfg.status !== "closed") this.store.emit(cfg, "queue.status_changed", null, at, { from: cfg.status, to: "closed" });
    this.store.emit(cfg, "queue.archived", null, at, {});
    return this.summary(at);
  }

  /**
   * The queue's catalog entry is gone: its live tickets are cancelled, everything refused
   * after. A hand-off the room could not settle first is cut too: nothing here answers later.
   */
  retire(cfg: Configured | null, at: number): void {
    if (cfg !== null) this.cancelLive(cfg, at, "queue_deleted", true, true);
    this.store.setRoom({ retired_at: at });
  }

  /** Called tickets past the no-show timeout expire; remote joins past their clocks end. */
  expireDue(cfg: Configured, at: number): number {
    const due = this.store.rowsWhere("status = 'called' AND called_at + ? <= ?", cfg.no_show_ms, at);
    for (const row of due) {
      this.store.update(row.id, { status: "expired" }, at);
      const expired = this.store.row(row.id);
      this.store.emit(cfg, "ticket.expired", expired, at, {});
      this.store.emit(cfg, "ticket.no_show", expired, at, {});
    }
    return due.length + this.remote.enforce(at);
  }

  // ---- tickets -----------------------------------------------------------------------------

  join(cfg: Configured, input: NewTicket, at: number): TicketView {
    this.assertAcceptsTickets(cfg, input.partySize);
    if (input.source === "remote") this.remote.assertNoneActive(input.userId);
    const { row, view } = this.placeTicket(cfg, input, at, null, { promise: true });
    if (input.source === "remote") this.remote.start(row.id, at);
    // Position and wait at join time travel with the event (the customer's first notification).
    this.store.emit(cfg, "ticket.created", row, at, { position: view.position, estimatedWaitMinutes: view.estimatedWaitMinutes });
    this.watchLongWait(cfg, view, at);
    return view;
  }

  /** A visit's next leg (visit-routes.ts): no capacity or status check, the visitor is already in the building. */
  insertLeg(cfg: Configured, input: NewTicket, at: number): TicketRow {
    return this.createTicket(cfg, input, at);
  }

  /** A ticket admitted from another queue: the same acceptance rules as a join. */
  admit(cfg: Configured, input: NewTicket, at: number): TicketRow {
    this.assertAcceptsTickets(cfg, input.partySize);
    return this.createTicket(cfg, input, at);
  }

  /**
   * Calls the first callable ticket for `operatorId`. The ticket that operator was serving is
   * completed in the same transaction; nothing changes when there is no one to call.
   */
  callNext(cfg: Configured, operatorId: string, at: number, counter: string | null = null, desk: DeskCall | null = null): TicketView {
    if (cfg.archived_at !== null || cfg.status === "closed") {
      refuse("QUEUE_CLOSED", "This queue is closed", { status: cfg.archived_at !== null ? "archived" : cfg.status });
    }
    const next = this.store.firstCallable(at) ?? refuse("QUEUE_EMPTY", "No ticket is waiting to be called");
    // A desk call: this queue's head must still rank before the best head the desk saw in its
    // other queues, else the desk reads the heads again (docs/desks.md, the cross-room step).
    if (desk !== null && desk.bound !== null && compareCandidates(candidateOf(cfg, next), desk.bound, { at, weights: desk.weights }) > 0) {
      refuse("HEAD_MOVED", "Another queue of the desk now has the ticket to call", {});
    }
    for (const serving of this.store.rowsWhere("status = 'serving' AND assigned_to_id = ?", operatorId)) {
      this.completeServing(cfg, serving, at);
    }
    const fields = {
      status: "called",
      called_at: at,
      assigned_to_id: operatorId,
      counter,
      desk_id: desk?.deskId ?? null,
      recall_count: 0,
      recalled_at: null,
    } satisfies Partial<TicketRow>;
    const version = this.store.update(next.id, fields, at);
    this.store.recordCall(at, operatorId);
    // The row as just written (issue 43: read whole twice more, for the event and the answer).
    const called: TicketRow = { ...next, ...fields, updated_at: at, version };
    this.store.emit(cfg, "ticket.called", called, at, { counter });
    return toView(cfg, called, null, this.views.pace(cfg, at));
  }

  /**
   * What became of the caller's previous calls here (called, never started): with `outcome`
   * each is served and completed, or marked absent (skipped, reason no_show); without, the
   * latest is reported and left as it is. A ticket being transferred is left alone.
   */
  settlePreviousCalls(
    cfg: Configured,
    operatorId: string,
    outcome: PreviousOutcome | null,
    at: number,
    /** At a desk: only the calls made at it. */
    deskId: string | null = null,
  ): PreviousCalls {
    // Without an outcome only the latest is reported: an operator who calls without settling
    // leaves a called ticket behind at each call, and reading them all grew with every call.
    const mine =
      deskId === null
        ? ["status = 'called' AND assigned_to_id = ? AND transferring_to IS NULL", operatorId]
        : ["status = 'called' AND assigned_to_id = ? AND desk_id = ? AND transferring_to IS NULL", operatorId, deskId];
    const [condition, ...args] = mine;
    const code = (row: Pick<TicketRow, "number" | "visit_code">) => codeOf(cfg.letter, row);
    if (outcome === null) {
      const latest = this.store.latestCallWhere(condition!, ...args);
      return {
        open: latest ? { ticketId: latest.id, displayCode: code(latest), calledAt: latest.called_at ?? latest.updated_at } : null,
        closed: [],
      };
    }
    const open = this.store.rowsWhere(condition!, ...args).sort((a, b) => (b.called_at ?? 0) - (a.called_at ?? 0));
    const closed = open.map((row) => {
      if (outcome === "served") {
        this.serve(cfg, row.id, at);
        this.complete(cfg, row.id, at, {});
      } else {
        this.skip(cfg, row.id, NO_SHOW_REASON, at);
      }
      return { ticketId: row.id, displayCode: code(row), status: outcome === "served" ? ("served" as const) : ("skipped" as const) };
    });
    return { open: null, closed };
  }

  /** A desk's read: the ticket this queue would call next, or null (nothing callable, or closed). */
  deskHead(cfg: Configured): DeskCandidate | null {
    if (cfg.archived_at !== null || cfg.status === "closed") return null;
    const next = this.store.firstCallable();
    return next === null ? null : candidateOf(cfg, next);
  }

  /** After a desk call in another queue: what this operator was serving here is completed. */
  finishServingOf(cfg: Configured, operatorId: string, at: number): number {
    const serving = this.store.rowsWhere("status = 'serving' AND assigned_to_id = ?", operatorId);
    for (const row of serving) this.completeServing(cfg, row, at);
    return serving.length;
  }

  /**
   * Announces a called ticket again (the board flashes it, the customer is told): no change of
   * state, `recall_count` + 1, at most `RECALL_LIMIT` times per call.
   */
  recall(cfg: Configured, ticketId: string, at: number): TicketView {
    const row = this.existing(ticketId);
    if (row.transferring_to !== null) refuseTransferring(row, "recall");
    if (!allows("recall", row.status)) invalidState(row.status, allowedFrom("recall"), `A ${row.status} ticket cannot be recalled`);
    if (row.recall_count >= RECALL_LIMIT) {
      refuse("RECALL_LIMIT_REACHED", `This ticket was already recalled ${RECALL_LIMIT} times`, {
        recallCount: row.recall_count,
        limit: RECALL_LIMIT,
      });
    }
    this.store.update(row.id, { recall_count: row.recall_count + 1, recalled_at: at }, at);
    this.store.emit(cfg, "ticket.recalled", this.store.row(row.id), at, { recallCount: row.recall_count + 1, counter: row.counter });
    return this.views.ticket(cfg, row.id, at);
  }

  /**
   * A called or serving ticket goes back to the line (the customer needs a document): first
   * (ahead of everyone, priority lane), last (behind everyone now waiting), or right after a
   * waiting ticket. Its place is an order key between its neighbours' (keys may be fractional);
   * its `lined_up_at` is chosen so it never decreases along the lane (domain/desks.ts).
   */
  returnToLine(cfg: Configured, ticketId: string, place: ReturnPlace, at: number): TicketView {
    const row = this.existing(ticketId);
    if (row.transferring_to !== null) refuseTransferring(row, "return");
    if (!allows("return", row.status)) invalidState(row.status, allowedFrom("return"), `A ${row.status} ticket cannot go back to the line`);
    const spot = this.placeFor(row, place, at);
    this.store.update(
      row.id,
      {
        status: "waiting",
        ...spot,
        called_at: null,
        serving_at: null,
        assigned_to_id: null,
        counter: null,
        desk_id: null,
        recall_count: 0,
        recalled_at: null,
      },
      at,
    );
    const view = this.views.ticket(cfg, row.id, at);
    this.store.emit(cfg, "ticket.returned", this.store.row(row.id), at, {
      position: view.position,
      place: place.position,
      ...(place.position === "after" ? { afterTicketId: place.afterTicketId } : {}),
    });
    return view;
  }

  private placeFor(row: TicketRow, place: ReturnPlace, at: number): { lane: number; order_key: number; lined_up_at: number } {
    const sql = this.store.sql;
    const room = this.store.room();
    if (place.position === "first") {
      const front = sql
        .exec<{ k: number | null; t: number | null }>(
          "SELECT MIN(order_key) AS k, MIN(lined_up_at) AS t FROM tickets WHERE status = 'waiting' AND lane = ?",
          LANE.priority,
        )
        .one();
      return {
        lane: LANE.priority,
        order_key: Math.min(front.k ?? room.priority_seq + 1, room.priority_seq + 1) - 1,
        lined_up_at: Math.min(front.t ?? at, at),
      };
    }
    if (place.position === "last") {
      const back = sql
        .exec<{ k: number | null }>("SELECT MAX(order_key) AS k FROM tickets WHERE status = 'waiting' AND lane = ?", LANE.regular)
        .one();
      const upper = room.next_number;
      const lower = Math.max(back.k ?? upper - 1, upper - 1);
      return { lane: LANE.regular, order_key: (lower + upper) / 2, lined_up_at: at };
    }
    if (place.afterTicketId === row.id)
      invalidState(row.status, allowedFrom("return"), "A ticket cannot go back after itself", { field: "afterTicketId" });
    const anchor = this.store.find(place.afterTicketId) ?? refuse("NOT_FOUND", "Ticket not found", { field: "afterTicketId" });
    if (anchor.status !== "waiting") {
      invalidState(anchor.status, ["waiting"], "The ticket to go back after is not waiting", {
        field: "afterTicketId",
        afterTicketId: anchor.id,
      });
    }
    const next = sql
      .exec<{ k: number | null }>(
        "SELECT MIN(order_key) AS k FROM tickets WHERE status = 'waiting' AND lane = ? AND order_key > ?",
        anchor.lane,
        anchor.order_key,
      )
      .one().k;
    const upper =
      next ??
      (anchor.lane === LANE.priority
        ? Math.max(room.priority_seq + 1, anchor.order_key + 1)
        : Math.max(room.next_number, anchor.order_key + 1));
    return { lane: anchor.lane, order_key: (anchor.order_key + upper) / 2, lined_up_at: anchor.lined_up_at ?? anchor.created_at };
  }

  /**
   * Sets a called or serving ticket aside (docs/desks.md, hold): out of the line, out of the
   * no-show sweep (which only expires `called`), off the board; its operator, desk and counter
   * stay, so `resume` brings it back to them.
   */
  hold(cfg: Configured, ticketId: string, reason: string | null, at: number): TicketView {
    const row = this.existing(ticketId);
    if (row.transferring_to !== null) refuseTransferring(row, "hold");
    if (!allows("hold", row.status)) invalidState(row.status, allowedFrom("hold"), `A ${row.status} ticket cannot be held`);
    const from = row.status as HoldableStatus;
    this.store.update(row.id, { status: "held", held_at: at, held_from: from, hold_reason: reason }, at);
    this.store.emit(cfg, "ticket.held", this.store.row(row.id), at, { heldFrom: from, reason, counter: row.counter });
    return this.views.ticket(cfg, row.id, at);
  }

  /**
   * A held ticket goes back to the state it was held from, with the same operator and desk:
   * `serving` again as it was, or `called` again as a new announcement (a new `calledAt`, so
   * the no-show timeout starts over and the board shows the code again; recalls start at 0).
   */
  resume(cfg: Configured, ticketId: string, at: number): TicketView {
    const row = this.existing(ticketId);
    if (!allows("resume", row.status)) invalidState(row.status, allowedFrom("resume"), `A ${row.status} ticket is not held`);
    const to: HoldableStatus = row.held_from ?? "called";
    const cleared = { held_at: null, held_from: null, hold_reason: null };
    if (to === "called") this.store.update(row.id, { status: "called", called_at: at, recall_count: 0, recalled_at: null, ...cleared }, at);
    else this.store.update(row.id, { status: "serving", ...cleared }, at);
    this.store.emit(cfg, "ticket.resumed", this.store.row(row.id), at, {
      resumedTo: to,
      heldForSeconds: Math.max(0, Math.round((at - (row.held_at ?? at)) / 1000)),
      counter: row.counter,
    });
    return this.views.ticket(cfg, row.id, at);
  }

  /**
   * "Let others pass" (docs/desks.md): a waiting ticket moves behind the `places` waiting
   * tickets after it (fewer when fewer are behind it), once per ticket. It lands right after
   * the last one it lets pass, in that ticket's lane, with that ticket's `lined_up_at`, so the
   * desk rule's order along a lane still holds.
   */
  stepBack(cfg: Configured, ticketId: string, places: number, at: number): TicketView {
    const row = this.existing(ticketId);
    if (row.transferring_to !== null) refuseTransferring(row, "stepBack");
    if (!allows("stepBack", row.status)) invalidState(row.status, allowedFrom("stepBack"), `A ${row.status} ticket cannot step back`);
    if (row.stepped_back_places !== null) {
      refuse("CONFLICT", "This ticket already stepped back once", {
        reason: "already_stepped_back",
        steppedBackPlaces: row.stepped_back_places,
      });
    }
    const behind = this.store.sql
      .exec<TicketRow>(
        "SELECT * FROM tickets WHERE status = 'waiting' AND (lane, order_key) > (?, ?) ORDER BY lane, order_key LIMIT ?",
        row.lane,
        row.order_key,
        places,
      )
      .toArray();
    const anchor =
      behind[behind.length - 1] ?? refuse("CONFLICT", "Nobody is behind this ticket", { reason: "nobody_behind", field: "places" });
    const spot = this.placeFor(row, { position: "after", afterTicketId: anchor.id }, at);
    this.store.update(row.id, { ...spot, stepped_back_places: behind.length }, at);
    const view = this.views.ticket(cfg, row.id, at);
    this.store.emit(cfg, "ticket.stepped_back", this.store.row(row.id), at, {
      places: behind.length,
      requestedPlaces: places,
      position: view.position,
    });
    return view;
  }

  /**
   * A later turn on request (docs/visits.md, defer), at most `maxDefers` times per ticket.
   * `until`: the ticket keeps its place in the order and call-next passes over it until then
   * (store.firstCallable), so from `until` on it stands where its place puts it among those
   * still waiting: at the front if everyone ahead of it was called meanwhile. `places`: it moves
   * behind the next `places` waiting tickets (fewer when fewer are behind), as a step back does;
   * a return time already set stays.
   */
  defer(cfg: Configured, ticketId: string, request: DeferRequest, bounds: DeferBounds, at: number): TicketView {
    const row = this.existing(ticketId);
    if (row.transferring_to !== null) refuseTransferring(row, "defer");
    if (!allows("defer", row.status)) {
      invalidState(row.status, allowedFrom("defer"), `A ${row.status} ticket cannot be deferred: only a waiting one`, {
        reason: "ticket_not_waiting",
      });
    }
    const field = "until" in request ? "until" : "places";
    if (row.defer_count >= bounds.maxDefers) {
      refuse("DEFER_LIMIT_REACHED", `This queue lets a ticket ask for a later turn ${bounds.maxDefers} times`, {
        field,
        reason: "defer_limit_reached",
        defers: row.defer_count,
        maxDefers: bounds.maxDefers,
      });
    }
    let moved: number | null = null;
    if ("until" in request) {
      const latest = at + bounds.maxDeferMinutes * MINUTE_MS;
      if (request.until > latest) {
        refuse("DEFER_TOO_FAR", `This queue defers a turn by ${bounds.maxDeferMinutes} minutes at most`, {
          field,
          reason: "defer_too_far",
          maxDeferMinutes: bounds.maxDeferMinutes,
          latest: new Date(latest).toISOString(),
        });
      }
      this.store.update(row.id, { deferred_until: request.until, defer_count: row.defer_count + 1 }, at);
    } else {
      const behind = this.store.sql
        .exec<TicketRow>(
          "SELECT * FROM tickets WHERE status = 'waiting' AND (lane, order_key) > (?, ?) ORDER BY lane, order_key LIMIT ?",
          row.lane,
          row.order_key,
          request.places,
        )
        .toArray();
      const anchor =
        behind[behind.length - 1] ?? refuse("CONFLICT", "Nobody is behind this ticket", { reason: "nobody_behind", field: "places" });
      const spot = this.placeFor(row, { position: "after", afterTicketId: anchor.id }, at);
      this.store.update(row.id, { ...spot, defer_count: row.defer_count + 1 }, at);
      moved = behind.length;
    }
    const view = this.views.ticket(cfg, row.id, at);
    this.store.emit(cfg, "ticket.deferred", this.store.row(row.id), at, {
      until: view.deferredUntil === null ? null : new Date(view.deferredUntil).toISOString(),
      places: moved,
      ...("places" in request ? { requestedPlaces: request.places } : {}),
      position: view.position,
      estimatedWaitMinutes: view.estimatedWaitMinutes,
      deferCount: view.deferCount,
    });
    return view;
  }

  present(cfg: Configured, ticketId: string, at: number): TicketView {
    return this.transition(cfg, ticketId, "present", at, (row) => this.markPresent(cfg, row, at));
  }

  /** `requiredAnswers`: the service's `at_serve` questions (docs/visits.md), refused while one is unanswered. */
  serve(cfg: Configured, ticketId: string, at: number, requiredAnswers: readonly string[] = []): TicketView {
    return this.transition(cfg, ticketId, "serve", at, (row) => {
      assertAnswered(row, requiredAnswers);
      this.store.update(row.id, { status: "serving", serving_at: at }, at);
      this.store.emit(cfg, "ticket.serving", this.store.row(row.id), at, {});
    });
  }

  /** With the service's outcome (checked by the caller against D1) and the operator's note, if given. */
  complete(cfg: Configured, ticketId: string, at: number, result: Completion = {}, requiredAnswers: readonly string[] = []): TicketView {
    return this.transition(cfg, ticketId, "complete", at, (row) => {
      assertAnswered(row, requiredAnswers);
      this.completeServing(cfg, row, at, result);
    });
  }

  skip(cfg: Configured, ticketId: string, reason: string, at: number): TicketView {
    return this.transition(cfg, ticketId, "skip", at, (row) => {
      this.store.update(row.id, { status: "skipped", skip_reason: reason }, at);
      this.store.emit(cfg, "ticket.skipped", this.store.row(row.id), at, { reason });
    });
  }

  cancel(cfg: Configured, ticketId: string, at: number): TicketView {
    return this.transition(cfg, ticketId, "cancel", at, (row) => {
      this.store.update(row.id, { status: "cancelled" }, at);
      this.store.emit(cfg, "ticket.cancelled", this.store.row(row.id), at, { reason: "cancelled" });
    });
  }

  assign(cfg: Configured, ticketId: string, operatorId: string, at: number): TicketView {
    return this.transition(cfg, ticketId, "transferOperator", at, (row) => {
      this.store.update(row.id, { assigned_to_id: operatorId }, at);
      this.store.emit(cfg, "ticket.assigned", this.store.row(row.id), at, { previousAssignedToId: row.assigned_to_id });
    });
  }

  /**
   * `restore` puts the same ticket back at the front; `rejoin` leaves it as it is and creates
   * a new ticket at the back. A ticket is recovered at most once.
   */
  recover(cfg: Configured, ticketId: string, option: RecoveryOption, at: number): TicketView {
    const row = this.existing(ticketId);
    if (row.transferring_to !== null) refuseTransferring(row, "recover");
    if (!allows("recover", row.status)) invalidState(row.status, allowedFrom("recover"), `A ${row.status} ticket cannot be recovered`);
    const successor = this.store.recoveredTo(row.id);
    if (successor !== null) {
      invalidState(row.status, allowedFrom("recover"), "This ticket was already recovered", { recoveredToId: successor });
    }
    this.assertAcceptsTickets(cfg, row.party_size);
    if (option === "restore") {
      const seq = this.store.nextPrioritySeq();
      this.store.update(
        row.id,
        {
          status: "waiting",
          lane: LANE.priority,
          order_key: seq,
          lined_up_at: at,
          called_at: null,
          assigned_to_id: null,
          skip_reason: null,
        },
        at,
      );
      this.store.emit(cfg, "ticket.recovered", this.store.row(row.id), at, { recoveryOption: option });
      return this.views.ticket(cfg, row.id, at);
    }
    const fresh = this.createTicket(
      cfg,
      {
        userId: row.user_id,
        partySize: row.party_size,
        isPriority: false,
        isGhostMode: row.is_ghost_mode === 1,
        visitorName: row.visitor_name,
        phone: row.phone,
        language: row.language,
        source: "recovery",
        intake: parseAnswers(row.intake),
        intakePersonal: parseAnswers(row.intake_personal),
      },
      at,
      row.id,
    );
    this.store.emit(cfg, "ticket.recovered", fresh, at, { recoveryOption: option, recoveredFromId: row.id });
    return this.views.ticket(cfg, fresh.id, at);
  }

  /** A verification scan: the scanner's live ticket is present; a remote join arrives by qr_scan. */
  presentOwn(cfg: Configured, userId: string, at: number): TicketView {
    const row = this.store.liveRowOf(userId) ?? refuse("NOT_FOUND", "You hold no waiting or called ticket in this queue");
    const remote = this.remote.find(row.id);
    if (remote && remote.status !== "arrived" && row.status === "waiting") this.remote.confirm(row.id, "qr_scan", at);
    else this.markPresent(cfg, row, at);
    return this.views.ticket(cfg, row.id, at);
  }

  existing(id: string): TicketRow {
    return this.store.find(id) ?? refuse("NOT_FOUND", "Ticket not found");
  }

  /** After every change: `ticket.almost_called` once for each waiting ticket within 3 of the front. */
  announceApproaching(cfg: Configured, at: number): void {
    for (const [ahead, front] of this.store.waitingFront(ALMOST_CALLED_AHEAD + 1, at).entries()) {
      if (front.almost_called_sent === 1) continue;
      this.store.emit(cfg, "ticket.almost_called", this.store.markAlmostCalled(front.id), at, { ahead });
    }
  }

  /** The earliest no-show or remote-join deadline, for the cron sweep (through the outbox). */
  nextDeadline(): number | null {
    const first = this.store.firstCalledAt();
    const noShow = first === null ? null : first + this.store.room().no_show_ms;
    const remote = this.remote.nextDeadline();
    if (noShow === null || remote === null) return noShow ?? remote;
    return Math.min(noShow, remote);
  }

  // ---- internals ---------------------------------------------------------------------------

  /** Read after the change, so it shows the settings just written. */
  private summary(at: number): QueueSummary {
    return this.views.summary(this.store.room(), at);
  }

  private transition(
    cfg: Configured,
    ticketId: string,
    operation: TicketOperation,
    at: number,
    apply: (row: TicketRow) => void,
  ): TicketView {
    const row = this.existing(ticketId);
    if (row.transferring_to !== null) refuseTransferring(row, operation);
    if (!allows(operation, row.status)) invalidState(row.status, allowedFrom(operation), `Not allowed while the ticket is ${row.status}`);
    apply(row);
    return this.views.ticket(cfg, row.id, at);
  }

  private markPresent(cfg: Configured, row: TicketRow, at: number): void {
    if (row.present_at !== null) return;
    this.store.update(row.id, { present_at: at }, at);
    this.store.emit(cfg, "ticket.present", this.store.row(row.id), at, {});
  }

  private assertNotArchived(cfg: Configured): void {
    if (cfg.archived_at !== null) invalidState("archived", ["active", "paused", "closed"], "This queue is archived");
  }

  private assertAcceptsTickets(cfg: Configured, partySize: number): void {
    if (cfg.archived_at !== null) refuse("QUEUE_CLOSED", "This queue is archived", { status: "archived" });
    if (cfg.status === "closed") refuse("QUEUE_CLOSED", "This queue is closed", { status: "closed" });
    if (cfg.status === "paused") refuse("QUEUE_PAUSED", "This queue is paused and takes no new tickets", { status: "paused" });
    if (cfg.max_capacity !== null) {
      const used = this.store.capacityUsed();
      if (used + partySize > cfg.max_capacity)
        refuse("QUEUE_FULL", "This queue is full", { maxCapacity: cfg.max_capacity, used, partySize });
    }
  }

  private createTicket(cfg: Configured, input: NewTicket, at: number, recoveredFromId: string | null = null): TicketRow {
    return this.placeTicket(cfg, input, at, recoveredFromId, { promise: false }).row;
  }

  /**
   * A new waiting ticket and its view. Someone who starts close to the front has nothing to
   * "reach" (marked told at once), and a new ticket moves nobody forward (at the back of its
   * lane, or a VIP ahead of the others: everyone it passes moves back), so a join needs no
   * "almost your turn" scan afterwards (QueueRoom.join, issue 43). With `promise`, the wait the
   * view answers stays with the ticket (analytics measure estimates against it).
   *
   * The row is settled in memory and written once (issue 43), unless the blend orders the line:
   * then the position is counted with the row in the table, and the flags written after it.
   */
  private placeTicket(
    cfg: Configured,
    input: NewTicket,
    at: number,
    recoveredFromId: string | null,
    { promise }: { promise: boolean },
  ): { row: TicketRow; view: TicketView } {
    const used = cfg.max_capacity === null ? 0 : this.store.capacityUsed();
    let row = this.store.numberNew(newTicketId(cfg.queue_id), input, at, recoveredFromId);
    const atBack = this.store.positionAtBack(row);
    let view: TicketView;
    if (atBack !== null) {
      row.almost_called_sent = atBack <= ALMOST_CALLED_AHEAD + 1 ? 1 : 0;
      view = toView(cfg, row, atBack, this.views.pace(cfg, at));
      if (promise) row.first_estimate_minutes = view.estimatedWaitMinutes;
      this.store.insert(row);
    } else {
      this.store.insert(row);
      const position = this.store.positionOf(row, at);
      view = toView(cfg, row, position, this.views.pace(cfg, at));
      if ((position ?? Infinity) <= ALMOST_CALLED_AHEAD + 1) {
        this.store.markAlmostCalled(row.id);
        row = { ...row, almost_called_sent: 1 };
      }
      if (promise) {
        this.store.recordFirstEstimate(row.id, view.estimatedWaitMinutes);
        row = { ...row, first_estimate_minutes: view.estimatedWaitMinutes };
      }
    }
    if (crossesCapacityWarning(used, used + input.partySize, cfg.max_capacity)) {
      this.store.emit(cfg, "queue.capacity_warning", null, at, { used: used + input.partySize, maxCapacity: cfg.max_capacity });
    }
    return { row, view };
  }

  /**
   * Staff's change of the intake answers (docs/visits.md), checked by the Worker against the
   * service's questions: written whole, at any status (a correction after service counts too).
   */
  setIntake(cfg: Configured, ticketId: string, intake: IntakeAnswers | null, intakePersonal: IntakeAnswers | null, at: number): TicketView {
    const row = this.existing(ticketId);
    this.store.update(row.id, { intake: answersJson(intake), intake_personal: answersJson(intakePersonal) }, at);
    this.store.emit(cfg, "ticket.intake_updated", this.store.row(row.id), at, {});
    return this.views.ticket(cfg, row.id, at);
  }

  /**
   * Puts a label on a ticket or takes it off (docs/visits.md), at any status. Putting one it has,
   * or taking one it lacks, changes nothing and emits nothing; at most MAX_TICKET_LABELS.
   */
  label(cfg: Configured, ticketId: string, label: string, add: boolean, at: number): TicketView {
    const row = this.existing(ticketId);
    const labels: string[] = row.labels === null ? [] : (JSON.parse(row.labels) as string[]);
    const has = labels.includes(label);
    if (add && !has && labels.length >= MAX_TICKET_LABELS) {
      refuse("CONFLICT", `A ticket carries at most ${MAX_TICKET_LABELS} labels`, {
        field: "label",
        reason: "too_many_labels",
        limit: MAX_TICKET_LABELS,
      });
    }
    if (add !== has) {
      const next = add ? [...labels, label] : labels.filter((l) => l !== label);
      this.store.update(row.id, { labels: next.length === 0 ? null : JSON.stringify(next) }, at);
      this.store.emit(cfg, add ? "ticket.label_added" : "ticket.label_removed", this.store.row(row.id), at, { label });
    }
    return this.views.ticket(cfg, row.id, at);
  }

  /**
   * Staff make a waiting ticket VIP (issue 27, the console's "mark VIP"): `is_priority` set, and
   * the ticket goes to the back of the priority lane, so ahead of every regular ticket and behind
   * the VIPs already waiting, as a VIP ticket created now would. One already in the priority lane
   * (returned first, restored) keeps its place. Already VIP: nothing changes, nothing is emitted.
   */
  prioritize(cfg: Configured, ticketId: string, at: number): TicketView {
    const row = this.existing(ticketId);
    if (row.transferring_to !== null) refuseTransferring(row, "prioritize");
    if (!allows("prioritize", row.status)) {
      invalidState(row.status, allowedFrom("prioritize"), `A ${row.status} ticket cannot be made VIP: only a waiting one`);
    }
    if (row.is_priority === 1) return this.views.ticket(cfg, row.id, at);
    const spot = row.lane === LANE.priority ? {} : this.backOfPriorityLane(at);
    this.store.update(row.id, { is_priority: 1, ...spot }, at);
    const view = this.views.ticket(cfg, row.id, at);
    this.store.emit(cfg, "ticket.prioritized", this.store.row(row.id), at, { position: view.position });
    return view;
  }

  /**
   * Undoes `prioritize` (a VIP marked by mistake): `is_priority` cleared, and a ticket in the
   * priority lane goes back to the regular line where its number puts it (between the waiting
   * tickets numbered before and after it), as if it had never been VIP. Not VIP: nothing changes.
   */
  unprioritize(cfg: Configured, ticketId: string, at: number): TicketView {
    const row = this.existing(ticketId);
    if (row.transferring_to !== null) refuseTransferring(row, "prioritize");
    if (!allows("prioritize", row.status)) {
      invalidState(
        row.status,
        allowedFrom("prioritize"),
        `A ${row.status} ticket is not in the line: only a waiting one can stop being VIP`,
      );
    }
    if (row.is_priority === 0) return this.views.ticket(cfg, row.id, at);
    const spot = row.lane === LANE.priority ? this.regularPlaceOf(row) : {};
    this.store.update(row.id, { is_priority: 0, ...spot }, at);
    const view = this.views.ticket(cfg, row.id, at);
    this.store.emit(cfg, "ticket.priority_removed", this.store.row(row.id), at, { position: view.position });
    return view;
  }

  /**
   * A regular-lane key for the ticket's own number: the number itself unless a waiting ticket
   * already holds it (a return placed there), then just before it. `lined_up_at` stays between
   * the neighbours' so it never decreases along the lane (domain/desks.ts).
   */
  private regularPlaceOf(row: TicketRow): { lane: number; order_key: number; lined_up_at: number } {
    const sql = this.store.sql;
    const before = sql
      .exec<{ k: number; t: number | null; c: number }>(
        "SELECT order_key AS k, lined_up_at AS t, created_at AS c FROM tickets WHERE status = 'waiting' AND lane = ? AND order_key < ? ORDER BY order_key DESC LIMIT 1",
        LANE.regular,
        row.number,
      )
      .toArray()[0];
    const after = sql
      .exec<{ k: number; t: number | null; c: number }>(
        "SELECT order_key AS k, lined_up_at AS t, created_at AS c FROM tickets WHERE status = 'waiting' AND lane = ? AND order_key >= ? ORDER BY order_key LIMIT 1",
        LANE.regular,
        row.number,
      )
      .toArray()[0];
    const key = after !== undefined && after.k === row.number ? ((before?.k ?? row.number - 1) + row.number) / 2 : row.number;
    const low = before === undefined ? row.created_at : Math.max(row.created_at, before.t ?? before.c);
    const high = after === undefined ? low : (after.t ?? after.c);
    return { lane: LANE.regular, order_key: key, lined_up_at: Math.min(low, high) };
  }

  /** The back of the priority lane (store.nextPrioritySeq: past every key now in it). */
  private backOfPriorityLane(at: number): { lane: number; order_key: number; lined_up_at: number } {
    return { lane: LANE.priority, order_key: this.store.nextPrioritySeq(), lined_up_at: at };
  }

  /** The wait a new ticket faces starts or ends a long-wait episode (see longWaitChange). */
  private watchLongWait(cfg: Configured, joined: TicketView, at: number): void {
    if (joined.estimatedWaitMinutes === null || joined.position === null) return;
    const change = longWaitChange(joined.estimatedWaitMinutes, cfg.long_wait_at !== null);
    if (change === "start") {
      this.store.setRoom({ long_wait_at: at });
      this.store.emit(cfg, "queue.long_wait", null, at, { estimatedWaitMinutes: joined.estimatedWaitMinutes, position: joined.position });
    } else if (change === "end") {
      this.store.setRoom({ long_wait_at: null });
    }
  }

  /**
   * A visit with a next leg (docs/visits.md) reserves it in the same write: the leg is served
   * and the hand-off to the next service's queue is open (visit-routes.ts drives it). The visit
   * is over, and reviewed, only after its last leg.
   */
  private completeServing(cfg: Configured, row: TicketRow, at: number, result: Completion = {}): void {
    const { outcome = null, outcomeLabel = null, note = null } = result;
    const onward = reserveNextLeg(this.store, row, at);
    this.store.update(
      row.id,
      { status: "served", served_at: at, ...(outcome !== null || note !== null ? { outcome, note } : {}), ...(onward ?? {}) },
      at,
    );
    const served = this.store.row(row.id);
    this.store.emit(cfg, "ticket.served", served, at, {
      ...(outcome !== null ? { outcome, outcomeLabel } : {}),
      ...(note !== null ? { note } : {}),
      ...(onward !== null ? { nextQueueId: onward.transferring_to } : {}),
    });
    if (served.is_ghost_mode === 0 && onward === null) this.store.emit(cfg, "review.request", served, at, {});
  }

  /** `alsoHeld`: the queue ends (archive, deletion), so a ticket set aside ends with it; a clear leaves it with its operator. */
  private cancelLive(cfg: Configured, at: number, reason: string, evenInHandOff: boolean, alsoHeld = false): number {
    const statuses = alsoHeld ? "'waiting', 'called', 'held'" : "'waiting', 'called'";
    const live = this.store.rowsWhere(`status IN (${statuses})${evenInHandOff ? "" : " AND transferring_to IS NULL"}`);
    for (const row of live) {
      this.store.update(row.id, { status: "cancelled", transferring_to: null, transferring_since: null, hand_off_id: null }, at);
      this.store.emit(cfg, "ticket.cancelled", this.store.row(row.id), at, { reason });
    }
    return live.length;
  }
}

/** Refuses (409 INTAKE_REQUIRED) while one of `keys` has no answer on the ticket, naming them all as `intake.<key>`. */
function assertAnswered(row: TicketRow, keys: readonly string[]): void {
  if (keys.length === 0) return;
  const answers = { ...parseAnswers(row.intake), ...parseAnswers(row.intake_personal) };
  const missing = keys.filter((k) => answers[k] === undefined).map((k) => `intake.${k}`);
  if (missing.length === 0) return;
  refuse("INTAKE_REQUIRED", `Answer ${missing.join(", ")} before serving this ticket`, { field: missing[0], missing });
}

export function refuseTransferring(row: TicketRow, operation: TicketOperation): never {
  invalidState(row.status, allowedFrom(operation), "The ticket is being transferred to another queue", {
    transferringTo: row.transferring_to,
  });
}

/** A call made at a desk: the desk, the best head the desk saw in its other queues, its queue weights. */
export interface DeskCall {
  deskId: string;
  bound: DeskCandidate | null;
  weights: Readonly<Record<string, number>>;
}

export function candidateOf(cfg: Configured, row: TicketRow): DeskCandidate {
  return { ticketId: row.id, queueId: cfg.queue_id, lane: row.lane, linedUpAt: row.lined_up_at ?? row.created_at, orderKey: row.order_key };
}

/** Labels one ticket may carry (docs/visits.md). */
export const MAX_TICKET_LABELS = 10;

/** How many times one call of a ticket may be announced again. */
export const RECALL_LIMIT = 3;
