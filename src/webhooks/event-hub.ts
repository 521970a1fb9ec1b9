import { DurableObject } from "cloudflare:workers";
import { and, eq, gt } from "drizzle-orm";
import { database } from "../db/client";
import { organizationEvents } from "../db/schema";
import { payloadFor, readsPersonalData, type PayloadReader, type WebhookPayload } from "../domain/webhooks";
import type { Env } from "../env";
import { openStoredEvent } from "./stored-events";

// The live event socket (issue 41, docs/event-socket.md): one object per organization holds its
// dashboards' sockets with the hibernation API, so an idle dashboard costs nothing. The object
// keeps no copy of the events: organization_events in D1 (event-stream.ts) is the one record,
// and each socket remembers the last recording sequence it was sent (its attachment). When the
// EVENTS consumer has recorded a batch it pokes the hub (`eventsRecorded`), and the hub sends
// every socket what D1 holds after that socket's sequence. A resumed socket starts from the
// sequence of the event it names, so the replay and the live events are one walk: each event
// once, in recording order, whatever order the pokes arrive in (a row is visible in D1 only
// once every row before it is: one writer, AUTOINCREMENT).

/** The subprotocol a browser names beside its credential (`new WebSocket(url, [EVENT_STREAM_PROTOCOL, key])`). */
export const EVENT_STREAM_PROTOCOL = "queue-events";

/** Rows read from D1 per step of the walk. */
const PAGE = 200;

/** What a socket keeps across hibernation (serializeAttachment, well under 16 KiB). */
interface StreamSocket {
  organizationId: string;
  /** Only these event types; empty = all. */
  types: string[];
  /** The recording sequence of the last event this socket has been sent (or skipped by its filter). */
  lastSeq: number;
  reader: PayloadReader;
}

export interface StreamStart {
  organizationId: string;
  types: readonly string[];
  /** Events recorded after this sequence are sent. */
  afterSeq: number;
  reader: PayloadReader;
  /** The subprotocol to answer with, when the client named one. */
  protocol: string | null;
}

/**
 * A socket opened without a credential (a browser that prefers not to put its key in the
 * subprotocol list): the hub holds it, sending nothing, until its first message logs it in
 * (`{"action": "authenticate", "key": "qk_live_…" | "sess_…"}`) or LOGIN_WINDOW_MS pass.
 */
interface PendingSocket {
  pending: true;
  organizationId: string;
  /** The stream's query as the client sent it (`types`, `after`), judged at login. */
  query: string;
  /** The client's address, so the login counts against its own limits. */
  address: string;
  openedAt: number;
}

export interface PendingStart {
  organizationId: string;
  query: string;
  address: string;
  protocol: string | null;
}

/** How long a socket opened without a credential may wait before its login message. */
export const LOGIN_WINDOW_MS = 10_000;

/** Close codes of a refused login (4000–4999 are the application's): 4401 no valid credential, 4403 not allowed, 4400 bad request. */
const LOGIN_CLOSE: Record<number, number> = { 401: 4401, 403: 4403, 404: 4403 };

/**
 * The app's own judgement of a login: the stream route answers, for the credential and query
 * given, the socket's start (or the error a header credential would have got). Set by the
 * Worker's entry (src/index.ts), which holds the app; the hub cannot import it (layers).
 */
type StreamLogin = (request: Request, env: Env, waitUntil: (p: Promise<unknown>) => void) => Promise<Response>;
let streamLogin: StreamLogin | null = null;
export function setStreamLogin(login: StreamLogin): void {
  streamLogin = login;
}

/**
 * Marks the hub's own login request, so the route answers it with the stream's start instead of
 * an upgrade. Drawn per isolate: the request never leaves it (the hub calls the app in process).
 */
export const STREAM_LOGIN_HEADER = "X-Event-Stream-Login";
let loginMark: string | null = null;
/** Random values cannot be drawn at a Worker's global scope: drawn on first use. */
const LOGIN_MARK = () => (loginMark ??= crypto.randomUUID());
export function isStreamLogin(value: string | undefined): boolean {
  return value !== undefined && value === LOGIN_MARK();
}

