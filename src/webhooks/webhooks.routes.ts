import { createRoute, z } from "@hono/zod-openapi";
import { WEBHOOK_EVENT_NAMES } from "../domain/webhooks";
import { API_VERSIONS } from "../domain/api-versions";
import { authorize, type Actor } from "../http/auth";
import { auditOrigin } from "../http/audit-origin";
import { permissionRefused } from "../http/permission-refusal";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import {
  createWebhook,
  deleteWebhook,
  deliveryRecord,
  findWebhook,
  listDeliveries,
  listWebhooks,
  redeliver,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
  webhookRecord,
} from "./webhooks";
import { PublicParagraph } from "../http/schemas";
import { deps } from "../http/deps";

const app = router();

/** Full personal data in deliveries is the organization's decision: owners, admins, admin keys (issue 40). */
function requirePersonalDataGrant(actor: Actor): void {
  if (!actor.can("ORG_MANAGE")) throw permissionRefused("ORG_MANAGE", actor);
}
const tags = ["Webhooks"];

const Webhook = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    enabled: z.boolean(),
    disabledReason: z.string().nullable().openapi({ description: "Why the service turned the subscription off (3 days of failures)" }),
    includePersonalData: z.boolean().openapi({
      description: "Deliveries carry the visitor's full phone and e-mail; otherwise phoneMasked and no e-mail (from version 2026-11-28)",
    }),
    apiVersion: z.enum(API_VERSIONS).openapi({
      description:
        "The API version of the payloads: the request's version at creation (subscriptions made before 2026-11-28 answer 2026-11-01); PATCH moves it",
    }),
    previousSecretExpiresAt: z
      .string()
      .nullable()
      .openapi({ description: "Until then the secret replaced by the last rotation signs too" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Webhook");

const WithSecret = Webhook.extend({
  secret: z
    .string()
    .openapi({ description: "The signing secret (whsec_…), shown only in this answer", example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }),
});

const Delivery = z
  .object({
    id: z.string(),
    webhookId: z.string(),
    eventId: z.string().openapi({ description: "Also the webhook-id header and the body's id" }),
    eventType: z.string(),
    status: z.enum(["pending", "succeeded", "failed"]),
    attempts: z.number().int(),
    responseStatus: z.number().int().nullable(),
    durationMs: z.number().int().nullable(),
    lastError: z.string().nullable(),
    nextAttemptAt: z.string().nullable(),
    redeliveryOf: z.string().nullable(),
    createdAt: z.string(),
    completedAt: z.string().nullable(),
  })
  .openapi("WebhookDelivery");

const Url = z.string().max(2048).openapi({
  description:
    "https only, a public host name on port 443 (with ENVIRONMENT=development also http(s) to 127.0.0.1, localhost or [::1], any port)",
  example: "https://hooks.example.com/queue",
});
const Events = z
  .array(z.enum(WEBHOOK_EVENT_NAMES))
  .min(1)
  .max(WEBHOOK_EVENT_NAMES.length)
  .openapi({ description: "Event types to receive, or `*` for all (see docs/webhooks.md)" });
const Description = PublicParagraph(500).trim();

const IncludePersonalData = z.boolean().openapi({
  description: "Full phone numbers and e-mails in deliveries (owner/admin sessions or admin keys only; audited). Default false.",
});
const CreateBody = z
  .strictObject({
    url: Url,
    events: Events,
    description: Description.optional(),
    enabled: z.boolean().optional(),
    includePersonalData: IncludePersonalData.optional(),
  })
  .openapi("CreateWebhookRequest");
const UpdateBody = z
  .strictObject({
    url: Url.optional(),
    events: Events.optional(),
    description: Description.nullable().optional(),
    enabled: z.boolean().optional(),
    includePersonalData: IncludePersonalData.optional(),
    apiVersion: z.enum(API_VERSIONS).optional().openapi({ description: "Move the subscription's payloads to this version" }),
  })
  .openapi("UpdateWebhookRequest");

const OrgParam = idParam("organizationId", "org");
const HookParams = OrgParam.extend(idParam("webhookId", "whk").shape);
const DeliveryParams = HookParams.extend(idParam("deliveryId", "dlv").shape);
const base = "/organizations/{organizationId}/webhooks";
const access = "Scope `manage:webhooks` (or an `admin` key), or an owner/admin session.";

app.openapi(
  createRoute({
    method: "post",
    path: base,
    tags,
    summary: "Subscribe an endpoint to events; the signing secret is in the answer only this once",
    description: `${access} The URL must pass the outbound guard (https, public host, public addresses). The plan's webhook quota applies (403 QUOTA_EXCEEDED).`,
    security: SECURITY.any,
    request: { params: OrgParam, body: jsonBody(CreateBody) },
    responses: { 201: jsonResponse(okEnvelope(WithSecret), "Subscribed"), ...errors() },
  }),
  async (c) => {
    const { organizationId } = c.req.valid("param");
    const actor = await authorize(c, organizationId, "WEBHOOK_MANAGE");
    const body = c.req.valid("json");
    if (body.includePersonalData) requirePersonalDataGrant(actor);
    const { row, secret } = await createWebhook(
      deps(c),
      organizationId,
      { ...body, apiVersion: c.get("apiVersion") },
      now(),
      auditOrigin(c, actor),
    );
    return c.json(ok({ ...webhookRecord(row), secret }), 201);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: base,
    tags,
    summary: "The organization's webhook subscriptions, newest first",
    description: access,
    security: SECURITY.any,
    request: { params: OrgParam, query: CursorQuery },
    responses: { 200: jsonResponse(cursorListEnvelope(Webhook), "Subscriptions"), ...errors() },
  }),
  async (c) => {
    const { organizationId } = c.req.valid("param");
    await authorize(c, organizationId, "WEBHOOK_MANAGE");
    const window = listWindow(c.req.valid("query"));
    const { rows, total, hasMore } = await listWebhooks(deps(c), organizationId, window);
    return c.json(
      okList(
        rows.map(webhookRecord),
        listMeta(
          rows.map((r) => r.id),
          total,
          window,
          hasMore,
        ),
      ),
      200,
    );
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: `${base}/{webhookId}`,
    tags,
    summary: "One webhook subscription",
    description: access,
    security: SECURITY.any,
    request: { params: HookParams },
    responses: { 200: jsonResponse(okEnvelope(Webhook), "The subscription"), ...errors() },
  }),
  async (c) => {
    const { organizationId, webhookId } = c.req.valid("param");
    await authorize(c, organizationId, "WEBHOOK_MANAGE", "Webhook");
    return c.json(ok(webhookRecord(await findWebhook(deps(c), organizationId, webhookId))), 200);
  },
);

