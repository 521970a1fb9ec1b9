import { codeOf } from "./rows";
import type { TicketKind } from "../domain/blend";
import { z } from "zod";
import type { QueueStatus } from "../domain/tickets";
import {
  estimatedWaitMinutes,
  estimatedWaitRange,
  estimateSpan,
  minutesPerTicket,
  type CallRecord,
  type WaitRange,
} from "../domain/wait-estimate";
import { now } from "../lib/clock";
import { isTwinOrganizationId, queueIdOfTicket } from "../lib/ids";
import { iso } from "../lib/time";
import { boardQueue, type RoomClient } from "./contract";
import type { TicketFollowers } from "./followers";
import type { Catalog } from "./ports";
import type { BoardData, QueueStatusData, RoomConfig, SubscriptionView, TicketMessage, BoardQueueData } from "./types";

// The widget's live channel inside a QueueRoom (README "Widget").
//
// Sockets are accepted with the hibernation API, so a room with only idle display boards
// connected is evicted from memory and woken by the next change or message. Each socket's
// subscriptions live in its attachment, which survives hibernation. A socket stays in the
// room it first reached; subscribing it to another queue of the same organization registers
// this room as a watcher in that queue's room, which then pushes its updates here by RPC.
// A socket that connects without `?queueId=` (the spec's flow) is accepted the same way by a
// socket hub: a room that holds no queue, named `hub:<n>`, where every subscription is a
// watch of the queue's room. Following a ticket (with its token) works the same way through
// followers.ts. Every message a socket sends takes a token from its own bucket, kept in its
// attachment: a flood is answered RATE_LIMITED without reaching D1 or another room.

export type WidgetErrorCode = "VALIDATION_ERROR" | "NOT_FOUND" | "INTERNAL_ERROR" | "RATE_LIMITED";

type ErrorData = { code: WidgetErrorCode; message: string; queueId?: string; ticketId?: string; retryAfter?: number };

export type WidgetMessage =
  | { type: "queue_update"; data: QueueStatusData }
  | { type: "board_update"; data: BoardQueueData }
  | TicketMessage
  | { type: "error"; data: ErrorData };

interface Attachment {
  queues: string[];
  /** The queues among `queues` this socket follows as a display board (absent: none). */
  boards?: string[];
  /** Tickets followed with their token. */
  tickets?: string[];
  /** In a hub: the organization of the socket's first queue (a socket follows one organization's queues). */
  organizationId?: string | null;
  /** The message bucket: tokens left, as of `at` (ms). */
  tokens?: number;
  at?: number;
}

/**
 * Messages per socket: a burst of this many (a display board subscribing to every queue of
 * its organization fits), then one a second. A flood of subscribes is refused before any
 * read, so 1,000 subscribes cost at most the burst in D1 reads.
 */
export const SOCKET_BURST = 60;
export const SOCKET_REFILL_PER_SECOND = 1;
/** Tickets one socket may follow at once (a family's phones each follow their own). */
export const MAX_TICKET_SUBSCRIPTIONS = 10;

/** Codes on the status widget: the most recently called tickets still at a counter. */
export const NOW_SERVING_LIMIT = 5;
/** On the display board: the calls shown per queue, and the next codes. */
export const BOARD_CALLED_LIMIT = 10;
export const BOARD_NEXT_LIMIT = 5;

/** A display board subscribes to every queue of its organization; beyond this, ask for fewer. */
export const MAX_SUBSCRIPTIONS = 50;
const MAX_MESSAGE_CHARS = 512;
/** The shape of an id; whether the queue exists is the lookup's answer (NOT_FOUND). */
const QUEUE_ID = /^[A-Za-z0-9_-]{1,64}$/;

type RoomRow = {
  queue_id: string | null;
  organization_id: string | null;
  letter: string | null;
  status: QueueStatus;
  retired_at: number | null;
  default_service_minutes: number;
};

/**
 * The line as the room's store keeps it (store.ts RoomStore): the room row, the counters and the
 * recent calls are read from what it holds, not asked of SQLite again (issue 43: the widget's
 * status read them on every request). A hub's store holds no queue.
 */
export interface LineReader {
  room(): RoomRow;
  waitingCount(): number;
  calls(): readonly CallRecord[];
  /** The first waiting tickets in calling order, blended. */
  waitingLine(limit: number, offset: number, at: number): readonly { number: number; visit_code: string | null }[];
}