const isPending = (state: StreamSocket | PendingSocket): state is PendingSocket => "pending" in state;

export class EventHub extends DurableObject<Env> {
  /** A walk is running; another poke meanwhile makes it go round once more. */
  private walking = false;
  private again = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  /** Accepts a socket the Worker has authenticated and authorized (events.routes.ts). */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response("Expected a WebSocket upgrade", { status: 426 });
    const pending = JSON.parse(request.headers.get("X-Stream-Pending") ?? "null") as PendingStart | null;
    if (pending !== null) return this.acceptPending(pending);
    const start = JSON.parse(request.headers.get("X-Stream-Start") ?? "null") as StreamStart | null;
    if (start === null) return new Response("Missing stream start", { status: 400 });
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    server.serializeAttachment({
      organizationId: start.organizationId,
      types: [...start.types],
      lastSeq: start.afterSeq,
      reader: start.reader,
    } satisfies StreamSocket);
    void this.walk().catch((err) => console.error(JSON.stringify({ hub: "events", error: String(err) })));
    const headers = start.protocol === null ? undefined : { "Sec-WebSocket-Protocol": start.protocol };
    return new Response(null, { status: 101, webSocket: client, headers });
  }

  /** The EVENTS consumer recorded events of this organization: send the sockets what is new. */
  async eventsRecorded(): Promise<void> {
    await this.walk();
  }

  private async acceptPending(pending: PendingStart): Promise<Response> {
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    const at = Date.now();
    server.serializeAttachment({
      pending: true,
      organizationId: pending.organizationId,
      query: pending.query,
      address: pending.address,
      openedAt: at,
    } satisfies PendingSocket);
    // The alarm closes the sockets that never logged in.
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(at + LOGIN_WINDOW_MS);
    const headers = pending.protocol === null ? undefined : { "Sec-WebSocket-Protocol": pending.protocol };
    return new Response(null, { status: 101, webSocket: client, headers });
  }

  /** Closes the sockets still waiting for their login after LOGIN_WINDOW_MS. */
  override async alarm(): Promise<void> {
    const at = Date.now();
    let next: number | null = null;
    for (const ws of this.ctx.getWebSockets()) {
      const state = ws.deserializeAttachment() as StreamSocket | PendingSocket;
      if (!isPending(state)) continue;
      const due = state.openedAt + LOGIN_WINDOW_MS;
      if (due <= at) refuse(ws, 4401, "AUTHENTICATION_ERROR", "No login message within 10 seconds");
      else next = Math.min(next ?? due, due);
    }
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }

  /**
   * A logged-in socket's clients only listen (and ping, answered without waking the object):
   * anything else is ignored. A socket waiting for its login takes its first message as one.
   */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const state = ws.deserializeAttachment() as StreamSocket | PendingSocket;
    if (!isPending(state)) return;
    const key = loginKey(message);
    if (key === null) {
      refuse(ws, 4400, "VALIDATION_ERROR", 'The first message must be {"action": "authenticate", "key": "qk_live_…"} (or a session token)');
      return;
    }
    if (streamLogin === null) throw new Error("the event stream's login is not set (src/index.ts)");
    const url = `https://event-hub/v1/organizations/${encodeURIComponent(state.organizationId)}/events/stream${state.query}`;
    const headers = new Headers({ [STREAM_LOGIN_HEADER]: LOGIN_MARK(), "CF-Connecting-IP": state.address });
    if (key.startsWith("sess_")) headers.set("Authorization", `Bearer ${key}`);
    else headers.set("X-API-Key", key);
    const answer = await streamLogin(new Request(url, { headers }), this.env, (p) => this.ctx.waitUntil(p));
    const body = (await answer.json()) as { success: boolean; data?: StreamStart; error?: { code: string; message: string } };
    if (!answer.ok || !body.success || !body.data) {
      refuse(ws, LOGIN_CLOSE[answer.status] ?? 4400, body.error?.code ?? "AUTHENTICATION_ERROR", body.error?.message ?? "Login refused");
      return;
    }
    const start = body.data;
    ws.serializeAttachment({
      organizationId: start.organizationId,
      types: [...start.types],
      lastSeq: start.afterSeq,
      reader: start.reader,
    } satisfies StreamSocket);
    ws.send(JSON.stringify({ type: "authenticated", organizationId: start.organizationId }));
    await this.walk();
  }

  override webSocketClose(ws: WebSocket, code: number): void {
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, "closed");
    } catch {
      // already closed
    }
  }

  private async walk(): Promise<void> {
    if (this.walking) {
      this.again = true;
      return;
    }
    this.walking = true;
    try {
      do {
        this.again = false;
        const sockets = this.ctx
          .getWebSockets()
          .map((ws) => ({ ws, state: ws.deserializeAttachment() as StreamSocket | PendingSocket }))
          .filter((s): s is { ws: WebSocket; state: StreamSocket } => !isPending(s.state));
        if (sockets.length === 0) break;
        const from = Math.min(...sockets.map((s) => s.state.lastSeq));
        const rows = await database(this.env.DB)
          .select({
            seq: organizationEvents.seq,
            type: organizationEvents.type,
            payload: organizationEvents.payload,
            personalSealed: organizationEvents.personalSealed,
          })
          .from(organizationEvents)
          .where(and(eq(organizationEvents.organizationId, sockets[0]!.state.organizationId), gt(organizationEvents.seq, from)))
          .orderBy(organizationEvents.seq)
          .limit(PAGE)
          .all();
        // The sealed personal fields are opened only when a socket receives them (issue 40).
        const opening = sockets.some((s) => readsPersonalData(s.state.reader));
        const events = await Promise.all(
          rows.map(async (r) => {
            const masked = JSON.parse(r.payload) as WebhookPayload;
            const full = opening ? await openStoredEvent(this.env, r.payload, r.personalSealed) : masked;
            return { seq: r.seq, type: r.type, masked, full };
          }),
        );
        const last = events.at(-1)?.seq;
        if (last === undefined) break;
        for (const { ws, state } of sockets) send(ws, state, events, last);
        if (events.length === PAGE) this.again = true;
      } while (this.again);
    } finally {
      this.walking = false;
    }
  }
}

