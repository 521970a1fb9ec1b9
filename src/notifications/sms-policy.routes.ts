import { createRoute, z } from "@hono/zod-openapi";
import { BOT_CHECKS, SMS_POLICY_DEFAULTS } from "../domain/sms-policy";
import { authorize } from "../http/auth";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { readSmsPolicy, updateSmsPolicy } from "./sms-guard";
import { deps } from "../http/deps";

// The organization's SMS policy: which countries its visitors' numbers may be in and the caps
// that keep a public join form from spending its SMS (docs/limits.md, "SMS and messaging caps").

const app = router();
const tags = ["Notifications"];

const Country = z
  .string()
  .regex(/^[A-Z]{2}$/, "an ISO 3166 alpha-2 country code in capitals, e.g. FR")
  .openapi({ example: "FR" });

const fields = {
  allowedCountries: z
    .array(Country)
    .min(1)
    .max(50)
    .nullable()
    .openapi({
      description: "Countries whose mobile numbers may be texted; null = the countries of the locations' phone numbers",
      example: ["FR", "CI"],
    }),
  perPhonePerDay: z
    .number()
    .int()
    .min(0)
    .max(1_000)
    .nullable()
    .openapi({ description: `SMS-enabled joins per number and UTC day (default ${SMS_POLICY_DEFAULTS.perPhonePerDay})`, example: 3 }),
  perAddressPerDay: z
    .number()
    .int()
    .min(0)
    .max(100_000)
    .nullable()
    .openapi({
      description: `SMS-enabled joins per IP address and UTC day (default ${SMS_POLICY_DEFAULTS.perAddressPerDay})`,
      example: 10,
    }),
  perWidgetKeyPerDay: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .nullable()
    .openapi({
      description: `SMS-enabled joins per widget key and UTC day (default ${SMS_POLICY_DEFAULTS.perWidgetKeyPerDay})`,
      example: 300,
    }),
  perTicket: z
    .number()
    .int()
    .min(0)
    .max(20)
    .nullable()
    .openapi({ description: `SMS per ticket over its life (default ${SMS_POLICY_DEFAULTS.perTicket})`, example: 4 }),
  dailyCeiling: z.number().int().min(1).max(1_000_000).nullable().openapi({
    description: "SMS per UTC day, visitors' and the business's together (default a tenth of the plan's monthly allowance, at least 100)",
    example: 100,
  }),
  businessReservePercent: z
    .number()
    .int()
    .min(0)
    .max(90)
    .nullable()
    .openapi({
      description: `Share of the daily ceiling and the monthly allowance that only the business's own SMS may use (default ${SMS_POLICY_DEFAULTS.businessReservePercent})`,
      example: 20,
    }),
  botCheck: z
    .enum(BOT_CHECKS)
    .nullable()
    .openapi({
      description:
        "Cloudflare Turnstile on widget and kiosk joins that give a phone (token in the `CF-Turnstile-Response` header, " +
        "verified server-side; 400 naming the header without a valid one): `off` (default), `always`, or `when_half_used` " +
        "(once the day's visitor share of SMS is half used)",
      example: "when_half_used",
    }),
  requirePhoneCode: z
    .boolean()
    .nullable()
    .openapi({
      description:
        "A visitor's number is texted a 6-digit one-time code at the join, and nothing more until the code is given back " +
        "(POST /v1/tickets/{ticketId}/phone-verification); default false",
      example: true,
    }),
};

const SmsPolicyRecord = z
  .object({
    allowedCountries: z.array(z.string()).nullable(),
    effectiveCountries: z
      .array(z.string())
      .nullable()
      .openapi({ description: "The countries in force: the list, else the locations' countries; null = any country" }),
    perPhonePerDay: z.number().int(),
    perAddressPerDay: z.number().int(),
    perWidgetKeyPerDay: z.number().int(),
    perTicket: z.number().int(),
    dailyCeiling: z.number().int(),
    businessReservePercent: z.number().int(),
    requirePhoneCode: z.boolean().openapi({ description: "Visitors' numbers are proven by a one-time code before any other SMS" }),
    botCheck: z.enum(BOT_CHECKS).openapi({ description: "When widget and kiosk joins that give a phone must pass Turnstile" }),
    alertAtPercent: z.number().int().openapi({ description: "The owners are told once a day when the day's SMS reach this share" }),
    today: z.object({
      sent: z.number().int(),
      publicLimit: z.number().int().openapi({ description: "What visitors' messages may use today (the ceiling less the reserve)" }),
      resetsAt: z.string(),
    }),
  })
  .openapi("SmsPolicy");

const UpdateBody = z
  .strictObject({
    allowedCountries: fields.allowedCountries.optional(),
    perPhonePerDay: fields.perPhonePerDay.optional(),
    perAddressPerDay: fields.perAddressPerDay.optional(),
    perWidgetKeyPerDay: fields.perWidgetKeyPerDay.optional(),
    perTicket: fields.perTicket.optional(),
    dailyCeiling: fields.dailyCeiling.optional(),
    businessReservePercent: fields.businessReservePercent.optional(),
    requirePhoneCode: fields.requirePhoneCode.optional(),
    botCheck: fields.botCheck.optional(),
  })
  .openapi("UpdateSmsPolicyRequest");

const OrgParam = idParam("organizationId", "org");
const path = "/organizations/{organizationId}/sms-policy";

app.openapi(
  createRoute({
    method: "get",
    path,
    tags,
    summary: "The organization's SMS policy: allowed countries, caps, and today's count (ORG_MANAGE)",
    security: SECURITY.any,
    request: { params: OrgParam },
    responses: { 200: jsonResponse(okEnvelope(SmsPolicyRecord), "The policy in force"), ...errors() },
  }),
  async (c) => {
    const { organizationId } = c.req.valid("param");
    await authorize(c, organizationId, "ORG_MANAGE");
    return c.json(ok(await readSmsPolicy(deps(c), organizationId, now())), 200);
  },
);

app.openapi(
  createRoute({
    method: "patch",
    path,
    tags,
    summary: "Change the SMS policy (ORG_MANAGE); null puts a field back to its default",
    security: SECURITY.any,
    request: { params: OrgParam, body: jsonBody(UpdateBody) },
    responses: { 200: jsonResponse(okEnvelope(SmsPolicyRecord), "The policy in force"), ...errors() },
  }),
  async (c) => {
    const { organizationId } = c.req.valid("param");
    await authorize(c, organizationId, "ORG_MANAGE");
    return c.json(ok(await updateSmsPolicy(deps(c), organizationId, c.req.valid("json"), now())), 200);
  },
);

export default app;
