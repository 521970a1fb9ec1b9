import { z } from "zod";
import { displayCode } from "../domain/display-code";
import type { QueueStatus } from "../domain/tickets";
import { estimatedWaitMinutes, estimatedWaitRange, minutesPerTicket, type CallRecord, type WaitRange } from "../domain/wait-estimate";
import type { Env } from "../env";
import { now } from "../lib/clock";
import { iso } from "../lib/time";
import type { RoomConfig, RoomResult } from "./types";

// The widget's live channel inside a QueueRoom (README "Widget").
//
// Sockets are accepted with the hibernation API, so a room with only idle display boards
// connected is evicted from memory and woken by the next change or message. Each socket's
// subscriptions live in its attachment, which survives hibernation. A socket stays in the
// room it first reached; subscribing it to another queue of the same organization registers
// this room as a watcher in that queue's room, which then pushes its updates here by RPC.

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
  called: { displayCode: string; status: "called" | "serving"; counter: string | null; calledAt: string }[];
  nextWaiting: string[];
  generatedAt: string;
}

export type WidgetErrorCode = "VALIDATION_ERROR" | "NOT_FOUND" | "INTERNAL_ERROR";

export type WidgetMessage =
  | { type: "queue_update"; data: QueueStatusData }
  | { type: "board_update"; data: BoardQueueData }
  | { type: "error"; data: { code: WidgetErrorCode; message: string; queueId?: string } };

/** What a subscription asks for: the status widget's `queue_update`, or the board's `board_update`. */
export type SubscriptionView = "status" | "board";

interface Attachment {
  queues: string[];
  /** The queues among `queues` this socket follows as a display board (absent: none). */
  boards?: string[];
}

/** Codes on the status widget: the most recently called tickets still at a counter. */
export const NOW_SERVING_LIMIT = 5;
/** On the display board: the calls shown per queue, and the next codes. */
export const BOARD_CALLED_LIMIT = 10;
export const BOARD_NEXT_LIMIT = 5;

export interface BoardData {
  status: QueueStatusData;
  called: { displayCode: string; status: "called" | "serving"; assignedToId: string | null; counter: string | null; calledAt: number }[];
  nextWaiting: string[];
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
    called: board.called.map((c) => ({ displayCode: c.displayCode, status: c.status, counter: c.counter, calledAt: iso(c.calledAt) })),
    nextWaiting: board.nextWaiting,
    generatedAt: iso(at),
  };
}
/** A display board subscribes to every queue of its organization; beyond this, ask for fewer. */
export const MAX_SUBSCRIPTIONS = 50;
const MAX_MESSAGE_CHARS = 512;
/** The shape of an id; whether the queue exists is the lookup's answer (NOT_FOUND). */
const QUEUE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What the subscribing room learnt from D1 about a queue. */
export interface QueueFacts {
  config: RoomConfig;
  name: string;
}

type RoomRow = {
  queue_id: string | null;
  organization_id: string | null;
  letter: string | null;
  status: QueueStatus;
  retired_at: number | null;
};

/** What this room asks another queue's room (the QueueRoom stub, seen through what is used). */
export interface PeerRoom {
  watch(watcherQueueId: string, config: RoomConfig, name: string): Promise<RoomResult<QueueStatusData | null>>;
  deliverUpdate(queueId: string, text: string, boardText?: string): Promise<number>;
  widgetBoard(at: number): Promise<BoardData | null>;
}

