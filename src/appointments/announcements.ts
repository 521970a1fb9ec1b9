import { eq } from "drizzle-orm";
import { organizations, pushDevices, services, subscriptions, users } from "../db/schema";
import type { DomainEventMessage } from "../domain/events";
import { formatWhen, pickLanguage, render } from "../domain/notification-templates";
import { entitlements } from "../domain/plans";
import { newId } from "../lib/ids";
import { iso } from "../lib/time";
import { deliver, type Delivery } from "../notifications/notification-delivery";
import { businessText } from "../notifications/message-templates";
import type { CustomerTemplateKey } from "../domain/message-templates";
import { publishEvent } from "../webhooks/domain-events";
import { bookingPlace } from "./appointments-slots";
import type { AppointmentRow } from "./appointment-rows";
import { type Deps } from "../http/deps";

// What a booking, a move or a cancellation tells (docs/appointments.md): the domain event
// (`appointment.created|rescheduled|cancelled`, for the event stream and webhooks: no manage
// token in it), and the customer's confirmation in the appointment's language: in-app and push
// when the customer booked with their account, SMS to the given phone on a plan with SMS. The
// confirmation of a new booking carries the manage link (the token, in the link's fragment).

export type AppointmentChange = "created" | "rescheduled" | "cancelled";

const TEMPLATE: Record<AppointmentChange, CustomerTemplateKey> = {
  created: "appointment.confirmed",
  rescheduled: "appointment.rescheduled",
  cancelled: "appointment.cancelled",
};

/** The manage link of a new booking: its page reads the token from the fragment (never sent to a server). */
export function manageLink({ env }: Deps, appointmentId: string, token: string): string {
  const base = (env.PUBLIC_BASE_URL ?? "").replace(/\/+$/, "");
  return `${base}/appointments/${appointmentId}#token=${token}`;
}

export function appointmentEvent(change: AppointmentChange, a: AppointmentRow, at: number): DomainEventMessage {
  return {
    id: newId("evt"),
    type: `appointment.${change}`,
    organizationId: a.organizationId,
    queueId: null,
    ticketId: null,
    occurredAt: iso(at),
    data: {
      appointmentId: a.id,
      serviceId: a.serviceId,
      locationId: a.locationId,
      staffId: a.staffId,
      start: iso(a.startAt),
      end: iso(a.endAt),
      status: a.status,
      customerName: a.customerName,
      language: a.language,
    },
  };
}

/** Publishes the event and sends the customer's confirmation. Run after the answer (waitUntil). */
export async function announce(deps: Deps, change: AppointmentChange, a: AppointmentRow, at: number, token?: string): Promise<void> {
  const { db } = deps;
  const event = appointmentEvent(change, a, at);
  await publishEvent(deps, event);
  const [place, org, user, devices] = await Promise.all([
    bookingPlace(deps, a.serviceId, a.locationId).catch(() => null),
    db
      .select({ defaultLanguage: organizations.defaultLanguage, plan: subscriptions.plan })
      .from(organizations)
      .leftJoin(subscriptions, eq(subscriptions.organizationId, organizations.id))
      .where(eq(organizations.id, a.organizationId))
      .get(),
    a.customerUserId ? db.select({ id: users.id }).from(users).where(eq(users.id, a.customerUserId)).get() : undefined,
    a.customerUserId ? db.select({ token: pushDevices.token }).from(pushDevices).where(eq(pushDevices.userId, a.customerUserId)).all() : [],
  ]);
  const serviceName =
    place?.service.name ?? (await db.select({ name: services.name }).from(services).where(eq(services.id, a.serviceId)).get())?.name ?? "";
  const language = pickLanguage(a.language, org?.defaultLanguage);
  const own = await businessText(deps, a.organizationId, null, TEMPLATE[change], language);
  const text = render(
    TEMPLATE[change],
    language,
    {
      title: serviceName,
      time: formatWhen(a.startAt, language, place?.timeZone ?? "UTC"),
      link: token ? manageLink(deps, a.id, token) : null,
    },
    own,
  );
  const data: Record<string, string> = { type: event.type, eventId: event.id, appointmentId: a.id };
  const base = { eventId: event.id, organizationId: a.organizationId, type: event.type, ...text, data };
  const deliveries: Delivery[] = [];
  if (user) {
    deliveries.push({ ...base, channel: "in_app", target: { kind: "user", userId: user.id } });
    for (const d of devices) deliveries.push({ ...base, channel: "push", target: { kind: "device", token: d.token } });
  }
  const plan = entitlements({ plan: org?.plan ?? "starter" });
  if (a.customerPhone && plan.features.sms) {
    deliveries.push({ ...base, channel: "sms", target: { kind: "phone", phone: a.customerPhone }, smsLimit: plan.features.smsPerMonth });
  }
  await deliver(deps, deliveries, at);
}
