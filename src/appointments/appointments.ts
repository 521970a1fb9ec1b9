import { eq } from "drizzle-orm";
import { database } from "../db/client";
import { services } from "../db/schema";
import { zonedWallTimeToUtc } from "../domain/recurrence";
import type { Slot } from "../domain/slots";
import type { Env } from "../env";
import type { Principal } from "../http/auth";
import { notFound, validationError } from "../http/errors";
import type { InstantInput } from "../lib/instant";
import { bookingPlace, MAX_SLOT_RANGE_MS, slotsBetween } from "./appointments-slots";

// Appointments (docs/appointments.md): use cases behind src/appointments/appointments.routes.ts.

type Credential = Exclude<Principal, { kind: "anonymous" }>;

/** A bare date is 00:00 in the location's zone. */
function instantIn(input: InstantInput, timeZone: string): number {
  return input.kind === "instant" ? input.ms : zonedWallTimeToUtc(input.year, input.month, input.day, 0, 0, 0, timeZone);
}

/** Customers (any signed-in user) see any service's slots; an API key only its organization's (others: 404). */
async function assertMaySeeService(env: Env, principal: Credential, serviceId: string): Promise<void> {
  const row = await database(env.DB)
    .select({ organizationId: services.organizationId })
    .from(services)
    .where(eq(services.id, serviceId))
    .get();
  if (!row || (principal.kind === "apiKey" && principal.organizationId !== row.organizationId)) throw notFound("Service");
}

/** The free slots of the service at the location over [from, to). */
export async function freeSlots(
  env: Env,
  principal: Credential,
  serviceId: string,
  locationId: string,
  fromInput: InstantInput,
  toInput: InstantInput,
  at: number,
): Promise<Slot[]> {
  await assertMaySeeService(env, principal, serviceId);
  const db = database(env.DB);
  const place = await bookingPlace(db, serviceId, locationId);
  const from = instantIn(fromInput, place.timeZone);
  const to = instantIn(toInput, place.timeZone);
  if (to <= from) throw validationError("to", "must be after from");
  if (to - from > MAX_SLOT_RANGE_MS) throw validationError("to", "at most 31 days after from");
  const all = await slotsBetween(db, place, from, to, at);
  return all.filter((s) => s.remaining > 0);
}