export function errorMessage(code: WidgetErrorCode, message: string, queueId?: string, extra: Partial<ErrorData> = {}): string {
  const data: ErrorData = queueId === undefined ? { code, message, ...extra } : { code, message, queueId, ...extra };
  return JSON.stringify({ type: "error", data } satisfies WidgetMessage);
}

function send(ws: WebSocket, text: string): boolean {
  try {
    ws.send(text);
    return true;
  } catch {
    return false; // closing already: its close handler tidies up
  }
}

function close(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // already closed
  }
}

function attachmentOf(ws: WebSocket): Attachment {
  return (ws.deserializeAttachment() as Attachment | null) ?? { queues: [] };
}

function subscriptions(ws: WebSocket): string[] {
  return attachmentOf(ws).queues;
}

function attach(ws: WebSocket, change: Partial<Attachment>): void {
  ws.serializeAttachment({ ...attachmentOf(ws), ...change } satisfies Attachment);
}

/**
 * Takes one token from the socket's bucket; answers 0 when allowed, else the seconds until
 * the next token. The bucket lives in the attachment, so it survives hibernation.
 */
export function takeToken(ws: WebSocket, at: number): number {
  const a = attachmentOf(ws);
  const elapsed = Math.max(0, at - (a.at ?? at));
  const tokens = Math.min(SOCKET_BURST, (a.tokens ?? SOCKET_BURST) + (elapsed / 1000) * SOCKET_REFILL_PER_SECOND);
  if (tokens < 1) {
    ws.serializeAttachment({ ...a, tokens, at } satisfies Attachment);
    return Math.ceil((1 - tokens) / SOCKET_REFILL_PER_SECOND);
  }
  ws.serializeAttachment({ ...a, tokens: tokens - 1, at } satisfies Attachment);
  return 0;
}

function boardSubscriptions(ws: WebSocket): string[] {
  const attachment = ws.deserializeAttachment() as Attachment | null;
  return attachment?.boards ?? [];
}

/** The message of `queueId` this socket wants, or null when it does not follow the queue. */
function wants(ws: WebSocket, queueId: string): SubscriptionView | null {
  const attachment = ws.deserializeAttachment() as Attachment | null;
  if (!attachment?.queues.includes(queueId)) return null;
  return attachment.boards?.includes(queueId) ? "board" : "status";
}

export class RoomSockets {
  /** What the last change sent (in memory: a new instance sends the next change again). */
  private lastText: string | null = null;
  private lastBoardText: string | undefined;
  /**
   * The last status answered, with what it was read from (issue 43: the widget's status read the
   * tickets on every request). The store hands out a new room row after every ticket write and a
   * new list of calls after every call, and this class writes the name: while all three are the
   * same objects and the time is within the estimate's span, the answer is the same.
   */
  private keptStatus: { room: RoomRow; calls: readonly CallRecord[]; from: number; until: number; status: QueueStatusData } | null = null;

  /** Whether widget_watchers has rows, once read (undefined: read it); this class is its only writer. */
  private anyWidgetWatcher: boolean | undefined;

  constructor(
    private readonly ctx: DurableObjectState,
    /** The catalog's facts of a queue (ports.ts): the room itself only knows its own queue. */
    private readonly catalog: Catalog,
    private readonly sql: SqlStorage,
    /** The room's own configure(): a room reached first by a socket learns its queue here. */
    private readonly configure: (config: RoomConfig) => void,
    /** Another queue's room (a subscription to it, or a watcher to relay to), or a hub, by name. */
    private readonly peer: (queueId: string) => Pick<RoomClient, "peer">,
    /** The tickets followed with their token (followers.ts). */
    private readonly followers: () => TicketFollowers,
    /** The room's line (its store); the only way this class reads the room row and the tickets' counts. */
    private readonly line: LineReader,
  ) {}

  /**
   * Accepts a socket already subscribed to this room's queue (the Worker checked it exists),
   * or, with `?hub=`, a spec-flow socket that subscribes later (this room is then that hub).
   */
  async accept(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
      return new Response("Expected a WebSocket upgrade", { status: 426 });
    }
    const url = new URL(request.url);
    const hub = url.searchParams.get("hub");
    if (hub !== null) {
      if (this.room().queue_id !== null) return new Response("A queue's room is not a hub", { status: 409 });
      this.sql.exec("UPDATE widget SET hub = ? WHERE id = 1 AND hub IS NULL", hub);
    }
    const view: SubscriptionView = url.searchParams.get("view") === "board" ? "board" : "status";
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    // A hub's socket opened with a test key follows its twin's queues from the start (docs/test-mode.md).
    const twin = hub !== null ? url.searchParams.get("twin") : null;
    server.serializeAttachment({ queues: [], tickets: [], organizationId: twin } satisfies Attachment);
    if (hub === null) await this.subscribe(server, url.searchParams.get("queueId") ?? "", view);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** The name other rooms reach this one by: its hub name, or its queue id. */
  self(): string | null {
    return this.hub() ?? this.room().queue_id;
  }

