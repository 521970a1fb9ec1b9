// The message of the NOTIFICATIONS queue: one notification delivery, named by its key (the row
// in D1 holds the rest). Here, with the other queues' messages, so env.ts types its bindings
// without importing the jobs that consume them.

export interface DeliveryMessage {
  key: string;
}

// One notification to one recipient on one channel, as the services hand it to the delivery step.
export type Channel = "in_app" | "push" | "sms" | "web_push" | "whatsapp";

/** Channels that spend the organization's SMS caps and allowance (WhatsApp counts as SMS: docs/notifications.md). */
export function isMeteredChannel(channel: Channel): boolean {
  return channel === "sms" || channel === "whatsapp";
}

export type Target =
  | { kind: "user"; userId: string }
  | { kind: "device"; token: string }
  | { kind: "phone"; phone: string }
  | { kind: "browser"; endpoint: string; p256dh: string; auth: string };

export interface Delivery {
  eventId: string;
  organizationId: string | null;
  type: string;
  channel: Channel;
  target: Target;
  title: string;
  body: string;
  data: Record<string, string>;
  /** SMS and WhatsApp: the organization's monthly SMS allowance (null = unlimited). */
  smsLimit?: number | null;
  /** SMS and WhatsApp: false when the unit was already taken (a business's own SMS) or none is due (a WhatsApp reply). */
  countUsage?: boolean;
}
