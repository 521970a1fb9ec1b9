import type { AuditAction } from "../domain/audit";
// Which operations the audit log records (issue 40: "for every operation that changes something,
// exactly one audit entry"). Every operation of the API document that changes something is in
// exactly one of the two tables below; test/integration/audit-coverage.test.ts walks the document
// and fails on an operation in neither. An operation in AUDITED whose route writes its own entry
// (in the batch of the change, with the fields before and after) is left alone by the recorder of
// ./audit-changes.ts; for the others the recorder writes the entry once the change has answered
// 2xx, naming the actor, the action and the target.

/** Where the entry's target id comes from: a path parameter, the answer's `data.id`, the organization itself, or the acting person. */
export type AuditTarget = { param: string } | "answer" | "organization" | "actor";

export interface AuditedOperation {
  entityType: string;
  action: AuditAction;
  target: AuditTarget;
}

const answer = "answer" as const;
const organization = "organization" as const;
const param = (name: string) => ({ param: name });

/** The entry `{entityType}.{verb}`: an action not in AUDIT_ACTIONS does not compile. */
function op<E extends string, V extends string>(
  entityType: E,
  verb: V,
  target: AuditTarget,
): AuditedOperation & { action: `${E}.${V}` & AuditAction } {
  return { entityType, action: `${entityType}.${verb}` as `${E}.${V}` & AuditAction, target };
}

/** operationId → the entry its change records. */
export const AUDITED: Record<string, AuditedOperation> = {
  createOrganization: op("organization", "created", answer),
  updateOrganization: op("organization", "updated", organization),
  transferOwnership: op("organization", "ownership_transferred", organization),
  addMember: op("invitation", "created", answer),
  updateMember: op("member", "role_changed", param("userId")),
  removeMember: op("member", "removed", param("userId")),
  revokeInvitation: op("invitation", "revoked", param("invitationId")),
  acceptInvitation: op("member", "joined", "actor"),
  declineInvitation: op("invitation", "declined", param("invitationId")),
  createApiKey: op("api_key", "created", answer),
  revokeApiKey: op("api_key", "revoked", param("keyId")),

  createLocation: op("location", "created", answer),
  updateLocation: op("location", "updated", param("locationId")),
  deleteLocation: op("location", "deleted", param("locationId")),
  createService: op("service", "created", answer),
  updateService: op("service", "updated", param("serviceId")),
  deleteService: op("service", "deleted", param("serviceId")),
  createServiceOutcome: op("service", "outcome_created", param("serviceId")),
  deleteServiceOutcome: op("service", "outcome_deleted", param("serviceId")),
  putServiceIntake: op("service", "intake_updated", param("serviceId")),

  createQueue: op("queue", "created", answer),
  updateQueue: op("queue", "updated", param("queueId")),
  setQueueStatus: op("queue", "status_changed", param("queueId")),
  clearQueue: op("queue", "cleared", param("queueId")),
  archiveQueue: op("queue", "archived", param("queueId")),
  putQueueBlend: op("queue", "blend_updated", param("queueId")),

  createDesk: op("desk", "created", answer),
  updateDesk: op("desk", "updated", param("deskId")),
  deleteDesk: op("desk", "deleted", param("deskId")),
  openDesk: op("desk", "opened", param("deskId")),
  closeDesk: op("desk", "closed", param("deskId")),

  createQrToken: op("qr_token", "created", answer),
  revokeQrToken: op("qr_token", "revoked", param("id")),
  registerNfcTag: op("nfc_tag", "created", answer),
  updateNfcTag: op("nfc_tag", "updated", param("nfcId")),

  createCalendarEvent: op("calendar_event", "created", answer),
  declareUnavailability: op("calendar_event", "created", answer),
  updateCalendarEvent: op("calendar_event", "updated", param("eventId")),
  deleteCalendarEvent: op("calendar_event", "deleted", param("eventId")),

  changeSubscription: op("subscription", "plan_changed", organization),
  cancelSubscription: op("subscription", "cancelled", organization),
  createFedapayCheckout: op("subscription", "checkout_created", organization),

  sendSms: op("sms", "sent", organization),
  updateSmsPolicy: op("sms_policy", "updated", organization),
  putMessageTemplate: op("message_template", "updated", param("templateKey")),
  resetMessageTemplate: op("message_template", "reset", param("templateKey")),
  generateVerificationToken: op("domain_verification", "token_created", organization),
  verifyDomain: op("domain_verification", "checked", organization),

  createWebhook: op("webhook", "created", answer),
  updateWebhook: op("webhook", "updated", param("webhookId")),
  deleteWebhook: op("webhook", "deleted", param("webhookId")),
  rotateWebhookSecret: op("webhook", "secret_rotated", param("webhookId")),
  sendTestWebhook: op("webhook", "test_sent", param("webhookId")),
  redeliverWebhook: op("webhook", "redelivered", param("webhookId")),

  registerUssdCode: op("ussd", "registered", organization),
  removeUssdCode: op("ussd", "removed", organization),
  saveWhatsappSettings: op("whatsapp", "updated", organization),
  deleteWhatsappSettings: op("whatsapp", "removed", organization),
  // Written by the SSO routes themselves, in the change's batch (sso.configured or sso.updated).
  saveSsoConnection: op("sso", "configured", organization),
  deleteSsoConnection: op("sso", "deleted", organization),

  exportDataSubject: { entityType: "data_subject", action: "export.data_subject", target: organization },
  eraseDataSubject: op("data_subject", "erased", organization),
  exportTicketsCsv: { entityType: "export", action: "export.analytics", target: organization },
};