export function errorMessage(code: WidgetErrorCode, message: string, queueId?: string): string {
  const data = queueId === undefined ? { code, message } : { code, message, queueId };
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

function subscriptions(ws: WebSocket): string[] {
  const attachment = ws.deserializeAttachment() as Attachment | null;
  return attachment?.queues ?? [];
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

/** Reads a queue's catalog row from D1: the room itself only knows its own queue. */
export async function queueFacts(env: Env, queueId: string): Promise<QueueFacts | null> {
  const row = await env.DB.prepare(
    "SELECT id, organization_id, service_id, name, letter, max_capacity, no_show_timeout_minutes, default_service_minutes, status, archived_at FROM queues WHERE id = ?",
  )
    .bind(queueId)
    .first<{
      id: string;
      organization_id: string;
      service_id: string;
      name: string;
      letter: string;
      max_capacity: number | null;
      no_show_timeout_minutes: number;
      default_service_minutes: number;
      status: QueueStatus;
      archived_at: number | null;
    }>();
  if (!row) return null;
  return {
    name: row.name,
    config: {
      queueId: row.id,
      organizationId: row.organization_id,
      serviceId: row.service_id,
      letter: row.letter,
      maxCapacity: row.max_capacity,
      noShowTimeoutMinutes: row.no_show_timeout_minutes,
      defaultServiceMinutes: row.default_service_minutes,
      status: row.status,
      archivedAt: row.archived_at,
    },
  };
}

export class RoomSockets {
  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    private readonly sql: SqlStorage,
    /** The room's own configure(): a room reached first by a socket learns its queue here. */
    private readonly configure: (config: RoomConfig) => void,
    /** Another queue's room (a subscription to it, or a watcher to relay to). */
    private readonly peer: (queueId: string) => PeerRoom,
  ) {}

  /** Accepts a socket already subscribed to this room's queue (the Worker checked it exists). */
  async accept(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
      return new Response("Expected a WebSocket upgrade", { status: 426 });
    }
    const params = new URL(request.url).searchParams;
    const queueId = params.get("queueId") ?? "";
    const view: SubscriptionView = params.get("view") === "board" ? "board" : "status";
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    server.serializeAttachment({ queues: [] } satisfies Attachment);
    await this.subscribe(server, queueId, view);
    return new Response(null, { status: 101, webSocket: client });
  }

  // The socket lifecycle (partyserver's is the model): nothing a client sends, and no
  // failure while answering it, escapes into the room. A bad message or an internal error is
  // answered with `{type: "error"}` and the socket stays open.

  async message(ws: WebSocket, raw: string | ArrayBuffer): Promise<void> {
    const parsed = parseMessage(raw);
    if ("error" in parsed) {
      send(ws, errorMessage("VALIDATION_ERROR", parsed.error));
      return;
    }
    try {
      if (parsed.action === "unsubscribe") {
        ws.serializeAttachment({
          queues: subscriptions(ws).filter((q) => q !== parsed.queueId),
          boards: boardSubscriptions(ws).filter((q) => q !== parsed.queueId),
        } satisfies Attachment);
        return;
      }
      await this.subscribe(ws, parsed.queueId, parsed.view ?? "status");
    } catch (err) {
      console.warn(`queue room: widget ${parsed.action} of ${parsed.queueId} failed: ${err instanceof Error ? err.message : String(err)}`);
      send(ws, errorMessage("INTERNAL_ERROR", "Something went wrong; try again", parsed.queueId));
    }
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
    const facts = await queueFacts(this.env, queueId);
    if (!facts) return void notFound();
    const own = this.room();
    const at = now();
    let message: WidgetMessage | null;
    if (own.queue_id === null || own.queue_id === facts.config.queueId) {
      this.configure(facts.config);
      this.sql.exec("UPDATE widget SET name = ? WHERE id = 1", facts.name);
      message = this.messageFor(view, at);
    } else {
      if (own.organization_id !== facts.config.organizationId) return void notFound();
      const peer = this.peer(queueId);
      const answer = await peer.watch(own.queue_id, facts.config, facts.name);
      if (!answer.ok) throw new Error(answer.error.message);
      const status = answer.value;
      const board = status && view === "board" ? await peer.widgetBoard(at) : null;
      message = !status ? null : board ? { type: "board_update", data: boardQueue(board, at) } : { type: "queue_update", data: status };
    }
    if (!message) return void notFound();
    const queues = subscriptions(ws);
    const boards = boardSubscriptions(ws).filter((q) => q !== queueId);
    if (!queues.includes(queueId) && queues.length >= MAX_SUBSCRIPTIONS) {
      send(ws, errorMessage("VALIDATION_ERROR", `At most ${MAX_SUBSCRIPTIONS} queues per connection`, queueId));
      return;
    }
    ws.serializeAttachment({
      queues: queues.includes(queueId) ? queues : [...queues, queueId],
      boards: view === "board" ? [...boards, queueId] : boards,
    } satisfies Attachment);
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
    this.sql.exec("UPDATE widget SET name = ? WHERE id = 1", name);
    // A new generation, so that an empty delivery already in flight does not drop this watch.
    this.sql.exec(
      "INSERT INTO widget_watchers (queue_id, generation) VALUES (?, 1) ON CONFLICT (queue_id) DO UPDATE SET generation = generation + 1",
      watcherQueueId,
    );
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
    const sockets = this.ctx.getWebSockets();
    const watchers = this.sql.exec<{ queue_id: string; generation: number }>("SELECT queue_id, generation FROM widget_watchers").toArray();
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
    sockets.forEach((ws, i) => {
      if (views[i] !== null) send(ws, views[i] === "board" && boardText !== undefined ? boardText : text);
    });
    for (const { queue_id: watcher, generation } of watchers) {
      // Fire and forget: a slow watcher must not hold this room's change. A watcher with no
      // socket left for this queue is dropped.
      const delivery = this.peer(watcher).deliverUpdate(queueId, text, boardText);
      this.ctx.waitUntil(
        delivery
          .then((n) => {
            if (n === 0) this.sql.exec("DELETE FROM widget_watchers WHERE queue_id = ? AND generation = ?", watcher, generation);
          })
          .catch(() => undefined),
      );
    }
  }

  /** This queue as the widget shows it, or null before it is configured or once it is deleted. */
  status(at: number): QueueStatusData | null {
    const room = this.room();
    if (room.queue_id === null || room.letter === null || room.retired_at !== null) return null;
    const name = this.sql.exec<{ name: string | null }>("SELECT name FROM widget WHERE id = 1").one().name;
    const waitingCount = this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM tickets WHERE status = 'waiting'").one().n;
    const serving = this.sql
      .exec<{ number: number }>(
        "SELECT number FROM tickets WHERE status IN ('called', 'serving') ORDER BY called_at DESC, number DESC LIMIT ?",
        NOW_SERVING_LIMIT,
      )
      .toArray();
    const calls = this.sql
      .exec<{ at: number; operator_id: string }>("SELECT at, operator_id FROM calls")
      .toArray()
      .map((c): CallRecord => ({ at: c.at, operatorId: c.operator_id }));
    const defaultMinutes = this.sql.exec<{ m: number }>("SELECT default_service_minutes AS m FROM room WHERE id = 1").one().m;
    return {
      queueId: room.queue_id,
      name: name ?? "",
      status: room.status,
      waitingCount,
      estimatedWaitMinutes: estimatedWaitMinutes(waitingCount, minutesPerTicket(calls, at, defaultMinutes)),
      estimatedWaitRange: estimatedWaitRange(waitingCount, calls, at, defaultMinutes),
      nowServing: serving.map((s) => displayCode(room.letter!, s.number)),
    };
  }

  /** Called and serving tickets, newest call first, and the next codes in call order (indexed reads). */
  board(at: number): BoardData | null {
    const room = this.room();
    const status = this.status(at);
    if (status === null || room.letter === null) return null;
    const letter = room.letter;
    const called = this.sql
      .exec<{ number: number; status: "called" | "serving"; assigned_to_id: string | null; counter: string | null; called_at: number }>(
        // A recall announces the ticket again: the board sees a new announcement time and
        // flashes the code again (docs/desks.md).
        `SELECT number, status, assigned_to_id, counter, COALESCE(recalled_at, called_at) AS called_at FROM tickets
         WHERE status IN ('called', 'serving') ORDER BY COALESCE(recalled_at, called_at) DESC, number DESC LIMIT ?`,
        BOARD_CALLED_LIMIT,
      )
      .toArray();
    const next = this.sql
      .exec<{ number: number }>("SELECT number FROM tickets WHERE status = 'waiting' ORDER BY lane, order_key LIMIT ?", BOARD_NEXT_LIMIT)
      .toArray();
    return {
      status,
      called: called.map((t) => ({
        displayCode: displayCode(letter, t.number),
        status: t.status,
        assignedToId: t.assigned_to_id,
        counter: t.counter,
        calledAt: t.called_at,
      })),
      nextWaiting: next.map((t) => displayCode(letter, t.number)),
    };
  }

  private room(): RoomRow {
    return this.sql.exec<RoomRow>("SELECT queue_id, organization_id, letter, status, retired_at FROM room WHERE id = 1").one();
  }
}

