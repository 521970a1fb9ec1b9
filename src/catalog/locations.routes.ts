import { createRoute, z } from "@hono/zod-openapi";
import { auditOrigin } from "../http/audit-origin";
import { authorize, organizationOfRequest } from "../http/auth";
import { guarded } from "../access/guard";
import { forbidden } from "../http/errors";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import {
  checkLocationLanguage,
  createLocation,
  deleteLocation,
  findNearby,
  listLocations,
  locationRecord,
  updateLocation,
} from "./locations";
import { retireQueues } from "../tickets/queue-rooms";
import { rulesChanged } from "../tickets/room-rules";
import { Email, Language, PublicLine } from "../http/schemas";
import { rangesProblem, WEEKDAYS, type Weekday } from "../domain/opening-hours";
import { deps } from "../http/deps";

const app = router();
const tags = ["Locations"];

export const MAX_NEARBY_RADIUS_KM = 100;

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A number in a query string: present, not blank, finite. */
export const QueryNumber = z.string().trim().min(1, "required").pipe(z.coerce.number());

const Timezone = z.string().min(1).max(64).refine(isTimeZone, "not an IANA time zone").openapi({ example: "Europe/Paris" });
const Phone = z
  .string()
  .trim()
  .regex(/^\+?[0-9][0-9 ().-]{2,31}$/, "digits, spaces, + ( ) . - only")
  .openapi({ example: "+33 1 23 45 67 89" });
const Latitude = z.number().min(-90).max(90);
const Longitude = z.number().min(-180).max(180);

