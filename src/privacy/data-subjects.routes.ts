import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { auditOrigin } from "../http/audit-origin";
import { authorize } from "../http/auth";
import type { AppEnv } from "../http/context";
import { validationError } from "../http/errors";
import { errors, idParam, jsonResponse, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { E164_PHONE, Email } from "../http/schemas";
import { now } from "../lib/clock";
import { eraseDataSubject, exportDataSubject, type DataSubject } from "./data-subjects";
import { deps } from "../http/deps";

// A person's data on request (docs/personal-data.md): owners and admins (or a key with `admin`);
// each request is itself audited, without the data.

const app = router();
const tags = ["Personal data"];

const OrganizationParam = idParam("organizationId", "org");

const SubjectBody = z
  .strictObject({
    phone: z
      .string()
      .regex(E164_PHONE, "an E.164 phone number: + then country code and number, no spaces, e.g. +33612345678")
      .optional()
      .openapi({ example: "+33612345678" }),
    email: Email.optional().openapi({ example: "awa.diallo@example.com" }),
  })
  .openapi("DataSubject", { description: "The person, by their phone number (E.164) and/or e-mail address: at least one" });

const Rows = z.array(z.record(z.string(), z.unknown()));

const SubjectTicket = z.object({
  id: z.string(),
  queueId: z.string(),
  displayCode: z.string().nullable(),
  status: z.string(),
  source: z.string(),
  visitorName: z.string().nullable(),
  phone: z.string().nullable(),
  partySize: z.number().int(),
  intake: z.unknown(),
  intakePersonal: z.unknown(),
  labels: z.unknown(),
  outcome: z.string().nullable(),
  note: z.string().nullable(),
  remoteJoinLocation: z
    .object({ latitude: z.number().nullable(), longitude: z.number().nullable(), accuracyM: z.number().nullable(), at: z.string() })
    .nullable(),
  heldIn: z
    .enum(["room", "history"])
    .openapi({ description: "room: the queue's live line (or finished in the last day); history: the D1 record" }),
  createdAt: z.string().nullable(),
  updatedAt: z.string().nullable(),
});

const SubjectExport = z
  .object({
    requestId: z.string().openapi({ description: "The audit log's entity id for this export" }),
    organizationId: z.string(),
    subject: z.object({ phone: z.string().nullable(), email: z.string().nullable() }),
    generatedAt: z.string(),
    accounts: z.array(z.string()).openapi({ description: "Customer accounts (usr_…) registered with the e-mail" }),
    tickets: z.array(SubjectTicket),
    appointments: Rows,
    ticketMessages: Rows,
    notificationDeliveries: Rows,
    inAppNotifications: Rows,
    optOuts: Rows,
    visitorPushSubscriptions: Rows,
    phoneVerifications: Rows,
    inboundThreads: Rows,
    webhookDeliveries: Rows,
    events: Rows,
    entryScans: Rows,
    remoteJoinExpiries: Rows,
    smsCounters: Rows,
    auditEvents: Rows,
  })
  .openapi("DataSubjectExport");

const SubjectErasure = z
  .object({
    requestId: z.string().openapi({ description: "The audit log's entity id for this erasure" }),
    erasedAt: z.string(),
    matchedBy: z.array(z.enum(["phone", "email"])),
    tickets: z.number().int().openapi({ description: "The person's tickets found (each now anonymised)" }),
    ticketsAnonymised: z.number().int().openapi({ description: "Tickets changed by this request (0 when repeated)" }),
    ticketMessages: z.number().int(),
    notificationDeliveries: z.number().int(),
    webhookDeliveries: z.number().int(),
    events: z.number().int(),
    optOuts: z.number().int(),
    visitorPushSubscriptions: z.number().int(),
    phoneVerifications: z.number().int(),
    inboundThreads: z.number().int(),
    smsCounters: z.number().int(),
    inAppNotifications: z.number().int(),
    entryScans: z.number().int(),
    remoteJoinExpiries: z.number().int(),
    appointments: z.number().int(),
  })
  .openapi("DataSubjectErasure");

/** Owners and admins (whose role always spans the whole organization) and keys with `admin`. */
async function privacyOfficer(c: Context<AppEnv>, organizationId: string) {
  return authorize(c, organizationId, "ORG_MANAGE");
}

function subjectOf(body: z.infer<typeof SubjectBody>): DataSubject {
  if (body.phone === undefined && body.email === undefined) throw validationError("phone", "give the person's phone, e-mail, or both");
  return { phone: body.phone ?? null, email: body.email ?? null };
}

const exportRoute = createRoute({
  method: "post",
  path: "/organizations/{organizationId}/data-subjects/export",
  tags,
  summary: "Everything the organization holds about a person, as one JSON document (owners, admins; audited)",
  description:
    "Tickets (live ones read from their queue's line), intake answers, labels and outcomes, appointments, text messages, notification " +
    "deliveries, opt-outs, push subscriptions, events and webhook deliveries that carry them, and audit entries naming them. " +
    "Only this organization's records; another organization's data about the same number is never read. See docs/personal-data.md.",
  security: SECURITY.any,
  request: { params: OrganizationParam, body: { required: true, content: { "application/json": { schema: SubjectBody } } } },
  responses: {
    200: jsonResponse(z.object({ success: z.literal(true), data: SubjectExport }), "The person's data"),
    ...errors(),
  },
});

app.openapi(exportRoute, async (c) => {
  const { organizationId } = c.req.valid("param");
  const actor = await privacyOfficer(c, organizationId);
  const subject = subjectOf(c.req.valid("json"));
  const document = await exportDataSubject(deps(c), organizationId, subject, auditOrigin(c, actor), now());
  c.header("Content-Disposition", `attachment; filename="data-subject-${document.requestId}.json"`);
  return c.json(ok(document), 200);
});

const eraseRoute = createRoute({
  method: "post",
  path: "/organizations/{organizationId}/data-subjects/erase",
  tags,
  summary: "Anonymises everything the organization holds about a person (owners, admins; audited; idempotent)",
  description:
    "Names, numbers, e-mails, personal intake answers, notes, texts and delivery addresses are removed, in the queues' lines too; " +
    "ticket and appointment records stay, anonymised, so analytics figures do not change. Refused with 409 INVALID_STATE, changing " +
    "nothing, while the person has a ticket in a line or an appointment ahead (`details.tickets`, `details.appointments`): cancel them " +
    "first. Repeating the request changes nothing more. The audit entry records the counts, never the data. See docs/personal-data.md.",
  security: SECURITY.any,
  request: { params: OrganizationParam, body: { required: true, content: { "application/json": { schema: SubjectBody } } } },
  responses: {
    200: jsonResponse(z.object({ success: z.literal(true), data: SubjectErasure }), "What was anonymised"),
    ...errors(409),
  },
});

app.openapi(eraseRoute, async (c) => {
  const { organizationId } = c.req.valid("param");
  const actor = await privacyOfficer(c, organizationId);
  const subject = subjectOf(c.req.valid("json"));
  return c.json(ok(await eraseDataSubject(deps(c), organizationId, subject, auditOrigin(c, actor), now())), 200);
});

export default app;
