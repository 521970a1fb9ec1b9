import { createRoute, z } from "@hono/zod-openapi";
import { CUSTOMER_TEMPLATE_KEYS } from "../domain/message-templates";
import { LANGUAGES } from "../domain/notification-templates";
import { authorize } from "../http/auth";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { listMessageTemplates, previewMessageTemplate, resetMessageTemplate, saveMessageTemplate } from "./message-templates";
import { deps } from "../http/deps";

// The business's own words (docs/message-templates.md): every automatic message a customer
// receives, rewritten per organization and per queue, in each language, checked on save.

const app = router();
const tags = ["Notifications"];

const Key = z.enum(CUSTOMER_TEMPLATE_KEYS).openapi({ description: "The message", example: "ticket.called" });
const Language = z.enum(LANGUAGES).openapi({ example: "fr" });
const QueueId = z.string().min(1).max(64).openapi({ description: "A queue of the organization: its text wins over the organization's" });
const Title = z.string().max(100).openapi({
  description: "Push and in-app title; an SMS reads `title: body` (an empty title sends the body alone)",
  example: "C'est votre tour",
});
const Body = z
  .string()
  .trim()
  .min(1)
  .max(480)
  .openapi({
    description:
      "The text, with {variables} and optional clauses in [ … ] (dropped when a variable in them has no value). " +
      "At most 480 characters (three SMS segments in GSM-7)",
    example: "Ticket {code} : présentez-vous[ au {counter}]. Merci de votre patience !",
  });

const SmsCostRecord = z
  .object({
    encoding: z
      .enum(["GSM-7", "UCS-2"])
      .openapi({ description: "UCS-2 when a character is outside GSM-7: a segment then holds 70, not 160" }),
    segments: z
      .number()
      .int()
      .openapi({ description: "SMS segments billed per message (a template's text; variables change it a little)" }),
    characters: z.number().int(),
    nonGsmCharacters: z.array(z.string()).openapi({ description: "The characters that force UCS-2" }),
  })
  .openapi("SmsCost");

const MessageTemplateRecord = z
  .object({
    key: Key,
    language: Language,
    queueId: z.string().nullable(),
    source: z.enum(["default", "organization", "queue"]).openapi({ description: "Whose text is in force" }),
    title: z.string(),
    body: z.string(),
    variables: z.array(z.string()).openapi({ description: "The variables this message may use" }),
    requiredVariables: z.array(z.string()).openapi({ description: "The variables its body must contain outside [ … ]" }),
    sms: SmsCostRecord,
  })
  .openapi("MessageTemplate");

const OrgParam = idParam("organizationId", "org");
const KeyParams = OrgParam.extend({ templateKey: Key });
const base = "/organizations/{organizationId}/message-templates";

app.openapi(
  createRoute({
    method: "get",
    path: base,
    tags,
    summary: "The customer messages in force, every message and language, with their SMS cost (ORG_MANAGE)",
    security: SECURITY.any,
    request: {
      params: OrgParam,
      query: z.object({ queueId: QueueId.optional(), language: Language.optional(), templateKey: Key.optional() }),
    },
    responses: { 200: jsonResponse(okEnvelope(z.array(MessageTemplateRecord)), "The texts in force"), ...errors(404) },
  }),
  async (c) => {
    const { organizationId } = c.req.valid("param");
    const q = c.req.valid("query");
    await authorize(c, organizationId, "ORG_MANAGE");
    const list = await listMessageTemplates(deps(c), organizationId, {
      queueId: q.queueId ?? null,
      language: q.language ?? null,
      key: q.templateKey ?? null,
    });
    return c.json(ok(list), 200);
  },
);

app.openapi(
  createRoute({
    method: "put",
    path: `${base}/{templateKey}`,
    tags,
    summary: "Write the business's own text of a message, for the organization or one queue (ORG_MANAGE)",
    description:
      "An unknown variable, or a required one missing from the body, is refused with 400 naming the field and `details.variable`.",
    security: SECURITY.any,
    request: {
      params: KeyParams,
      body: jsonBody(
        z
          .strictObject({ language: Language, queueId: QueueId.nullable().optional(), title: Title.optional(), body: Body })
          .openapi("PutMessageTemplateRequest"),
      ),
    },
    responses: { 200: jsonResponse(okEnvelope(MessageTemplateRecord), "The text now in force"), ...errors(404) },
  }),
  async (c) => {
    const { organizationId, templateKey: key } = c.req.valid("param");
    const body = c.req.valid("json");
    await authorize(c, organizationId, "ORG_MANAGE");
    const queueId = body.queueId ?? null;
    // A title left out keeps the one in force (ours, or the organization's for a queue).
    const title = body.title ?? (await listMessageTemplates(deps(c), organizationId, { queueId, language: body.language, key }))[0]!.title;
    const saved = await saveMessageTemplate(
      deps(c),
      organizationId,
      key,
      { language: body.language, queueId, title, body: body.body },
      now(),
    );
    return c.json(ok(saved), 200);
  },
);

app.openapi(
  createRoute({
    method: "delete",
    path: `${base}/{templateKey}`,
    tags,
    summary: "Put a message back to the organization's text (for a queue) or ours (ORG_MANAGE)",
    security: SECURITY.any,
    request: { params: KeyParams, query: z.object({ language: Language, queueId: QueueId.optional() }) },
    responses: { 200: jsonResponse(okEnvelope(MessageTemplateRecord), "The text now in force"), ...errors(404) },
  }),
  async (c) => {
    const { organizationId, templateKey: key } = c.req.valid("param");
    const q = c.req.valid("query");
    await authorize(c, organizationId, "ORG_MANAGE");
    return c.json(ok(await resetMessageTemplate(deps(c), organizationId, key, { language: q.language, queueId: q.queueId ?? null })), 200);
  },
);

app.openapi(
  createRoute({
    method: "post",
    path: `${base}/{templateKey}/preview`,
    tags,
    summary: "A message rendered for a sample ticket, as the customer would receive it, with its SMS cost (ORG_MANAGE)",
    description: "Renders the text given (checked as a save would be), else the one in force. Changes nothing.",
    security: SECURITY.any,
    request: {
      params: KeyParams,
      body: jsonBody(
        z
          .strictObject({ language: Language, queueId: QueueId.nullable().optional(), title: Title.optional(), body: Body.optional() })
          .openapi("PreviewMessageTemplateRequest"),
      ),
    },
    responses: {
      200: jsonResponse(
        okEnvelope(
          z
            .object({
              title: z.string(),
              body: z.string(),
              smsText: z.string().openapi({ description: "The SMS as the provider receives it" }),
              sms: SmsCostRecord,
              source: z.enum(["default", "organization", "queue", "draft"]),
            })
            .openapi("MessageTemplatePreview"),
        ),
        "The rendered message",
      ),
      ...errors(404),
    },
  }),
  async (c) => {
    const { organizationId, templateKey: key } = c.req.valid("param");
    const body = c.req.valid("json");
    await authorize(c, organizationId, "ORG_MANAGE");
    const preview = await previewMessageTemplate(deps(c), organizationId, key, {
      language: body.language,
      queueId: body.queueId ?? null,
      title: body.title,
      body: body.body,
    });
    return c.json(ok(preview), 200);
  },
);

export default app;
