import { createRoute, z } from "@hono/zod-openapi";
import { authorize } from "../http/auth";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { deleteWhatsappSettings, requireWhatsappSettings, saveWhatsappSettings } from "./whatsapp";
import { deps } from "../http/deps";

// The organization's WhatsApp Business number on Meta's Cloud API and its approved templates
// (docs/notifications.md, "WhatsApp"). The access token and app secret are the platform's
// (WHATSAPP_TOKEN, WHATSAPP_APP_SECRET), never an organization's.

const app = router();
const tags = ["Notifications"];

const TemplateName = z
  .string()
  .regex(/^[a-z0-9_]{1,512}$/, "a template name as Meta spells it: lower-case letters, digits and underscores")
  .nullable()
  .openapi({ example: "ticket_called" });

const Templates = z
  .strictObject({
    joined: TemplateName.optional().openapi({ description: "ticket.created: body {{1}} ticket code, {{2}} queue name" }),
    called: TemplateName.optional().openapi({ description: "ticket.called: body {{1}} ticket code, {{2}} queue name" }),
    almostCalled: TemplateName.optional().openapi({ description: "ticket.almost_called: body {{1}} ticket code, {{2}} queue name" }),
    reminder: TemplateName.optional().openapi({
      description: "ticket.recalled (the call repeated): body {{1}} ticket code, {{2}} queue name",
    }),
  })
  .openapi({
    description:
      "Names of the organization's approved templates, each in fr and en, with two body variables and three quick-reply " +
      "buttons in this order: Here, Late, Cancel (their payloads are ICI/RETARD/ANNULER or HERE/LATE/CANCEL). A message " +
      "without a template is sent as free text, which Meta delivers only within 24 hours of the customer's last message; " +
      "as for SMS, nothing more is sent to a number whose first message (the join's) did not go out, so set `joined` for " +
      "customers who join elsewhere than in the chat",
  });

const WhatsappSettingsRecord = z
  .object({
    phoneNumberId: z
      .string()
      .openapi({ description: "Meta's id of the business number (messages are sent from it; inbound ones name it)" }),
    phoneNumber: z.string().openapi({ description: "The business number in E.164 (wa.me links)", example: "+2250700000000" }),
    templates: z.object({
      joined: z.string().nullable(),
      called: z.string().nullable(),
      almostCalled: z.string().nullable(),
      reminder: z.string().nullable(),
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("WhatsappSettings");

const SaveBody = z
  .strictObject({
    phoneNumberId: z
      .string()
      .regex(/^[0-9]{5,32}$/, "Meta's numeric phone number id")
      .openapi({ example: "106540352242922" }),
    phoneNumber: z
      .string()
      .regex(/^\+[1-9][0-9]{6,14}$/, "an E.164 number: + then country code and number")
      .openapi({ example: "+2250700000000" }),
    templates: Templates.optional(),
  })
  .openapi("SaveWhatsappSettingsRequest");

const OrgParam = idParam("organizationId", "org");
const path = "/organizations/{organizationId}/whatsapp";

app.openapi(
  createRoute({
    method: "get",
    path,
    tags,
    summary: "The organization's WhatsApp number and templates (ORG_MANAGE); 404 when none is connected",
    security: SECURITY.any,
    request: { params: OrgParam },
    responses: { 200: jsonResponse(okEnvelope(WhatsappSettingsRecord), "The configuration"), ...errors() },
  }),
  async (c) => {
    const { organizationId } = c.req.valid("param");
    await authorize(c, organizationId, "ORG_MANAGE");
    return c.json(ok(await requireWhatsappSettings(deps(c), organizationId)), 200);
  },
);

app.openapi(
  createRoute({
    method: "put",
    path,
    tags,
    summary: "Connect or change the organization's WhatsApp number and templates (ORG_MANAGE, owner and admin)",
    description:
      "A phone number id connected to another organization is 409 CONFLICT: inbound messages find their organization by it. " +
      "Templates left out are none (free text only).",
    security: SECURITY.any,
    request: { params: OrgParam, body: jsonBody(SaveBody) },
    responses: { 200: jsonResponse(okEnvelope(WhatsappSettingsRecord), "The configuration in force"), ...errors() },
  }),
  async (c) => {
    const { organizationId } = c.req.valid("param");
    await authorize(c, organizationId, "ORG_MANAGE");
    return c.json(ok(await saveWhatsappSettings(deps(c), organizationId, c.req.valid("json"), now())), 200);
  },
);

app.openapi(
  createRoute({
    method: "delete",
    path,
    tags,
    summary: "Disconnect the organization's WhatsApp number (ORG_MANAGE)",
    security: SECURITY.any,
    request: { params: OrgParam },
    responses: {
      200: jsonResponse(okEnvelope(z.object({ deleted: z.literal(true) })), "Disconnected: tickets that chose WhatsApp fall back to SMS"),
      ...errors(),
    },
  }),
  async (c) => {
    const { organizationId } = c.req.valid("param");
    await authorize(c, organizationId, "ORG_MANAGE");
    await deleteWhatsappSettings(deps(c), organizationId);
    return c.json(ok({ deleted: true as const }), 200);
  },
);

export default app;
