import { createRoute, z } from "@hono/zod-openapi";
import { INTAKE_KEY, INTAKE_REQUIRED, INTAKE_TYPES, MAX_INTAKE_FIELDS, MAX_INTAKE_OPTIONS } from "../domain/intake";
import { guarded } from "../access/guard";
import { authorizeOnQueue, queueOfCaller, ticketQueueOfCaller } from "./queue-access";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { locationsOfService } from "../catalog/location-scope";
import { deps } from "../http/deps";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { editAnswers, getIntake, putIntake, serviceForIntake } from "./intake";
import { getTicket, ticketRecord } from "./tickets";
import { IntakeAnswersBody, PublicLine } from "../http/schemas";
import { TicketRecord } from "./tickets.routes";
import { widgetActor } from "../widget/widget.routes";

// Intake questions per service and the answers on a ticket (docs/visits.md).

const app = router();
const tags = ["Services"];

const Label = z
  .strictObject({ fr: PublicLine(200), en: PublicLine(200) })
  .openapi({ example: { fr: "Motif de la visite", en: "Reason for the visit" } });

const IntakeFieldSchema = z
  .strictObject({
    key: z
      .string()
      .regex(INTAKE_KEY, "lowercase letters, digits and _, starting with a letter, at most 40")
      .openapi({ example: "reason", description: "How answers name the question: `intake.<key>`" }),
    label: Label,
    type: z.enum(INTAKE_TYPES),
    options: z
      .array(z.strictObject({ value: PublicLine(64), label: Label }))
      .min(1)
      .max(MAX_INTAKE_OPTIONS)
      .optional()
      .openapi({ description: `A select's choices (1–${MAX_INTAKE_OPTIONS}); only a select has options` }),
    required: z.enum(INTAKE_REQUIRED).default("never").openapi({
      description: "`at_join`: a join without it is refused (400 naming `intake.<key>`); `at_serve`: staff fill it in; `never`: optional",
    }),
    personal: z.boolean().default(false).openapi({
      description: "Personal data (an account number, a birth date): never sent to webhooks, erased by retention with the visitor's name",
    }),
  })
  .openapi("IntakeField");

const IntakeDefinition = z
  .object({
    serviceId: z.string(),
    fields: z.array(IntakeFieldSchema),
    updatedAt: z.string().nullable().openapi({ description: "null while the service has never had questions" }),
  })
  .openapi("ServiceIntake");

const EXAMPLE_FIELDS = [
  {
    key: "reason",
    label: { fr: "Motif de la visite", en: "Reason for the visit" },
    type: "select",
    options: [
      { value: "passport", label: { fr: "Passeport", en: "Passport" } },
      { value: "lost_card", label: { fr: "Carte perdue", en: "Lost card" } },
    ],
    required: "never",
    personal: false,
  },
  { key: "account", label: { fr: "Numéro de compte", en: "Account number" }, type: "text", required: "never", personal: true },
];

const ServiceParam = idParam("serviceId", "svc");

const put = createRoute({
  method: "put",
  path: "/services/{serviceId}/intake",
  tags,
  summary: "Set the questions a visitor answers when taking a ticket of this service",
  description:
    `Needs SERVICE_MANAGE. Replaces the whole list (at most ${MAX_INTAKE_FIELDS}; keys unique; a select needs options). ` +
    "Answers already given stay on their tickets. Every entry channel (app join, widget and kiosk, remote join, walk-in) takes " +
    "`intake {key: value}`; a QR or NFC scan gives none, so a service with an `at_join` question refuses scans.",
  security: SECURITY.any,
  request: {
    params: ServiceParam,
    body: jsonBody(
      z
        .strictObject({ fields: z.array(IntakeFieldSchema).max(MAX_INTAKE_FIELDS) })
        .openapi("PutServiceIntakeRequest", { example: { fields: EXAMPLE_FIELDS } }),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(IntakeDefinition), "The questions"), ...errors() },
});

app.openapi(put, async (c) => {
  const { row: service } = guarded(c, "service", "SERVICE_MANAGE");
  return c.json(ok(await putIntake(deps(c), service, c.req.valid("json").fields, now())), 200);
});

const get = createRoute({
  method: "get",
  path: "/services/{serviceId}/intake",
  tags,
  summary: "The questions of this service",
  description: "Needs SERVICE_VIEW (operators have it). `fields` is [] when the service asks nothing.",
  security: SECURITY.any,
  request: { params: ServiceParam },
  responses: { 200: jsonResponse(okEnvelope(IntakeDefinition), "The questions"), ...errors() },
});

app.openapi(get, async (c) => {
  const { row: service } = guarded(c, "service", "SERVICE_VIEW");
  return c.json(ok(await getIntake(deps(c), service)), 200);
});

const widgetGet = createRoute({
  method: "get",
  path: "/widget/queue/{queueId}/intake",
  tags: ["Widget"],
  summary: "The questions the widget or kiosk asks before joining this queue",
  description: "A `widget` key, or any key or member with read access to the organization. Send the answers as the join's `intake`.",
  security: SECURITY.any,
  request: { params: idParam("queueId", "que") },
  responses: { 200: jsonResponse(okEnvelope(IntakeDefinition), "The questions"), ...errors() },
});

app.openapi(widgetGet, async (c) => {
  const queue = await queueOfCaller(c, c.req.valid("param").queueId);
  await widgetActor(c, queue.organizationId, "read", { what: "Queue", at: () => locationsOfService(deps(c), queue.serviceId) });
  const service = await serviceForIntake(deps(c), queue.serviceId);
  return c.json(ok(await getIntake(deps(c), service)), 200);
});

const edit = createRoute({
  method: "patch",
  path: "/tickets/{ticketId}/intake",
  tags: ["Tickets"],
  summary: "Change a ticket's intake answers (staff)",
  description:
    "Needs QUEUE_OPERATE. Only the keys sent change; `null` clears an answer (not an `at_join` one). Each answer is checked " +
    "against the service's questions (400 naming `intake.<key>`). Emits `ticket.intake_updated`.",
  security: SECURITY.any,
  request: {
    params: idParam("ticketId", "tkt"),
    body: jsonBody(z.strictObject({ answers: IntakeAnswersBody }).openapi("EditTicketIntakeRequest")),
  },
  responses: { 200: jsonResponse(okEnvelope(TicketRecord), "The ticket"), ...errors() },
});

app.openapi(edit, async (c) => {
  const { ticketId } = c.req.valid("param");
  const queue = await ticketQueueOfCaller(c, ticketId);
  await authorizeOnQueue(c, queue, "QUEUE_OPERATE");
  const at = now();
  const ticket = await getTicket(deps(c), queue, ticketId, at);
  return c.json(ok(ticketRecord(await editAnswers(deps(c), queue, ticket, c.req.valid("json").answers, at))), 200);
});

export default app;
