import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { now } from "../lib/clock";
import { utcMonth } from "../lib/time";
import { ARCHIVE_RETRY_MS, RoomArchive } from "./archive";
import { Commands } from "./commands";
import {
  isHubName,
  roomClient,
  type CommandHandlers,
  type CommandResult,
  type PeerHandlers,
  type PeerMessage,
  type PeerResult,
  type QueryHandlers,
  type QueryResult,
  type RoomClient,
  type RoomCommand,
  type RoomQuery,
} from "./contract";
import { TicketFollowers } from "./followers";
import { HAND_OFF_RETRY_MS, HandOffs } from "./hand-offs";
import { DRAIN_DELAY_MS, drainOutbox } from "./outbox";
import { Refusal, refuse } from "./refusals";
import { RemoteJoins } from "./remote";
import { RoomRules } from "./rules";
import { migrateRoom } from "./schema";
import { QuotaTally } from "./quota-tally";
import type { RoomPorts } from "./ports";
import { RoomSockets } from "./sockets";
import { eraseSubject, subjectTickets } from "./subjects";
import { configuredOf, RoomStore, type Configured } from "./store";
import type {
  ArchiveResult,
  NewTicket,
  PreviousCalls,
  RemoteJoinAndTicket,
  RoomConfig,
  RoomError,
  RoomResult,
  TicketView,
  VisitorTicketData,
} from "./types";
import { RoomViews, toView } from "./views";
import { isRouteHandOff, VisitRoutes } from "./visit-routes";

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
  private readonly visitRoutes: VisitRoutes;
  private readonly tally: QuotaTally;
  /**
   * When the alarm this instance last set will fire (wall clock); null once it began to run.
   * A change finds the drain already armed within DRAIN_DELAY_MS and leaves it: a burst of
   * changes is delivered by one drain. A new instance (after an eviction) does not know the
   * stored alarm and arms one again, at most DRAIN_DELAY_MS later than it was.
   */
  private alarmAt: number | null = null;

  /**
   * `ports`: the ledger and the catalog, given by the composition root (src/room-host.ts, the
   * class the platform instantiates), so the room imports neither the Worker's services nor D1's
   * catalog queries.
   */
  constructor(
    ctx: DurableObjectState,
    env: Env,
    private readonly ports: RoomPorts,
  ) {
    super(ctx, env);
    migrateRoom(ctx.storage);
    const sql = ctx.storage.sql;
    this.store = new RoomStore(sql, (id, fields, at) => {
      this.remote.onTicketChange(id, fields, at);
      this.followers.onTicketChange(id, fields.status, at);
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
    this.tally = new QuotaTally(sql, (fn) => this.transaction(fn));
    this.handOffs = new HandOffs(this.store, (fn) => this.transaction(fn), {
      mutate: (at, fn) => this.mutate(at, fn),
      existing: (id) => this.commands.existing(id),
      admit: (cfg, input, at) => this.commands.admit(cfg, input, at),
      view: (cfg, id, at) => this.views.ticket(cfg, id, at),
      peer: (queueId) => this.roomNamed(queueId),
      settleRoute: (open, at) => {
        const row = this.store.find(open.id);
        return row !== null && isRouteHandOff(row) ? this.visitRoutes.settle(open, at) : null;
      },
    });
    this.visitRoutes = new VisitRoutes(this.store, {
      mutate: (at, fn) => this.mutate(at, fn),
      read: (fn) => this.read(fn),
      insert: (cfg, input, at) => this.commands.insertLeg(cfg, input, at),
      view: (cfg, id, at) => this.views.ticket(cfg, id, at),
      issueToken: (id, hash) => this.followers.issue(id, hash),
      peer: (queueId) => this.roomNamed(queueId),
    });
    this.sockets = new RoomSockets(
      ctx,
      ports.catalog,
      sql,
      (config) => this.learnConfig(config),
      (name) => this.roomNamed(name),
      () => this.followers,
      this.store,
    );
    this.followers = new TicketFollowers(
      ctx,
      sql,
      (id, at) => this.visitorView(id, at),
      (name) => this.roomNamed(name),
      (id, text, final) => this.sockets.deliverTicket(id, text, final),
    );
    this.archiveStep = new RoomArchive(ctx.storage, env);
    this.rules = new RoomRules(sql);
    // Keep-alives are answered without waking a hibernated room.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  // ---- the room's face: four calls and the platform's handlers (contract.ts) -----------------

  /** Gives the room its catalog facts once; later calls change nothing (the room is the authority). */
  async configure(config: RoomConfig): Promise<void> {
    this.learnConfig(config);
  }

  /** One change of the line: the member's handler runs on the change path (see `mutate`). */
  async command<C extends RoomCommand>(command: C): Promise<CommandResult<C>> {
    // The table pairs each verb with its handler; TypeScript cannot follow that pairing
    // through a union, so the lookup is widened once here.
    const handler = this.commands_[command.verb] as (command: RoomCommand) => CommandResult<C> | Promise<CommandResult<C>>;
    return handler(command);
  }

  /** One read: the same checks as a change, no writes. */
  async query<Q extends RoomQuery>(query: Q): Promise<QueryResult<Q>> {
    const handler = this.queries[query.question] as (query: RoomQuery) => QueryResult<Q> | Promise<QueryResult<Q>>;
    return handler(query);
  }

  /** What another room or a socket hub asks this one (contract.ts, PeerMessage). */
  async peer<M extends PeerMessage>(message: M): Promise<PeerResult<M>> {
    const handler = this.peerHandlers[message.kind] as (message: PeerMessage) => PeerResult<M> | Promise<PeerResult<M>>;
    return handler(message);
  }

  // ---- the handler tables: one entry per member of the contract's unions -------------------

  private readonly commands_: CommandHandlers = {
    reconfigure: (c) => this.mutate(c.at, (cfg) => this.commands.reconfigure(cfg, c.settings, c.at)),
    setStatus: (c) => this.mutate(c.at, (cfg) => this.commands.setStatus(cfg, c.status, c.at)),
    // clear, archive and retire never cancel a ticket that another queue may still admit: its
    // hand-off is settled with the target first, outside any storage transaction (a room never
    // holds one open across a call to another room). A hand-off that cannot be settled now, or
    // that began meanwhile, is left to end on its own (see hand-offs.ts release).
    clear: async (c) => {
      await this.settleOpenHandOffs(c.at);
      return this.mutate(c.at, (cfg) => this.commands.clear(cfg, c.at));
    },
    archive: async (c) => {
      await this.settleOpenHandOffs(c.at);
      return this.mutate(c.at, (cfg) => this.commands.archive(cfg, c.at));
    },
    // The queue is being deleted (its service, location or organization went). Idempotent.
    retire: async (c) => {
      if (this.store.room().retired_at !== null) return null;
      await this.settleOpenHandOffs(c.at);
      this.change(c.at, () => {
        const room = this.store.room();
        if (room.retired_at === null) this.commands.retire(configuredOf(room), c.at);
      });
      return null;
    },
    // Called by the sweep: called tickets past the no-show timeout become expired.
    expireDue: (c) => {
      const cfg = configuredOf(this.store.room());
      if (cfg === null || cfg.retired_at !== null) return { expired: 0, nextDeadline: null, gone: true };
      const result = this.mutate(c.at, (x) => this.commands.expireDue(x, c.at));
      return { expired: result.ok ? result.value : 0, nextDeadline: this.commands.nextDeadline(), gone: false };
    },
    // A new copy of the rules (tickets/room-rules.ts); an older one than the room holds is ignored.
    applyRules: async (c) => {
      if (this.store.room().retired_at !== null) return false;
      const applied = this.transaction(() => this.rules.apply(c.copy));
      // The blend policy travels in the copy: the store's kept one is read again.
      if (applied) this.store.forget();
      // A plan that gained a limit: the joins counted here without one reach the ledger before
      // the change is acknowledged (quota-tally.ts; docs/room-rules.md, "Quota").
      if (applied && c.copy.ticketsPerMonth !== null && this.tally.pending()) await this.reportJoins();
      return applied;
    },
    join: (c) => this.join(c.input, c.at, c.tokenHash, c.rulesVersion, c.rowMayBeKept ?? false),
    callNext: (c) =>
      this.mutate(c.at, (cfg) => {
        this.rules.assertMayCall(c.userId ?? null, c.at, c.rulesVersion ?? 0);
        return this.commands.callNext(cfg, c.operatorId, c.at, c.counter ?? null);
      }),
    callNextAfterPrevious: (c) => {
      type Settled = { ticket: TicketView; previous: PreviousCalls } | { refused: RoomError };
      const result = this.mutate(c.at, (cfg): Settled => {
        // The rules first: a caller on a break changes nothing, their previous calls included.
        this.rules.assertMayCall(c.userId, c.at, c.rulesVersion);
        const previous = this.commands.settlePreviousCalls(cfg, c.operatorId, c.outcome, c.at);
        // The previous calls stay settled when nothing is left to call: call-next refuses
        // before it writes anything, so its refusal is answered after the settle commits.
        try {
          return { ticket: this.commands.callNext(cfg, c.operatorId, c.at, c.counter), previous };
        } catch (err) {
          if (err instanceof Refusal) return { refused: err.error };
          throw err;
        }
      });
      if (!result.ok) return result;
      const settled = result.value;
      return "refused" in settled ? { ok: false, error: settled.refused } : { ok: true, value: settled };
    },
    deskHeadAfterPrevious: (c) =>
      this.mutate(c.at, (cfg) => {
        this.rules.assertMayCall(c.userId, c.at, c.rulesVersion);
        const previous = this.commands.settlePreviousCalls(cfg, c.operatorId, c.outcome, c.at, c.deskId);
        return { head: this.commands.deskHead(cfg), previous };
      }),
    callAtDesk: (c) =>
      this.mutate(c.at, (cfg) =>
        this.commands.callNext(cfg, c.operatorId, c.at, c.counter, { deskId: c.deskId, bound: c.bound, weights: c.weights ?? {} }),
      ),
    // A desk call in another queue completes what this operator was serving here.
    finishServingOf: (c) => this.mutate(c.at, (cfg) => this.commands.finishServingOf(cfg, c.operatorId, c.at)),
    returnToLine: (c) => this.mutate(c.at, (cfg) => this.commands.returnToLine(cfg, c.ticketId, c.place, c.at)),
    recall: (c) => this.mutate(c.at, (cfg) => this.commands.recall(cfg, c.ticketId, c.at)),
    hold: (c) => this.mutate(c.at, (cfg) => this.commands.hold(cfg, c.ticketId, c.reason, c.at)),
    resume: (c) => this.mutate(c.at, (cfg) => this.commands.resume(cfg, c.ticketId, c.at)),
    stepBack: (c) => this.mutate(c.at, (cfg) => this.commands.stepBack(cfg, c.ticketId, c.places, c.at)),
    defer: (c) => this.mutate(c.at, (cfg) => this.commands.defer(cfg, c.ticketId, c.request, c.bounds, c.at)),
    present: (c) => this.mutate(c.at, (cfg) => this.commands.present(cfg, c.ticketId, c.at)),
    serve: (c) => this.mutate(c.at, (cfg) => this.commands.serve(cfg, c.ticketId, c.at, c.requiredAnswers ?? [])),
    // A visit's next leg is handed over at once (docs/visits.md); should that fail, the alarm retries it.
    complete: async (c) => {
      const done = this.mutate(c.at, (cfg) => this.commands.complete(cfg, c.ticketId, c.at, c.result ?? {}, c.requiredAnswers ?? []));
      if (!done.ok) return done;
      const open = this.read(() => this.handOffs.openOf(c.ticketId));
      if (!open.ok || open.value === null) return done;
      await this.settle([open.value], c.at);
      return this.read((cfg) => this.views.ticket(cfg, c.ticketId, c.at));
    },
    skipAbsent: (c) => this.mutate(c.at, (cfg) => this.commands.skip(cfg, c.ticketId, c.reason, c.at)),
    cancel: (c) => this.mutate(c.at, (cfg) => this.commands.cancel(cfg, c.ticketId, c.at)),
    assign: (c) => this.mutate(c.at, (cfg) => this.commands.assign(cfg, c.ticketId, c.operatorId, c.at)),
    recover: (c) => this.mutate(c.at, (cfg) => this.commands.recover(cfg, c.ticketId, c.option, c.at)),
    presentOwn: (c) => this.mutate(c.at, (cfg) => this.commands.presentOwn(cfg, c.userId, c.at)),
    visitorStepBack: (c) =>
      this.asVisitor(c.ticketId, c.tokenHash, c.queueName, c.at, (cfg) => this.commands.stepBack(cfg, c.ticketId, c.places, c.at)),
    visitorDefer: (c) =>
      this.asVisitor(c.ticketId, c.tokenHash, c.queueName, c.at, (cfg) => this.commands.defer(cfg, c.ticketId, c.request, c.bounds, c.at)),
    visitorCancel: (c) => this.asVisitor(c.ticketId, c.tokenHash, c.queueName, c.at, (cfg) => this.commands.cancel(cfg, c.ticketId, c.at)),
    updateRemoteLocation: (c) =>
      this.mutate(c.at, (cfg) => {
        this.remote.updateLocation(c.ticketId, c.location, c.at);
        return this.remoteView(cfg, c.ticketId, c.at);
      }),
    confirmRemote: (c) =>
      this.mutate(c.at, (cfg) => {
        this.remote.confirm(c.ticketId, c.method, c.at);
        return this.remoteView(cfg, c.ticketId, c.at);
      }),
    reserveTransfer: (c) => this.mutate(c.at, (cfg) => this.handOffs.reserve(cfg, c.ticketId, c.targetQueueId, c.at)),
    releaseTransfer: (c) =>
      this.mutate(c.at, (cfg) => {
        this.handOffs.release(cfg, c.ticketId, c.handOffId, c.at);
        return null;
      }),
    completeTransfer: (c) => this.mutate(c.at, (cfg) => this.handOffs.complete(cfg, c.ticketId, c.handOffId, c.newTicketId, c.at)),
    // Settles the ticket's open hand-off with its target (as the alarm does for stale ones).
    settleTransfer: async (c) => {
      const open = this.read(() => this.handOffs.openOf(c.ticketId));
      if (!open.ok || open.value === null) return open.ok ? { ok: true, value: null } : open;
      return this.handOffs.settle(open.value, c.at);
    },
    admitTransferred: (c) => this.mutate(c.at, (cfg) => this.handOffs.admit(cfg, c.snapshot, c.prioritize, c.at)),
    // Asked by another room: a failure of this room's storage is answered, not thrown (see answerPeer).
    admitRouted: (c) => {
      const admitted = answerPeer("admit a visit's next leg", () =>
        this.mutate(c.at, (cfg) => this.visitRoutes.admit(cfg, c.snapshot, c.at)),
      );
      return admitted.ok ? admitted.value : admitted;
    },
    archiveFinished: (c) => this.archiveFinished(c.at),
    setIntake: (c) => this.mutate(c.at, (cfg) => this.commands.setIntake(cfg, c.ticketId, c.intake, c.intakePersonal, c.at)),
    label: (c) => this.mutate(c.at, (cfg) => this.commands.label(cfg, c.ticketId, c.label, c.add, c.at)),
    prioritize: (c) => this.mutate(c.at, (cfg) => this.commands.prioritize(cfg, c.ticketId, c.at)),
    unprioritize: (c) => this.mutate(c.at, (cfg) => this.commands.unprioritize(cfg, c.ticketId, c.at)),
    eraseSubject: (c) => {
      const result = this.change(c.at, () =>
        eraseSubject(this.ctx.storage.sql, c.match, (id, fields) => this.store.update(id, fields, c.at)),
      );
      if (!result.ok) throw new Error("an erasure is never refused");
      return result.value;
    },
  };

  private readonly queries: QueryHandlers = {
    summary: (q) => {
      const cfg = configuredOf(this.store.room());
      return cfg === null || cfg.retired_at !== null ? null : this.views.summary(cfg, q.at);
    },
    deskHead: (q) =>
      this.read((cfg) => {
        this.rules.assertMayCall(q.userId ?? null, q.at, q.rulesVersion ?? 0);
        return this.commands.deskHead(cfg);
      }),
    ticket: (q) => this.read((cfg) => this.views.ticket(cfg, this.commands.existing(q.ticketId).id, q.at)),
    tickets: (q) => this.read((cfg) => this.views.list(cfg, q.query, q.at)),
    liveTicketOf: (q) =>
      this.read((cfg) => {
        const row = this.store.liveRowOf(q.userId);
        return row ? this.views.ticket(cfg, row.id, q.at) : null;
      }),
    visitorTicket: (q) => {
      this.learnName(q.queueName);
      return this.followers
        .read(q.ticketId, q.tokenHash, q.at)
        .then((live) => live ?? this.followers.routedLeg(q.ticketId, q.tokenHash, q.at));
    },
    visitorVerdict: (q) => this.followers.verdict(q.ticketId, q.tokenHash),
    remoteJoin: (q) => this.read((cfg) => this.remoteView(cfg, q.ticketId, q.at)),
    widgetStatus: (q) => this.sockets.status(q.at),
    widgetBoard: (q) => this.sockets.board(q.at),
    subjectTickets: (q) => subjectTickets(this.ctx.storage.sql, q.match),
  };

  private readonly peerHandlers: PeerHandlers = {
    watch: (m) => answerPeer("relay updates", () => this.sockets.watch(m.watcher, m.config, m.name)),
    deliverUpdate: (m) => (this.closedAsLegacyHub() ? 0 : this.sockets.deliver(m.queueId, m.text, m.boardText)),
    board: (m) => this.sockets.board(m.at),
    watchTicket: async (m) => {
      const room = this.store.room();
      if (room.queue_id !== null && this.sockets.queueName() === null) {
        const facts = await this.ports.catalog.queueFacts(room.queue_id);
        if (facts) this.learnName(facts.name);
      }
      return this.followers.watch(m.watcher, m.ticketId, m.token, m.at);
    },
    deliverTicketUpdate: (m) => (this.closedAsLegacyHub() ? 0 : this.sockets.deliverTicket(m.ticketId, m.text, m.final)),
    abandonTransfer: (m) => answerPeer("abandon a hand-off", () => this.handOffs.abandon(m.handOffId)),
  };

  // ---- the platform's handlers: widget sockets (sockets.ts) and the alarm ------------------

  /** A widget WebSocket forwarded by the Worker for this queue (GET /v1/widget/ws). */
  override async fetch(request: Request): Promise<Response> {
    // Spec-flow sockets go to the SocketHub objects (socket-hub.ts); a room never becomes a hub.
    if (new URL(request.url).searchParams.has("hub") && !this.sockets.isHub())
      return new Response("Socket hubs are SocketHub objects", { status: 409 });
    return this.sockets.accept(request);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.sockets.message(ws, message);
  }

  /**
   * A room named `hub:<n>` that held spec-flow sockets before hubs became their own class
   * (issue 36). Its sockets are not lost at the deploy: the rooms they watch still push here, and
   * at the first push it closes them with 1012 ("restarting"), so their clients
   * reconnect (embed.js, board.js and the pages do, within a second or two) and land in a
   * SocketHub, where they subscribe again. Until that push it serves them as before. Answers true
   * when it closed them. Remove once no such room
   * holds a socket (a month after the deploy covers any board left on).
   */
  private closedAsLegacyHub(): boolean {
    if (!this.sockets.isHub()) return false;
    this.sockets.closeAll(1012, "The service moved this connection: reconnect");
    return true;
  }

  override webSocketClose(ws: WebSocket, code: number, reason: string): void {
    this.sockets.closed(ws, code, reason);
  }

  override webSocketError(ws: WebSocket, error: unknown): void {
    this.sockets.error(ws, error);
  }

  // ---- what the handlers share -------------------------------------------------------------

  private learnConfig(config: RoomConfig): void {
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
    this.store.forget();
  }

  /**
   * With `tokenHash`, the visitor's token for the new ticket is kept beside it (followers.ts).
   * The rules of `rulesVersion` (the queue row's) are checked first (rules.ts), then a unit of
   * the organization's monthly quota is taken from its ledger, given back if the join is refused.
   */
  private async join(
    input: NewTicket,
    at: number,
    tokenHash: string | undefined,
    rulesVersion: number,
    rowMayBeKept: boolean,
  ): Promise<RoomResult<TicketView>> {
    const create = (cfg: Configured) => {
      const ticket = this.commands.join(cfg, input, at);
      if (tokenHash !== undefined) this.followers.issue(ticket.id, tokenHash);
      return ticket;
    };
    // An appointment checks in once (docs/blend.md): asked again, even concurrently, the room
    // answers the ticket it already made, and takes no quota for it.
    const admitted = this.read((cfg) => this.checkedIn(cfg, input, at));
    if (!admitted.ok || admitted.value !== null) return admitted.ok ? { ok: true, value: admitted.value! } : admitted;
    const allowed = this.read(() => this.rules.assertJoin(at, rulesVersion, rowMayBeKept));
    if (!allowed.ok) return allowed;
    // An unlimited plan has no quota to refuse the join: the room counts it in the join's own
    // transaction and reports it with its drain (quota-tally.ts), no hop to the ledger.
    if (allowed.value.ticketsPerMonth === null) {
      return this.change(
        at,
        () => {
          const cfg = this.configured();
          const again = this.checkedIn(cfg, input, at);
          if (again !== null) return again;
          const ticket = create(cfg);
          this.tally.count(utcMonth(at).key);
          return ticket;
        },
        { announce: false },
      );
    }
    const rulesChecked = this.rules.generation;
    const { ledger } = this.ports;
    const organizationId = this.configured().organization_id;
    // Joins counted here before the plan had a limit reach the ledger before it judges this one.
    if (this.tally.pending()) await this.reportJoins();
    const unit = await ledger.take(organizationId, at, allowed.value.ticketsPerMonth);
    if (!unit.ok) return unit;
    let joined: RoomResult<TicketView>;
    try {
      let again: TicketView | null = null;
      // A join moves nobody forward (Commands.placeTicket): no "almost your turn" scan after it.
      joined = this.change(
        at,
        () => {
          const cfg = this.configured();
          again = this.checkedIn(cfg, input, at);
          if (again !== null) return again;
          // Checked again in the transaction when a copy was pushed while the unit was taken.
          if (this.rules.generation !== rulesChecked) this.rules.assertJoin(at, rulesVersion, rowMayBeKept);
          return create(cfg);
        },
        { announce: false },
      );
      if (again !== null) await ledger.refund(organizationId, unit.value.period);
    } catch (err) {
      await ledger.refund(organizationId, unit.value.period);
      throw err;
    }
    if (!joined.ok) await ledger.refund(organizationId, unit.value.period);
    return joined;
  }

  /** The ticket an appointment already checked in here, or null (a walk-in, or a first check-in). */
  private checkedIn(cfg: Configured, input: NewTicket, at: number): TicketView | null {
    if (!input.appointmentId) return null;
    const row = this.store.sql.exec<{ id: string }>("SELECT id FROM tickets WHERE appointment_id = ?", input.appointmentId).toArray()[0];
    return row ? this.views.ticket(cfg, row.id, at) : null;
  }

  /** A visitor's change with the ticket's token: null for a wrong token, else the ticket after it. */
  private async asVisitor(
    ticketId: string,
    tokenHash: string,
    queueName: string,
    at: number,
    change: (cfg: Configured) => TicketView,
  ): Promise<RoomResult<VisitorTicketData | null>> {
    this.learnName(queueName);
    if (!this.followers.holds(ticketId, tokenHash)) return { ok: true, value: null };
    const changed = this.mutate(at, change);
    if (!changed.ok) return changed;
    return { ok: true, value: await this.followers.after(ticketId, at) };
  }

  private learnName(name: string): void {
    this.sockets.learnName(name);
  }

  private visitorView(ticketId: string, at: number): TicketView | null {
    const cfg = configuredOf(this.store.room());
    if (cfg === null || cfg.retired_at !== null) return null;
    const row = this.store.find(ticketId);
    return row ? toView(cfg, row, this.store.positionOf(row, at), this.views.pace(cfg, at)) : null;
  }

  /**
   * Moves one chunk of finished tickets out of the room once D1 holds them (the alarm runs it;
   * `more` when another chunk is due now). An unconfigured room has nothing to archive.
   */
  private async archiveFinished(at: number): Promise<ArchiveResult> {
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
    try {
      await this.reportJoins();
    } catch (err) {
      console.warn(`queue room: joins not reported to the ledger, retrying in ${DELIVERY_RETRY_MS / 1000} s: ${describe(err)}`);
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

  /** Sends the joins this room counted itself to the organization's ledger (quota-tally.ts). */
  private async reportJoins(): Promise<void> {
    const cfg = configuredOf(this.store.room());
    if (cfg === null) return;
    await this.tally.report((seq, counts) => this.ports.ledger.record(cfg.organization_id, cfg.queue_id, seq, counts));
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

  /**
   * One storage transaction, its events written together at its end (store.ts). When it rolls
   * back, what the store and the rules kept of the room row and the rules is dropped: a copy
   * taken inside it may hold what was undone.
   */
  private transaction<T>(fn: () => T): T {
    try {
      return this.ctx.storage.transactionSync(() => this.store.withEventsTogether(fn));
    } catch (err) {
      this.store.forget();
      this.rules.forget();
      throw err;
    }
  }

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
  private change<T>(at: number, fn: () => T, { announce = true }: { announce?: boolean } = {}): RoomResult<T> {
    try {
      const emittedBefore = this.store.emitted;
      const value = this.transaction(() => {
        const out = fn();
        const cfg = configuredOf(this.store.room());
        if (cfg !== null && cfg.retired_at === null) {
          this.remote.markFront(at);
          if (announce) this.commands.announceApproaching(cfg, at);
        }
        return out;
      });
      this.armAlarm(0, this.store.emitted > emittedBefore);
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
  private armAlarm(retryInMs = 0, emitted = false): void {
    // A change that wrote events left the outbox non-empty: no need to count it (issue 43).
    if (emitted || this.store.outboxSize() > 0) {
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

  /** Another queue's room, or a socket hub (its own class since issue 36), by its name. */
  private roomNamed(name: string): RoomClient {
    return roomClient(isHubName(name) ? this.env.SOCKET_HUB : this.env.QUEUE_ROOM, name);
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
