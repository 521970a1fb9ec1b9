import type { ErrorCode } from "./errors";

// The one table of operations: each route's stable operationId (the business verb, camelCase)
// and the error codes it can answer beyond those every route of its kind answers. The OpenAPI
// document's error responses, header parameters and tags are generated from here
// (openapi-document.ts); a test fails when a route is missing from this table.

export interface Operation {
  id: string;
  /** Codes this route answers beyond the defaults of its kind (see defaultErrors). */
  errors?: ErrorCode[];
  /** The organization comes from the request (API key, X-Organization-Id, only membership). */
  organizationFromRequest?: boolean;
}

const STATE: ErrorCode[] = ["INVALID_STATE"];
/** A change the queues' rooms must confirm before it is answered (tickets/room-rules.ts). */
const RULES: ErrorCode[] = ["CHANGE_NOT_CONFIRMED"];
/**
 * A change of who may do what (sessions, memberships, the user row): refused with nothing changed
 * when the user's object cannot be told first (http/credentials/access-changes.ts, issue 43).
 */
const ACCESS: ErrorCode[] = ["CHANGE_NOT_CONFIRMED"];
const JOIN: ErrorCode[] = ["QUEUE_PAUSED", "QUEUE_CLOSED", "QUEUE_FULL", "QUOTA_EXCEEDED"];

