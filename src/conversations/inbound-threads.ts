import { lt } from "drizzle-orm";
import { inboundThreads } from "../db/schema";
import { DAY } from "../lib/time";
import type { Deps } from "../http/deps";

// A customer's thread with a shared number (docs/conversations.md): which organization they
// chose, a menu awaiting their answer, the text held meanwhile. It serves the tickets of the day;
// two days after its last message the minute sweep deletes it, and the number and any held text
// with it (personal data kept no longer than it is needed).

export const INBOUND_THREAD_TTL_MS = 2 * DAY;

export async function purgeInboundThreads({ db }: Deps, at: number): Promise<number> {
  const gone = await db
    .delete(inboundThreads)
    .where(lt(inboundThreads.updatedAt, at - INBOUND_THREAD_TTL_MS))
    .returning({ phone: inboundThreads.phone });
  return gone.length;
}
