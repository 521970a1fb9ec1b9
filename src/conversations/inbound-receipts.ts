import type { Env } from "../env";
import { DAY } from "../lib/time";

// Exactly once (issue 44): each provider message (Twilio's MessageSid, a WhatsApp message id) is
// taken once. A replayed signed request, or the provider's own retry after a timeout, finds its
// receipt and changes nothing. Receipts are kept long past any retry or plausible replay.

export const INBOUND_RECEIPT_RETENTION_MS = 400 * DAY;

/** True the first time this message is seen (its receipt is written); false for a replay. */
export async function takeReceipt(env: Env, provider: string, messageId: string, at: number): Promise<boolean> {
  const [, taken] = await env.DB.batch([
    // Old receipts go a few at a time, with the traffic that makes them.
    env.DB.prepare(
      "DELETE FROM inbound_receipts WHERE rowid IN (SELECT rowid FROM inbound_receipts WHERE received_at < ? ORDER BY received_at LIMIT 20)",
    ).bind(at - INBOUND_RECEIPT_RETENTION_MS),
    env.DB.prepare(
      "INSERT INTO inbound_receipts (provider, message_id, received_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1 AS taken",
    ).bind(provider, messageId, at),
  ]);
  return (taken?.results?.length ?? 0) > 0;
}

/** The message could not be acted on (a fault): its retry must act. */
export async function releaseReceipt(env: Env, provider: string, messageId: string): Promise<void> {
  await env.DB.prepare("DELETE FROM inbound_receipts WHERE provider = ? AND message_id = ?").bind(provider, messageId).run();
}