  /** The queue's display name as learnt from D1; null before any socket or visitor asked. */
  queueName(): string | null {
    return this.sql.exec<{ name: string | null }>("SELECT name FROM widget WHERE id = 1").one().name;
  }

  private hub(): string | null {
    return this.sql.exec<{ hub: string | null }>("SELECT hub FROM widget WHERE id = 1").one().hub;
  }

  /** True in a socket hub, or in a QueueRoom that served as one before hubs had their own class. */
  isHub(): boolean {
    return this.hub() !== null;
  }

  /** Closes every socket here (their clients reconnect): answers how many. */
  closeAll(code: number, reason: string): number {
    const sockets = this.ctx.getWebSockets();
    for (const ws of sockets) close(ws, code, reason);
    return sockets.length;
  }

  // The socket lifecycle (partyserver's is the model): nothing a client sends, and no
  // failure while answering it, escapes into the room. A bad message or an internal error is
  // answered with `{type: "error"}` and the socket stays open.

  async message(ws: WebSocket, raw: string | ArrayBuffer): Promise<void> {
    const wait = takeToken(ws, now());
    if (wait > 0) {
      send(ws, errorMessage("RATE_LIMITED", `Too many messages on this connection; wait ${wait} s`, undefined, { retryAfter: wait }));
      return;
    }
    const parsed = parseMessage(raw);
    if ("error" in parsed) {
      send(ws, errorMessage("VALIDATION_ERROR", parsed.error));
      return;
    }
    try {
      if ("ticketId" in parsed) {
        if (parsed.action === "unsubscribe") attach(ws, { tickets: (attachmentOf(ws).tickets ?? []).filter((t) => t !== parsed.ticketId) });
        else await this.followTicket(ws, parsed.ticketId, parsed.token);
        return;
      }
      if (parsed.action === "unsubscribe") {
        attach(ws, {
          queues: subscriptions(ws).filter((q) => q !== parsed.queueId),
          boards: boardSubscriptions(ws).filter((q) => q !== parsed.queueId),
        });
        return;
      }
      await this.subscribe(ws, parsed.queueId, parsed.view ?? "status");
    } catch (err) {
      const about = "ticketId" in parsed ? parsed.ticketId : parsed.queueId;
      console.warn(`queue room: widget ${parsed.action} of ${about} failed: ${err instanceof Error ? err.message : String(err)}`);
      if ("ticketId" in parsed) {
        send(ws, errorMessage("INTERNAL_ERROR", "Something went wrong; try again", undefined, { ticketId: parsed.ticketId }));
      } else {
        send(ws, errorMessage("INTERNAL_ERROR", "Something went wrong; try again", parsed.queueId));
      }
    }
  }

  /**
   * Follows one ticket with its token: answers its data at once and every change of it after.
   * A wrong token, an unknown or finished ticket all answer the same NOT_FOUND.
   */
  private async followTicket(ws: WebSocket, ticketId: string, token: string): Promise<void> {
    const notFound = () => send(ws, errorMessage("NOT_FOUND", "Ticket not found", undefined, { ticketId }));
    const queueId = queueIdOfTicket(ticketId);
    const self = this.self();
    if (queueId === null || self === null) return void notFound();
    const data =
      self === queueId
        ? await this.followers().watch(self, ticketId, token, now())
        : await this.peer(queueId).peer({ kind: "watchTicket", watcher: self, ticketId, token, at: now() });
    if (data === null) return void notFound();
    const tickets = attachmentOf(ws).tickets ?? [];
    if (!tickets.includes(ticketId)) {
      if (tickets.length >= MAX_TICKET_SUBSCRIPTIONS) {
        send(ws, errorMessage("VALIDATION_ERROR", `At most ${MAX_TICKET_SUBSCRIPTIONS} tickets per connection`, undefined, { ticketId }));
        return;
      }
      attach(ws, { tickets: [...tickets, ticketId] });
    }
    send(ws, JSON.stringify({ type: "ticket_update", data } satisfies WidgetMessage));
  }

