// The live channel of a page: the widget socket (/v1/widget/ws, docs/widget.md). The pages use its
// messages as a signal that something changed and read the truth over REST; after a dropped
// connection it reconnects by itself (growing delays, capped at 5 s), and a page resynchronises on
// every (re)open. Nothing polls: the socket's own `ping` keeps proxies from closing an idle line.
export type LiveState = "connecting" | "live" | "offline";

export interface LiveOptions {
  /** The subscribe messages sent on each open. */
  subscriptions: () => Array<Record<string, unknown>>;
  onMessage: (message: { type: string; data: unknown }) => void;
  /** Called on every open, the first included: read the state again. */
  onOpen: (reconnected: boolean) => void;
  onState: (state: LiveState) => void;
}

export function openLive(options: LiveOptions): { close: () => void; resubscribe: () => void } {
  let socket: WebSocket | null = null;
  let closed = false;
  let attempts = 0;
  let opened = false;
  let pingTimer: ReturnType<typeof setInterval> | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;

  const send = () => {
    if (socket?.readyState !== WebSocket.OPEN) return;
    for (const message of options.subscriptions()) socket.send(JSON.stringify(message));
  };

  const connect = () => {
    if (closed) return;
    options.onState(opened ? "offline" : "connecting");
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/v1/widget/ws`;
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => {
      const reconnected = opened;
      opened = true;
      attempts = 0;
      options.onState("live");
      send();
      options.onOpen(reconnected);
      clearInterval(pingTimer);
      pingTimer = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send("ping"), 25_000);
    };
    ws.onmessage = (event) => {
      if (typeof event.data !== "string" || event.data === "pong") return;
      try {
        options.onMessage(JSON.parse(event.data));
      } catch {
        /* not ours */
      }
    };
    ws.onclose = () => {
      clearInterval(pingTimer);
      if (closed || socket !== ws) return;
      options.onState("offline");
      attempts += 1;
      retryTimer = setTimeout(connect, Math.min(5_000, 250 * 2 ** Math.min(attempts, 5)));
    };
    ws.onerror = () => ws.close();
  };

  // The browser knows before the socket does: reconnect as soon as the network is back.
  const online = () => {
    if (socket && socket.readyState !== WebSocket.OPEN) {
      clearTimeout(retryTimer);
      socket.onclose = null;
      socket.close();
      connect();
    }
  };
  const offline = () => {
    options.onState("offline");
    socket?.close();
  };
  addEventListener("online", online);
  addEventListener("offline", offline);
  connect();
  return {
    close() {
      closed = true;
      clearInterval(pingTimer);
      clearTimeout(retryTimer);
      removeEventListener("online", online);
      removeEventListener("offline", offline);
      socket?.close();
    },
    resubscribe: send,
  };
}