// Weekly opening hours (docs/appointments.md), wall-clock times in the location's timezone.
const ClockTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "HH:MM, 00:00 to 23:59");
const OpeningRange = z.strictObject({
  open: ClockTime.openapi({ example: "08:30" }),
  close: z
    .union([ClockTime, z.literal("24:00")])
    .openapi({ example: "12:00", description: "HH:MM; 24:00 is midnight at the end of the day" }),
});
const DayHours = z
  .array(OpeningRange)
  .max(6)
  .superRefine((ranges, ctx) => {
    const problem = rangesProblem(ranges);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .optional()
  .openapi({ description: "The day's opening ranges, in order; absent or [] closes the day" });
export const OpeningHoursSchema = z
  .strictObject(Object.fromEntries(WEEKDAYS.map((d) => [d, DayHours])) as Record<Weekday, typeof DayHours>)
  .openapi("OpeningHours", {
    description: "Weekly hours in the location's timezone. Joins outside them are refused like a closure (QUEUE_CLOSED).",
    example: {
      mon: [{ open: "08:00", close: "19:00" }],
      tue: [{ open: "08:00", close: "19:00" }],
      wed: [
        { open: "08:00", close: "12:30" },
        { open: "13:30", close: "19:00" },
      ],
      thu: [{ open: "08:00", close: "19:00" }],
      fri: [{ open: "08:00", close: "19:00" }],
      sat: [{ open: "09:00", close: "12:00" }],
    },
  });

const LocationFields = {
  name: PublicLine(200),
  address: PublicLine(500),
  latitude: Latitude,
  longitude: Longitude,
  timezone: Timezone.nullable().optional().openapi({ description: "IANA zone name, default UTC" }),
  phone: Phone.nullable().optional(),
  email: Email.nullable().optional(),
  defaultLanguage: Language.nullable().optional().openapi({
    description:
      "The language its visitors get when they chose none (kiosk, joins, messages); one of the organization's languages. null or absent: the organization's defaultLanguage",
  }),
};

export const LocationRecord = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    name: z.string(),
    address: z.string(),
    latitude: z.number(),
    longitude: z.number(),
    timezone: z.string(),
    phone: z.string().nullable(),
    email: z.string().nullable(),
    openingHours: OpeningHoursSchema.nullable().openapi({ description: "null: open all day" }),
    defaultLanguage: Language.nullable().openapi({
      description: "The language its visitors get when they chose none; null: the organization's",
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Location");

const NearbyLocation = LocationRecord.extend({
  distanceKm: z.number(),
  organization: z.object({ id: z.string(), name: z.string() }),
}).openapi("NearbyLocation");

const create = createRoute({
  method: "post",
  path: "/locations",
  tags,
  summary: "Create a location of an organization",
  description: "Needs LOCATION_MANAGE in that organization.",
  security: SECURITY.any,
  request: {
    body: jsonBody(z.strictObject({ organizationId: z.string().min(1).max(64), ...LocationFields }).openapi("CreateLocationRequest")),
  },
  responses: { 201: jsonResponse(okEnvelope(LocationRecord), "Created"), ...errors() },
});

app.openapi(create, async (c) => {
  const { organizationId, ...fields } = c.req.valid("json");
  const actor = await authorize(c, organizationId, "LOCATION_MANAGE");
  // A manager of some locations does not open new ones: that is for the whole organization's.
  if (actor.locationIds !== null) throw forbidden("A member limited to some locations cannot create locations");
  await checkLocationLanguage(deps(c), organizationId, fields.defaultLanguage);
  const row = await createLocation(deps(c), organizationId, fields, now(), auditOrigin(c, actor));
  return c.json(ok(locationRecord(row)), 201);
});

const listOwn = createRoute({
  method: "get",
  path: "/business/locations",
  tags,
  summary: "The locations of the caller's organization",
  description: "Organization from the API key, X-Organization-Id, or the user's only membership. Needs SERVICE_VIEW.",
  security: SECURITY.any,
  request: { query: CursorQuery },
  responses: { 200: jsonResponse(cursorListEnvelope(LocationRecord), "A page of locations, oldest first"), ...errors() },
});

app.openapi(listOwn, async (c) => {
  const organizationId = await organizationOfRequest(c);
  const actor = await authorize(c, organizationId, "SERVICE_VIEW");
  const window = listWindow(c.req.valid("query"));
  const { rows, total, hasMore } = await listLocations(deps(c), organizationId, window, undefined, actor.locationIds);
  return c.json(
    okList(
      rows.map(locationRecord),
      listMeta(
        rows.map((r) => r.id),
        total,
        window,
        hasMore,
      ),
    ),
    200,
  );
});

const search = createRoute({
  method: "get",
  path: "/locations/search",
  tags,
  summary: "Search an organization's locations by name or address",
  description: "Case-insensitive substring match (ASCII letters). Needs SERVICE_VIEW in that organization.",
  security: SECURITY.any,
  request: {
    query: CursorQuery.extend({
      organizationId: z.string().min(1).max(64),
      q: z.string().trim().max(200).optional().openapi({ description: "Matches name or address; empty lists all" }),
    }),
  },
  responses: { 200: jsonResponse(cursorListEnvelope(LocationRecord), "Matching locations"), ...errors() },
});

app.openapi(search, async (c) => {
  const { organizationId, q, ...page } = c.req.valid("query");
  const actor = await authorize(c, organizationId, "SERVICE_VIEW");
  const window = listWindow(page);
  const { rows, total, hasMore } = await listLocations(deps(c), organizationId, window, q || undefined, actor.locationIds);
  return c.json(
    okList(
      rows.map(locationRecord),
      listMeta(
        rows.map((r) => r.id),
        total,
        window,
        hasMore,
      ),
    ),
    200,
  );
});

const nearby = createRoute({
  method: "get",
  path: "/locations/nearby",
  tags,
  summary: "Locations of every organization near a point, nearest first",
  description:
    "Public, for customer apps: no credential needed (anonymous calls count against the per-IP limit). Distances are great-circle (haversine) kilometres.",
  security: [...SECURITY.any, {}],
  request: {
    query: z.object({
      lat: QueryNumber.pipe(Latitude).openapi({ example: "48.8566" }),
      lon: QueryNumber.pipe(Longitude).openapi({ example: "2.3522" }),
      radiusKm: QueryNumber.pipe(z.number().gt(0).max(MAX_NEARBY_RADIUS_KM)).openapi({ example: "5" }),
      limit: QueryNumber.pipe(z.number().int().min(1).max(100)).optional().openapi({ description: "Default 20, maximum 100" }),
    }),
  },
  responses: { 200: jsonResponse(okEnvelope(z.array(NearbyLocation)), "Locations within the radius"), ...errors() },
});

app.openapi(nearby, async (c) => {
  const { lat, lon, radiusKm, limit } = c.req.valid("query");
  const found = await findNearby(deps(c), { latitude: lat, longitude: lon }, radiusKm, limit ?? 20);
  const data = found.map((f) => ({
    ...locationRecord(f.location),
    distanceKm: Math.round(f.distanceKm * 1000) / 1000,
    organization: { id: f.location.organizationId, name: f.organizationName },
  }));
  return c.json(ok(data), 200);
});

const update = createRoute({
  method: "patch",
  path: "/locations/{locationId}",
  tags,
  summary: "Change a location",
  description:
    "Any creation field except organizationId, and openingHours; null clears timezone (back to UTC), phone, email, openingHours (open all day) and defaultLanguage (the organization's).",
  security: SECURITY.any,
  request: {
    params: idParam("locationId", "loc"),
    body: jsonBody(
      z
        .strictObject({
          name: LocationFields.name.optional(),
          address: LocationFields.address.optional(),
          latitude: Latitude.optional(),
          longitude: Longitude.optional(),
          timezone: LocationFields.timezone,
          phone: LocationFields.phone,
          email: LocationFields.email,
          defaultLanguage: LocationFields.defaultLanguage,
          openingHours: OpeningHoursSchema.nullable()
            .optional()
            .openapi({ description: "Weekly opening hours in the location's timezone; null: open all day (the default)" }),
        })
        .openapi("UpdateLocationRequest"),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(LocationRecord), "Updated"), ...errors() },
});

app.openapi(update, async (c) => {
  const d = deps(c);
  const { row: current, actor } = guarded(c, "location", "LOCATION_MANAGE");
  const at = now();
  const patch = c.req.valid("json");
  await checkLocationLanguage(d, current.organizationId, patch.defaultLanguage);
  const row = await updateLocation(d, current, patch, at, auditOrigin(c, actor));
  // Closures and breaks are expanded in their location's timezone: the rooms' copies follow it.
  // Opening hours close the queues of the location's services outside them, like a closure.
  if (row.timezone !== current.timezone || JSON.stringify(row.openingHours) !== JSON.stringify(current.openingHours))
    await rulesChanged(deps(c), current.organizationId, at);
  return c.json(ok(locationRecord(row)), 200);
});

const remove = createRoute({
  method: "delete",
  path: "/locations/{locationId}",
  tags,
  summary: "Delete a location",
  description:
    "Permanent. Services linked only to this location are deleted with their queues (waiting tickets are cancelled); services linked to other locations too only lose this link.",
  security: SECURITY.any,
  request: { params: idParam("locationId", "loc") },
  responses: {
    200: jsonResponse(
      okEnvelope(
        z.object({
          id: z.string(),
          deleted: z.literal(true),
          deletedServiceIds: z.array(z.string()),
          deletedQueueIds: z.array(z.string()),
        }),
      ),
      "Deleted",
    ),
    ...errors(),
  },
});

app.openapi(remove, async (c) => {
  const d = deps(c);
  const { row: current, actor } = guarded(c, "location", "LOCATION_MANAGE");
  const { serviceIds, queueIds } = await deleteLocation(d, current, now(), auditOrigin(c, actor));
  await retireQueues(deps(c), queueIds, now());
  // Events of this location now take the organization's fallback timezone.
  await rulesChanged(deps(c), current.organizationId, now());
  return c.json(ok({ id: current.id, deleted: true as const, deletedServiceIds: serviceIds, deletedQueueIds: queueIds }), 200);
});

export default app;
