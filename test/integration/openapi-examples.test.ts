import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { DEMO, seedSql } from "../../scripts/seed.mjs";
import { call, type ApiResponse } from "../helpers/api";
import { insertQueue, settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { fakeInternet, type FakeInternet } from "../helpers/outbound";
import { schemaErrors } from "../helpers/json-schema";
import { now } from "../../src/lib/clock";
import { queueIdOfTicket } from "../../src/lib/ids";
import { signHeader } from "../../src/lib/signed-header";
import { MAC_HEX_LENGTH, signCredential } from "../../src/lib/credentials";
import { sandboxSecret } from "../../src/providers/sandbox";
import { AUDITED } from "../../src/audit/audited-operations";

// The document's examples are a walk through the demo organization `npm run dev` seeds. This
// file seeds exactly that demo (scripts/seed.mjs: organization, owner, operator, admin key,
// location and service, with their documented ids) plus the demo queue with its documented id,
// then sends every operation's request example — path and query parameters, headers, body, as
// the document gives them — in the order of STEPS, and expects the documented success status.
// Every example response, and every answer the app gives here, must fit its schema.
//
// Records the API names itself (tickets, calendar events, webhooks, …) cannot carry their
// documented id. DOC lists the documented ids; the demo queue and the owner's notification are
// written straight into storage with theirs (beforeAll); any other stands, in a step, for the
// record that step's `prepare` names (`madeBy`: one an earlier step answered; `ticket(state)`:
// a new ticket in that state). STEPS is the one place where that mapping is made.

type Json = Record<string, any>;

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** The documented ids of records the API names itself. */
const DOC = {
  ticket: "tkt_d3m0q000000000000000k7x2m9p4w8n3",
  ticketToken: "q3N8v0c1Zr6mT2yWbE5kH9sJ4dLx7aPfGu0oRiXnYw8A",
  event: "evt_d3m0sh1ft00000000000",
  webhook: "whk_d3m0h00k000000000000",
  delivery: "dlv_d3m0d3l1v3ry000000000",
  notification: "ntf_d3m0n0t1f000000000000",
  checkout: "chk_d3m0pr00000000000000",
  qrToken: "qrt_d3m0qr000000000000000",
  queue: "que_d3m0q000000000000000",
  desk: "dsk_d3m0gu1ch3t3000000000",
  invitation: "ivt_d3m0nv1tat10n0000000",
  operator: DEMO.operator.id,
  qrValue: "k3v9w2x8c4n7b5m1q6z0r2t8y4u6i9o3",
  appointment: "apt_d3m0rdv0000000000000",
  hold: "hld_d3m0h0ld000000000000",
  checkInCode: "7KQ-2MX",
};

/** The documented day: the examples' dates (a shift on 20 March 2026, a QR token valid to the year's end) read from it. */
const DOCUMENTED_NOW = "2026-03-20T09:30:00.000Z";

/**
 * Operations not sent, each with its reason. Everything else in the document must be in STEPS
 * (the test fails otherwise), so a new route is either exercised here or explained here.
 */
const EXCLUDED: Record<string, string> = {
  getTestMode: "answers a test key only (the flow uses a live one): test/integration/test-mode.test.ts sends it",
  resetTestMode: "answers a test key only (the flow uses a live one): test/integration/test-mode.test.ts sends it",
  startSimulation: "answers a test key only (the flow uses a live one): test/integration/test-simulations.test.ts sends it",
  getSimulation: "answers a test key only (the flow uses a live one): test/integration/test-simulations.test.ts sends it",
  stopSimulation: "answers a test key only (the flow uses a live one): test/integration/test-simulations.test.ts sends it",
  openLiveUpdates: "a WebSocket upgrade (101), not a request/response exchange: test/integration/widget.test.ts opens it",
  streamEvents: "a WebSocket upgrade (101), not a request/response exchange: test/integration/event-socket.test.ts opens it",
  receiveTwilioSms:
    "Twilio's form-encoded webhook, signed over the URL and parameters: test/integration/inbound-sms.test.ts sends real and forged signatures",
  receiveTwilioSmsStatus:
    "Twilio's form-encoded status callback, signed over the URL and parameters: test/integration/inbound-status.test.ts sends real and forged ones",
  deferTicket:
    "needs the test clock to show its effect (not called before `until`): test/integration/defer.test.ts sends it with each bound",
  deferVisitorTicket:
    "the visitor's form of deferTicket, with the ticket token: test/integration/defer.test.ts sends it with the clock and the bounds",
  giveVisitorFeedback:
    "only after the ticket was served, with its token (forgotten by the flow's visitor): test/integration/feedback.test.ts sends it with each refusal",
  getVisitorFeedback: "with a served ticket's token: test/integration/feedback.test.ts reads it before and after the verdict",
  getFeedbackAnalytics: "needs verdicts over a history: test/integration/feedback.test.ts compares it with a generated history's ratings",
  getUssdCode: "the aggregator's code of an organization: test/integration/ussd.test.ts registers, reads and removes it",
  registerUssdCode: "the aggregator's code of an organization: test/integration/ussd.test.ts registers, reads and removes it",
  removeUssdCode: "the aggregator's code of an organization: test/integration/ussd.test.ts registers, reads and removes it",
  receiveUssd:
    "the aggregator's form-encoded session callback, with its secret: test/integration/ussd.test.ts plays every menu in both languages",
  answerWhatsappChallenge: "Meta's subscription check, a query string answered as text: test/integration/whatsapp.test.ts sends it",
  receiveWhatsappMessages:
    "Meta's webhook, signed over the raw body (X-Hub-Signature-256): test/integration/whatsapp.test.ts sends real and forged signatures",
  getWhatsappSettings: "needs a WhatsApp Business number: test/integration/whatsapp.test.ts connects, reads and removes one",
  saveWhatsappSettings: "needs a WhatsApp Business number: test/integration/whatsapp.test.ts connects, reads and removes one",
  deleteWhatsappSettings: "needs a WhatsApp Business number: test/integration/whatsapp.test.ts connects, reads and removes one",
  getQueueWhatsappLink: "needs a connected WhatsApp number: test/integration/whatsapp.test.ts reads the wa.me link",
  getSsoConnection:
    "needs an identity provider and a verified domain: test/integration/sso.test.ts configures, reads and removes one with a stand-in provider",
  saveSsoConnection:
    "fetches the issuer's discovery document and needs a verified domain: test/integration/sso.test.ts configures one with a stand-in provider",
  deleteSsoConnection: "needs a configured connection: test/integration/sso.test.ts removes one",
  startSsoSignIn: "a browser redirect (302) to the identity provider: test/integration/sso.test.ts follows it to a stand-in provider",
  completeSsoSignIn:
    "needs the state cookie of a start and a code of the provider: test/integration/sso.test.ts plays the whole round trip and each refusal",
  exportMe: "the signed-in person's own data: test/integration/auth-me-data.test.ts reads it",
  eraseMe:
    "erases the account that signs the flow's requests: test/integration/auth-me-data.test.ts erases a member and refuses a last owner",
};

/** Audited operations whose example, sent in the flow, changes nothing (so records nothing), each with why. */
const UNCHANGED_IN_FLOW: Record<string, string> = {
  setQueueStatus: "the example sets the status the demo queue already has; audit-actions.test.ts checks a real change's entry",
};

/** The providers' webhook secrets while the flow runs (the sandbox's is its built-in default). */
const WEBHOOK_SECRETS = { STRIPE_WEBHOOK_SECRET: "whsec_examples_test", FEDAPAY_WEBHOOK_SECRET: "wh_sandbox_examples_test" };

interface Context {
  /** Session of the demo owner (the logIn example). */
  ownerToken: string;
  /** Session of the demo operator, the owner after transferOwnership. */
  operatorToken: string;
  /** Session of a person invited in a step's prepare (declineInvitation). */
  inviteeToken: string;
  /** Session of the customer who books (holdAppointmentSlot's prepare). */
  customerToken: string;
  /** The check-in code of a second appointment, for the kiosk (checkInAppointment's prepare). */
  kioskCode: string;
  net: FakeInternet;
  /** What a documented id stands for in the step being sent. */
  ids: Map<string, string>;
  /** Answers of the steps sent so far, by operationId. */
  answers: Map<string, ApiResponse>;
}

interface Step {
  id: string;
  /** Makes the state the example assumes; may say which record a documented id stands for. */
  prepare?: (ctx: Context) => Promise<void>;
  /** Credential to send when the operation accepts a session (default: the demo owner's). */
  token?: (ctx: Context) => string;
  /** A provider's webhook: the documented event is signed, as the provider would, with this secret and header scheme. */
  signed?: { header: string; scheme: string; secret: () => Promise<string> };
}

/** A new queue of the demo service, made through the API with the demo key (answers its id). */
async function newQueue(): Promise<string> {
  const res = await call("POST", "/v1/business/queues", {
    apiKey: DEMO.apiKey.value,
    body: { serviceId: DEMO.service.id, name: `Side queue ${crypto.randomUUID().slice(0, 8)}` },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.id;
}

/** A ticket in `state`, alone in a queue of its own, made through the API with the demo key. */
async function ticketIn(state: "waiting" | "called" | "serving" | "skipped" | "held"): Promise<string> {
  const apiKey = DEMO.apiKey.value;
  const queueId = await newQueue();
  const made = await call("POST", `/v1/queues/${queueId}/operator-join`, { apiKey, body: { visitorName: "Side visitor" } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const ticketId: string = made.body.data.id;
  const steps: [string, unknown][] = [];
  if (state !== "waiting") steps.push([`/v1/queues/${queueId}/call-next`, {}]);
  if (state === "serving") steps.push([`/v1/tickets/${ticketId}/serve`, undefined]);
  if (state === "skipped") steps.push([`/v1/tickets/${ticketId}/skip-absent`, { reason: "absent" }]);
  if (state === "held") steps.push([`/v1/tickets/${ticketId}/hold`, {}]);
  for (const [path, body] of steps) {
    const res = await call("POST", path, { apiKey, body });
    expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(200);
  }
  return ticketId;
}

/** The documented ticket stands for a new one in `state`. */
function ticket(state: "waiting" | "called" | "serving" | "skipped" | "held") {
  return async (c: Context) => {
    c.ids.set(DOC.ticket, await ticketIn(state));
  };
}

/** The documented id stands for the record an earlier step answered (`data.id` unless `pick` says). */
function madeBy(documented: string, stepId: string, pick: (data: any) => string = (d) => d.id) {
  return async (c: Context) => {
    const answer = c.answers.get(stepId);
    if (!answer?.body?.data) throw new Error(`${stepId} has not answered a record`);
    c.ids.set(documented, pick(answer.body.data));
  };
}

/** The ticket joinQueue answered, once its room's outbox reached D1 (issue 30: the reply reads its phone there). */
async function joinedTicketDrained(c: Context): Promise<void> {
  await madeBy(DOC.ticket, "joinQueue")(c);
  await settle(DOC.queue);
}

/** The demo domain's TXT record carries the token generateVerificationToken answered. */
async function publishDnsProof(c: Context): Promise<void> {
  const { token } = c.answers.get("generateVerificationToken")!.body.data;
  c.net.dns["demo-bank.example.com"] = { ...c.net.dns["demo-bank.example.com"], TXT: [`"service-verification=${token}"`] };
}

/** The widget join's ticket and its token stand for the documented ones (the visitor's own ticket). */
async function visitorsOwnTicket(c: Context): Promise<void> {
  const joined = c.answers.get("joinQueueFromWidget")?.body?.data;
  if (!joined) throw new Error("joinQueueFromWidget has not answered a ticket");
  c.ids.set(DOC.ticket, joined.id);
  c.ids.set(DOC.ticketToken, joined.ticketToken);
}

/** The documented phone code: the visitor's own ticket has a pending one (its MAC stored as the join stores it). */
const DOCUMENTED_PHONE_CODE = "482915";

async function visitorsPendingPhoneCode(c: Context): Promise<void> {
  await visitorsOwnTicket(c);
  const ticketId = c.ids.get(DOC.ticket)!;
  const hash = (await signCredential(env, `phone-code:${ticketId}:${DOCUMENTED_PHONE_CODE}`)).slice(-MAC_HEX_LENGTH);
  await env.DB.prepare(
    `INSERT INTO phone_verifications (ticket_id, organization_id, phone, language, code_hash, expires_at, failed_attempts, codes_sent,
     verified_at, created_at, updated_at) VALUES (?, ?, '+33612345678', 'fr', ?, ?, 0, 1, NULL, ?, ?)`,
  )
    .bind(ticketId, DEMO.organization.id, hash, now() + 10 * 60_000, now(), now())
    .run();
}

/** A waiting ticket with another one behind it (someone to let pass), in a queue of its own. */
async function waitingWithOneBehind(c: Context): Promise<void> {
  const ticketId = await ticketIn("waiting");
  const behind = await call("POST", `/v1/queues/${queueIdOfTicket(ticketId)}/operator-join`, { apiKey: DEMO.apiKey.value, body: {} });
  expect(behind.status, JSON.stringify(behind.body)).toBe(201);
  c.ids.set(DOC.ticket, ticketId);
}

/** The visitor's own ticket, with a walk-in behind it on the demo queue. */
async function visitorWithOneBehind(c: Context): Promise<void> {
  await visitorsOwnTicket(c);
  const behind = await call("POST", `/v1/queues/${DOC.queue}/operator-join`, { apiKey: DEMO.apiKey.value, body: {} });
  expect(behind.status, JSON.stringify(behind.body)).toBe(201);
}

/** The session of the person the register example made (Nadia, invited by addMember). */
function registered(c: Context): string {
  return c.answers.get("register")!.body.data.session.token;
}

/** A new account invited to the demo organization: the documented invitation stands for theirs. */
async function invitedNewcomer(c: Context): Promise<void> {
  const email = `newcomer-${crypto.randomUUID().slice(0, 8)}@demo.example`;
  const made = await call("POST", "/v1/auth/register", {
    body: { email, password: "newcomer-password", firstName: "New", lastName: "Comer", accountType: "business" },
  });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  c.inviteeToken = made.body.data.session.token;
  await invitation(email)(c);
}

/** The documented invitation stands for a new one to `email` (`undefined`: an address with no account). */
function invitation(email?: string) {
  return async (c: Context) => {
    const res = await call("POST", `/v1/organizations/${DEMO.organization.id}/members`, {
      token: c.ownerToken,
      body: { email: email ?? `nobody-${crypto.randomUUID().slice(0, 8)}@demo.example`, role: "operator" },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    c.ids.set(DOC.invitation, res.body.data.id);
  };
}

/** A customer's account (not a member): they hold, book and list their own appointments. */
async function registeredCustomer(c: Context): Promise<void> {
  const made = await call("POST", "/v1/auth/register", {
    body: {
      email: `awa-${crypto.randomUUID().slice(0, 8)}@demo.example`,
      password: "awa-demo-password",
      firstName: "Awa",
      lastName: "Diallo",
      accountType: "customer",
    },
  });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  c.customerToken = made.body.data.session.token;
}

/** Another booking of the demo service at `start` (a Paris wall-clock time), made with the demo key. */
async function bookDemo(start: string): Promise<{ id: string; checkInCode: string }> {
  const res = await call("POST", "/v1/appointments", {
    apiKey: DEMO.apiKey.value,
    body: {
      serviceId: DEMO.service.id,
      locationId: DEMO.location.id,
      start,
      customer: { name: "Kofi Mensah", phone: "+33612345679", language: "en" },
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.data.id, checkInCode: res.body.data.checkInCode };
}

/**
 * Check-in opens 30 minutes before the start (the example's booking settings): the clock moves
 * to 12:05 in Paris, inside the window of Awa's 12:30. Before that, a second customer books the
 * 12:00 her move freed (a booking takes a slot at least an hour ahead): the kiosk checks them in.
 */
async function checkInWindow(c: Context): Promise<void> {
  c.kioskCode = (await bookDemo("2026-03-20T12:00:00+01:00")).checkInCode;
  testClock.set("2026-03-20T11:05:00.000Z");
  await madeBy(DOC.appointment, "bookAppointment")(c);
}

async function logInOperator(c: Context): Promise<void> {
  const res = await call("POST", "/v1/auth/login", { body: { email: DEMO.operator.email, password: DEMO.operator.password } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  c.operatorToken = res.body.data.session.token;
}

/** The order of the business flow: accounts, organization, catalog, queue and tickets, then the deletions. */
const STEPS: Step[] = [
  { id: "register" },
  { id: "logIn" },
  { id: "getMe" },
  { id: "updateMe" },
  { id: "refreshSession" },
  { id: "createOrganization" },
  { id: "listOrganizations" },
  { id: "getOrganization" },
  { id: "updateOrganization" },
  { id: "getDashboard" },
  { id: "listMembers" },
  // Adding a member invites them; Nadia (the register example) accepts with her own session.
  { id: "addMember" },
  { id: "listInvitations" },
  { id: "listMyInvitations", token: registered },
  { id: "acceptInvitation", prepare: madeBy(DOC.invitation, "addMember"), token: registered },
  { id: "declineInvitation", prepare: invitedNewcomer, token: (c) => c.inviteeToken },
  { id: "revokeInvitation", prepare: invitation() },
  { id: "updateMember" },
  // The widget key's allowed origin must be on a verified domain: the DNS proof comes first.
  { id: "generateVerificationToken" },
  { id: "verifyDomain", prepare: publishDnsProof },
  { id: "getVerificationStatus" },
  { id: "createApiKey" },
  { id: "listApiKeys" },

  { id: "createLocation" },
  { id: "listLocations" },
  { id: "searchLocations" },
  { id: "findNearbyLocations" },
  { id: "updateLocation" },
  { id: "listServiceTypes" },
  { id: "createService" },
  { id: "listServices" },
  { id: "searchServices" },
  { id: "getService" },
  { id: "updateService" },
  // The demo service takes appointments from updateService's example (its booking settings).
  { id: "listServiceSlots" },
  // The outcomes an operator records at completion (completeTicket names one).
  { id: "createServiceOutcome" },
  { id: "listServiceOutcomes" },
  // The questions the joins below answer (their examples' `intake`).
  { id: "putServiceIntake" },
  { id: "getServiceIntake" },

  { id: "createQueue" },
  { id: "listQueues" },
  { id: "getQueue" },
  { id: "updateQueue" },
  // How appointments and walk-ins share the line (docs/blend.md).
  { id: "getQueueBlend" },
  { id: "putQueueBlend" },
  { id: "replayQueueBlend" },
  { id: "setQueueStatus" },
  // Appointments (docs/appointments.md): a customer holds Friday's 12:00 while typing her details,
  // books it with the hold, and moves it to 12:30; staff read it and the day; another is cancelled.
  { id: "holdAppointmentSlot", prepare: registeredCustomer, token: (c) => c.customerToken },
  { id: "bookAppointment", prepare: madeBy(DOC.hold, "holdAppointmentSlot"), token: (c) => c.customerToken },
  { id: "getAppointment", prepare: madeBy(DOC.appointment, "bookAppointment") },
  { id: "listAppointmentRescheduleSlots", prepare: madeBy(DOC.appointment, "bookAppointment") },
  { id: "rescheduleAppointment", prepare: madeBy(DOC.appointment, "bookAppointment") },
  { id: "listLocationAppointments" },
  { id: "listMyAppointments", token: (c) => c.customerToken },
  {
    id: "cancelAppointment",
    prepare: async (c) => {
      c.ids.set(DOC.appointment, (await bookDemo("2026-03-20T13:00:00+01:00")).id);
    },
  },
  { id: "joinQueue" },
  { id: "getTicket", prepare: madeBy(DOC.ticket, "joinQueue") },
  // The joined ticket's phone is read from the D1 projection: its room drains first.
  { id: "sendTicketMessage", prepare: joinedTicketDrained },
  { id: "listTicketMessages", prepare: madeBy(DOC.ticket, "joinQueue") },
  { id: "editTicketIntake", prepare: madeBy(DOC.ticket, "joinQueue") },
  { id: "addTicketLabel", prepare: madeBy(DOC.ticket, "joinQueue") },
  { id: "listOrganizationLabels" },
  { id: "removeTicketLabel", prepare: madeBy(DOC.ticket, "joinQueue") },
  { id: "listQueueTickets" },
  { id: "createWalkInTicket" },
  { id: "createVipTicket" },
  { id: "callNext" },
  { id: "serveTicket", prepare: ticket("called") },
  { id: "markTicketPresent", prepare: ticket("called") },
  { id: "completeTicket", prepare: ticket("serving") },
  { id: "skipAbsentTicket", prepare: ticket("called") },
  { id: "recoverTicket", prepare: ticket("skipped") },
  { id: "cancelTicket", prepare: ticket("waiting") },
  { id: "transferTicketToQueue", prepare: ticket("waiting") },
  { id: "transferTicketToOperator", prepare: ticket("called") },
  { id: "recallTicket", prepare: ticket("called") },
  { id: "returnTicketToLine", prepare: ticket("called") },
  { id: "holdTicket", prepare: ticket("called") },
  { id: "resumeTicket", prepare: ticket("held") },
  { id: "stepBackTicket", prepare: waitingWithOneBehind },
  { id: "prioritizeTicket", prepare: ticket("waiting") },
  { id: "unprioritizeTicket", prepare: madeBy(DOC.ticket, "prioritizeTicket") },
  // A desk at the demo location over the demo queue: the owner opens it and calls from it.
  { id: "createDesk" },
  { id: "listDesks" },
  { id: "getDesk", prepare: madeBy(DOC.desk, "createDesk") },
  { id: "updateDesk", prepare: madeBy(DOC.desk, "createDesk") },
  { id: "openDesk", prepare: madeBy(DOC.desk, "createDesk") },
  { id: "callDeskNext", prepare: madeBy(DOC.desk, "createDesk") },
  { id: "getDeskConsole", prepare: madeBy(DOC.desk, "createDesk") },
  { id: "getLocationFloor" },
  { id: "closeDesk", prepare: madeBy(DOC.desk, "createDesk") },
  { id: "deleteDesk", prepare: madeBy(DOC.desk, "createDesk") },

  { id: "checkRemoteEligibility" },
  { id: "startRemoteJoin" },
  { id: "updateRemoteJoinLocation", prepare: madeBy(DOC.ticket, "startRemoteJoin", (d) => d.ticket.id) },
  { id: "getRemoteJoin", prepare: madeBy(DOC.ticket, "startRemoteJoin", (d) => d.ticket.id) },
  { id: "confirmRemoteJoin", prepare: madeBy(DOC.ticket, "startRemoteJoin", (d) => d.ticket.id) },

  { id: "createQrToken" },
  { id: "listQrTokens" },
  { id: "generateQrImage", prepare: madeBy(DOC.qrValue, "createQrToken", (d) => d.token) },
  { id: "scanQrCode", prepare: madeBy(DOC.qrValue, "createQrToken", (d) => d.token) },
  { id: "revokeQrToken", prepare: madeBy(DOC.qrToken, "createQrToken") },
  { id: "registerNfcTag" },
  { id: "listNfcTags" },
  { id: "getNfcTag" },
  { id: "updateNfcTag" },
  { id: "scanNfcTag" },

  { id: "createCalendarEvent" },
  { id: "declareUnavailability" },
  { id: "updateCalendarEvent", prepare: madeBy(DOC.event, "createCalendarEvent") },
  { id: "listCalendarOccurrences" },
  { id: "listMemberAvailability" },
  { id: "deleteCalendarEvent", prepare: madeBy(DOC.event, "createCalendarEvent") },

  { id: "getEmbedScript" },
  { id: "getDisplayBoardPage" },
  { id: "getWidgetInfo" },
  { id: "getKioskInfo" },
  { id: "getWidgetQueueStatus" },
  { id: "getBoardScript" },
  { id: "getWidgetQueueIntake" },
  { id: "joinQueueFromWidget" },
  { id: "getVisitorTicket", prepare: visitorsOwnTicket },
  { id: "getVisitorTicketPlace", prepare: visitorsOwnTicket },
  { id: "getTicketReceipt", prepare: visitorsOwnTicket },
  // The widget visitor gives back the code the join texted (requirePhoneCode), then asks again: already verified.
  { id: "verifyTicketPhone", prepare: visitorsPendingPhoneCode },
  { id: "getTicketPhoneVerification", prepare: visitorsOwnTicket },
  { id: "resendTicketPhoneCode", prepare: visitorsOwnTicket },
  { id: "getDisplayBoard" },
  { id: "getWebPushPublicKey" },
  { id: "subscribeVisitorToWebPush", prepare: madeBy(DOC.ticket, "joinQueueFromWidget") },
  { id: "unsubscribeVisitorFromWebPush", prepare: madeBy(DOC.ticket, "joinQueueFromWidget") },
  { id: "stepBackVisitorTicket", prepare: visitorWithOneBehind },
  { id: "leaveQueueFromWidget", prepare: visitorsOwnTicket },

  // The providers' events, signed here with the secrets the receivers are configured with.
  {
    id: "receiveStripeEvent",
    signed: { header: "Stripe-Signature", scheme: "v1", secret: async () => WEBHOOK_SECRETS.STRIPE_WEBHOOK_SECRET },
  },
  {
    id: "receiveFedapayEvent",
    signed: { header: "X-FEDAPAY-SIGNATURE", scheme: "s", secret: async () => WEBHOOK_SECRETS.FEDAPAY_WEBHOOK_SECRET },
  },
  { id: "receiveSandboxEvent", signed: { header: "Sandbox-Signature", scheme: "v1", secret: () => sandboxSecret(env) } },
  { id: "getSubscription" },
  { id: "getUsage" },
  { id: "listInvoices" },
  { id: "getCheckout" },
  { id: "changeSubscription" },
  { id: "paySandboxCheckout", prepare: madeBy(DOC.checkout, "changeSubscription", (d) => d.checkoutUrl.split("/").pop()) },
  { id: "createFedapayCheckout" },
  { id: "cancelSubscription" },

  { id: "createWebhook" },
  { id: "listWebhooks" },
  { id: "getWebhook", prepare: madeBy(DOC.webhook, "createWebhook") },
  { id: "updateWebhook", prepare: madeBy(DOC.webhook, "createWebhook") },
  { id: "rotateWebhookSecret", prepare: madeBy(DOC.webhook, "createWebhook") },
  { id: "sendTestWebhook", prepare: madeBy(DOC.webhook, "createWebhook") },
  { id: "listWebhookDeliveries", prepare: madeBy(DOC.webhook, "createWebhook") },
  {
    id: "redeliverWebhook",
    prepare: async (c) => {
      await madeBy(DOC.webhook, "createWebhook")(c);
      await madeBy(DOC.delivery, "listWebhookDeliveries", (list) => list[0]?.id)(c);
    },
  },
  { id: "deleteWebhook", prepare: madeBy(DOC.webhook, "createWebhook") },

  { id: "registerPushDevice" },
  { id: "unregisterPushDevice" },
  { id: "getNotificationPreferences" },
  { id: "updateNotificationPreferences" },
  { id: "listNotifications" },
  { id: "markNotificationRead" },
  { id: "markAllNotificationsRead" },
  { id: "sendSms" },
  { id: "listNotificationDeliveries" },
  { id: "getSmsPolicy" },
  { id: "updateSmsPolicy" },
  { id: "listMessageTemplates" },
  { id: "previewMessageTemplate" },
  { id: "putMessageTemplate" },
  { id: "resetMessageTemplate" },

  // The appointments' day comes: Awa checks in (staff, with her intake answers), then the kiosk
  // checks the 12:00 customer in by their code (steps after these run at 12:05 Paris).
  { id: "checkInAppointment", prepare: checkInWindow },
  {
    id: "checkInAppointmentAtKiosk",
    prepare: async (c) => {
      c.ids.set(DOC.checkInCode, c.kioskCode);
    },
  },

  // Analytics of the tickets above (the demo organization is on pro).
  { id: "getAnalyticsSummary" },
  { id: "getOperatorAnalytics" },
  { id: "getAnalyticsByKind" },
  { id: "getVisitAnalytics" },
  { id: "getArrivalHeatmap" },
  { id: "getEstimateAccuracy" },
  { id: "exportTicketsCsv" },
  { id: "listErrorCodes" },
  { id: "listEvents" },
  { id: "getErrorCode" },
  // The audit log of every change above.
  { id: "listAuditEvents" },
  { id: "exportAuditEventsCsv" },
  { id: "verifyAuditChain" },
  // A customer's data on request: the export while their ticket may still be in the line.
  { id: "exportDataSubject" },

  // The deletions, last: each removes something the steps above use.
  { id: "clearQueue" },
  // Once the line is cleared, the customer's erasure (nothing of theirs is live any more).
  { id: "eraseDataSubject" },
  { id: "archiveQueue" },
  // The operator stays (the ownership goes to them below); the colleague added above leaves.
  { id: "removeMember", prepare: madeBy(DOC.operator, "register", (d) => d.user.id) },
  { id: "deleteServiceOutcome" },
  { id: "deleteService" },
  { id: "deleteLocation" },
  { id: "revokeApiKey" },
  { id: "transferOwnership" },
  { id: "logOut" },
  // Only the owner deletes: since transferOwnership that is the operator.
  { id: "deleteOrganization", prepare: logInOperator, token: (c) => c.operatorToken },
];

const ORDER = STEPS.map((s) => s.id);

let doc: Json;
const ctx = { ownerToken: "", operatorToken: "", ids: new Map(), answers: new Map() } as unknown as Context;

function operations(): { key: string; path: string; method: string; op: Json }[] {
  return Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ key: `${method.toUpperCase()} ${path}`, path, method, op: item[method] })),
  );
}

function operation(id: string): { path: string; method: string; op: Json } {
  const found = operations().find((o) => o.op.operationId === id);
  if (!found) throw new Error(`no operation ${id} in the document`);
  return found;
}

function resolve(node: Json): Json {
  if (!node?.$ref) return node;
  return (node.$ref as string)
    .replace(/^#\//, "")
    .split("/")
    .reduce((n: Json, part) => n[part], doc);
}

/** Documented ids replaced by what they stand for in this step (whole string values only). */
function swap<T>(value: T): T {
  if (typeof value === "string") return (ctx.ids.get(value) ?? value) as T;
  if (Array.isArray(value)) return value.map(swap) as T;
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, swap(v)])) as T;
  return value;
}

/** The request the document gives as this operation's example. */
function exampleRequest(id: string): { method: string; url: string; headers: Record<string, string>; body?: unknown } {
  const { path, method, op } = operation(id);
  let url = path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const param of (op.parameters ?? []).map(resolve) as Json[]) {
    const example = param.example ?? param.schema?.example;
    if (example === undefined) {
      if (param.required) throw new Error(`${id}: the required ${param.in} parameter ${param.name} has no example`);
      continue;
    }
    const value = String(swap(example));
    if (param.in === "path") url = url.replace(`{${param.name}}`, encodeURIComponent(value));
    else if (param.in === "query") query.set(param.name, value);
    else if (param.in === "header") headers[param.name] = value;
  }
  // The documented Idempotency-Key is one value: sent again with another body it is, by design,
  // a 409. Each request here gets its own key, in the documented shape.
  if (headers["Idempotency-Key"]) headers["Idempotency-Key"] = crypto.randomUUID();
  const body = op.requestBody?.content?.["application/json"]?.example;
  const qs = query.toString();
  return { method: method.toUpperCase(), url: qs ? `${url}?${qs}` : url, headers, ...(body !== undefined ? { body: swap(body) } : {}) };
}

function credential(step: Step, op: Json): { token?: string; apiKey?: string } {
  const schemes = (op.security ?? []).flatMap((s: Json) => Object.keys(s));
  const first = schemes[0];
  if (first === undefined) return {};
  // A step that names a session sends it wherever the operation takes one (a customer books with theirs).
  if (step.token && schemes.includes("bearerAuth")) return { token: step.token(ctx) };
  if (first === "apiKey") return { apiKey: DEMO.apiKey.value };
  return { token: step.token ? step.token(ctx) : ctx.ownerToken };
}

/** The errors of `body` against the response `status` documents (a status it does not document is one). */
function responseErrors(op: Json, status: number, body: unknown): string[] {
  const response = op.responses?.[String(status)];
  if (!response) return [`status ${status} is not documented`];
  const schema = resolve(response).content?.["application/json"]?.schema;
  return schema ? schemaErrors(schema, body, doc) : [];
}

beforeAll(async () => {
  await env.DB.batch(
    seedSql()
      .split("\n")
      .map((sql) => env.DB.prepare(sql)),
  );
  await insertQueue({ id: DOC.queue, organizationId: DEMO.organization.id, serviceId: DEMO.service.id, name: DEMO.queue.name });
  // An unread notification of the owner, for markNotificationRead.
  await env.DB.prepare(
    "INSERT INTO notifications (id, user_id, organization_id, type, title, body, data, read_at, created_at) VALUES (?, ?, ?, 'ticket_called', 'A-042 called', 'Counter 3', '{}', NULL, ?)",
  )
    .bind(DOC.notification, DEMO.owner.id, DEMO.organization.id, Date.parse(DOCUMENTED_NOW))
    .run();
  const res = await call("GET", "/v1/openapi.json");
  expect(res.status).toBe(200);
  doc = res.body;
});

describe("the document's examples", () => {
  it("every example request and response fits its schema", () => {
    const errors: string[] = [];
    const check = (where: string, schema: Json | undefined, example: unknown) => {
      if (schema && example !== undefined) errors.push(...schemaErrors(schema, example, doc).map((e) => `${where} ${e}`));
    };
    let checked = 0;
    for (const { key, op } of operations()) {
      for (const param of (op.parameters ?? []).map(resolve) as Json[]) {
        check(`${key} parameter ${param.name}:`, param.schema, param.example);
        checked += param.example === undefined ? 0 : 1;
      }
      const body = op.requestBody?.content?.["application/json"];
      check(`${key} request:`, body?.schema, body?.example);
      for (const [status, ref] of Object.entries<Json>(op.responses ?? {})) {
        const json = resolve(ref).content?.["application/json"];
        check(`${key} ${status}:`, json?.schema, json?.example);
        checked += json?.example === undefined ? 0 : 1;
      }
    }
    expect(errors).toEqual([]);
    expect(checked).toBeGreaterThan(200);
  });

  it("every operation is sent or excluded with a reason, once", () => {
    const ids = operations().map((o) => o.op.operationId as string);
    expect(ids.filter((id) => !ORDER.includes(id) && !(id in EXCLUDED))).toEqual([]);
    expect([...ORDER, ...Object.keys(EXCLUDED)].filter((id) => !ids.includes(id))).toEqual([]);
    expect(new Set(ORDER).size).toBe(ORDER.length);
  });

  it("every example request succeeds when sent in the flow's order, and its answer fits the documented schema", async () => {
    const failures: string[] = [];
    let validated = 0;
    let audits = 0;
    // The outside world the examples name: the webhook endpoint's host and the demo's own domain.
    ctx.net = fakeInternet({ "hooks.example.com": { A: ["93.184.215.14"] }, "demo-bank.example.com": { A: ["93.184.215.15"] } });
    testClock.set(DOCUMENTED_NOW);
    Object.assign(env, WEBHOOK_SECRETS);
    for (const step of STEPS) {
      testClock.advance(1_000);
      ctx.ids.clear();
      try {
        await step.prepare?.(ctx);
      } catch (err) {
        failures.push(`${step.id} prepare: ${String(err)}`);
        continue;
      }
      const { op } = operation(step.id);
      const request = exampleRequest(step.id);
      if (step.signed) {
        const raw = JSON.stringify(request.body);
        request.headers[step.signed.header] = await signHeader(await step.signed.secret(), raw, now(), step.signed.scheme);
      }
      // Issue 40: each audited change leaves exactly one entry, found by the request's id.
      const requestId = `examples-${step.id}-${crypto.randomUUID().slice(0, 8)}`;
      const headers = { ...request.headers, "X-Request-ID": requestId };
      const res = await call(request.method, request.url, { ...credential(step, op), headers, body: request.body });
      ctx.answers.set(step.id, res);
      const success = Object.keys(op.responses).filter((s) => Number(s) < 400);
      if (!success.includes(String(res.status))) {
        failures.push(
          `${step.id} ${request.method} ${request.url} ${JSON.stringify(request.body)} → ${res.status} ${JSON.stringify(res.body)}`,
        );
        continue;
      }
      const audited = AUDITED[step.id];
      if (audited && step.id in UNCHANGED_IN_FLOW) {
        audits += 1;
      } else if (audited) {
        const entries = await env.DB.prepare("SELECT actor_type, actor_id, action, entity_id FROM audit_events WHERE request_id = ?")
          .bind(requestId)
          .all<{ actor_type: string; actor_id: string | null; action: string; entity_id: string }>();
        const [entry] = entries.results;
        if (entries.results.length !== 1 || entry!.action !== audited.action || !entry!.actor_id || !entry!.entity_id) {
          failures.push(`${step.id} audit: expected one ${audited.action} entry, got ${JSON.stringify(entries.results)}`);
        }
        audits += 1;
      }
      if (resolve(op.responses[String(res.status)]).content?.["application/json"]) validated += 1;
      const errors = responseErrors(op, res.status, res.body);
      if (errors.length) failures.push(`${step.id} answer: ${errors.join("; ")}`);
      if (step.id === "logIn" || step.id === "refreshSession") ctx.ownerToken = res.body.data.session?.token ?? ctx.ownerToken;
    }
    delete env.STRIPE_WEBHOOK_SECRET;
    delete env.FEDAPAY_WEBHOOK_SECRET;
    expect(failures).toEqual([]);
    // Nearly every answer is JSON with a schema (the script, page, image, receipt and CSV routes are not).
    expect(validated).toBeGreaterThan(STEPS.length - 8);
    // Every audited operation the flow sends was checked (the rest are excluded from the flow above).
    expect(audits).toBe(STEPS.filter((s) => s.id in AUDITED).length);
  }, 180_000); // ~130 requests in order: 30 s is too short on a loaded machine, 90 s was near the edge
});
