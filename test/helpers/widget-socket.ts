import { env, SELF, runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import { hubName, SOCKET_HUBS } from "../../src/queue-room/contract";

// A widget WebSocket client over SELF.fetch (the test sees what a browser would), and the
// socket hubs that hold spec-flow sockets.

export class SocketClient {
  readonly messages: any[] = [];
  private read = 0;
  private waiter: (() => void) | null = null;
  closed = false;
  closeCode: number | null = null;

  constructor(readonly ws: WebSocket) {
    ws.accept();
    ws.addEventListener("message", (ev) => {
      const text = ev.data as string;
      this.messages.push(text === "pong" ? text : JSON.parse(text));
      this.waiter?.();
    });
    ws.addEventListener("close", (ev) => {
      this.closed = true;
      this.closeCode = ev.code;
    });
  }

  static async open(query = "", headers: Record<string, string> = {}): Promise<SocketClient> {
    const res = await SELF.fetch(`https://api.test/v1/widget/ws${query}`, { headers: { Upgrade: "websocket", ...headers } });
    expect(res.status).toBe(101);
    return new SocketClient(res.webSocket!);
  }

  send(value: unknown): void {
    this.ws.send(typeof value === "string" ? value : JSON.stringify(value));
  }

  /** The next message not read yet. */
  async next(ms = 5000): Promise<any> {
    const deadline = Date.now() + ms;
    while (this.read >= this.messages.length) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no message within ${ms} ms; got ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.messages[this.read++];
  }

  /**
   * The next message not read yet that is not of `type`: a room may broadcast its status at any
   * moment (an alarm, a sweep), so an answer is looked for past those.
   */
  async nextExcept(type: string, ms = 10_000): Promise<any> {
    const deadline = Date.now() + ms;
    for (;;) {
      const message = await this.next(Math.max(1, deadline - Date.now()));
      if (message?.type !== type) return message;
    }
  }

  /** Waits until `count` messages have arrived in all. */
  async received(count: number, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.messages.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(this.messages.length).toBeGreaterThanOrEqual(count);
  }

  /** Nothing arrives for a while. */
  async quiet(ms = 300): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    expect(this.messages.slice(this.read)).toEqual([]);
  }

  close(): void {
    this.ws.close(1000, "done");
  }
}

/** The socket hubs' stubs (each a SocketHub named `socket-hub:<n>`). */
export function hubs() {
  return Array.from({ length: SOCKET_HUBS }, (_, i) => env.SOCKET_HUB.get(env.SOCKET_HUB.idFromName(hubName(i))));
}

/** Sockets held (hibernatable) by all hubs together. */
export async function hubSocketCount(): Promise<number> {
  let n = 0;
  for (const hub of hubs()) n += await runInDurableObject(hub, (_object, state) => state.getWebSockets().length);
  return n;
}
