import { createRoute, z } from "@hono/zod-openapi";
import { actorIn, authorize, organizationOfRequest, requireCredential, requireUser } from "../http/auth";
import { permissionRefused } from "../http/permission-refusal";
import { errors, idParam, jsonBody, jsonResponse, okEnvelope, SECURITY } from "../http/openapi";
import { CursorQuery, cursorListEnvelope, listMeta, listWindow } from "../http/cursor";
import { ok, okList } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import {
  DELIVERY_STATUSES,
  listDeliveries,
  getPreferences,
  listNotifications,
  markAllRead,
  markRead,
  registerDevice,
  sendBusinessSms,
  SMS_PURPOSES,
  unregisterDevice,
  updatePreferences,
} from "./notifications";
import { PublicParagraph } from "../http/schemas";
import { deps } from "../http/deps";

// Spec §4.15 with CONTRACT §7. Devices, preferences and the inbox belong to the signed-in
// user (a session); the SMS route is the business's (ORG_MANAGE or QUEUE_OPERATE, key or member).

const app = router();
const tags = ["Notifications"];

const E164 = /^\+[1-9]\d{6,14}$/;

const PushDevice = z
  .object({
    id: z.string(),
    platform: z.enum(["ios", "android", "web"]),
    fcmToken: z.string(),
    deviceId: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("PushDevice");

const register = createRoute({
  method: "post",
  path: "/push/register",
  tags,
  summary: "Register this device's push token (idempotent per token)",
  description:
    "Registering a token again updates it; a token registered by another user moves to the caller (one phone, one account at a time).",
  security: SECURITY.session,
  request: {
    body: jsonBody(
      z
        .strictObject({
          platform: z.enum(["ios", "android", "web"]),
          fcmToken: z.string().trim().min(1).max(4096),
          deviceId: z.string().trim().min(1).max(200).optional(),
        })
        .openapi("RegisterPushRequest"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(PushDevice), "Registered"), ...errors() },
});

app.openapi(register, async (c) => {
  const { user } = requireUser(c);
  const body = c.req.valid("json");
  const device = await registerDevice(
    deps(c),
    user.id,
    { platform: body.platform, fcmToken: body.fcmToken, deviceId: body.deviceId ?? null },
    now(),
  );
  return c.json(ok(device), 201);
});

const unregister = createRoute({
  method: "delete",
  path: "/push/unregister",
  tags,
  summary: "Stop pushes to this token",
  description: "Only the caller's own token; another user's or an unknown token is 404.",
  security: SECURITY.session,
  request: { body: jsonBody(z.strictObject({ fcmToken: z.string().trim().min(1).max(4096) }).openapi("UnregisterPushRequest")) },
  responses: { 200: jsonResponse(okEnvelope(z.object({ fcmToken: z.string(), removed: z.literal(true) })), "Removed"), ...errors() },
});

app.openapi(unregister, async (c) => {
  const { user } = requireUser(c);
  const { fcmToken } = c.req.valid("json");
  await unregisterDevice(deps(c), user.id, fcmToken);
  return c.json(ok({ fcmToken, removed: true as const }), 200);
});

const Preferences = z.object({ smsNotifications: z.boolean(), ticketReminders: z.boolean() }).openapi("NotificationPreferences");

const getPrefs = createRoute({
  method: "get",
  path: "/notifications/preferences",
  tags,
  summary: "The caller's notification preferences (both default true)",
  security: SECURITY.session,
  responses: { 200: jsonResponse(okEnvelope(Preferences), "Preferences"), ...errors() },
});

app.openapi(getPrefs, async (c) => {
  const { user } = requireUser(c);
  return c.json(ok(await getPreferences(deps(c), user.id)), 200);
});

const patchPrefs = createRoute({
  method: "patch",
  path: "/notifications/preferences",
  tags,
  summary: "Change notification preferences",
  description:
    "`smsNotifications: false` stops SMS about the caller's tickets; `ticketReminders: false` silences ticket.almost_called and appointment.reminder on every channel.",
  security: SECURITY.session,
  request: {
    body: jsonBody(
      z
        .strictObject({ smsNotifications: z.boolean().optional(), ticketReminders: z.boolean().optional() })
        .openapi("UpdateNotificationPreferencesRequest"),
    ),
  },
  responses: { 200: jsonResponse(okEnvelope(Preferences), "Preferences"), ...errors() },
});

app.openapi(patchPrefs, async (c) => {
  const { user } = requireUser(c);
  return c.json(ok(await updatePreferences(deps(c), user.id, c.req.valid("json"), now())), 200);
});

const NotificationRecord = z
  .object({
    id: z.string(),
    type: z.string(),
    title: z.string(),
    body: z.string(),
    data: z.object({
      ticketId: z.string().optional(),
      queueId: z.string().optional(),
      displayCode: z.string().optional(),
      invitationId: z.string().optional().openapi({ description: "On a member.invited notification: accept or decline it" }),
      organizationId: z.string().optional(),
    }),
    readAt: z.string().nullable(),
    createdAt: z.string(),
  })
  .openapi("Notification");

const BooleanQuery = z
  .enum(["true", "false"])
  .transform((v) => v === "true")
  .openapi({ type: "boolean" });

const list = createRoute({
  method: "get",
  path: "/notifications",
  tags,
  summary: "The caller's in-app notifications, newest first",
  security: SECURITY.session,
  request: { query: CursorQuery.extend({ unreadOnly: BooleanQuery.optional() }) },
  responses: { 200: jsonResponse(cursorListEnvelope(NotificationRecord), "Notifications"), ...errors() },
});

app.openapi(list, async (c) => {
  const { user } = requireUser(c);
  const q = c.req.valid("query");
  const window = listWindow(q);
  const { rows, total, hasMore } = await listNotifications(deps(c), user.id, { unreadOnly: q.unreadOnly ?? false }, window);
  return c.json(
    okList(
      rows,
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

const readAll = createRoute({
  method: "post",
  path: "/notifications/read-all",
  tags,
  summary: "Mark all the caller's notifications read",
  security: SECURITY.session,
  responses: { 200: jsonResponse(okEnvelope(z.object({ updated: z.number().int() })), "How many were unread"), ...errors() },
});

app.openapi(readAll, async (c) => {
  const { user } = requireUser(c);
  return c.json(ok({ updated: await markAllRead(deps(c), user.id, now()) }), 200);
});

const read = createRoute({
  method: "post",
  path: "/notifications/{notificationId}/read",
  tags,
  summary: "Mark one notification read",
  description: "Another user's notification is 404, like an unknown id.",
  security: SECURITY.session,
  "x-outside-callers": "the notification's recipient (a user's own inbox)",
  request: { params: idParam("notificationId", "ntf") },
  responses: { 200: jsonResponse(okEnvelope(NotificationRecord), "Read"), ...errors() },
});

app.openapi(read, async (c) => {
  const { user } = requireUser(c);
  return c.json(ok(await markRead(deps(c), user.id, c.req.valid("param").notificationId, now())), 200);
});

const SmsResult = z
  .object({
    id: z.string(),
    phone: z.string(),
    purpose: z.enum(SMS_PURPOSES),
    status: z.enum(["sent", "queued", "failed"]),
    usage: z.object({ used: z.number().int(), limit: z.number().int().nullable(), resetsAt: z.string() }),
    createdAt: z.string(),
  })
  .openapi("SmsSent");

const sms = createRoute({
  method: "post",
  path: "/notifications/sms",
  tags,
  summary: "Send an SMS from the business (pro plan; counted in the month's SMS usage)",
  description:
    "ORG_MANAGE or QUEUE_OPERATE. `purpose`: ticket_update, reminder, announcement, appointment. 402 PLAN_REQUIRED on starter; " +
    "403 QUOTA_EXCEEDED past the plan's monthly allowance (pro 1,000, enterprise 10,000). The organization is the API key's, " +
    "else X-Organization-Id, else the caller's only membership. `status: queued` means the provider failed for a passing reason and it is retried.",
  security: SECURITY.any,
  request: {
    body: jsonBody(
      z
        .strictObject({
          phone: z.string().regex(E164, "an E.164 phone number, e.g. +33612345678").openapi({ example: "+33612345678" }),
          message: PublicParagraph(480).min(1),
          purpose: z.enum(SMS_PURPOSES),
        })
        .openapi("SendSmsRequest"),
    ),
  },
  responses: { 201: jsonResponse(okEnvelope(SmsResult), "Sent or queued"), ...errors(402) },
});

app.openapi(sms, async (c) => {
  const body = c.req.valid("json");
  const principal = requireCredential(c);
  const organizationId = await organizationOfRequest(c);
  const actor = await actorIn(c, organizationId);
  if (!actor.can("QUEUE_OPERATE") && !actor.can("ORG_MANAGE")) throw permissionRefused(["QUEUE_OPERATE", "ORG_MANAGE"], actor);
  const sentBy = principal.kind === "apiKey" ? principal.keyId : principal.user.id;
  const result = await sendBusinessSms(deps(c), organizationId, { ...body, sentBy }, now());
  return c.json(ok(result), 201);
});

const DeliveryRecord = z
  .object({
    id: z.string(),
    eventId: z.string(),
    type: z.string(),
    channel: z
      .enum(["in_app", "push", "sms", "web_push", "whatsapp", "event"])
      .openapi({ description: "`event`: the event itself could not be processed (EVENTS dead letter)" }),
    recipient: z.string().openapi({ description: "User id, phone, or the last 8 characters of a push token or endpoint" }),
    provider: z.string().nullable(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    providerResponse: z.string().nullable().openapi({ description: "The provider's last answer (status and body, truncated)" }),
    fallbackFrom: z
      .enum(["whatsapp"])
      .nullable()
      .openapi({ description: "`whatsapp`: this SMS carried a WhatsApp message that could not be sent (same eventId)" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("NotificationDelivery");

const deliveries = createRoute({
  method: "get",
  path: "/organizations/{organizationId}/notification-deliveries",
  tags,
  summary: "The organization's notification deliveries, newest first (ORG_MANAGE)",
  description:
    "One record per (event, channel, recipient). `failed`: the provider refused for good (its answer is kept); `retrying`: a passing " +
    "failure being retried with backoff; `dead_lettered`: retries ran out.",
  security: SECURITY.any,
  request: { params: idParam("organizationId", "org"), query: CursorQuery.extend({ status: z.enum(DELIVERY_STATUSES).optional() }) },
  responses: { 200: jsonResponse(cursorListEnvelope(DeliveryRecord), "Deliveries"), ...errors() },
});

app.openapi(deliveries, async (c) => {
  const { organizationId } = c.req.valid("param");
  await authorize(c, organizationId, "ORG_MANAGE");
  const q = c.req.valid("query");
  const window = listWindow(q);
  const { rows, total, hasMore } = await listDeliveries(deps(c), organizationId, { status: q.status }, window);
  return c.json(
    okList(
      rows,
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

export default app;