app.openapi(
  createRoute({
    method: "patch",
    path: `${base}/{webhookId}`,
    tags,
    summary: "Change a subscription's URL, events, description, or turn it on or off",
    description: `${access} Enabling a subscription the service disabled clears its reason and failure streak.`,
    security: SECURITY.any,
    request: { params: HookParams, body: jsonBody(UpdateBody) },
    responses: { 200: jsonResponse(okEnvelope(Webhook), "Updated"), ...errors() },
  }),
  async (c) => {
    const { organizationId, webhookId } = c.req.valid("param");
    const actor = await authorize(c, organizationId, "WEBHOOK_MANAGE", "Webhook");
    const body = c.req.valid("json");
    if (body.includePersonalData) requirePersonalDataGrant(actor);
    return c.json(ok(webhookRecord(await updateWebhook(deps(c), organizationId, webhookId, body, now(), auditOrigin(c, actor)))), 200);
  },
);

app.openapi(
  createRoute({
    method: "delete",
    path: `${base}/{webhookId}`,
    tags,
    summary: "Delete a subscription and its delivery log",
    description: access,
    security: SECURITY.any,
    request: { params: HookParams },
    responses: { 200: jsonResponse(okEnvelope(Webhook), "Deleted"), ...errors() },
  }),
  async (c) => {
    const { organizationId, webhookId } = c.req.valid("param");
    const actor = await authorize(c, organizationId, "WEBHOOK_MANAGE", "Webhook");
    return c.json(ok(webhookRecord(await deleteWebhook(deps(c), organizationId, webhookId, now(), auditOrigin(c, actor)))), 200);
  },
);

