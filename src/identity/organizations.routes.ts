import { createRoute, z } from "@hono/zod-openapi";
import { DATA_RETENTION_DEFAULT_DAYS, DATA_RETENTION_MAX_DAYS, DATA_RETENTION_MIN_DAYS } from "../domain/retention";
import { actorIn, authorize, requireUser } from "../http/auth";
import { notFound, validationError } from "../http/errors";
import { offeredLanguages } from "../domain/languages";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { keysetPageOf } from "../http/keyset";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import {
  createOrganization,
  deleteOrganization,
  findOrganization,
  organizationRecord,
  organizationsOfUser,
  transferOwnership,
  updateOrganization,
} from "./organizations";
import { Email, Language, OrganizationType, PublicLine, PublicParagraph, RoleSchema } from "../http/schemas";
import { deps } from "../http/deps";

const app = router();
const tags = ["Organizations"];

export const Slug = z
  .string()
  .min(2)
  .max(63)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, "lowercase letters, digits and single hyphens only");

export const AVAILABILITY_RADII = [0.1, 0.3, 0.5, 1, 2, 5, 10] as const;

export const OrganizationRecord = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    type: OrganizationType,
    description: z.string().nullable(),
    legalName: z.string().nullable(),
    siret: z.string().nullable(),
    vatNumber: z.string().nullable(),
    website: z.string().nullable(),
    billingEmail: z.string().nullable(),
    availabilityRadiusKm: z.number().nullable(),
    defaultLanguage: Language,
    languages: z.array(Language).openapi({
      description:
        "The languages the business offers its visitors, in the catalogue's order: the pages' language switch and the joins' `language` (a language not offered falls back to `defaultLanguage`). Every language of the catalogue unless set.",
    }),
    logoUrl: z.string().nullable(),
    dataRetentionDays: z
      .number()
      .int()
      .openapi({
        description: `Days after which visitors' personal data is anonymised (${DATA_RETENTION_MIN_DAYS}–${DATA_RETENTION_MAX_DAYS}; default ${DATA_RETENTION_DEFAULT_DAYS})`,
      }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Organization");

const create = createRoute({
  method: "post",
  path: "/organizations",
  tags,
  summary: "Create an organization; the caller becomes its owner",
  description: "The organization starts on the free starter plan.",
  security: SECURITY.session,
  request: {
    body: jsonBody(
      z
        .strictObject({
          name: PublicLine(200),
          slug: Slug,
          type: OrganizationType.optional(),
          description: PublicParagraph(2000).nullable().optional(),
        })
        .openapi("CreateOrganizationRequest"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(OrganizationRecord), "Created"), ...errors(409) },
});

app.openapi(create, async (c) => {
  const { user } = requireUser(c);
  const org = await createOrganization(deps(c), user.id, c.req.valid("json"), now());
  return c.json(ok(organizationRecord(org)), 201);
});

const list = createRoute({
  method: "get",
  path: "/organizations",
  tags,
  summary: "Organizations the caller is a member of, with the caller's role",
  security: SECURITY.session,
  request: { query: CursorQuery },
  responses: {
    200: jsonResponse(cursorListEnvelope(OrganizationRecord.extend({ role: RoleSchema })), "Memberships"),
    ...errors(),
  },
});

app.openapi(list, async (c) => {
  const { user } = requireUser(c);
  const window = listWindow(c.req.valid("query"));
  // A user belongs to a handful of organizations: one read, paged in memory.
  const all = await organizationsOfUser(deps(c), user.id);
  const { rows, hasMore } = keysetPageOf(all, window, (r) => r.organization.id);
  return c.json(
    okList(
      rows.map((r) => ({ ...organizationRecord(r.organization), role: r.role })),
      listMeta(
        rows.map((r) => r.organization.id),
        all.length,
        window,
        hasMore,
      ),
    ),
    200,
  );
});

const OrganizationParam = idParam("organizationId", "org");
const AvailabilityRadius = z
  .number()
  .refine((km) => (AVAILABILITY_RADII as readonly number[]).includes(km), `one of ${AVAILABILITY_RADII.join(", ")}`);
const HttpsUrl = z.url({ protocol: /^https$/, hostname: z.regexes.domain }).max(2048);

/** PATCH `languages`: at least one, each once; `null` offers the whole catalogue again (docs/languages.md). */
const OfferedLanguages = z
  .array(Language)
  .min(1)
  .refine((list) => new Set(list).size === list.length, "each language once")
  .nullable()
  .openapi({ description: "The languages the business offers (must include `defaultLanguage`); null: the whole catalogue" });

const get = createRoute({
  method: "get",
  path: "/organizations/{organizationId}",
  tags,
  summary: "One organization (any member, or any key of the organization but a widget key)",
  security: SECURITY.any,
  request: { params: OrganizationParam },
  responses: { 200: jsonResponse(okEnvelope(OrganizationRecord), "The organization"), ...errors() },
});

app.openapi(get, async (c) => {
  const { organizationId } = c.req.valid("param");
  await actorIn(c, organizationId);
  const org = await findOrganization(deps(c), organizationId);
  if (!org) throw notFound("Organization");
  return c.json(ok(organizationRecord(org)), 200);
});

const update = createRoute({
  method: "patch",
  path: "/organizations/{organizationId}",
  tags,
  summary: "Change an organization's details (ORG_MANAGE)",
  description: "Send only the fields to change; `null` clears an optional field.",
  security: SECURITY.any,
  request: {
    params: OrganizationParam,
    body: jsonBody(
      z
        .strictObject({
          name: PublicLine(200),
          legalName: PublicLine(200).nullable(),
          website: HttpsUrl.nullable(),
          billingEmail: Email.nullable(),
          availabilityRadiusKm: AvailabilityRadius.nullable().openapi({ enum: [...AVAILABILITY_RADII, null] }),
          siret: z.string().trim().min(1).max(32).nullable(),
          vatNumber: z.string().trim().min(1).max(32).nullable(),
          description: PublicParagraph(2000).nullable(),
          type: OrganizationType,
          defaultLanguage: Language,
          languages: OfferedLanguages,
          logoUrl: HttpsUrl.nullable(),
          dataRetentionDays: z.number().int().min(DATA_RETENTION_MIN_DAYS).max(DATA_RETENTION_MAX_DAYS),
        })
        .partial()
        .refine((body) => Object.keys(body).length > 0, { message: "send at least one field to change" })
        .openapi("UpdateOrganizationRequest"),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(OrganizationRecord), "Updated"), ...errors() },
});

app.openapi(update, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorize(c, organizationId, "ORG_MANAGE");
  const changes = c.req.valid("json");
  const d = deps(c);
  if (changes.languages !== undefined || changes.defaultLanguage !== undefined) {
    const current = await findOrganization(d, organizationId);
    if (!current) throw notFound("Organization");
    const offered = offeredLanguages(changes.languages === undefined ? current.languages : changes.languages);
    const fallback = changes.defaultLanguage ?? current.defaultLanguage;
    if (!offered.includes(fallback)) {
      throw changes.languages !== undefined
        ? validationError("languages", `must include the defaultLanguage (${fallback})`)
        : validationError("defaultLanguage", `must be one of the organization's languages: ${offered.join(", ")}`);
    }
  }
  const org = await updateOrganization(d, organizationId, changes, now());
  return c.json(ok(organizationRecord(org)), 200);
});

const remove = createRoute({
  method: "delete",
  path: "/organizations/{organizationId}",
  tags,
  summary: "Delete the organization and everything it owns (owner only, ORG_DELETE)",
  description: "Locations, services, queues (their live tickets are cancelled), members, API keys and the rest go with it.",
  security: SECURITY.session,
  request: { params: OrganizationParam },
  responses: {
    200: jsonResponse(okEnvelope(z.object({ id: z.string(), deleted: z.literal(true) })), "Deleted"),
    ...errors(),
  },
});

app.openapi(remove, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorize(c, organizationId, "ORG_DELETE");
  await deleteOrganization(deps(c), organizationId, now());
  return c.json(ok({ id: organizationId, deleted: true as const }), 200);
});

const transfer = createRoute({
  method: "post",
  path: "/organizations/{organizationId}/transfer-ownership",
  tags,
  summary: "Make another member the owner; the previous owner becomes an admin (ORG_TRANSFER)",
  security: SECURITY.session,
  request: {
    params: OrganizationParam,
    body: jsonBody(z.strictObject({ newOwnerId: z.string().min(1).max(64) }).openapi("TransferOwnershipRequest")),
  },
  responses: {
    200: jsonResponse(
      okEnvelope(
        z.object({ organizationId: z.string(), ownerId: z.string(), previousOwnerId: z.string(), previousOwnerRole: z.literal("admin") }),
      ),
      "Transferred",
    ),
    ...errors(409),
  },
});

app.openapi(transfer, async (c) => {
  const { organizationId } = c.req.valid("param");
  const { newOwnerId } = c.req.valid("json");
  await authorize(c, organizationId, "ORG_TRANSFER");
  const { user } = requireUser(c);
  await transferOwnership(deps(c), organizationId, user.id, newOwnerId, now());
  return c.json(ok({ organizationId, ownerId: newOwnerId, previousOwnerId: user.id, previousOwnerRole: "admin" as const }), 200);
});

export default app;
