import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { authorizeResources } from "../access/guard";
import { database } from "../db/client";
import { locations, services } from "../db/schema";
import { checkInOpensAt } from "../domain/blend";
import type { Permission } from "../domain/permissions";
import { isValidTimeZone, wallTimeAt, zonedWallTimeToUtc } from "../domain/recurrence";
import { DEFAULT_BOOKING, type Slot } from "../domain/slots";
import { membershipOf, requireCredential, type Principal } from "../http/auth";
import type { AppEnv } from "../http/context";
import { reachesOrganization } from "../http/livemode";
import { forbidden, invalidState, notFound, validationError } from "../http/errors";
import type { InstantInput } from "../lib/instant";
import { DAY, iso } from "../lib/time";
import { bookingPlace, MAX_SLOT_RANGE_MS, slotsBetween } from "./appointments-slots";
import { APPOINTMENT_TOKEN_HEADER, manageTokenHash } from "./manage-token";
import { appointmentsAt, appointmentsOfCustomer, findAppointment, type AppointmentRow } from "./appointment-rows";
import { deps, type Deps } from "../http/deps";

// Appointments (docs/appointments.md): use cases behind src/appointments/appointments.routes.ts.

type Credential = Exclude<Principal, { kind: "anonymous" }>;

/** A bare date is 00:00 in the location's zone. */
function instantIn(input: InstantInput, timeZone: string): number {
  return input.kind === "instant" ? input.ms : zonedWallTimeToUtc(input.year, input.month, input.day, 0, 0, 0, timeZone);
}

/** Customers (any signed-in user) see any service's slots; an API key only its organization's (others: 404). */
async function assertMaySeeService({ db }: Deps, principal: Credential, serviceId: string): Promise<void> {
  const row = await db.select({ organizationId: services.organizationId }).from(services).where(eq(services.id, serviceId)).get();
  if (!row || (principal.kind === "apiKey" && principal.organizationId !== row.organizationId)) throw notFound("Service");
  if (!reachesOrganization(principal, row.organizationId)) throw notFound("Service");
}

/** The free slots of the service at the location over [from, to). */
export async function freeSlots(
  deps: Deps,
  principal: Credential,
  serviceId: string,
  locationId: string,
  fromInput: InstantInput,
  toInput: InstantInput,
  at: number,
): Promise<Slot[]> {
  await assertMaySeeService(deps, principal, serviceId);
  const place = await bookingPlace(deps, serviceId, locationId);
  const from = instantIn(fromInput, place.timeZone);
  const to = instantIn(toInput, place.timeZone);
  if (to <= from) throw validationError("to", "must be after from");
  if (to - from > MAX_SLOT_RANGE_MS) throw validationError("to", "at most 31 days after from");
  const all = await slotsBetween(deps, place, from, to, at);
  return all.filter((s) => s.remaining > 0);
}

/**
 * The free slots a booked appointment may move to over [from, to): those of its service and
 * location, where it does not compete with itself (its own slot is among them, `current`).
 */
export async function slotsToMoveTo(
  deps: Deps,
  row: AppointmentRow,
  fromInput: InstantInput,
  toInput: InstantInput,
  at: number,
): Promise<(Slot & { current: boolean })[]> {
  if (row.status !== "booked") throw invalidState(row.status, ["booked"], `This appointment is ${row.status}`);
  const place = await bookingPlace(deps, row.serviceId, row.locationId);
  const from = instantIn(fromInput, place.timeZone);
  const to = instantIn(toInput, place.timeZone);
  if (to <= from) throw validationError("to", "must be after from");
  if (to - from > MAX_SLOT_RANGE_MS) throw validationError("to", "at most 31 days after from");
  const all = await slotsBetween(deps, place, from, to, at, { appointmentId: row.id });
  return all.filter((s) => s.remaining > 0).map((s) => ({ ...s, current: s.start === row.startAt }));
}

// ── Who may book and manage (docs/appointments.md) ──────────────────────────────────────

/**
 * Who books: a customer (any signed-in user who is not a member of the service's organization:
 * the appointment is theirs), staff who reach the location (QUEUE_OPERATE), an API key of the
 * organization with `write:queues`, or its `widget` key. Answers the customer's user id, or null.
 */
