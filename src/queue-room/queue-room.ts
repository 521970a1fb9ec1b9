import { DurableObject } from "cloudflare:workers";
import type { DeskCandidate } from "../domain/desks";
import type { ConfirmMethod } from "../domain/remote-join";
import type { QueueStatus, RecoveryOption } from "../domain/tickets";
import type { Env } from "../env";
import { now } from "../lib/clock";
import { ARCHIVE_RETRY_MS, RoomArchive, type ArchiveResult } from "./archive";
import { Commands, type Completion, type ReturnPlace } from "./commands";
import { TicketFollowers, type VisitorTicketData } from "./followers";
import { HAND_OFF_RETRY_MS, HandOffs } from "./hand-offs";
import { DRAIN_DELAY_MS, drainOutbox } from "./outbox";
import { Refusal, refuse } from "./refusals";
import { RemoteJoins } from "./remote";
import { RoomRules } from "./rules";
import { ledgerOf } from "../services/quota";
import { migrateRoom } from "./schema";
import { queueFacts, RoomSockets, type BoardData, type QueueStatusData } from "./sockets";
import { configuredOf, RoomStore, type Configured } from "./store";
import type {
  NewTicket,
  QueueSummary,
  RemoteJoinAndTicket,
  RemoteLocation,
  Reservation,
  RoomConfig,
  RoomResult,
  RoomRulesCopy,
  RoomSettings,
  TicketQuery,
  TicketView,
  TransferSnapshot,
} from "./types";
import { RoomViews, toView } from "./views";

export { HAND_OFF_TIMEOUT_MS } from "./hand-offs";