  /** A followed ticket moved: sent to the sockets here following it; answers how many. */
  deliverTicket(ticketId: string, text: string, final: boolean): number {
    let delivered = 0;
    for (const ws of this.ctx.getWebSockets()) {
      const tickets = attachmentOf(ws).tickets ?? [];
      if (!tickets.includes(ticketId)) continue;
      if (send(ws, text)) delivered += 1;
      if (final) attach(ws, { tickets: tickets.filter((t) => t !== ticketId) });
    }
    return delivered;
  }

  /** A socket-level error (not a close): logged once; the socket is closed, its client reconnects. */
  error(ws: WebSocket, error: unknown): void {
    console.warn(`queue room: widget socket error: ${error instanceof Error ? error.message : String(error)}`);
    close(ws, 1011, "socket error");
  }

  /** The client closed: complete the closing handshake. */
  closed(ws: WebSocket, code: number, reason: string): void {
    close(ws, code === 1005 || code === 1006 ? 1000 : code, reason);
  }

  /**
   * Adds the queue to the socket's subscriptions and answers its status (or, for a display
   * board, its board) at once. Another organization's queue is answered exactly like an
   * unknown one.
   */
  private async subscribe(ws: WebSocket, queueId: string, view: SubscriptionView = "status"): Promise<void> {
    const notFound = () => send(ws, errorMessage("NOT_FOUND", "Queue not found", queueId));
    const facts = await this.catalog.queueFacts(queueId);
    if (!facts) return void notFound();
    const own = this.room();
    const hub = this.hub();
    const at = now();
    let message: WidgetMessage | null;
    if (hub === null && (own.queue_id === null || own.queue_id === facts.config.queueId)) {
      this.configure(facts.config);
      this.learnName(facts.name);
      message = this.messageFor(view, at);
    } else {
      // A hub's socket follows the queues of one organization, the first it subscribed to.
      const organizationId = hub !== null ? (attachmentOf(ws).organizationId ?? null) : own.organization_id;
      if (organizationId !== null && organizationId !== facts.config.organizationId) return void notFound();
      // A test-mode twin's queues are followed only by a socket opened with its test key (set above).
      if (organizationId === null && isTwinOrganizationId(facts.config.organizationId)) return void notFound();
      const peer = this.peer(queueId);
      const answer = await peer.peer({ kind: "watch", watcher: hub ?? own.queue_id ?? "", config: facts.config, name: facts.name });
      if (!answer.ok) throw new Error(answer.error.message);
      const status = answer.value;
      const board = status && view === "board" ? await peer.peer({ kind: "board", at }) : null;
      message = !status ? null : board ? { type: "board_update", data: boardQueue(board, at) } : { type: "queue_update", data: status };
      if (message && hub !== null && organizationId === null) attach(ws, { organizationId: facts.config.organizationId });
    }
    if (!message) return void notFound();
    const queues = subscriptions(ws);
    const boards = boardSubscriptions(ws).filter((q) => q !== queueId);
    if (!queues.includes(queueId) && queues.length >= MAX_SUBSCRIPTIONS) {
      send(ws, errorMessage("VALIDATION_ERROR", `At most ${MAX_SUBSCRIPTIONS} queues per connection`, queueId));
      return;
    }
    attach(ws, {
      queues: queues.includes(queueId) ? queues : [...queues, queueId],
      boards: view === "board" ? [...boards, queueId] : boards,
    });
    send(ws, JSON.stringify(message));
  }

  /** This queue's message for one view, or null before it is configured or once it is deleted. */
  private messageFor(view: SubscriptionView, at: number): WidgetMessage | null {
    if (view === "board") {
      const board = this.board(at);
      return board && { type: "board_update", data: boardQueue(board, at) };
    }
    const status = this.status(at);
    return status && { type: "queue_update", data: status };
  }

  /** Another room asks for this queue's updates; answers the current status (null: gone). */
  watch(watcherQueueId: string, config: RoomConfig, name: string): QueueStatusData | null {
    this.configure(config);
    this.learnName(name);
    // A new generation, so that an empty delivery already in flight does not drop this watch.
    this.sql.exec(
      "INSERT INTO widget_watchers (queue_id, generation) VALUES (?, 1) ON CONFLICT (queue_id) DO UPDATE SET generation = generation + 1",
      watcherQueueId,
    );
    this.anyWidgetWatcher = true;
    return this.status(now());
  }

