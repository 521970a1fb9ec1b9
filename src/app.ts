import { d1Session } from "./http/d1-sessions";
import { OpenAPIHono } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import type { Context } from "hono";
import { authenticate } from "./http/auth";
import { declareOpenOperations, guard, type ResourceKind } from "./access";
import { bodyGuard } from "./http/body-guard";
import type { AppEnv } from "./http/context";
import { ApiError, validationError } from "./http/errors";
import { idempotency } from "./http/idempotency";
import { methodTable } from "./http/method-not-allowed";
import {
  trackApiKeyUse,
  apiKeyRoutes,
  authRoutes,
  memberRoutes,
  invitationRoutes,
  organizationRoutes,
  verificationRoutes,
  ssoRoutes,
} from "./identity";
import { rateLimit } from "./http/rate-limit";
import { requestId } from "./http/request-id";
import { livemodeInAnswers } from "./http/livemode";
import { errorBody } from "./http/respond";
import { validationHook } from "./http/validation";
import { calendarRoutes } from "./calendar";
import { apiDocument, mountDocs, errorCodeRoutes } from "./api-reference";
import { mountMcp } from "./mcp";
import { qrRoutes, nfcRoutes } from "./entry";
import { locationRoutes, serviceRoutes, serviceOutcomeRoutes } from "./catalog";
import { appointmentRoutes, checkInRoutes } from "./appointments";
import { dashboardRoutes, analyticsRoutes, analyticsExportRoutes } from "./analytics";
import { queueRoutes, ticketRoutes, remoteJoinRoutes, ticketMoveRoutes, intakeRoutes, blendRoutes } from "./tickets";
import { embedRoutes, widgetRoutes, widgetCors, widgetOriginLock, kioskRoutes } from "./widget";
import { webhookRoutes, eventRoutes } from "./webhooks";
import { messageTemplateRoutes, notificationRoutes, smsPolicyRoutes, whatsappRoutes } from "./notifications";
import { visitorPushRoutes, labelRoutes, receiptRoutes, phoneVerificationRoutes, feedbackRoutes } from "./visits";
import { apiCallQuota, billingRoutes, billingWebhookRoutes } from "./billing";
import { deskConsoleRoutes, deskRoutes, floorRoutes } from "./desks";
import { mountPages } from "./http/pages";
import { inboundRoutes, ticketMessageRoutes, ussdRoutes, whatsappInboundRoutes } from "./conversations";
import { auditRoutes, recordEveryChange, sealAuditAfterWrites } from "./audit";
import { dataSubjectRoutes } from "./privacy";
import { apiVersioning } from "./http/versioning";
import { testModeRoutes } from "./test-mode";
import { answerHeader } from "./http/answer-headers";

function asApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 415) return new ApiError("UNSUPPORTED_MEDIA_TYPE", "Request bodies must be JSON", { field: "Content-Type" });
    if (err.status === 413) return new ApiError("PAYLOAD_TOO_LARGE", "Request body too large");
    if (err.status === 400) return validationError("body", "malformed JSON");
    if (err.status === 401) return new ApiError("AUTHENTICATION_ERROR", "Missing or invalid credentials");
  }
  return new ApiError("INTERNAL_ERROR", "Something went wrong on our side; quote the request id if you contact us");
}

export function errorResponse(err: unknown, c: Context<AppEnv>): Response {
  const apiError = asApiError(err);
  if (apiError.code === "INTERNAL_ERROR") {
    console.error(JSON.stringify({ requestId: c.get("requestId"), error: String(err), stack: (err as Error)?.stack }));
  }
  const headers = { ...(c.get("rateLimitHeaders") ?? {}), ...apiError.headers };
  return c.json(errorBody(c, apiError), apiError.status, headers);
}

/**
 * One guard per resource with an id in its path (src/access/guard.ts), mounted once on the bare
 * path and on everything under it, before any router: no handler of these paths runs for a
 * caller the guard has not placed. A new route under one of these paths is guarded by this.
 */
const NFC_ID = /^[A-Za-z0-9:_-]{1,128}$/;
/** Routes a widget key may call beside the widget's own (src/http/auth.ts isWidgetPath). */
const WIDGET_BOOKING_PATHS = ["/v1/appointments", "/v1/appointments/holds", "/v1/services/:serviceId/slots"];

const GUARDED: [path: string, kind: ResourceKind, wellFormed?: (id: string) => boolean][] = [
  ["/v1/organizations/:organizationId", "organization"],
  ["/v1/calendar/organization/:organizationId", "organization"],
  ["/v1/billing/subscription/:organizationId", "organization"],
  ["/v1/billing/usage/:organizationId", "organization"],
  ["/v1/locations/:locationId", "location"],
  ["/v1/services/:serviceId", "service"],
  ["/v1/desks/:deskId", "desk"],
  ["/v1/business/queues/:queueId", "queue"],
  ["/v1/queues/:queueId", "queue"],
  ["/v1/tickets/:ticketId", "ticket"],
  ["/v1/remote-join/:queueId", "queue"],
  ["/v1/remote-join/:ticketId", "ticket"],
  ["/v1/calendar/:eventId", "calendarEvent"],
  ["/v1/appointments/:appointmentId", "appointment"],
  ["/v1/nfc/tags/:nfcId", "nfcTag", (id) => NFC_ID.test(id)],
  ["/v1/qr-tokens/:id", "qrToken"],
];