const MINUTE_MS = 60_000;
/** After a failed delivery of the outbox, the alarm tries again this much later. */
const DELIVERY_RETRY_MS = 5_000;

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * One per queue: the single writer of that queue's tickets (docs/queue-room.md). This class is
 * the room's face: each RPC method runs one command of a module below through one of two paths.
 *  - `mutate` (over `change`, which `retire` takes directly): one storage transaction (a
 *    refusal rolls it all back) in which ticket writes take a new version and events go to the
 *    outbox; then the alarm is armed and the sockets are told. Every state change takes it.
 *  - `read`: the same checks, no writes.
 * Modules: store.ts (rows, order index, outbox rows), views.ts (what is answered),
 * commands.ts (the line), hand-offs.ts (transfers between rooms), remote.ts (remote joins),
 * sockets.ts (widget channel), followers.ts (the visitor's ticket and its token), outbox.ts
 * (delivery), schema.ts (the room's SQLite schema).
 */
export class QueueRoom extends DurableObject<Env> {
  private readonly store: RoomStore;
  private readonly views: RoomViews;
  private readonly remote: RemoteJoins;
  private readonly commands: Commands;
  private readonly handOffs: HandOffs;
  private readonly sockets: RoomSockets;
  private readonly archiveStep: RoomArchive;
  private readonly followers: TicketFollowers;
  private readonly rules: RoomRules;
  /**
   * When the alarm this instance last set will fire (wall clock); null once it began to run.
   * A change finds the drain already armed within DRAIN_DELAY_MS and leaves it: a burst of
   * changes is delivered by one drain. A new instance (after an eviction) does not know the
   * stored alarm and arms one again, at most DRAIN_DELAY_MS later than it was.
   */
  private alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrateRoom(ctx.storage);
    const sql = ctx.storage.sql;
    this.store = new RoomStore(sql, (id, fields, at) => {
      this.remote.onTicketChange(id, fields, at);
      this.followers.onTicketChange(id, fields.status);
    });
    this.views = new RoomViews(this.store);
    this.remote = new RemoteJoins(sql, {
      queueId: () => this.configured().queue_id,
      row: (id) => this.store.row(id),
      updateTicket: (id, fields, at) => this.store.update(id, fields, at),
      emit: (type, ticket, at, data) => this.store.emit(this.configured(), type, ticket, at, data),
      refuse,
    });
    this.commands = new Commands(this.store, this.views, this.remote);
    this.handOffs = new HandOffs(this.store, (fn) => ctx.storage.transactionSync(fn), {
      mutate: (at, fn) => this.mutate(at, fn),
      existing: (id) => this.commands.existing(id),
      admit: (cfg, input, at) => this.commands.admit(cfg, input, at),
      view: (cfg, id, at) => this.views.ticket(cfg, id, at),
      peer: (queueId) => this.peer(queueId),
    });
    this.sockets = new RoomSockets(
      ctx,
      env,
      sql,
      (config) => this.configure(config),
      (queueId) => this.peer(queueId),
      () => this.followers,
    );
    this.followers = new TicketFollowers(
      ctx,
      sql,
      (id, at) => this.visitorView(id, at),
      (name) => this.peer(name),
      (id, text, final) => this.sockets.deliverTicket(id, text, final),
    );
    this.archiveStep = new RoomArchive(ctx.storage, env);
    this.rules = new RoomRules(sql);
    // Keep-alives are answered without waking a hibernated room.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  // ---- the queue ----------------------------------------------------------------------------

  /** Gives the room its catalog facts once; later calls change nothing (the room is the authority). */
  configure(config: RoomConfig): void {
    this.ctx.storage.sql.exec(
      `UPDATE room SET queue_id = ?, organization_id = ?, service_id = ?, letter = ?, max_capacity = ?, no_show_ms = ?, status = ?, archived_at = ?,
         default_service_minutes = COALESCE(?, default_service_minutes)
       WHERE id = 1 AND organization_id IS NULL`,
      config.queueId,
      config.organizationId,
      config.serviceId,
      config.letter,
      config.maxCapacity,
      config.noShowTimeoutMinutes * MINUTE_MS,
      config.status,
      config.archivedAt,
      config.defaultServiceMinutes ?? null,
    );
  }

  reconfigure(settings: RoomSettings, at: number): RoomResult<QueueSummary> {
    return this.mutate(at, (cfg) => this.commands.reconfigure(cfg, settings, at));
  }

  summary(at: number): QueueSummary | null {
    const cfg = configuredOf(this.store.room());
    return cfg === null || cfg.retired_at !== null ? null : this.views.summary(cfg, at);
  }

  setStatus(status: QueueStatus, at: number): RoomResult<QueueSummary> {
    return this.mutate(at, (cfg) => this.commands.setStatus(cfg, status, at));
  }

  // clear, archive and retire never cancel a ticket that another queue may still admit: its
  // hand-off is settled with the target first, outside any storage transaction (a room never
  // holds one open across a call to another room). A hand-off that cannot be settled now, or
  // that began meanwhile, is left to end on its own (see hand-offs.ts release).

  async clear(at: number): Promise<RoomResult<{ cancelled: number }>> {
    await this.settleOpenHandOffs(at);
    return this.mutate(at, (cfg) => this.commands.clear(cfg, at));
  }

  async archive(at: number): Promise<RoomResult<QueueSummary>> {
    await this.settleOpenHandOffs(at);
    return this.mutate(at, (cfg) => this.commands.archive(cfg, at));
  }

  /** The queue is being deleted (its service, location or organization went). Idempotent. */
  async retire(at: number): Promise<void> {
    if (this.store.room().retired_at !== null) return;
    await this.settleOpenHandOffs(at);
    this.change(at, () => {
      const room = this.store.room();
      if (room.retired_at === null) this.commands.retire(configuredOf(room), at);
    });
  }

  /** Called by the sweep: called tickets past the no-show timeout become expired. */
  expireDue(at: number): { expired: number; nextDeadline: number | null; gone: boolean } {
    const cfg = configuredOf(this.store.room());
    if (cfg === null || cfg.retired_at !== null) return { expired: 0, nextDeadline: null, gone: true };
    const result = this.mutate(at, (c) => this.commands.expireDue(c, at));
    return { expired: result.ok ? result.value : 0, nextDeadline: this.commands.nextDeadline(), gone: false };
  }

  // ---- tickets ------------------------------------------------------------------------------

  /**
   * With `tokenHash`, the visitor's token for the new ticket is kept beside it (followers.ts).
   * With `rulesVersion` (the queue row's; the Worker always sends it), the rules are checked
   * first (rules.ts), then a unit of the organization's monthly quota is taken from its ledger,
   * given back if the join is refused. Without it (a room driven directly: the model test, the
   * benchmark's seeding) the room's own checks alone apply, as before rules lived here.
   */
  async join(input: NewTicket, at: number, tokenHash?: string, rulesVersion?: number): Promise<RoomResult<TicketView>> {
    const create = (cfg: Configured) => {
      const ticket = this.commands.join(cfg, input, at);
      if (tokenHash !== undefined) this.followers.issue(ticket.id, tokenHash);
      return ticket;
    };
    if (rulesVersion === undefined) return this.mutate(at, create);
    const allowed = this.read(() => this.rules.assertJoin(at, rulesVersion));
    if (!allowed.ok) return allowed;
    const ledger = ledgerOf(this.env, this.configured().organization_id);
    const unit = (await ledger.take(this.configured().organization_id, at, allowed.value.ticketsPerMonth)) as RoomResult<{
      period: string;
    }>;
    if (!unit.ok) return unit;
    let joined: RoomResult<TicketView>;
    try {
      joined = this.mutate(at, (cfg) => {
        // Checked again in the transaction: a copy pushed while the unit was taken applies.
        this.rules.assertJoin(at, rulesVersion);
        return create(cfg);
      });
    } catch (err) {
      await ledger.refund(unit.value.period);
      throw err;
    }
    if (!joined.ok) await ledger.refund(unit.value.period);
    return joined;
  }

  /** `userId`: the calling member, refused while a break, closure or unavailability covers them. */
  callNext(
    operatorId: string,
    at: number,
    counter: string | null = null,
    userId: string | null = null,
    rulesVersion = 0,
  ): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => {
      this.rules.assertMayCall(userId, at, rulesVersion);
      return this.commands.callNext(cfg, operatorId, at, counter);
    });
  }

  /** A new copy of the rules (services/room-rules.ts); an older one than the room holds is ignored. */
  applyRules(copy: RoomRulesCopy): boolean {
    if (this.store.room().retired_at !== null) return false;
    return this.ctx.storage.transactionSync(() => this.rules.apply(copy));
  }

  // ---- desks (docs/desks.md) ----------------------------------------------------------------

  /**
   * The ticket this queue would call next, as a desk compares it; null when none (or closed).
   * Refused OPERATOR_UNAVAILABLE when the calling member (`userId`) may not call now.
   */
  deskHead(at: number, userId: string | null = null, rulesVersion = 0): RoomResult<DeskCandidate | null> {
    return this.read((cfg) => {
      this.rules.assertMayCall(userId, at, rulesVersion);
      return this.commands.deskHead(cfg);
    });
  }

  /**
   * Call-next from a desk: refused HEAD_MOVED when this queue's head no longer beats `bound`,
   * both ranked with the desk's queue weights at `at` (docs/desks.md).
   */
  callAtDesk(
    operatorId: string,
    deskId: string,
    counter: string | null,
    bound: DeskCandidate | null,
    at: number,
    weights: Record<string, number> = {},
  ): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.callNext(cfg, operatorId, at, counter, { deskId, bound, weights }));
  }

  /** A desk call in another queue completes what this operator was serving here. */
  finishServingOf(operatorId: string, at: number): RoomResult<number> {
    return this.mutate(at, (cfg) => this.commands.finishServingOf(cfg, operatorId, at));
  }

  returnToLine(ticketId: string, place: ReturnPlace, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.returnToLine(cfg, ticketId, place, at));
  }

  recall(ticketId: string, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.recall(cfg, ticketId, at));
  }

  hold(ticketId: string, reason: string | null, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.hold(cfg, ticketId, reason, at));
  }

  resume(ticketId: string, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.resume(cfg, ticketId, at));
  }

  stepBack(ticketId: string, places: number, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.stepBack(cfg, ticketId, places, at));
  }

  /** The visitor's "let others pass" with the ticket's token (null: wrong token). */
  async visitorStepBack(
    ticketId: string,
    tokenHash: string,
    places: number,
    queueName: string,
    at: number,
  ): Promise<RoomResult<VisitorTicketData | null>> {
    this.learnName(queueName);
    if (!this.followers.holds(ticketId, tokenHash)) return { ok: true, value: null };
    const moved = this.mutate(at, (cfg) => this.commands.stepBack(cfg, ticketId, places, at));
    if (!moved.ok) return moved;
    return { ok: true, value: await this.followers.after(ticketId, at) };
  }

  present(ticketId: string, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.present(cfg, ticketId, at));
  }

  serve(ticketId: string, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.serve(cfg, ticketId, at));
  }

  complete(ticketId: string, at: number, result: Completion = {}): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.complete(cfg, ticketId, at, result));
  }

  skipAbsent(ticketId: string, reason: string, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.skip(cfg, ticketId, reason, at));
  }

  cancel(ticketId: string, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.cancel(cfg, ticketId, at));
  }

  assign(ticketId: string, operatorId: string, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.assign(cfg, ticketId, operatorId, at));
  }

  recover(ticketId: string, option: RecoveryOption, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.recover(cfg, ticketId, option, at));
  }

  /** A verification scan: the scanner's live ticket is present; a remote join arrives by qr_scan. */
  presentOwn(userId: string, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.commands.presentOwn(cfg, userId, at));
  }

  getTicket(ticketId: string, at: number): RoomResult<TicketView> {
    return this.read((cfg) => this.views.ticket(cfg, this.commands.existing(ticketId).id, at));
  }

  listTickets(query: TicketQuery, at: number): RoomResult<{ items: TicketView[]; total: number }> {
    return this.read((cfg) => this.views.list(cfg, query, at));
  }

  /** The user's live (waiting or called) ticket here, the oldest first; null when none. */
  liveTicketOf(userId: string, at: number): RoomResult<TicketView | null> {
    return this.read((cfg) => {
      const row = this.store.liveRowOf(userId);
      return row ? this.views.ticket(cfg, row.id, at) : null;
    });
  }

  // ---- the visitor's ticket (followers.ts) --------------------------------------------------

  /** The ticket for the holder of its token; null for a wrong token or a finished ticket. */
  async visitorTicket(ticketId: string, tokenHash: string, queueName: string, at: number): Promise<VisitorTicketData | null> {
    this.learnName(queueName);
    return this.followers.read(ticketId, tokenHash, at);
  }

  /** "Leave the queue": cancels the ticket for the holder of its token (null: wrong token). */
  async visitorCancel(ticketId: string, tokenHash: string, queueName: string, at: number): Promise<RoomResult<VisitorTicketData | null>> {
    this.learnName(queueName);
    if (!this.followers.holds(ticketId, tokenHash)) return { ok: true, value: null };
    const cancelled = this.mutate(at, (cfg) => this.commands.cancel(cfg, ticketId, at));
    if (!cancelled.ok) return cancelled;
    return { ok: true, value: await this.followers.after(ticketId, at) };
  }

  /** A socket in room `watcher` follows a ticket of this queue with its token. */
  async watchTicket(watcher: string, ticketId: string, token: string, at: number): Promise<VisitorTicketData | null> {
    const room = this.store.room();
    if (room.queue_id !== null && this.sockets.queueName() === null) {
      const facts = await queueFacts(this.env, room.queue_id);
      if (facts) this.learnName(facts.name);
    }
    return this.followers.watch(watcher, ticketId, token, at);
  }

  deliverTicketUpdate(ticketId: string, text: string, final: boolean): number {
    return this.sockets.deliverTicket(ticketId, text, final);
  }

  private learnName(name: string): void {
    this.ctx.storage.sql.exec("UPDATE widget SET name = ? WHERE id = 1 AND name IS NOT ?", name, name);
  }

  private visitorView(ticketId: string, at: number): TicketView | null {
    const cfg = configuredOf(this.store.room());
    if (cfg === null || cfg.retired_at !== null) return null;
    const row = this.store.find(ticketId);
    return row ? toView(cfg, row, this.store.positionOf(row), this.views.pace(cfg, at)) : null;
  }

  // ---- remote joins (remote.ts) -------------------------------------------------------------

  remoteJoin(ticketId: string, at: number): RoomResult<RemoteJoinAndTicket> {
    return this.read((cfg) => this.remoteView(cfg, ticketId, at));
  }

  updateRemoteLocation(ticketId: string, location: RemoteLocation, at: number): RoomResult<RemoteJoinAndTicket> {
    return this.mutate(at, (cfg) => {
      this.remote.updateLocation(ticketId, location, at);
      return this.remoteView(cfg, ticketId, at);
    });
  }

  confirmRemote(ticketId: string, method: ConfirmMethod, at: number): RoomResult<RemoteJoinAndTicket> {
    return this.mutate(at, (cfg) => {
      this.remote.confirm(ticketId, method, at);
      return this.remoteView(cfg, ticketId, at);
    });
  }

  // ---- transfers between queues (hand-offs.ts) ----------------------------------------------

  reserveTransfer(ticketId: string, targetQueueId: string, at: number): RoomResult<Reservation> {
    return this.mutate(at, (cfg) => this.handOffs.reserve(cfg, ticketId, targetQueueId, at));
  }

  releaseTransfer(ticketId: string, handOffId: string, at: number): RoomResult<void> {
    return this.mutate(at, (cfg) => this.handOffs.release(cfg, ticketId, handOffId, at));
  }

  completeTransfer(ticketId: string, handOffId: string, newTicketId: string, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.handOffs.complete(cfg, ticketId, handOffId, newTicketId, at));
  }

  /**
   * Settles the ticket's open hand-off with its target (as the alarm does for stale ones):
   * answers the ticket the target admitted, or null once the hand-off is released here.
   */
  async settleTransfer(ticketId: string, at: number): Promise<RoomResult<string | null>> {
    const open = this.read(() => this.handOffs.openOf(ticketId));
    if (!open.ok || open.value === null) return open.ok ? { ok: true, value: null } : open;
    return this.handOffs.settle(open.value, at);
  }

  admitTransferred(snapshot: TransferSnapshot, prioritize: boolean, at: number): RoomResult<TicketView> {
    return this.mutate(at, (cfg) => this.handOffs.admit(cfg, snapshot, prioritize, at));
  }

  abandonTransfer(handOffId: string): RoomResult<string | null> {
    return answerPeer("abandon a hand-off", () => this.handOffs.abandon(handOffId));
  }

  // ---- widget live channel (sockets.ts) -----------------------------------------------------

  /** A widget WebSocket forwarded by the Worker for this queue (GET /v1/widget/ws). */
  override async fetch(request: Request): Promise<Response> {
    return this.sockets.accept(request);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.sockets.message(ws, message);
  }

  override webSocketClose(ws: WebSocket, code: number, reason: string): void {
    this.sockets.closed(ws, code, reason);
  }

  override webSocketError(ws: WebSocket, error: unknown): void {
    this.sockets.error(ws, error);
  }

  /** The widget status of this queue; null until configured, or once deleted. */
  widgetStatus(at: number): QueueStatusData | null {
    return this.sockets.status(at);
  }

  /** Another room of the organization relays this queue's updates to its sockets. */
  watch(watcherQueueId: string, config: RoomConfig, name: string): RoomResult<QueueStatusData | null> {
    return answerPeer("relay updates", () => this.sockets.watch(watcherQueueId, config, name));
  }

  deliverUpdate(queueId: string, text: string, boardText?: string): number {
    return this.sockets.deliver(queueId, text, boardText);
  }

  /** The display board's part of this queue; null until configured, or once deleted. */
  widgetBoard(at: number): BoardData | null {
    return this.sockets.board(at);
  }

  // ---- retention (archive.ts) ---------------------------------------------------------------

  /**
   * Moves one chunk of finished tickets out of the room once D1 holds them (the alarm runs it;
   * `more` when another chunk is due now). An unconfigured room has nothing to archive.
   */
  async archiveFinished(at: number): Promise<ArchiveResult> {
    const cfg = configuredOf(this.store.room());
    if (cfg === null) return { archived: 0, more: false };
    return this.archiveStep.archiveChunk(cfg, at);
  }

  // ---- outbox delivery and open hand-offs ---------------------------------------------------

  /**
   * Delivers the outbox (at least once: every step of the drain is idempotent), then settles
   * the hand-offs left open. Nothing thrown here escapes: a failure is logged in one line and
   * the alarm is always armed again, so a quiet queue still retries.
   */
  override async alarm(): Promise<void> {
    // Changes from now on arm the next drain themselves (see armAlarm).
    this.alarmAt = null;
    try {
      if (await drainOutbox(this.ctx.storage.sql, this.env, () => this.commands.nextDeadline())) {
        await this.setAlarm(Date.now());
        return;
      }
    } catch (err) {
      console.warn(`queue room: outbox delivery failed, retrying in ${DELIVERY_RETRY_MS / 1000} s: ${describe(err)}`);
      await this.setAlarm(Date.now() + DELIVERY_RETRY_MS);
      return;
    }
    const failed = await this.settle(this.handOffs.stale(now()), now());
    let more = false;
    try {
      more = (await this.archiveFinished(now())).more;
    } catch (err) {
      console.warn(`queue room: archive step failed, retrying in ${ARCHIVE_RETRY_MS / 60_000} min: ${describe(err)}`);
    }
    if (more) {
      await this.setAlarm(Date.now());
      return;
    }
    this.armAlarm(failed > 0 ? HAND_OFF_RETRY_MS : 0);
  }

  private setAlarm(at: number): Promise<void> {
    this.alarmAt = at;
    return this.ctx.storage.setAlarm(at);
  }

  private async settleOpenHandOffs(at: number): Promise<void> {
    if (configuredOf(this.store.room()) !== null) await this.settle(this.handOffs.open(), at);
  }

  /** Settles each hand-off on its own; failures are logged in one line and left for the alarm. */
  private async settle(handOffs: ReturnType<HandOffs["open"]>, at: number): Promise<number> {
    if (handOffs.length === 0) return 0;
    const { failed, error } = await this.handOffs.settleEach(handOffs, at);
    if (failed > 0)
      console.warn(`queue room: ${failed} hand-off(s) not settled, retrying in ${HAND_OFF_RETRY_MS / 1000} s: ${describe(error)}`);
    return failed;
  }

  // ---- the change path ----------------------------------------------------------------------

  /** The room row, checked once: its queue is known and not deleted. */
  private configured(): Configured {
    const room = this.store.room();
    if (room.retired_at !== null) refuse("NOT_FOUND", "Queue not found");
    return configuredOf(room) ?? refuse("ROOM_UNCONFIGURED", "The room has not learnt its queue yet");
  }

  private read<T>(fn: (cfg: Configured) => T): RoomResult<T> {
    try {
      return { ok: true, value: fn(this.configured()) };
    } catch (err) {
      if (err instanceof Refusal) return { ok: false, error: err.error };
      throw err;
    }
  }

  private mutate<T>(at: number, fn: (cfg: Configured) => T): RoomResult<T> {
    return this.change(at, () => fn(this.configured()));
  }

  /**
   * The one path of every state change: one storage transaction (a refusal rolls back all of
   * it; ticket writes take a new version and events go to the outbox inside), then the front
   * of the line is re-read for remote-join clocks and almost-called notices, the alarm is
   * armed for delivery, and the sockets are told.
   */
  private change<T>(at: number, fn: () => T): RoomResult<T> {
    try {
      const value = this.ctx.storage.transactionSync(() => {
        const out = fn();
        const cfg = configuredOf(this.store.room());
        if (cfg !== null && cfg.retired_at === null) {
          this.remote.markFront(at);
          this.commands.announceApproaching(cfg, at);
        }
        return out;
      });
      this.armAlarm();
      this.sockets.changed(at);
      return { ok: true, value };
    } catch (err) {
      if (err instanceof Refusal) return { ok: false, error: err.error };
      throw err;
    }
  }

  /**
   * DRAIN_DELAY_MS from now when the outbox has rows to deliver and no drain is armed sooner
   * (so a burst of changes is delivered by one drain), else when the oldest open hand-off
   * times out (or, after a failed settlement, `retryInMs` from now) or the oldest finished
   * ticket is due for the archive step (ARCHIVE_RETRY_MS from now when a due one stayed
   * behind). The alarm's wall-clock time is delivery scheduling only; business time is `at`.
   */
  private armAlarm(retryInMs = 0): void {
    if (this.store.outboxSize() > 0) {
      const due = Date.now() + DRAIN_DELAY_MS;
      if (this.alarmAt === null || this.alarmAt > due) void this.setAlarm(due);
      return;
    }
    const at = now();
    const timeout = this.handOffs.nextTimeout();
    const archiveDue = this.archiveStep.nextDue();
    // The delays are taken on the service clock (tests move it) and scheduled in real time.
    const delays: number[] = [];
    if (timeout !== null) delays.push(Math.max(retryInMs, timeout - at));
    if (archiveDue !== null) delays.push(archiveDue > at ? archiveDue - at : ARCHIVE_RETRY_MS);
    if (delays.length > 0) void this.setAlarm(Date.now() + Math.min(...delays));
  }

  private remoteView(cfg: Configured, ticketId: string, at: number): RemoteJoinAndTicket {
    const remote = this.remote.existing(ticketId);
    return { remoteJoin: this.remote.view(remote, this.store.row(ticketId)), ticket: this.views.ticket(cfg, ticketId, at) };
  }

  private peer(queueId: string): DurableObjectStub<QueueRoom> {
    return this.env.QUEUE_ROOM.get(this.env.QUEUE_ROOM.idFromName(queueId));
  }
}

/**
 * What a room answers another room. A failure inside this room (its storage failed) is
 * answered as a value, not thrown across RPC: the asking room owns the decision (retry later,
 * answer its socket an error) and logs it in one line, and an expected failure leaves no
 * "uncaught exception" stack behind in this room.
 */
function answerPeer<T>(what: string, act: () => T): RoomResult<T> {
  try {
    return { ok: true, value: act() };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { ok: false, error: { code: "ROOM_UNAVAILABLE", message: `The queue's room could not ${what}: ${reason}`, details: {} } };
  }
}