  /**
   * Sends an update of `queueId` to the sockets here subscribed to it (`boardText` to display
   * boards, when the sending room made one); answers how many.
   */
  deliver(queueId: string, text: string, boardText?: string): number {
    let delivered = 0;
    for (const ws of this.ctx.getWebSockets()) {
      const view = wants(ws, queueId);
      if (view !== null && send(ws, view === "board" && boardText !== undefined ? boardText : text)) delivered += 1;
    }
    return delivered;
  }

  /**
   * After every committed change: one status computed by a few indexed SQL reads, one JSON
   * text sent to each subscribed socket, and one RPC per watching room. Nothing when no one
   * listens.
   */
  changed(at: number): void {
    this.followers().changed(at, () => this.room().queue_id);
    const sockets = this.ctx.getWebSockets();
    // Known to be none (issue 43: every change read the table; few queues are relayed).
    const watchers =
      this.anyWidgetWatcher === false
        ? []
        : this.sql.exec<{ queue_id: string; generation: number }>("SELECT queue_id, generation FROM widget_watchers").toArray();
    this.anyWidgetWatcher = watchers.length > 0;
    if (sockets.length === 0 && watchers.length === 0) return;
    const room = this.room();
    if (room.queue_id === null) return;
    const queueId = room.queue_id;
    const status = this.status(at);
    const text = status
      ? JSON.stringify({ type: "queue_update", data: status } satisfies WidgetMessage)
      : errorMessage("NOT_FOUND", "Queue not found", queueId);
    // Display boards get the whole board of the queue, so they never refetch it over HTTP. It
    // is built only when a board here follows the queue or another room may relay it.
    const views = sockets.map((ws) => wants(ws, queueId));
    let boardText: string | undefined;
    if (status && (watchers.length > 0 || views.includes("board"))) {
      const board = this.board(at);
      if (board) boardText = JSON.stringify({ type: "board_update", data: boardQueue(board, at) } satisfies WidgetMessage);
    }
    // A change the sockets do not see (a serve, a presence, a transfer's bookkeeping) sends
    // nothing: every socket and watcher already has this text, or got it when it subscribed.
    if (text === this.lastText && boardText === this.lastBoardText) return;
    this.lastText = text;
    this.lastBoardText = boardText;
    sockets.forEach((ws, i) => {
      if (views[i] !== null) send(ws, views[i] === "board" && boardText !== undefined ? boardText : text);
    });
    for (const { queue_id: watcher, generation } of watchers) {
      // Fire and forget: a slow watcher must not hold this room's change. A watcher with no
      // socket left for this queue is dropped.
      const delivery = this.peer(watcher).peer({ kind: "deliverUpdate", queueId, text, ...(boardText === undefined ? {} : { boardText }) });
      this.ctx.waitUntil(
        delivery
          .then((n) => {
            if (n === 0) {
              this.sql.exec("DELETE FROM widget_watchers WHERE queue_id = ? AND generation = ?", watcher, generation);
              this.anyWidgetWatcher = undefined;
            }
          })
          .catch(() => undefined),
      );
    }
  }

  /** This queue as the widget shows it, or null before it is configured or once it is deleted. */
  status(at: number): QueueStatusData | null {
    const room = this.room();
    if (room.queue_id === null || room.letter === null || room.retired_at !== null) return null;
    const calls = this.line.calls();
    const kept = this.keptStatus;
    if (kept && kept.room === room && kept.calls === calls && at >= kept.from && at < kept.until) return kept.status;
    const name = this.sql.exec<{ name: string | null }>("SELECT name FROM widget WHERE id = 1").one().name;
    const waitingCount = this.line.waitingCount();
    const serving = this.sql
      .exec<{ number: number; visit_code: string | null }>(
        "SELECT number, visit_code FROM tickets WHERE status IN ('called', 'serving') ORDER BY called_at DESC, number DESC LIMIT ?",
        NOW_SERVING_LIMIT,
      )
      .toArray();
    const defaultMinutes = room.default_service_minutes;
    const status: QueueStatusData = {
      queueId: room.queue_id,
      name: name ?? "",
      status: room.status,
      waitingCount,
      estimatedWaitMinutes: estimatedWaitMinutes(waitingCount, minutesPerTicket(calls, at, defaultMinutes)),
      estimatedWaitRange: estimatedWaitRange(waitingCount, calls, at, defaultMinutes),
      nowServing: serving.map((s) => codeOf(room.letter!, s)),
    };
    this.keptStatus = { room, calls, ...estimateSpan(calls, at), status };
    return status;
  }

