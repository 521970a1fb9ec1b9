import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../db/client";
import { requireUser } from "../http/auth";
import { errors, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { createOrganization, organizationRecord, organizationsOfUser } from "../services/organizations";
import { OrganizationType, RoleSchema } from "./schemas";

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
    defaultLanguage: z.enum(["fr", "en"]),
    logoUrl: z.string().nullable(),
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
          name: z.string().trim().min(1).max(200),
          slug: Slug,
          type: OrganizationType.optional(),
          description: z.string().max(2000).nullable().optional(),
        })
        .openapi("CreateOrganizationRequest"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(OrganizationRecord), "Created"), ...errors(409) },
});

app.openapi(create, async (c) => {
  const { user } = requireUser(c);
  const org = await createOrganization(database(c.env.DB), user.id, c.req.valid("json"), now());
  return c.json(ok(organizationRecord(org)), 201);
});

const list = createRoute({
  method: "get",
  path: "/organizations",
  tags,
  summary: "Organizations the caller is a member of, with the caller's role",
  security: SECURITY.session,
  responses: {
    200: jsonResponse(okEnvelope(z.array(OrganizationRecord.extend({ role: RoleSchema }))), "Memberships"),
    ...errors(),
  },
});

app.openapi(list, async (c) => {
  const { user } = requireUser(c);
  const rows = await organizationsOfUser(database(c.env.DB), user.id);
  return c.json(ok(rows.map((r) => ({ ...organizationRecord(r.organization), role: r.role }))), 200);
});

export default app;