export const OPERATIONS: Record<string, Operation> = {
  "POST /v1/auth/register": { id: "register", errors: ["CONFLICT", "SSO_REQUIRED"] },
  "POST /v1/auth/login": { id: "logIn", errors: ["SSO_REQUIRED"] },
  "GET /v1/auth/me": { id: "getMe" },
  "GET /v1/auth/me/export": { id: "exportMe" },
  "DELETE /v1/auth/me": { id: "eraseMe", errors: ["CONFLICT", ...ACCESS] },
  "POST /v1/auth/session/refresh": { id: "refreshSession" },
  "POST /v1/auth/logout": { id: "logOut", errors: ACCESS },

  "POST /v1/organizations": { id: "createOrganization", errors: ["CONFLICT", ...ACCESS] },
  "GET /v1/organizations": { id: "listOrganizations" },
  "GET /v1/organizations/{organizationId}": { id: "getOrganization" },
  "PATCH /v1/organizations/{organizationId}": { id: "updateOrganization" },
  "DELETE /v1/organizations/{organizationId}": { id: "deleteOrganization", errors: ACCESS },
  "POST /v1/organizations/{organizationId}/transfer-ownership": { id: "transferOwnership", errors: ["CONFLICT", ...ACCESS] },
  "GET /v1/business/dashboard": { id: "getDashboard", organizationFromRequest: true },

  "GET /v1/organizations/{organizationId}/members": { id: "listMembers" },
  "POST /v1/organizations/{organizationId}/members": { id: "addMember", errors: ["CONFLICT", "QUOTA_EXCEEDED"] },
  "PATCH /v1/organizations/{organizationId}/members/{userId}": { id: "updateMember", errors: ACCESS },
  "DELETE /v1/organizations/{organizationId}/members/{userId}": { id: "removeMember", errors: ACCESS },
  "GET /v1/organizations/{organizationId}/invitations": { id: "listInvitations" },
  "DELETE /v1/organizations/{organizationId}/invitations/{invitationId}": { id: "revokeInvitation", errors: STATE },
  "GET /v1/invitations": { id: "listMyInvitations" },
  "POST /v1/invitations/{invitationId}/accept": { id: "acceptInvitation", errors: ["INVALID_STATE", "CONFLICT", ...ACCESS] },
  "POST /v1/invitations/{invitationId}/decline": { id: "declineInvitation", errors: STATE },
  "PATCH /v1/auth/me": { id: "updateMe", errors: ACCESS },

  "POST /v1/organizations/{organizationId}/api-keys": { id: "createApiKey" },
  "GET /v1/organizations/{organizationId}/api-keys": { id: "listApiKeys" },
  "DELETE /v1/organizations/{organizationId}/api-keys/{keyId}": { id: "revokeApiKey" },
  "GET /v1/test": { id: "getTestMode", organizationFromRequest: true },
  "POST /v1/test/reset": { id: "resetTestMode", organizationFromRequest: true },
  "POST /v1/test/simulations": { id: "startSimulation", organizationFromRequest: true },
  "GET /v1/test/simulations/{id}": { id: "getSimulation", organizationFromRequest: true },
  "DELETE /v1/test/simulations/{id}": { id: "stopSimulation", organizationFromRequest: true },

  "POST /v1/locations": { id: "createLocation" },
  "GET /v1/business/locations": { id: "listLocations", organizationFromRequest: true },
  "GET /v1/locations/search": { id: "searchLocations" },
  "GET /v1/locations/nearby": { id: "findNearbyLocations" },
  "PATCH /v1/locations/{locationId}": { id: "updateLocation", errors: RULES },
  "DELETE /v1/locations/{locationId}": { id: "deleteLocation", errors: RULES },

  "GET /v1/services/types": { id: "listServiceTypes" },
  "GET /v1/services/organization/search": { id: "searchServices" },
  "POST /v1/services": { id: "createService", errors: ["PLAN_REQUIRED"] },
  "GET /v1/business/services": { id: "listServices", organizationFromRequest: true },
  "GET /v1/services/{serviceId}": { id: "getService" },
  "PATCH /v1/services/{serviceId}": { id: "updateService", errors: RULES },
  "DELETE /v1/services/{serviceId}": { id: "deleteService" },
  "GET /v1/services/{serviceId}/slots": { id: "listServiceSlots" },
  // Appointments (issue 38, docs/appointments.md).
  "POST /v1/appointments": { id: "bookAppointment", errors: ["SLOT_UNAVAILABLE"] },
  "POST /v1/appointments/holds": { id: "holdAppointmentSlot", errors: ["SLOT_UNAVAILABLE"] },
  "GET /v1/appointments/{appointmentId}": { id: "getAppointment" },
  "GET /v1/appointments/{appointmentId}/slots": { id: "listAppointmentRescheduleSlots", errors: STATE },
  "PATCH /v1/appointments/{appointmentId}": { id: "rescheduleAppointment", errors: ["SLOT_UNAVAILABLE", "INVALID_STATE"] },
  "POST /v1/appointments/{appointmentId}/cancel": { id: "cancelAppointment", errors: STATE },
  "GET /v1/locations/{locationId}/appointments": { id: "listLocationAppointments" },
  "GET /v1/me/appointments": { id: "listMyAppointments" },

  "POST /v1/business/queues": { id: "createQueue", errors: ["PLAN_REQUIRED", "CONFLICT"], organizationFromRequest: true },
  "GET /v1/business/queues": { id: "listQueues", organizationFromRequest: true },
  "GET /v1/queues/{queueId}": { id: "getQueue" },
  "PATCH /v1/business/queues/{queueId}/status": { id: "setQueueStatus", errors: STATE },
  "PATCH /v1/business/queues/{queueId}": { id: "updateQueue", errors: STATE },
  "POST /v1/queues/{queueId}/join": { id: "joinQueue", errors: JOIN },
  "POST /v1/queues/{queueId}/operator-join": { id: "createWalkInTicket", errors: JOIN },
  "POST /v1/queues/{queueId}/vip-ticket": { id: "createVipTicket", errors: JOIN },
  "POST /v1/queues/{queueId}/call-next": { id: "callNext", errors: ["QUEUE_EMPTY", "QUEUE_CLOSED", "OPERATOR_UNAVAILABLE"] },
  "POST /v1/queues/{queueId}/clear": { id: "clearQueue", errors: STATE },
  "POST /v1/queues/{queueId}/archive": { id: "archiveQueue", errors: STATE },
  "GET /v1/queues/{queueId}/tickets": { id: "listQueueTickets" },
  "POST /v1/queues/{queueId}/eligibility": { id: "checkRemoteEligibility" },

  "GET /v1/tickets/{ticketId}": { id: "getTicket" },
  // Check-in and the blend (docs/blend.md)
  "POST /v1/appointments/{appointmentId}/check-in": {
    id: "checkInAppointment",
    errors: ["CHECK_IN_NOT_OPEN", "OUT_OF_RANGE", ...STATE, ...JOIN],
  },
  "POST /v1/widget/locations/{locationId}/check-in": { id: "checkInAppointmentAtKiosk", errors: ["CHECK_IN_NOT_OPEN", ...STATE, ...JOIN] },
  "GET /v1/business/queues/{queueId}/blend": { id: "getQueueBlend" },
  "PUT /v1/business/queues/{queueId}/blend": { id: "putQueueBlend", errors: RULES },
  "POST /v1/business/queues/{queueId}/blend/replay": { id: "replayQueueBlend" },
  "POST /v1/tickets/{ticketId}/cancel": { id: "cancelTicket", errors: STATE },
  "POST /v1/tickets/{ticketId}/serve": { id: "serveTicket", errors: ["INVALID_STATE", "INTAKE_REQUIRED"] },
  "POST /v1/tickets/{ticketId}/present": { id: "markTicketPresent", errors: STATE },
  "POST /v1/tickets/{ticketId}/complete": { id: "completeTicket", errors: ["INVALID_STATE", "INTAKE_REQUIRED"] },
  "POST /v1/tickets/{ticketId}/skip-absent": { id: "skipAbsentTicket", errors: STATE },
  "POST /v1/tickets/{ticketId}/recover": { id: "recoverTicket", errors: ["INVALID_STATE", "QUEUE_PAUSED", "QUEUE_CLOSED", "QUEUE_FULL"] },
  "POST /v1/tickets/{ticketId}/transfer-queue": {
    id: "transferTicketToQueue",
    errors: ["INVALID_STATE", "QUEUE_PAUSED", "QUEUE_CLOSED", "QUEUE_FULL", "CONFLICT"],
  },
  "POST /v1/tickets/{ticketId}/transfer": { id: "transferTicketToOperator", errors: STATE },

  "POST /v1/tickets/{ticketId}/return": { id: "returnTicketToLine", errors: STATE },
  "POST /v1/tickets/{ticketId}/recall": { id: "recallTicket", errors: ["INVALID_STATE", "RECALL_LIMIT_REACHED"] },
  "POST /v1/tickets/{ticketId}/hold": { id: "holdTicket", errors: STATE },
  "POST /v1/tickets/{ticketId}/resume": { id: "resumeTicket", errors: STATE },
  "POST /v1/tickets/{ticketId}/step-back": { id: "stepBackTicket", errors: ["INVALID_STATE", "CONFLICT"] },
  "POST /v1/widget/tickets/{ticketId}/step-back": { id: "stepBackVisitorTicket", errors: ["INVALID_STATE", "CONFLICT"] },
  "POST /v1/tickets/{ticketId}/defer": {
    id: "deferTicket",
    errors: ["INVALID_STATE", "CONFLICT", "DEFER_TOO_FAR", "DEFER_LIMIT_REACHED"],
  },
  "POST /v1/widget/tickets/{ticketId}/defer": {
    id: "deferVisitorTicket",
    errors: ["INVALID_STATE", "CONFLICT", "DEFER_TOO_FAR", "DEFER_LIMIT_REACHED"],
  },
  "POST /v1/tickets/{ticketId}/vip": { id: "prioritizeTicket", errors: STATE },
  "DELETE /v1/tickets/{ticketId}/vip": { id: "unprioritizeTicket", errors: STATE },
  "POST /v1/services/{serviceId}/outcomes": { id: "createServiceOutcome", errors: ["CONFLICT"] },
  "GET /v1/services/{serviceId}/outcomes": { id: "listServiceOutcomes" },
  "DELETE /v1/services/{serviceId}/outcomes/{code}": { id: "deleteServiceOutcome" },
  // Visits (docs/visits.md)
  "PUT /v1/services/{serviceId}/intake": { id: "putServiceIntake", errors: RULES },
  "GET /v1/services/{serviceId}/intake": { id: "getServiceIntake" },
  "GET /v1/widget/queue/{queueId}/intake": { id: "getWidgetQueueIntake" },
  "PATCH /v1/tickets/{ticketId}/intake": { id: "editTicketIntake" },
  "POST /v1/tickets/{ticketId}/labels": { id: "addTicketLabel", errors: ["CONFLICT"] },
  "DELETE /v1/tickets/{ticketId}/labels/{label}": { id: "removeTicketLabel" },
  "GET /v1/organizations/{organizationId}/labels": { id: "listOrganizationLabels" },
  "POST /v1/locations/{locationId}/desks": { id: "createDesk" },
  "GET /v1/locations/{locationId}/desks": { id: "listDesks" },
  "GET /v1/desks/{deskId}": { id: "getDesk" },
  "PATCH /v1/desks/{deskId}": { id: "updateDesk" },
  "DELETE /v1/desks/{deskId}": { id: "deleteDesk" },
  "POST /v1/desks/{deskId}/open": { id: "openDesk", errors: ["CONFLICT"] },
  "POST /v1/desks/{deskId}/close": { id: "closeDesk", errors: ["INVALID_STATE", "CONFLICT"] },
  "POST /v1/desks/{deskId}/call-next": {
    id: "callDeskNext",
    errors: ["INVALID_STATE", "CONFLICT", "QUEUE_EMPTY", "OPERATOR_UNAVAILABLE"],
  },
  "GET /v1/locations/{locationId}/floor": { id: "getLocationFloor" },
  "GET /v1/desks/{deskId}/console": { id: "getDeskConsole" },
  "GET /v1/tickets/{ticketId}/receipt": { id: "getTicketReceipt" },

  "POST /v1/remote-join/{queueId}/start": { id: "startRemoteJoin", errors: [...JOIN, "OUT_OF_RANGE", "REMOTE_JOIN_PENALTY", "CONFLICT"] },
  "POST /v1/remote-join/{ticketId}/location": { id: "updateRemoteJoinLocation", errors: STATE },
  "POST /v1/remote-join/{ticketId}/confirm": { id: "confirmRemoteJoin", errors: STATE },
  "GET /v1/remote-join/{ticketId}": { id: "getRemoteJoin" },

  "GET /v1/qr/generate": { id: "generateQrImage" },
  "POST /v1/qr-tokens": { id: "createQrToken", errors: STATE },
  "GET /v1/qr-tokens": { id: "listQrTokens", organizationFromRequest: true },
  "DELETE /v1/qr-tokens/{id}": { id: "revokeQrToken" },
  "POST /v1/qr/scan": { id: "scanQrCode", errors: [...JOIN, "QR_TOKEN_EXPIRED", "QR_TOKEN_USED", "OUT_OF_RANGE", "INVALID_STATE"] },

  "POST /v1/nfc/tags": { id: "registerNfcTag", errors: ["CONFLICT"] },
  "GET /v1/nfc/tags": { id: "listNfcTags", organizationFromRequest: true },
  "GET /v1/nfc/tags/{nfcId}": { id: "getNfcTag" },
  "PATCH /v1/nfc/tags/{nfcId}": { id: "updateNfcTag" },
  "POST /v1/nfc/scan": { id: "scanNfcTag", errors: [...JOIN, "OUT_OF_RANGE"] },

  "POST /v1/calendar/organization/{organizationId}": { id: "createCalendarEvent", errors: RULES },
  "POST /v1/calendar/organization/{organizationId}/availability": { id: "declareUnavailability", errors: RULES },
  "PATCH /v1/calendar/{eventId}": { id: "updateCalendarEvent", errors: RULES },
  "DELETE /v1/calendar/{eventId}": { id: "deleteCalendarEvent", errors: RULES },
  "GET /v1/business/calendar": { id: "listCalendarOccurrences", organizationFromRequest: true },
  "GET /v1/business/calendar/availability": { id: "listMemberAvailability", organizationFromRequest: true },

  "GET /v1/embed.js": { id: "getEmbedScript" },
  "GET /v1/board.js": { id: "getBoardScript" },
  "GET /v1/widget/board": { id: "getDisplayBoardPage" },
  "GET /v1/widget/organization/{organizationId}/info": { id: "getWidgetInfo" },
  "GET /v1/widget/locations/{locationId}/kiosk": { id: "getKioskInfo" },
  "GET /v1/widget/queue/{queueId}/status": { id: "getWidgetQueueStatus" },
  "POST /v1/widget/queue/{queueId}/join": { id: "joinQueueFromWidget", errors: JOIN },
  "GET /v1/widget/organization/{organizationId}/display-board": { id: "getDisplayBoard" },
  "GET /v1/widget/ws": { id: "openLiveUpdates" },
  "GET /v1/widget/tickets/{ticketId}": { id: "getVisitorTicket" },
  "GET /v1/widget/tickets/{ticketId}/place": { id: "getVisitorTicketPlace" },
  "POST /v1/widget/tickets/{ticketId}/cancel": { id: "leaveQueueFromWidget", errors: STATE },
  // The customer's verdict (docs/visits.md, feedback).
  "GET /v1/widget/tickets/{ticketId}/feedback": { id: "getVisitorFeedback" },
  "POST /v1/widget/tickets/{ticketId}/feedback": {
    id: "giveVisitorFeedback",
    errors: ["INVALID_STATE", "FEEDBACK_ALREADY_GIVEN", "FEEDBACK_WINDOW_CLOSED"],
  },
  "GET /v1/widget/push/public-key": { id: "getWebPushPublicKey" },
  "POST /v1/widget/tickets/{ticketId}/push-subscription": { id: "subscribeVisitorToWebPush" },
  "DELETE /v1/widget/tickets/{ticketId}/push-subscription": { id: "unsubscribeVisitorFromWebPush" },

  "GET /v1/billing/subscription/{organizationId}": { id: "getSubscription" },
  "PATCH /v1/billing/subscription/{organizationId}": {
    id: "changeSubscription",
    errors: ["PAYMENT_PROVIDER_ERROR", "PROVIDER_UNAVAILABLE"],
  },
  "POST /v1/billing/subscription/{organizationId}/cancel": { id: "cancelSubscription", errors: STATE },
  "GET /v1/billing/usage/{organizationId}": { id: "getUsage" },
  "GET /v1/billing/usage/{organizationId}/history": { id: "listInvoices" },
  "POST /v1/billing/fedapay/checkout": { id: "createFedapayCheckout", errors: ["PAYMENT_PROVIDER_ERROR", "PROVIDER_UNAVAILABLE"] },
  "POST /v1/billing/webhooks/stripe": { id: "receiveStripeEvent", errors: RULES },
  "POST /v1/billing/webhooks/fedapay": { id: "receiveFedapayEvent", errors: ["PAYMENT_PROVIDER_ERROR", ...RULES] },
  "POST /v1/billing/webhooks/sandbox": { id: "receiveSandboxEvent", errors: RULES },
  "GET /v1/billing/checkouts/{checkoutId}": { id: "getCheckout" },
  "POST /v1/billing/checkouts/{checkoutId}": { id: "paySandboxCheckout", errors: [...STATE, ...RULES] },

  "POST /v1/push/register": { id: "registerPushDevice" },
  "DELETE /v1/push/unregister": { id: "unregisterPushDevice" },
  "GET /v1/notifications/preferences": { id: "getNotificationPreferences" },
  "PATCH /v1/notifications/preferences": { id: "updateNotificationPreferences", errors: ACCESS },
  "GET /v1/notifications": { id: "listNotifications" },
  "POST /v1/notifications/read-all": { id: "markAllNotificationsRead" },
  "POST /v1/notifications/{notificationId}/read": { id: "markNotificationRead" },
  "POST /v1/notifications/sms": { id: "sendSms", errors: ["PLAN_REQUIRED", "QUOTA_EXCEEDED", "CONFLICT"], organizationFromRequest: true },
  "GET /v1/organizations/{organizationId}/notification-deliveries": { id: "listNotificationDeliveries" },
  "GET /v1/organizations/{organizationId}/sms-policy": { id: "getSmsPolicy" },
  "PATCH /v1/organizations/{organizationId}/sms-policy": { id: "updateSmsPolicy" },
  "GET /v1/organizations/{organizationId}/message-templates": { id: "listMessageTemplates" },
  "PUT /v1/organizations/{organizationId}/message-templates/{templateKey}": { id: "putMessageTemplate" },
  "DELETE /v1/organizations/{organizationId}/message-templates/{templateKey}": { id: "resetMessageTemplate" },
  "POST /v1/organizations/{organizationId}/message-templates/{templateKey}/preview": { id: "previewMessageTemplate" },

  "POST /v1/business/verification/generate-token": { id: "generateVerificationToken", organizationFromRequest: true },
  "POST /v1/business/verification/verify": { id: "verifyDomain", organizationFromRequest: true },
  "GET /v1/business/verification/status": { id: "getVerificationStatus", organizationFromRequest: true },

  "POST /v1/organizations/{organizationId}/webhooks": { id: "createWebhook", errors: ["QUOTA_EXCEEDED"] },
  "GET /v1/organizations/{organizationId}/webhooks": { id: "listWebhooks" },
  "GET /v1/organizations/{organizationId}/webhooks/{webhookId}": { id: "getWebhook" },
  "PATCH /v1/organizations/{organizationId}/webhooks/{webhookId}": { id: "updateWebhook" },
  "DELETE /v1/organizations/{organizationId}/webhooks/{webhookId}": { id: "deleteWebhook" },
  "POST /v1/organizations/{organizationId}/webhooks/{webhookId}/rotate-secret": { id: "rotateWebhookSecret" },
  "POST /v1/organizations/{organizationId}/webhooks/{webhookId}/test": { id: "sendTestWebhook" },
  "GET /v1/organizations/{organizationId}/webhooks/{webhookId}/deliveries": { id: "listWebhookDeliveries" },
  "POST /v1/organizations/{organizationId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver": { id: "redeliverWebhook" },

  "GET /v1/analytics/summary": { id: "getAnalyticsSummary", errors: ["PLAN_REQUIRED"], organizationFromRequest: true },
  "GET /v1/analytics/operators": { id: "getOperatorAnalytics", errors: ["PLAN_REQUIRED"], organizationFromRequest: true },
  "GET /v1/analytics/kinds": { id: "getAnalyticsByKind", errors: ["PLAN_REQUIRED"], organizationFromRequest: true },
  "GET /v1/analytics/visits": { id: "getVisitAnalytics", errors: ["PLAN_REQUIRED"], organizationFromRequest: true },
  "GET /v1/analytics/heatmap": { id: "getArrivalHeatmap", errors: ["PLAN_REQUIRED"], organizationFromRequest: true },
  "GET /v1/analytics/estimates": { id: "getEstimateAccuracy", errors: ["PLAN_REQUIRED"], organizationFromRequest: true },
  "GET /v1/analytics/feedback": { id: "getFeedbackAnalytics", errors: ["PLAN_REQUIRED"], organizationFromRequest: true },
  "GET /v1/analytics/export.csv": { id: "exportTicketsCsv", errors: ["PLAN_REQUIRED"], organizationFromRequest: true },

  "GET /v1/errors": { id: "listErrorCodes" },
  "GET /v1/events": { id: "listEvents", organizationFromRequest: true },
  "GET /v1/organizations/{organizationId}/events/stream": { id: "streamEvents" },
  "GET /v1/errors/{code}": { id: "getErrorCode" },
  // Conversations (issue 30, docs/conversations.md).
  "POST /v1/inbound/sms/twilio": { id: "receiveTwilioSms", errors: ["PROVIDER_UNAVAILABLE"] },
  "POST /v1/inbound/sms/twilio/status": { id: "receiveTwilioSmsStatus", errors: ["PROVIDER_UNAVAILABLE"] },
  // USSD (issue 45, docs/conversations.md).
  "GET /v1/organizations/{organizationId}/ussd": { id: "getUssdCode" },
  "PUT /v1/organizations/{organizationId}/ussd": { id: "registerUssdCode", errors: ["CONFLICT"] },
  "DELETE /v1/organizations/{organizationId}/ussd": { id: "removeUssdCode" },
  "POST /v1/inbound/ussd": { id: "receiveUssd" },
  // WhatsApp (issue 45, docs/conversations.md).
  "GET /v1/inbound/whatsapp": { id: "answerWhatsappChallenge" },
  "POST /v1/inbound/whatsapp": { id: "receiveWhatsappMessages", errors: ["PROVIDER_UNAVAILABLE"] },
  "GET /v1/organizations/{organizationId}/whatsapp": { id: "getWhatsappSettings" },
  "PUT /v1/organizations/{organizationId}/whatsapp": { id: "saveWhatsappSettings", errors: ["CONFLICT"] },
  "DELETE /v1/organizations/{organizationId}/whatsapp": { id: "deleteWhatsappSettings" },
  "GET /v1/queues/{queueId}/whatsapp-link": { id: "getQueueWhatsappLink" },

  "GET /v1/organizations/{organizationId}/sso": { id: "getSsoConnection" },
  "PUT /v1/organizations/{organizationId}/sso": { id: "saveSsoConnection", errors: ["CONFLICT"] },
  "DELETE /v1/organizations/{organizationId}/sso": { id: "deleteSsoConnection" },
  "GET /v1/auth/sso/start": { id: "startSsoSignIn", errors: ["NOT_FOUND", "PROVIDER_UNAVAILABLE"] },
  "GET /v1/auth/sso/callback": { id: "completeSsoSignIn", errors: ["SSO_FAILED", "PROVIDER_UNAVAILABLE", ...ACCESS] },
  "GET /v1/tickets/{ticketId}/messages": { id: "listTicketMessages" },
  "POST /v1/tickets/{ticketId}/messages": { id: "sendTicketMessage", errors: ["PLAN_REQUIRED", "QUOTA_EXCEEDED", "CONFLICT"] },
  "GET /v1/organizations/{organizationId}/audit-events": { id: "listAuditEvents" },
  "GET /v1/organizations/{organizationId}/audit-events/export.csv": { id: "exportAuditEventsCsv" },
  "GET /v1/organizations/{organizationId}/audit-events/verify": { id: "verifyAuditChain" },
  // A person's data on request (issue 40, docs/personal-data.md).
  "POST /v1/organizations/{organizationId}/data-subjects/export": { id: "exportDataSubject" },
  "POST /v1/organizations/{organizationId}/data-subjects/erase": { id: "eraseDataSubject", errors: STATE },
  // One-time phone codes (issue 26, docs/limits.md).
  "GET /v1/tickets/{ticketId}/phone-verification": { id: "getTicketPhoneVerification" },
  "POST /v1/tickets/{ticketId}/phone-verification": { id: "verifyTicketPhone", errors: STATE },
  "POST /v1/tickets/{ticketId}/phone-verification/resend": { id: "resendTicketPhoneCode", errors: STATE },
};