interface WalkedEvent {
  seq: number;
  type: string;
  /** The stored payload, without personal data. */
  masked: WebhookPayload;
  /** With the personal fields opened (the masked one when no socket receives them). */
  full: WebhookPayload;
}

function send(ws: WebSocket, state: StreamSocket, events: WalkedEvent[], last: number): void {
  if (last <= state.lastSeq) return;
  try {
    for (const e of events) {
      if (e.seq <= state.lastSeq) continue;
      if (state.types.length > 0 && !state.types.includes(e.type)) continue;
      ws.send(JSON.stringify(payloadFor(readsPersonalData(state.reader) ? e.full : e.masked, state.reader)));
    }
    ws.serializeAttachment({ ...state, lastSeq: last } satisfies StreamSocket);
  } catch {
    // The socket closed meanwhile: the platform drops it from getWebSockets().
  }
}

/** The credential of a login message, or null when the message is not one. */
function loginKey(message: string | ArrayBuffer): string | null {
  if (typeof message !== "string" || message.length > 1024) return null;
  try {
    const parsed = JSON.parse(message) as { action?: unknown; key?: unknown };
    if (parsed?.action !== "authenticate" || typeof parsed.key !== "string") return null;
    const key = parsed.key.trim();
    return key.length > 0 && key.length <= 512 ? key : null;
  } catch {
    return null;
  }
}

/** Tells the client why, then closes the socket. */
function refuse(ws: WebSocket, closeCode: number, code: string, message: string): void {
  try {
    ws.send(JSON.stringify({ type: "error", error: { code, message } }));
    ws.close(closeCode, code);
  } catch {
    // closed already
  }
}
