import { env } from "cloudflare:test";
import { newManageToken } from "../../src/appointments/manage-token";
import { randomString } from "../../src/lib/ids";

// Booked appointments written straight into D1, for the check-in and blend tests, until booking
// (POST /v1/appointments) is merged: then these become that call.

export interface BookedAppointment {
  id: string;
  /** The customer's manage token (X-Appointment-Token). */
  token: string;
  startAt: number;
}

export interface Booking {
  organizationId: string;
  serviceId: string;
  locationId: string;
  startAt: number | string;
  durationMinutes?: number;
  language?: "fr" | "en";
  customerName?: string;
  customerUserId?: string | null;
  customerPhone?: string | null;
  queueId?: string | null;
}

export async function bookAppointment(b: Booking): Promise<BookedAppointment> {
  const id = `apt_${randomString(20)}`;
  const startAt = typeof b.startAt === "string" ? Date.parse(b.startAt) : b.startAt;
  const { token, tokenHash } = await newManageToken(env);
  const created = startAt - 86_400_000;
  await env.DB.prepare(
    `INSERT INTO appointments (id, organization_id, service_id, location_id, staff_id, start_at, end_at, status, customer_name,
       customer_phone, customer_email, language, notes, customer_user_id, calendar_event_id, token_hash, ticket_id, queue_id,
       checked_in_at, cancelled_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, NULL, ?, ?, 'booked', ?, ?, NULL, ?, NULL, ?, NULL, ?, NULL, ?, NULL, NULL, ?, ?)`,
  )
    .bind(
      id,
      b.organizationId,
      b.serviceId,
      b.locationId,
      startAt,
      startAt + (b.durationMinutes ?? 15) * 60_000,
      b.customerName ?? "Awa Diallo",
      b.customerPhone ?? null,
      b.language ?? "en",
      b.customerUserId ?? null,
      tokenHash,
      b.queueId ?? null,
      created,
      created,
    )
    .run();
  return { id, token, startAt };
}

export async function appointmentRow(id: string): Promise<Record<string, any>> {
  return (await env.DB.prepare("SELECT * FROM appointments WHERE id = ?").bind(id).first())!;
}
