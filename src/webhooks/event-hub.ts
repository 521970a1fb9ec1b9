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

  /** Clients only listen (and ping, answered without waking the object): anything else is ignored. */
  override webSocketMessage(): void {}

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
        const sockets = this.ctx.getWebSockets().map((ws) => ({ ws, state: ws.deserializeAttachment() as StreamSocket }));
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
