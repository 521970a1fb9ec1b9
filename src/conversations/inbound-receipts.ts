import { and, eq, lt } from "drizzle-orm";
import { inboundReceipts } from "../db/schema";
import { DAY } from "../lib/time";
import type { Deps } from "../http/deps";

// Exactly once (issue 44): each provider message (Twilio's MessageSid, a WhatsApp message id) is
// taken once. A replayed signed request, or the provider's own retry after a timeout, finds its
// receipt and changes nothing. Receipts are kept long past any retry or plausible replay.

export const INBOUND_RECEIPT_RETENTION_MS = 400 * DAY;

/** True the first time this message is seen (its receipt is written); false for a replay. */
export async function takeReceipt({ db }: Deps, provider: string, messageId: string, at: number): Promise<boolean> {
  const [, taken] = await db.batch([
    // Old receipts go with the traffic that makes them (receivedAt is indexed: each request
    // deletes the few that expired since the last one).
    db.delete(inboundReceipts).where(lt(inboundReceipts.receivedAt, at - INBOUND_RECEIPT_RETENTION_MS)),
    // The conditional insert decides: a second request for the same message inserts nothing.
    db
      .insert(inboundReceipts)
      .values({ provider, messageId, receivedAt: at })
      .onConflictDoNothing()
      .returning({ provider: inboundReceipts.provider }),
  ]);
  return taken.length > 0;
}

/** The message could not be acted on (a fault): its retry must act. */
export async function releaseReceipt({ db }: Deps, provider: string, messageId: string): Promise<void> {
  await db.delete(inboundReceipts).where(and(eq(inboundReceipts.provider, provider), eq(inboundReceipts.messageId, messageId)));
}
