import { createRoute, z } from "@hono/zod-openapi";
import { ROUTE_ENTRIES } from "../domain/visit-route";
import { auditOrigin, requestAuditOrigin } from "../http/audit-origin";
import { authorize, organizationOfRequest } from "../http/auth";
import { authorizeResources, guarded } from "../access/guard";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { retireQueues } from "../tickets/queue-rooms";
import { rulesChanged, serviceChanged } from "../tickets/room-rules";
import { BookingSettingsSchema } from "../appointments/appointments.routes";
import {
  createService,
  deleteService,
  listServices,
  listServiceTypes,
  organizationOfLocations,
  serviceRecords,
  updateService,
} from "./services";
import { OrganizationType, PublicLine, PublicParagraph } from "../http/schemas";
import { deps } from "../http/deps";

const app = router();
const tags = ["Services"];

const SERVICE_STATUSES = ["active", "inactive", "pending", "rejected"] as const;
const ServiceStatus = z.enum(SERVICE_STATUSES);

const LocationIds = z
  .array(z.string().min(1).max(64))
  .min(1)
  .max(100)
  .transform((ids) => [...new Set(ids)])
  .openapi({ description: "At least one location of the organization; duplicates are ignored" });

const RouteEntrySchema = z.enum(ROUTE_ENTRIES).openapi({
  description:
    "Where a visitor coming from an earlier service of the same visit enters this service's line: `front` (first), or `original_time` (the place their first join earned; the default). docs/visits.md",
});

const ServiceFields = {
  name: PublicLine(200),
  locationIds: LocationIds,
  serviceTypeId: z.string().min(1).max(64).openapi({ example: "st_bank_teller" }),
  description: PublicParagraph(2000).nullable().optional(),
  isVirtual: z.boolean().optional(),
  maxRemoteJoinRadiusKm: z.number().gt(0).max(100).nullable().optional().openapi({ description: "Over 0, at most 100" }),
  routeEntry: RouteEntrySchema.optional(),
};

export const ServiceType = z
  .object({ id: z.string(), name: z.object({ fr: z.string(), en: z.string() }), organizationType: OrganizationType })
  .openapi("ServiceType");