  /** The queue's name as the widget shows it (the room learns it from the catalog and the Worker). */
  learnName(name: string): void {
    this.sql.exec("UPDATE widget SET name = ? WHERE id = 1 AND name IS NOT ?", name, name);
    this.keptStatus = null;
  }

  /** Called and serving tickets, newest call first, and the next codes in call order (indexed reads). */
  board(at: number): BoardData | null {
    const room = this.room();
    const status = this.status(at);
    if (status === null || room.letter === null) return null;
    const letter = room.letter;
    const called = this.sql
      .exec<{
        number: number;
        visit_code: string | null;
        status: "called" | "serving";
        assigned_to_id: string | null;
        counter: string | null;
        called_at: number;
        kind: TicketKind;
        language: string | null;
      }>(
        // A recall announces the ticket again: the board sees a new announcement time and
        // flashes the code again (docs/desks.md).
        `SELECT number, visit_code, status, assigned_to_id, counter, COALESCE(recalled_at, called_at) AS called_at, kind, language FROM tickets
         WHERE status IN ('called', 'serving') ORDER BY COALESCE(recalled_at, called_at) DESC, number DESC LIMIT ?`,
        BOARD_CALLED_LIMIT,
      )
      .toArray();
    const next = this.line.waitingLine(BOARD_NEXT_LIMIT, 0, at);
    return {
      status,
      called: called.map((t) => ({
        displayCode: codeOf(letter, t),
        status: t.status,
        assignedToId: t.assigned_to_id,
        counter: t.counter,
        calledAt: t.called_at,
        kind: t.kind,
        language: t.language,
      })),
      nextWaiting: next.map((t) => codeOf(letter, t)),
    };
  }

  private room(): RoomRow {
    return this.line.room();
  }
}

type Parsed =
  | { action: "subscribe" | "unsubscribe"; queueId: string; view?: SubscriptionView | undefined }
  | { action: "subscribe"; ticketId: string; token: string }
  | { action: "unsubscribe"; ticketId: string }
  | { error: string };

/**
 * The spec's `{action: "subscribe", queueId}`, and `unsubscribe` alike; a display board adds
 * `view: "board"` to receive `board_update` instead of `queue_update`. No other field.
 */
const QueueRequest = z.strictObject({
  action: z.enum(["subscribe", "unsubscribe"], { error: "action must be subscribe or unsubscribe" }),
  queueId: z.string({ error: "queueId must be a queue id" }).regex(QUEUE_ID, { error: "queueId must be a queue id" }),
  view: z.enum(["status", "board"], { error: "view must be status or board" }).optional(),
});
const TICKET_ID = /^tkt_[A-Za-z0-9]{1,64}$/;
/** The visitor's ticket: `{action: "subscribe", ticketId, token}`, `{action: "unsubscribe", ticketId}`. */
const TicketRequest = z.union([
  z.strictObject({
    action: z.literal("subscribe"),
    ticketId: z.string({ error: "ticketId must be a ticket id" }).regex(TICKET_ID, { error: "ticketId must be a ticket id" }),
    token: z.string({ error: "token must be the ticket's token" }).min(1).max(128),
  }),
  z.strictObject({
    action: z.literal("unsubscribe"),
    ticketId: z.string({ error: "ticketId must be a ticket id" }).regex(TICKET_ID, { error: "ticketId must be a ticket id" }),
  }),
]);

/** Validates one client message; anything else is refused with the first problem found. */
export function parseMessage(raw: string | ArrayBuffer): Parsed {
  if (typeof raw !== "string" || raw.length > MAX_MESSAGE_CHARS) return { error: "Send a JSON text message of at most 512 characters" };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { error: "The message is not JSON" };
  }
  if (typeof value === "object" && value !== null && "ticketId" in value) {
    const ticket = TicketRequest.safeParse(value);
    if (ticket.success) return ticket.data;
    const issue = ticket.error.issues[0];
    if (issue?.code === "invalid_union") {
      return { error: "A ticket message is {action: subscribe, ticketId, token} or {action: unsubscribe, ticketId}" };
    }
    return { error: issue?.message ?? "The message must be a JSON object" };
  }
  const parsed = QueueRequest.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue === undefined || issue.path.length === 0) {
    return {
      error:
        issue?.code === "unrecognized_keys"
          ? "The message takes only action, queueId and view (or ticketId and token)"
          : "The message must be a JSON object",
    };
  }
  return { error: issue.message };
}