export async function bookerOf(c: Context<AppEnv>, serviceId: string, locationId: string): Promise<string | null> {
  const principal = requireCredential(c);
  const service = await database(c.env.DB)
    .select({ organizationId: services.organizationId })
    .from(services)
    .where(eq(services.id, serviceId))
    .get();
  if (!service || !reachesOrganization(principal, service.organizationId)) throw notFound("Service");
  if (principal.kind === "apiKey") {
    if (principal.organizationId !== service.organizationId) throw notFound("Service");
    if (principal.permissions.has("WIDGET") && !principal.permissions.has("QUEUE_OPERATE")) return null;
    await authorizeResources(c, "QUEUE_OPERATE", { serviceIds: [serviceId], locationIds: [locationId] });
    return null;
  }
  const membership = await membershipOf(c.env, service.organizationId, principal.user.id);
  if (!membership) return principal.user.id;
  await authorizeResources(c, "QUEUE_OPERATE", { serviceIds: [serviceId], locationIds: [locationId] });
  return null;
}

/**
 * The appointment of `/appointments/{appointmentId}` for this caller: the holder of its manage
 * token, staff who reach its location with `permission`, or the customer's own session. Anyone
 * else gets the 404 of an unknown id; staff without the permission 403.
 */
export async function appointmentOfCaller(
  c: Context<AppEnv>,
  permission: Permission,
): Promise<{ row: AppointmentRow; by: "customer" | "staff" }> {
  const id = c.req.param("appointmentId")!;
  const resolved = c.get("guarded");
  const row = resolved?.kind === "appointment" ? (resolved.row as AppointmentRow) : await findAppointment(deps(c), id);
  if (!row) throw notFound("Appointment");
  const token = c.req.header(APPOINTMENT_TOKEN_HEADER);
  if (token !== undefined) {
    const hash = await manageTokenHash(deps(c), token);
    if (hash !== null && hash === row.tokenHash) return { row, by: "customer" };
    throw notFound("Appointment");
  }
  const principal = requireCredential(c);
  if (resolved?.kind === "appointment" && resolved.member) {
    if (!resolved.member.can(permission)) throw forbidden(`This needs the ${permission} permission`);
    return { row, by: "staff" };
  }
  if (principal.kind === "session" && row.customerUserId === principal.user.id) return { row, by: "customer" };
  throw notFound("Appointment");
}

/** The location's appointments of one local day (today where it is, by default). */
export async function dayAtLocation(
  deps: Deps,
  locationId: string,
  timezone: string,
  date: string | null,
  at: number,
): Promise<AppointmentRow[]> {
  const zone = isValidTimeZone(timezone) ? timezone : "UTC";
  let year: number, month: number, day: number;
  if (date) {
    [year, month, day] = date.split("-").map(Number) as [number, number, number];
    const probe = new Date(Date.UTC(year, month - 1, day));
    if (probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== day) throw validationError("date", "not a calendar date");
  } else {
    const w = wallTimeAt(at, zone);
    [year, month, day] = [w.year, w.month, w.day];
  }
  const next = new Date(Date.UTC(year, month - 1, day + 1));
  const from = zonedWallTimeToUtc(year, month, day, 0, 0, 0, zone);
  const to = zonedWallTimeToUtc(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), 0, 0, 0, zone);
  return appointmentsAt(deps, locationId, from, to);
}

/** A customer's own appointments, from a day ago on. */
export async function appointmentsOfUser(deps: Deps, userId: string, at: number): Promise<AppointmentRow[]> {
  return appointmentsOfCustomer(deps, userId, at - DAY, 100);
}

/** The manage page's context of one appointment: its service's and location's names, the zone, when check-in opens. */
export async function placeOf({ db }: Deps, row: AppointmentRow) {
  const [service, location] = await Promise.all([
    db.select({ name: services.name, booking: services.booking }).from(services).where(eq(services.id, row.serviceId)).get(),
    db.select({ name: locations.name, timezone: locations.timezone }).from(locations).where(eq(locations.id, row.locationId)).get(),
  ]);
  const booking = { ...DEFAULT_BOOKING, ...(service?.booking ?? {}) };
  return {
    serviceName: service?.name ?? "",
    locationName: location?.name ?? "",
    timezone: location?.timezone ?? "UTC",
    checkInOpensAt: iso(checkInOpensAt(row.startAt, booking.checkInOpensMinutes)),
  };
}