export const ServiceRecord = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    serviceTypeId: z.string(),
    isVirtual: z.boolean(),
    maxRemoteJoinRadiusKm: z.number().nullable(),
    status: ServiceStatus,
    booking: BookingSettingsSchema.nullable().openapi({
      description: "Booking settings; null: takes no appointments (docs/appointments.md)",
    }),
    routeEntry: RouteEntrySchema,
    locationIds: z.array(z.string()),
    queues: z.array(z.object({ id: z.string(), name: z.string(), letter: z.string(), status: z.enum(["active", "paused", "closed"]) })),
    statistics: z.object({
      queueCount: z.number().int(),
      waitingCount: z.number().int().openapi({ description: "Waiting tickets in the service's queues" }),
      servedToday: z.number().int().openapi({ description: "Tickets served since 00:00 UTC" }),
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Service");

const types = createRoute({
  method: "get",
  path: "/services/types",
  tags,
  summary: "The predefined service types for an organization type",
  description:
    "Public reference data. The types of that organization type plus the `other` types, which fit every organization; without organizationType, every type.",
  security: [...SECURITY.any, {}],
  request: { query: z.object({ organizationType: OrganizationType.optional() }) },
  responses: { 200: jsonResponse(okEnvelope(z.array(ServiceType)), "Service types"), ...errors() },
});

app.openapi(types, async (c) => {
  const { organizationType } = c.req.valid("query");
  return c.json(ok(await listServiceTypes(deps(c), organizationType)), 200);
});

const search = createRoute({
  method: "get",
  path: "/services/organization/search",
  tags,
  summary: "Search an organization's services by name",
  description:
    "Needs SERVICE_VIEW (operators included; they see every service of the organization). activeOnly defaults to true; false returns every status.",
  security: SECURITY.any,
  request: {
    query: CursorQuery.extend({
      organizationId: z.string().min(1).max(64),
      q: z.string().trim().max(200).optional(),
      activeOnly: z
        .enum(["true", "false"])
        .default("true")
        .transform((v) => v === "true")
        .openapi({ description: "Default true" }),
    }),
  },
  responses: { 200: jsonResponse(cursorListEnvelope(ServiceRecord), "Matching services, oldest first"), ...errors() },
});

app.openapi(search, async (c) => {
  const { organizationId, q, activeOnly, ...page } = c.req.valid("query");
  const actor = await authorize(c, organizationId, "SERVICE_VIEW");
  const d = deps(c);
  const window = listWindow(page);
  const { rows, total, hasMore } = await listServices(d, organizationId, window, {
    q: q || undefined,
    statuses: activeOnly ? ["active"] : undefined,
    scope: actor.locationIds,
  });
  return c.json(
    okList(
      await serviceRecords(d, rows, now()),
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

const create = createRoute({
  method: "post",
  path: "/services",
  tags,
  summary: "Create a service at one or more locations",
  description:
    "The organization is the one the locations belong to (all of them must); the caller needs SERVICE_MANAGE there. The starter plan allows one service: the second is 402 PLAN_REQUIRED.",
  security: SECURITY.any,
  request: { body: jsonBody(z.strictObject(ServiceFields).openapi("CreateServiceRequest")) },
  responses: { 201: jsonResponse(okEnvelope(ServiceRecord), "Created, status active"), ...errors(402) },
});

app.openapi(create, async (c) => {
  const input = c.req.valid("json");
  const d = deps(c);
  // A scoped manager offers services at their own locations only (issue 31).
  const organizationId = await organizationOfLocations(d, input.locationIds, (org) => authorize(c, org, "SERVICE_MANAGE"));
  await authorizeResources(c, "SERVICE_MANAGE", { locationIds: input.locationIds });
  const at = now();
  const row = await createService(d, organizationId, input, at, requestAuditOrigin(c));
  const [record] = await serviceRecords(d, [row], at);
  return c.json(ok(record!), 201);
});

const IdsFilter = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((id) => id.trim())
      .filter((id) => id !== ""),
  )
  .pipe(z.array(z.string().max(64)).max(100, "at most 100 ids"))
  .optional()
  .openapi({ description: "Comma-separated service ids (at most 100)", type: "string" });

const listOwn = createRoute({
  method: "get",
  path: "/business/services",
  tags,
  summary: "The services of the caller's organization, with queues and statistics",
  description:
    "Organization from the API key, X-Organization-Id, or the user's only membership. Needs SERVICE_VIEW. Every status is listed.",
  security: SECURITY.any,
  request: { query: CursorQuery.extend({ ids: IdsFilter }) },
  responses: { 200: jsonResponse(cursorListEnvelope(ServiceRecord), "A page of services, oldest first"), ...errors() },
});

app.openapi(listOwn, async (c) => {
  const { ids, ...page } = c.req.valid("query");
  const organizationId = await organizationOfRequest(c);
  const actor = await authorize(c, organizationId, "SERVICE_VIEW");
  const d = deps(c);
  const window = listWindow(page);
  const { rows, total, hasMore } = await listServices(d, organizationId, window, { ids, scope: actor.locationIds });
  return c.json(
    okList(
      await serviceRecords(d, rows, now()),
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

const ServiceId = idParam("serviceId", "svc");

function serviceOf(c: Parameters<typeof authorize>[0], permission: "SERVICE_VIEW" | "SERVICE_MANAGE") {
  return { d: deps(c), ...guarded(c, "service", permission) };
}

const get = createRoute({
  method: "get",
  path: "/services/{serviceId}",
  tags,
  summary: "A service with its locations, queues and statistics",
  description: "Needs SERVICE_VIEW in the service's organization.",
  security: SECURITY.any,
  request: { params: ServiceId },
  responses: { 200: jsonResponse(okEnvelope(ServiceRecord), "The service"), ...errors() },
});

app.openapi(get, async (c) => {
  const { d, row } = serviceOf(c, "SERVICE_VIEW");
  const [record] = await serviceRecords(d, [row], now());
  return c.json(ok(record!), 200);
});

const update = createRoute({
  method: "patch",
  path: "/services/{serviceId}",
  tags,
  summary: "Change a service",
  description:
    "Any creation field, and status (active, inactive, pending, rejected; only active services take new tickets). locationIds replaces every link. null clears description and maxRemoteJoinRadiusKm.",
  security: SECURITY.any,
  request: {
    params: ServiceId,
    body: jsonBody(
      z
        .strictObject({
          name: ServiceFields.name.optional(),
          locationIds: LocationIds.optional(),
          serviceTypeId: ServiceFields.serviceTypeId.optional(),
          description: ServiceFields.description,
          isVirtual: ServiceFields.isVirtual,
          maxRemoteJoinRadiusKm: ServiceFields.maxRemoteJoinRadiusKm,
          routeEntry: ServiceFields.routeEntry,
          status: ServiceStatus.optional(),
          booking: BookingSettingsSchema.nullable()
            .optional()
            .openapi({ description: "Booking settings (missing fields take their defaults); null: no appointments" }),
        })
        .openapi("UpdateServiceRequest"),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(ServiceRecord), "Updated"), ...errors() },
});

app.openapi(update, async (c) => {
  const { d, row, actor } = serviceOf(c, "SERVICE_MANAGE");
  const input = c.req.valid("json");
  // Every new location must be the caller's too (a scoped manager moves a service among theirs).
  if (actor.locationIds !== null && input.locationIds?.length)
    await authorizeResources(c, "SERVICE_MANAGE", { locationIds: input.locationIds });
  const at = now();
  const updated = await updateService(d, row, input, at, auditOrigin(c, actor));
  await serviceChanged(deps(c), row, updated, at, input.status !== undefined);
  // Its locations' opening hours close its queues: new links, new hours (docs/appointments.md).
  if (c.req.valid("json").locationIds) await rulesChanged(deps(c), row.organizationId, at, { serviceId: row.id });
  const [record] = await serviceRecords(d, [updated], at);
  return c.json(ok(record!), 200);
});

const remove = createRoute({
  method: "delete",
  path: "/services/{serviceId}",
  tags,
  summary: "Delete a service and its queues",
  description: "Permanent. The queues' waiting tickets are cancelled; served history stays readable in analytics.",
  security: SECURITY.any,
  request: { params: ServiceId },
  responses: {
    200: jsonResponse(okEnvelope(z.object({ id: z.string(), deleted: z.literal(true), deletedQueueIds: z.array(z.string()) })), "Deleted"),
    ...errors(),
  },
});

app.openapi(remove, async (c) => {
  const { d, row } = serviceOf(c, "SERVICE_MANAGE");
  const queueIds = await deleteService(d, row, now(), requestAuditOrigin(c));
  await retireQueues(deps(c), queueIds, now());
  return c.json(ok({ id: row.id, deleted: true as const, deletedQueueIds: queueIds }), 200);
});

export default app;