function mountGuards(app: OpenAPIHono<AppEnv>): void {
  for (const [path, kind, wellFormed] of GUARDED) {
    const resourceGuard = guard(kind, path, wellFormed);
    app.use(path, resourceGuard);
    app.use(`${path}/*`, resourceGuard);
  }
}

export function createApp() {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use("*", requestId);
  app.use("/v1/*", livemodeInAnswers);
  app.use("/v1/*", async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(c.get("rateLimitHeaders") ?? {})) answerHeader(c, name, value);
  });
  app.use("/v1/widget/*", widgetCors);
  // The widget and the kiosk book (docs/appointments.md): the same CORS and origin lock as the widget routes.
  for (const path of WIDGET_BOOKING_PATHS) app.use(path, widgetCors);
  // A widget on any page gives back its visitor's phone code (docs/limits.md).
  app.use("/v1/tickets/:ticketId/phone-verification/*", widgetCors);
  app.use("/v1/*", bodyGuard, authenticate, rateLimit);
  app.use("/v1/*", apiCallQuota);
  app.use("/v1/widget/*", widgetOriginLock);
  for (const path of WIDGET_BOOKING_PATHS) app.use(path, widgetOriginLock);
  app.use("/v1/*", idempotency, trackApiKeyUse);
  app.use("/v1/*", apiVersioning);
  app.use("/v1/*", sealAuditAfterWrites, recordEveryChange);
  mountGuards(app);
  // Reads that stay on D1 go through one D1 session a request, after access was decided on the primary.
  app.use("/v1/*", d1Session);

  app.route("/v1", authRoutes);
  app.route("/v1", organizationRoutes);
  app.route("/v1", qrRoutes);
  app.route("/v1", nfcRoutes);
  app.route("/v1", calendarRoutes);
  app.route("/v1", locationRoutes);
  app.route("/v1", serviceRoutes);
  app.route("/v1", dashboardRoutes);
  app.route("/v1", queueRoutes);
  app.route("/v1", ticketRoutes);
  app.route("/v1", memberRoutes);
  app.route("/v1", invitationRoutes);
  app.route("/v1", apiKeyRoutes);
  app.route("/v1", embedRoutes);
  app.route("/v1", widgetRoutes);
  app.route("/v1", kioskRoutes);
  app.route("/v1", remoteJoinRoutes);
  app.route("/v1", billingRoutes);
  app.route("/v1", billingWebhookRoutes);
  app.route("/v1", verificationRoutes);
  app.route("/v1", ssoRoutes);
  app.route("/v1", webhookRoutes);
  app.route("/v1", notificationRoutes);
  app.route("/v1", smsPolicyRoutes);
  app.route("/v1", whatsappRoutes);
  app.route("/v1", messageTemplateRoutes);
  app.route("/v1", visitorPushRoutes);
  app.route("/v1", feedbackRoutes);
  app.route("/v1", analyticsRoutes);
  app.route("/v1", analyticsExportRoutes);
  app.route("/v1", deskRoutes);
  app.route("/v1", floorRoutes);
  app.route("/v1", deskConsoleRoutes);
  app.route("/v1", receiptRoutes);
  app.route("/v1", ticketMoveRoutes);
  app.route("/v1", serviceOutcomeRoutes);
  app.route("/v1", errorCodeRoutes);
  app.route("/v1", eventRoutes);
  app.route("/v1", inboundRoutes);
  app.route("/v1", whatsappInboundRoutes);
  app.route("/v1", ticketMessageRoutes);
  app.route("/v1", ussdRoutes);
  app.route("/v1", auditRoutes);
  app.route("/v1", dataSubjectRoutes);
  app.route("/v1", intakeRoutes);
  app.route("/v1", labelRoutes);
  app.route("/v1", appointmentRoutes);
  app.route("/v1", checkInRoutes);
  app.route("/v1", blendRoutes);
  app.route("/v1", phoneVerificationRoutes);
  app.route("/v1", testModeRoutes);

  declareOpenOperations(app.openAPIRegistry.definitions);
  mountDocs(app);
  mountMcp(app, (origin) => apiDocument(app, origin));
  mountPages(app);
  const allowedMethods = methodTable(app);
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    const allowed = allowedMethods(path).filter((m) => m !== c.req.method);
    if (allowed.length > 0) {
      const message = `${path} does not take ${c.req.method}; it takes ${allowed.join(", ")}`;
      return errorResponse(new ApiError("METHOD_NOT_ALLOWED", message, { allowed }, { Allow: allowed.join(", ") }), c);
    }
    return errorResponse(new ApiError("NOT_FOUND", `No route for ${c.req.method} ${path}`), c);
  });
  app.onError(errorResponse);
  return app;
}
