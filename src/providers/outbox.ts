import type { SendOutcome } from "./types";

// The stand-in used when a channel has no secrets (local development, tests): nothing leaves
// the Worker. What would have been sent is kept on the delivery row (provider "outbox",
// payload) and printed to the log, so `npm run dev` shows every notification.

export function outboxSend(channel: string, to: string, payload: unknown): SendOutcome {
  console.log(JSON.stringify({ notification: "outbox", channel, to, payload }));
  return { ok: true, provider: "outbox", response: "recorded by the outbox provider (no secrets configured)" };
}
