import type { Env } from "../env";

// A provider's report on an SMS we sent (docs/conversations.md): the delivery row moves
// forward only — pending/retrying → sent → delivered, or → failed — so callbacks arriving out
// of order (Twilio does not promise their order) never take a delivered message back to sent.

export type ReportedState = "queued" | "sent" | "delivered" | "failed";

/** The states a report may move a delivery from. */
const FROM: Record<ReportedState, string[]> = {
  queued: [],
  sent: ["pending", "retrying"],
  delivered: ["pending", "retrying", "sent"],
  failed: ["pending", "retrying", "sent"],
};

/** Answers whether the delivery moved. An unknown delivery, or one already further, is left as is. */
export async function applyDeliveryReport(
  env: Env,
  deliveryKey: string,
  state: ReportedState,
  providerAnswer: string,
  at: number,
): Promise<boolean> {
  const from = FROM[state];
  if (from.length === 0) return false;
  const res = await env.DB.prepare(
    `UPDATE notification_deliveries SET status = ?, provider_response = ?, updated_at = ?
     WHERE key = ? AND channel = 'sms' AND status IN (${from.map(() => "?").join(", ")})`,
  )
    .bind(state, providerAnswer.slice(0, 1000), at, deliveryKey, ...from)
    .run();
  return res.meta.changes > 0;
}
