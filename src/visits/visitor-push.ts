import { and, eq, sql } from "drizzle-orm";
import { visitorPushSubscriptions } from "../db/schema";
import type { Deps } from "../http/deps";

// A widget visitor's web-push subscriptions, one per (ticket, browser endpoint).

export interface VisitorPushSubscription {
  ticketId: string;
  organizationId: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  language: string | null;
}

/** Subscribes, or renews the keys and language of the same endpoint (one upsert). */
export async function subscribeVisitorPush({ db }: Deps, s: VisitorPushSubscription, at: number): Promise<void> {
  await db
    .insert(visitorPushSubscriptions)
    .values({ ...s, createdAt: at })
    .onConflictDoUpdate({
      target: [visitorPushSubscriptions.ticketId, visitorPushSubscriptions.endpoint],
      set: { p256dh: sql`excluded.p256dh`, auth: sql`excluded.auth`, language: sql`excluded.language` },
    })
    .run();
}

/** Removes the ticket's subscription of that endpoint; false when there was none. */
export async function unsubscribeVisitorPush({ db }: Deps, ticketId: string, endpoint: string): Promise<boolean> {
  const result = await db
    .delete(visitorPushSubscriptions)
    .where(and(eq(visitorPushSubscriptions.ticketId, ticketId), eq(visitorPushSubscriptions.endpoint, endpoint)))
    .run();
  return result.meta.changes > 0;
}