const TICKET =
  "a visit's own step, not a change to the organization's set-up: recorded in the ticket's history and the room's outbox " +
  "(events, webhooks, analytics), kept off the join and call path (docs/hot-path.md)";
const VISITOR = "made by the visitor (no person or key of the organization acts): recorded in the ticket's or appointment's history";
const PROVIDER =
  "sent by a provider (payments, SMS, USSD, WhatsApp), signed by it: no person or key acts; its effect is in the provider's ledger";
const PERSONAL = "the signed-in person's own account or inbox, which belongs to no organization (docs/personal-data.md)";
const DRY_RUN = "computes an answer and changes nothing";

/** Operations that change something but have no entry in an organization's log, each with its reason. */
export const NOT_AUDITED: Record<string, string> = {
  register: PERSONAL,
  logIn: PERSONAL,
  refreshSession: PERSONAL,
  logOut: PERSONAL,
  updateMe: PERSONAL,
  eraseMe: "recorded in each organization the person was a member of (member.erased), by the route itself",
  registerPushDevice: PERSONAL,
  unregisterPushDevice: PERSONAL,
  updateNotificationPreferences: PERSONAL,
  markAllNotificationsRead: PERSONAL,
  markNotificationRead: PERSONAL,
  deleteOrganization: "the organization's log is deleted with everything else it owns (CONTRACT §3)",
  resetTestMode: "empties a test-mode twin, log included, and touches nothing live (docs/test-mode.md)",
  startSimulation:
    "simulated traffic in a test-mode twin: every ticket change it makes is an event of the twin, nothing live is touched (docs/test-mode.md)",
  stopSimulation: "stops simulated traffic in a test-mode twin; nothing live is touched (docs/test-mode.md)",

  joinQueue: VISITOR,
  joinQueueFromWidget: VISITOR,
  leaveQueueFromWidget: VISITOR,
  stepBackVisitorTicket: VISITOR,
  deferVisitorTicket: VISITOR,
  giveVisitorFeedback: VISITOR,
  subscribeVisitorToWebPush: VISITOR,
  unsubscribeVisitorFromWebPush: VISITOR,
  startRemoteJoin: VISITOR,
  updateRemoteJoinLocation: VISITOR,
  confirmRemoteJoin: VISITOR,
  scanQrCode: VISITOR,
  scanNfcTag: VISITOR,
  bookAppointment: VISITOR,
  holdAppointmentSlot: VISITOR,
  rescheduleAppointment: VISITOR,
  cancelAppointment: VISITOR,
  checkInAppointmentAtKiosk: VISITOR,
  verifyTicketPhone: VISITOR,
  resendTicketPhoneCode: VISITOR,

  createWalkInTicket: TICKET,
  createVipTicket: TICKET,
  callNext: TICKET,
  callDeskNext: TICKET,
  checkInAppointment: TICKET,
  cancelTicket: TICKET,
  serveTicket: TICKET,
  markTicketPresent: TICKET,
  completeTicket: TICKET,
  skipAbsentTicket: TICKET,
  recoverTicket: TICKET,
  transferTicketToQueue: TICKET,
  transferTicketToOperator: TICKET,
  returnTicketToLine: TICKET,
  recallTicket: TICKET,
  holdTicket: TICKET,
  resumeTicket: TICKET,
  stepBackTicket: TICKET,
  deferTicket: TICKET,
  prioritizeTicket: TICKET,
  unprioritizeTicket: TICKET,
  editTicketIntake: TICKET,
  addTicketLabel: TICKET,
  removeTicketLabel: TICKET,
  sendTicketMessage: "a message to a visitor: kept in the ticket's conversation with its author",

  receiveStripeEvent: PROVIDER,
  receiveFedapayEvent: PROVIDER,
  receiveSandboxEvent: PROVIDER,
  paySandboxCheckout: PROVIDER,
  receiveTwilioSms: PROVIDER,
  receiveTwilioSmsStatus: PROVIDER,
  receiveUssd: PROVIDER,
  receiveWhatsappMessages: PROVIDER,

  checkRemoteEligibility: DRY_RUN,
  replayQueueBlend: DRY_RUN,
  previewMessageTemplate: DRY_RUN,
};
