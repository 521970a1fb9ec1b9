import { createRoute, z } from "@hono/zod-openapi";
import { authorize } from "../http/auth";
import { ApiError } from "../http/errors";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { clientIp, countUnverifiedWebhook, countVerifiedWebhook } from "../http/rate-limit";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { answerUssd, authenticateUssd, registerUssdCode, removeUssdCode, ussdCodeOf } from "./ussd";
import { deps } from "../http/deps";

// USSD (docs/conversations.md): the aggregator's session callback, and the organization's
// registration of its code.

const app = router();
const tags = ["Conversations"];

export const USSD_SECRET_HEADER = "X-USSD-Secret";
const SERVICE_CODE = /^\*[0-9*]{1,18}#$/;
const ServiceCode = z
  .string()
  .regex(SERVICE_CODE, "a USSD code such as *384*123#")
  .openapi({ description: "The code customers dial, as the aggregator sends it (`*384*123#`)", example: "*384*123#" });
const Address = z
  .string()
  .regex(/^[0-9A-Fa-f:.]{2,45}$/, "an IPv4 or IPv6 address")
  .openapi({ example: "52.48.80.25" });

const UssdCode = z
  .object({
    serviceCode: z.string(),
    allowedAddresses: z
      .array(z.string())
      .nullable()
      .openapi({ description: "The aggregator's addresses; null: any address with the secret" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("UssdCode");

const OrganizationParam = idParam("organizationId", "org");

const register = createRoute({
  method: "put",
  path: "/organizations/{organizationId}/ussd",
  tags,
  summary: "Register the organization's USSD code (ORG_MANAGE); the secret is in the answer only this once",
  description:
    "Creates or replaces the code the aggregator calls `POST /v1/inbound/ussd` for. Every call issues a new secret: configure the " +
    "aggregator's callback as `https://<host>/v1/inbound/ussd?secret=<secret>` (or send it in `X-USSD-Secret`). With " +
    "`allowedAddresses`, callbacks from any other address are refused too. A code another organization holds is 409 CONFLICT.",
  security: SECURITY.any,
  request: {
    params: OrganizationParam,
    body: jsonBody(
      z
        .strictObject({ serviceCode: ServiceCode, allowedAddresses: z.array(Address).min(1).max(20).nullable().optional() })
        .openapi("RegisterUssdCodeRequest"),
    ),
  },
  responses: {
    200: jsonResponse(
      okEnvelope(UssdCode.extend({ secret: z.string().openapi({ description: "The callback's secret, shown only once" }) })),
      "Registered",
    ),
    ...errors(409),
  },
});

app.openapi(register, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorize(c, organizationId, "ORG_MANAGE");
  const body = c.req.valid("json");
  const record = await registerUssdCode(
    deps(c),
    organizationId,
    { serviceCode: body.serviceCode, allowedAddresses: body.allowedAddresses ?? null },
    now(),
  );
  return c.json(ok(record), 200);
});

const read = createRoute({
  method: "get",
  path: "/organizations/{organizationId}/ussd",
  tags,
  summary: "The organization's USSD code (ORG_MANAGE), without its secret",
  security: SECURITY.any,
  request: { params: OrganizationParam },
  responses: { 200: jsonResponse(okEnvelope(UssdCode), "The code"), ...errors() },
});

app.openapi(read, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorize(c, organizationId, "ORG_MANAGE");
  return c.json(ok(await ussdCodeOf(deps(c), organizationId)), 200);
});

const remove = createRoute({
  method: "delete",
  path: "/organizations/{organizationId}/ussd",
  tags,
  summary: "Remove the organization's USSD code (ORG_MANAGE): its callbacks are refused from now on",
  security: SECURITY.any,
  request: { params: OrganizationParam },
  responses: { 200: jsonResponse(okEnvelope(z.object({ removed: z.literal(true) })), "Removed"), ...errors() },
});

app.openapi(remove, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorize(c, organizationId, "ORG_MANAGE");
  await removeUssdCode(deps(c), organizationId);
  return c.json(ok({ removed: true as const }), 200);
});

const PlainResponse = {
  description: "The screen: `CON <text>` (the session continues) or `END <text>` (it ends), at most 160 characters",
  content: {
    "text/plain": {
      schema: z
        .string()
        .openapi({ example: "CON Mairie\n1 Prendre un ticket\n2 Ma position\n3 Je suis là\n4 Annuler mon ticket\n0 English" }),
    },
  },
};

const callback = createRoute({
  method: "post",
  path: "/inbound/ussd",
  tags,
  summary: "A USSD session's screen (the aggregator's callback, Africa's Talking style)",
  description:
    "Form-encoded `sessionId`, `serviceCode`, `phoneNumber`, `text` (the session's inputs joined by `*`, empty on the first screen). " +
    "The organization is the one that registered `serviceCode`; the request carries that code's secret (query `secret` or header " +
    "`X-USSD-Secret`, compared in constant time) and, if the code lists addresses, comes from one of them — else 401 and nothing " +
    "changes. Menu: 1 take a ticket (the organization's open queues, numbered), 2 my position, 3 I'm here, 4 cancel, 0 the other " +
    "language (fr/en). Only that organization's tickets of `phoneNumber` are read or touched.",
  security: SECURITY.none,
  request: { query: z.object({ secret: z.string().max(200).optional().openapi({ description: "The code's secret" }) }) },
  responses: { 200: PlainResponse, ...errors() },
});

/** Required parameters of the aggregator's form: 400 naming the one missing. */
function field(form: URLSearchParams, name: string): string {
  const value = form.get(name);
  if (value === null || value.trim() === "") {
    throw new ApiError("VALIDATION_ERROR", `Invalid value for ${name}: required`, { field: name, reason: "required" });
  }
  return value.trim();
}

app.openapi(callback, async (c) => {
  const form = new URLSearchParams(await c.req.text());
  const secret = c.req.header(USSD_SECRET_HEADER) ?? c.req.valid("query").secret ?? null;
  const serviceCode = form.get("serviceCode")?.trim() ?? "";
  const caller = SERVICE_CODE.test(serviceCode) ? await authenticateUssd(deps(c), serviceCode, secret, clientIp(c)) : null;
  if (!caller) {
    // Not the aggregator of this code: any anonymous request, in the strict bucket of its address.
    await countUnverifiedWebhook(c);
    throw new ApiError("AUTHENTICATION_ERROR", "Unknown USSD code, wrong secret or address not allowed", { field: "secret" });
  }
  await countVerifiedWebhook(c, `ussd:${caller.organizationId}`);
  const session = {
    sessionId: field(form, "sessionId"),
    serviceCode: caller.serviceCode,
    phoneNumber: field(form, "phoneNumber"),
    text: (form.get("text") ?? "").slice(0, 200),
  };
  const screen = await answerUssd(deps(c), caller.organizationId, session, now());
  return c.body(screen, 200, { "Content-Type": "text/plain; charset=utf-8" }) as never;
});

export default app;
