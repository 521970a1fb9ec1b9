import { env } from "cloudflare:test";
import { call, expectOk } from "./api";
import { testClock } from "./clock";
import { now } from "../../src/lib/clock";
import type { Language } from "../../src/domain/languages";

// Appointments booked through the public API (POST /v1/appointments), for the check-in, blend,
// analytics and erasure tests. The helper makes the service take a booking wherever the test
// puts it: when its booking settings would refuse (none, a coarse grid, capacity, lead time,
// horizon), they are widened, keeping what the test chose for check-in (when it opens, the grace,
// what a late one becomes). A start that is already past is booked on a clock moved to just
// before it (as the customer would have), then the clock is put back.

export interface BookedAppointment {
  id: string;
  /** The customer's manage token (X-Appointment-Token). */
  token: string;
  startAt: number;
}

export interface Booking {
  /** Staff of the organization (a session) or an API key that books and may change the service. */
  auth: { token?: string; apiKey?: string };
  serviceId: string;
  locationId: string;
  /** On a 5-minute grid from the location's midnight. */
  startAt: number | string;
  language?: Language;
  customerName?: string;
  customerPhone?: string | null;
  customerEmail?: string | null;
  /** A customer's own session: the appointment is theirs (customerUserId). Default: booked by `auth`. */
  customerToken?: string;
}

const MIN = 60_000;

/** What the booking grid must allow for any start a test picks. */
const ROOM = { enabled: true, slotStepMinutes: 5, capacityPerSlot: 100, leadTimeMinutes: 0, horizonDays: 365 } as const;

async function ensureBookable(b: Booking): Promise<void> {
  const service = expectOk(await call("GET", `/v1/services/${b.serviceId}`, b.auth));
  const current = service.booking ?? { durationMinutes: 15 };
  const wanted = { ...current, ...ROOM };
  if (service.booking && Object.entries(ROOM).every(([k, v]) => service.booking[k] === v)) return;
  expectOk(await call("PATCH", `/v1/services/${b.serviceId}`, { ...b.auth, body: { booking: wanted } }));
}

export async function bookAppointment(b: Booking): Promise<BookedAppointment> {
  const startAt = typeof b.startAt === "string" ? Date.parse(b.startAt) : b.startAt;
  await ensureBookable(b);
  const pinned = testClock.pinned();
  const moved = now() >= startAt;
  if (moved) testClock.set(startAt - MIN);
  try {
    const booked = expectOk(
      await call("POST", "/v1/appointments", {
        ...(b.customerToken ? { token: b.customerToken } : b.auth),
        body: {
          serviceId: b.serviceId,
          locationId: b.locationId,
          start: new Date(startAt).toISOString(),
          customer: {
            name: b.customerName ?? "Awa Diallo",
            language: b.language ?? "en",
            ...(b.customerPhone ? { phone: b.customerPhone } : {}),
            ...(b.customerEmail ? { email: b.customerEmail } : {}),
          },
        },
      }),
      201,
    );
    return { id: booked.id, token: booked.manageToken, startAt };
  } finally {
    if (moved) {
      if (pinned === null) testClock.reset();
      else testClock.set(pinned);
    }
  }
}

export async function appointmentRow(id: string): Promise<Record<string, any>> {
  return (await env.DB.prepare("SELECT * FROM appointments WHERE id = ?").bind(id).first())!;
}