/** What a code means, for the error responses' descriptions. */
export const ERROR_MEANINGS: Record<ErrorCode, string> = {
  VALIDATION_ERROR: "a field, query parameter or header is invalid; `details.field` names it",
  AUTHENTICATION_ERROR: "no credential, or an unknown one",
  TOKEN_EXPIRED: "the session has expired; log in again",
  PLAN_REQUIRED: "the organization's plan does not include this; `details {requiredPlan, currentPlan, limit}`",
  AUTHORIZATION_ERROR: "the role, scope or key does not allow this",
  KEY_REVOKED: "the API key was revoked",
  QUOTA_EXCEEDED: "a monthly quota is used up; `details {limit, used, resetsAt}`",
  REMOTE_JOIN_PENALTY: "remote join is suspended for this user; `details.until`",
  SSO_FAILED: "a single sign-on was refused (state, token, nonce or domain); `details.reason` says which, nothing was created",
  SSO_REQUIRED: "this e-mail's organization enforces single sign-on: no password; start at `details.signInUrl`",
  NOT_FOUND: "unknown id, or an id of another organization",
  METHOD_NOT_ALLOWED: "the path takes other methods; `Allow` and `details.allowed` list them",
  CONFLICT: "a unique value is taken, or a concurrent change won; `details.field`",
  INVALID_STATE: "not allowed from the current state; `details {status, allowed}`",
  QUEUE_PAUSED: "the queue takes no new tickets while paused",
  QUEUE_CLOSED: "the queue is closed (or its service inactive, or a closure runs: `details.reason`)",
  QUEUE_FULL: "the party does not fit the queue's capacity",
  QUEUE_EMPTY: "no ticket can be called",
  OPERATOR_UNAVAILABLE: "the caller is on a break, closure or unavailability; `details {eventId, until}`",
  RECALL_LIMIT_REACHED: "the called ticket was recalled as many times as allowed; `details {recallCount, limit}`",
  INTAKE_REQUIRED:
    "the service's `at_serve` questions are not all answered on the ticket; `details {field, missing[]}` name them as `intake.<key>` (PATCH /v1/tickets/{ticketId}/intake)",
  DEFER_TOO_FAR: "the later turn asked is past the queue's `maxDeferMinutes`; `details {field: until, maxDeferMinutes, latest}`",
  DEFER_LIMIT_REACHED: "the ticket was deferred as many times as the queue allows; `details {field, defers, maxDefers}`",
  SLOT_UNAVAILABLE:
    "the appointment slot cannot be taken; `details {field, reason}`: too_soon, beyond_horizon, no_slot (outside the hours, in a closure or break, off the grid), full (overlapping bookings and holds use its capacity) or staff_busy",
  CHECK_IN_NOT_OPEN: "an appointment's check-in is not open yet; `details.opensAt` says when it opens (docs/blend.md)",
  FEEDBACK_ALREADY_GIVEN: "the ticket's customer gave their verdict already (once per ticket, docs/visits.md)",
  FEEDBACK_WINDOW_CLOSED: "the ticket was served more than 7 days ago: too late for its verdict; `details {servedAt, closedAt}`",
  QR_TOKEN_EXPIRED: "the QR token has expired",
  QR_TOKEN_USED: "the single-use QR token was used already",
  PAYLOAD_TOO_LARGE: "the body is over 64 KiB",
  UNSUPPORTED_MEDIA_TYPE: "the body is not `application/json`",
  OUT_OF_RANGE: "the position is farther than allowed; `details {distanceKm, maxKm}`",
  API_RATE_LIMIT_EXCEEDED: "too many requests, or a phone's SMS cap (`details.field: phone`); wait `Retry-After` seconds",
  PAYMENT_PROVIDER_ERROR: "the payment provider did not answer as expected; retry later",
  PROVIDER_UNAVAILABLE: "no payment provider is configured for this currency; `details {currency, provider}` (docs/billing.md)",
  CHANGE_NOT_CONFIRMED:
    "a rule change is saved but not every queue's room confirmed it yet (`details.queueIds`, docs/room-rules.md), or a change of sessions or memberships was refused with nothing changed because the accounts' objects could not be told first (`details.change: access`, docs/hot-path.md); either way send the same request again after `Retry-After` seconds",
  INTERNAL_ERROR: "a fault on our side; quote the request id",
};
