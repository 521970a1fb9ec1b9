import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { roomClient, type PeerMessage, type RoomClient } from "./contract";
import { TicketFollowers } from "./followers";
import type { RoomPorts } from "./ports";
import { migrateRoom } from "./schema";
import { RoomSockets } from "./sockets";
import { RoomStore } from "./store";
import type { RoomResult } from "./types";

/**
 * A socket hub (issue 36): holds the widget sockets that connect without naming a queue (the
 * spec's flow, `GET /v1/widget/ws`), accepted with the hibernation API. It holds no line: every
 * subscription is a watch of the queue's room, which pushes its updates here (`deliverUpdate`,
 * `deliverTicketUpdate`), exactly as a room relays another queue to its own sockets. Until
 * session 17 a hub was a QueueRoom named `hub:<n>` that held no queue; it is now its own class,
 * so a queue's room is only that. The socket code is the room's (sockets.ts), and so is the
 * schema (its `widget` and `widget_watchers` tables; the ticket tables stay empty).
 */
export class SocketHub extends DurableObject<Env> {
  private readonly sockets: RoomSockets;
  private readonly followers: TicketFollowers;

  constructor(ctx: DurableObjectState, env: Env, ports: Pick<RoomPorts, "catalog">) {
    super(ctx, env);
    migrateRoom(ctx.storage);
    const sql = ctx.storage.sql;
    const room = (name: string): RoomClient => roomClient(env.QUEUE_ROOM, name);
    this.sockets = new RoomSockets(
      ctx,
      ports.catalog,
      sql,
      // A hub never learns a queue of its own: its sockets' queues live in their rooms.
      () => {},
      room,
      () => this.followers,
      // A hub's own tables hold no queue: an unconfigured room row, no tickets, no calls.
      new RoomStore(sql, () => {}),
    );
    // The tickets its sockets follow live in their rooms too (followers.ts there keeps this hub as
    // a watcher); this copy only answers that it holds none.
    this.followers = new TicketFollowers(
      ctx,
      sql,
      () => null,
      room,
      (id, text, final) => this.sockets.deliverTicket(id, text, final),
    );
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  /** A spec-flow WebSocket, forwarded by the Worker with `?hub=<this hub's name>`. */
  override async fetch(request: Request): Promise<Response> {
    if (!new URL(request.url).searchParams.get("hub")) return new Response("A socket hub takes ?hub=<its name>", { status: 400 });
    return this.sockets.accept(request);
  }

  /**
   * What a room sends its watchers: a hub takes the deliveries. The rest of PeerMessage is what a
   * queue's room answers; a hub is never asked it (its name is no queue id) and answers "none".
   */
  async peer(message: PeerMessage): Promise<number | null | RoomResult<null>> {
    switch (message.kind) {
      case "deliverUpdate":
        return this.sockets.deliver(message.queueId, message.text, message.boardText);
      case "deliverTicketUpdate":
        return this.sockets.deliverTicket(message.ticketId, message.text, message.final);
      case "board":
      case "watchTicket":
        return null;
      default:
        return { ok: false, error: { code: "ROOM_UNAVAILABLE", message: "A socket hub holds no queue", details: {} } };
    }
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
}