type Parsed = { action: "subscribe" | "unsubscribe"; queueId: string; view?: SubscriptionView | undefined } | { error: string };

/**
 * The spec's `{action: "subscribe", queueId}`, and `unsubscribe` alike; a display board adds
 * `view: "board"` to receive `board_update` instead of `queue_update`. No other field.
 */
const WidgetRequest = z.strictObject({
  action: z.enum(["subscribe", "unsubscribe"], { error: "action must be subscribe or unsubscribe" }),
  queueId: z.string({ error: "queueId must be a queue id" }).regex(QUEUE_ID, { error: "queueId must be a queue id" }),
  view: z.enum(["status", "board"], { error: "view must be status or board" }).optional(),
});

/** Validates one client message; anything else is refused with the first problem found. */
export function parseMessage(raw: string | ArrayBuffer): Parsed {
  if (typeof raw !== "string" || raw.length > MAX_MESSAGE_CHARS) return { error: "Send a JSON text message of at most 512 characters" };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { error: "The message is not JSON" };
  }
  const parsed = WidgetRequest.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue === undefined || issue.path.length === 0) {
    return {
      error: issue?.code === "unrecognized_keys" ? "The message takes only action, queueId and view" : "The message must be a JSON object",
    };
  }
  return { error: issue.message };
}