app.openapi(
  createRoute({
    method: "post",
    path: `${base}/{webhookId}/rotate-secret`,
    tags,
    summary: "A new signing secret, shown once; the old one keeps signing for 24 h",
    description: `${access} During the overlap every delivery carries two signatures (space-separated in webhook-signature).`,
    security: SECURITY.any,
    request: { params: HookParams },
    responses: { 200: jsonResponse(okEnvelope(WithSecret), "Rotated"), ...errors(409) },
  }),
  async (c) => {
    const { organizationId, webhookId } = c.req.valid("param");
    const actor = await authorize(c, organizationId, "WEBHOOK_MANAGE", "Webhook");
    const { row, secret } = await rotateWebhookSecret(deps(c), organizationId, webhookId, now(), auditOrigin(c, actor));
    return c.json(ok({ ...webhookRecord(row), secret }), 200);
  },
);

app.openapi(
  createRoute({
    method: "post",
    path: `${base}/{webhookId}/test`,
    tags,
    summary: "Send a webhook.test event to this endpoint",
    description: `${access} Queued like any delivery (signed, retried); follow it in the deliveries list.`,
    security: SECURITY.any,
    request: { params: HookParams },
    responses: { 202: jsonResponse(okEnvelope(Delivery), "Queued"), ...errors() },
  }),
  async (c) => {
    const { organizationId, webhookId } = c.req.valid("param");
    await authorize(c, organizationId, "WEBHOOK_MANAGE", "Webhook");
    return c.json(ok(deliveryRecord(await sendTestEvent(deps(c), organizationId, webhookId, now()))), 202);
  },
);

app.openapi(
  createRoute({
    method: "get",
    path: `${base}/{webhookId}/deliveries`,
    tags,
    summary: "The subscription's deliveries, newest first",
    description: `${access} Status pending (being tried), succeeded (a 2xx answer) or failed (24 h of failures, or the subscription was disabled).`,
    security: SECURITY.any,
    request: { params: HookParams, query: CursorQuery },
    responses: { 200: jsonResponse(cursorListEnvelope(Delivery), "Deliveries"), ...errors() },
  }),
  async (c) => {
    const { organizationId, webhookId } = c.req.valid("param");
    await authorize(c, organizationId, "WEBHOOK_MANAGE", "Webhook");
    const window = listWindow(c.req.valid("query"));
    const { rows, total, hasMore } = await listDeliveries(deps(c), organizationId, webhookId, window);
    return c.json(
      okList(
        rows.map(deliveryRecord),
        listMeta(
          rows.map((r) => r.id),
          total,
          window,
          hasMore,
        ),
      ),
      200,
    );
  },
);

app.openapi(
  createRoute({
    method: "post",
    path: `${base}/{webhookId}/deliveries/{deliveryId}/redeliver`,
    tags,
    summary: "Send a delivery's event again",
    description: `${access} A new delivery with the same body and webhook-id (receivers that de-duplicate by id will ignore it if they already have it).`,
    security: SECURITY.any,
    request: { params: DeliveryParams },
    responses: { 202: jsonResponse(okEnvelope(Delivery), "Queued"), ...errors() },
  }),
  async (c) => {
    const { organizationId, webhookId, deliveryId } = c.req.valid("param");
    await authorize(c, organizationId, "WEBHOOK_MANAGE", "Webhook");
    return c.json(ok(deliveryRecord(await redeliver(deps(c), organizationId, webhookId, deliveryId, now()))), 202);
  },
);

export default app;
