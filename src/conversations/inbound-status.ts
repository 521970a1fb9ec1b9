import { and, eq, inArray } from "drizzle-orm";
import { notificationDeliveries } from "../db/schema";
import type { Deps } from "../http/deps";

// A provider's report on an SMS we sent (docs/conversations.md): the delivery row moves
// forward only — pending/retrying → sent → delivered, or → failed — so callbacks arriving out
// of order (Twilio does not promise their order) never take a delivered message back to sent.

export type ReportedState = "queued" | "sent" | "delivered" | "failed";

/** The states a report may move a delivery from. */
const FROM: Record<ReportedState, (typeof notificationDeliveries.$inferSelect.status)[]> = {
  queued: [],
  sent: ["pending", "retrying"],
  delivered: ["pending", "retrying", "sent"],
  failed: ["pending", "retrying", "sent"],
};

/** Answers whether the delivery moved. An unknown delivery, or one already further, is left as is. */
export async function applyDeliveryReport(
  { db }: Deps,
  deliveryKey: string,
  state: ReportedState,
  providerAnswer: string,
  at: number,
): Promise<boolean> {
  const from = FROM[state];
  if (state === "queued" || from.length === 0) return false;
  const res = await db
    .update(notificationDeliveries)
    .set({ status: state, providerResponse: providerAnswer.slice(0, 1000), updatedAt: at })
    .where(
      and(
        eq(notificationDeliveries.key, deliveryKey),
        eq(notificationDeliveries.channel, "sms"),
        inArray(notificationDeliveries.status, from),
      ),
    )
    .run();
  return res.meta.changes > 0;
}
