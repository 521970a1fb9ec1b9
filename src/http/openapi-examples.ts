// Realistic examples for the OpenAPI document, derived from each schema and its field names:
// the ids, names and codes of the demo organization `npm run dev` seeds (so a request example
// names things that exist there), prefixed ids, real display codes. A value that would not fit
// its schema (pattern, bounds) is left out rather than documented wrong.

type Json = Record<string, any>;

const DEMO = {
  org: "org_d3m00000000000000000",
  loc: "loc_d3m0par1s00000000000",
  svc: "svc_d3m0s3rv1c3000000000",
  que: "que_d3m0q000000000000000",
  tkt: "tkt_d3m0q000000000000000k7x2m9p4w8n3",
  usr: "usr_d3m0p3rat0r000000000",
  owner: "usr_d3m0wner000000000000",
  key: "key_d3m0k3y0000000000000",
  keyValue: "qk_live_d3m0k3y0d3m0k3y0d3m0k3y0d3m0k3y0d3m0k3y0425da9cb21993fe76dd98937c7f325a8",
  evt: "evt_d3m0sh1ft00000000000",
  whk: "whk_d3m0h00k000000000000",
  dlv: "dlv_d3m0d3l1v3ry000000000",
  ntf: "ntf_d3m0n0t1f000000000000",
  chk: "chk_d3m0pr00000000000000",
  qrt: "qrt_d3m0qr000000000000000",
  dsk: "dsk_d3m0gu1ch3t3000000000",
  ivt: "ivt_d3m0nv1tat10n0000000",
  apt: "apt_d3m0rdv0000000000000",
  hld: "hld_d3m0h0ld000000000000",
};
const WHEN = "2026-03-20T10:30:00.000Z";

/** A ticket example is a waiting ticket unless its operation says otherwise (TICKET_AFTER). */
const TICKET_NULL_WHILE_WAITING = new Set([
  "assignedToId",
  "calledAt",
  "servedAt",
  "presentAt",
  "servingAt",
  "skipReason",
  "recoveredFromId",
  "transferredToId",
  "visitorName",
  "counter",
  "deskId",
  "recalledAt",
  "heldAt",
  "holdReason",
  "outcome",
  "note",
  "steppedBackPlaces",
]);

/** The ticket an operation answers, as it is after that operation. */
const TICKET_AFTER: Record<string, Json> = {
  callNext: {
    status: "called",
    calledAt: WHEN,
    assignedToId: "usr_d3m0p3rat0r000000000",
    counter: "Guichet 3",
    position: null,
    estimatedWaitMinutes: null,
    estimatedWaitRange: null,
  },
  serveTicket: {
    status: "serving",
    calledAt: WHEN,
    servingAt: WHEN,
    assignedToId: "usr_d3m0p3rat0r000000000",
    position: null,
    estimatedWaitMinutes: null,
    estimatedWaitRange: null,
  },
  completeTicket: {
    status: "served",
    calledAt: WHEN,
    servingAt: WHEN,
    servedAt: WHEN,
    outcome: "account_opened",
    note: "Brings the signed form on Monday",
    assignedToId: "usr_d3m0p3rat0r000000000",
    position: null,
    estimatedWaitMinutes: null,
    estimatedWaitRange: null,
  },
  skipAbsentTicket: {
    status: "skipped",
    calledAt: WHEN,
    skipReason: "absent",
    assignedToId: "usr_d3m0p3rat0r000000000",
    position: null,
    estimatedWaitMinutes: null,
    estimatedWaitRange: null,
  },
  cancelTicket: { status: "cancelled", position: null, estimatedWaitMinutes: null, estimatedWaitRange: null },
  createWalkInTicket: { isGhostMode: true, source: "operator", visitorName: "Awa Diallo" },
  createVipTicket: {
    isGhostMode: true,
    isPriority: true,
    source: "vip",
    position: 1,
    estimatedWaitMinutes: 3,
    estimatedWaitRange: { low: 2, high: 4 },
  },
  joinQueueFromWidget: { source: "widget" },
  transferTicketToQueue: { source: "transfer" },
  recallTicket: {
    status: "called",
    calledAt: WHEN,
    assignedToId: "usr_d3m0p3rat0r000000000",
    recallCount: 1,
    recalledAt: WHEN,
    position: null,
    estimatedWaitMinutes: null,
  },
  holdTicket: {
    status: "held",
    calledAt: WHEN,
    assignedToId: "usr_d3m0p3rat0r000000000",
    counter: "Guichet 3",
    heldAt: WHEN,
    holdReason: "Fetching the passport from the car",
    position: null,
    estimatedWaitMinutes: null,
    estimatedWaitRange: null,
  },
  resumeTicket: {
    status: "called",
    calledAt: WHEN,
    assignedToId: "usr_d3m0p3rat0r000000000",
    counter: "Guichet 3",
    position: null,
    estimatedWaitMinutes: null,
    estimatedWaitRange: null,
  },
  // Two customers passed: from 4th to 6th.
  // Marked VIP at the counter: behind the one VIP already waiting, ahead of every regular ticket.
  prioritizeTicket: { isPriority: true, position: 2, estimatedWaitMinutes: 6, estimatedWaitRange: { low: 4, high: 8 } },
  // The VIP mark undone: back at the place its number gives it in the regular line.
  unprioritizeTicket: { isPriority: false, position: 4, estimatedWaitMinutes: 12, estimatedWaitRange: { low: 9, high: 16 } },
  stepBackTicket: { position: 6, steppedBackPlaces: 2, estimatedWaitMinutes: 18, estimatedWaitRange: { low: 14, high: 24 } },
  callDeskNext: {
    status: "called",
    calledAt: WHEN,
    assignedToId: "usr_d3m0p3rat0r000000000",
    deskId: "dsk_d3m0gu1ch3t300000000",
    counter: "Guichet 3",
    position: null,
    estimatedWaitMinutes: null,
  },
};

/** Answers that read as their operation's outcome where the derived one would not (merged over `data`). */
const RESPONSE_AS: Record<string, Json> = {
  // The visitor typed the code their SMS gave: the number is proven (docs/limits.md).
  verifyTicketPhone: { status: "verified", expiresAt: null },
};

/**
 * Request bodies that read as one step of the demo's day, where the value derived from the
 * field's name alone would not make sense for this operation (a shift that ends after it
 * starts, a new colleague rather than the seeded owner, …). Merged over the derived example.
 */
const REQUEST_AS: Record<string, Json> = {
  // The customer went to fetch a document: back at the end of the line.
  returnTicketToLine: { position: "last", afterTicketId: undefined },
  register: {
    email: "nadia@demo.example",
    password: "nadia-demo-password",
    firstName: "Nadia",
    lastName: "Mensah",
    accountType: "business",
  },
  addMember: { email: "nadia@demo.example", role: "operator" },
  // A manager of the Paris branch only (issue 31): they see and act on nothing elsewhere.
  updateMember: { role: "manager", locationIds: [DEMO.loc] },
  // A widget key locked to the organization's own site (verifyDomain proves the domain first;
  // a name under the reserved .example TLD is not public, so the demo's site is under example.com).
  createApiKey: { name: "Lobby widget", permissions: ["widget"], allowedOrigins: ["https://demo-bank.example.com"] },
  verifyDomain: { domain: "demo-bank.example.com", method: "dns" },
  // queue_join names its queue; service_checkin would name the service instead (and no queue).
  createQrToken: { purpose: "queue_join", serviceId: undefined, queueId: DEMO.que },
  subscribeVisitorToWebPush: {
    endpoint: "https://fcm.googleapis.com/fcm/send/dXN1YWxseS1hLXRva2Vu",
    keys: {
      p256dh: "BNooveV1HGW7sIpCtyXUUIETx71xZpJrq7sA55mO4tlUx0MhpDtCaaqsM4MWr4zX_48CpADr2A019b9uSqf-Ns0",
      auth: "1ncU4Zi9gD_sBCScwyXkrQ",
    },
    language: "fr",
  },
  scanNfcTag: { deviceInfo: { phoneModel: "Pixel 8", osVersion: "Android 15" } },
  cancelSubscription: { reason: "Seasonal business: closed until spring" },
  unsubscribeVisitorFromWebPush: { endpoint: "https://fcm.googleapis.com/fcm/send/dXN1YWxseS1hLXRva2Vu" },
  createCalendarEvent: {
    title: "Morning shift",
    description: "Counter 3",
    startDate: "2026-03-20T09:00:00+01:00",
    endDate: "2026-03-20T13:00:00+01:00",
    recurrenceEndDate: "2026-03-27T13:00:00+01:00",
    // A shift has no customer (an `appointment` event with one is a booking: docs/appointments.md).
    customer: undefined,
  },
  updateCalendarEvent: {
    title: "Morning shift",
    description: "Counter 4",
    startDate: "2026-03-20T09:30:00+01:00",
    endDate: "2026-03-20T13:30:00+01:00",
    recurrenceEndDate: "2026-03-27T13:30:00+01:00",
  },
  // The 6 digits the demo visitor's SMS gave.
  verifyTicketPhone: { code: "482915" },
  // Awa books Friday's 12:00 (Paris) at the counter, holding it while she typed her details.
  bookAppointment: {
    staffId: undefined,
    holdId: DEMO.hld,
    customer: { name: "Awa Diallo", phone: "+33698765432", email: "awa.diallo@demo.example", language: "fr" },
    notes: "Brings her passport and the renewal form",
  },
  holdAppointmentSlot: { staffId: undefined },
  // The kiosk's keypad: the code (a scanner sends the QR code's manage link as `qr` instead).
  checkInAppointmentAtKiosk: { qr: undefined },
  // …then moves it half an hour later.
  rescheduleAppointment: { start: "2026-03-20T12:30:00+01:00", staffId: undefined },
  declareUnavailability: {
    title: "Lunch break",
    description: "Back at 13:00",
    startDate: "2026-03-20T12:00:00+01:00",
    endDate: "2026-03-20T13:00:00+01:00",
    recurrenceEndDate: "2026-03-27T13:00:00+01:00",
  },
};

/**
 * What each payment provider sends its receiver. The receivers read the raw body (the signature
 * covers its exact bytes) and no schema validates it; the document shows one event each, for
 * whoever points a provider (or a replay tool) at them. `t` is the Unix time of signing and the
 * signature is the hex HMAC-SHA256 of "<t>.<raw body>" under the endpoint's secret.
 */
const PROVIDER_EVENTS: Record<string, { header: string; scheme: string; example: Json }> = {
  receiveStripeEvent: {
    header: "Stripe-Signature",
    scheme: "v1",
    example: {
      id: "evt_1R2d3m0Str1peEv3nt0001",
      object: "event",
      type: "checkout.session.expired",
      created: 1774000200,
      livemode: false,
      data: {
        object: {
          id: "cs_test_d3m0S3ss10n0001",
          object: "checkout.session",
          client_reference_id: "chk_d3m0str1pe00000000000",
          status: "expired",
        },
      },
    },
  },
  receiveFedapayEvent: {
    header: "X-FEDAPAY-SIGNATURE",
    scheme: "s",
    example: {
      id: "evt_d3m0f3dapay0001",
      name: "transaction.canceled",
      created_at: "2026-03-20T10:30:00.000Z",
      entity: {
        id: 104538,
        status: "canceled",
        amount: 19000,
        currency: { iso: "XOF" },
        custom_metadata: { checkoutId: "chk_d3m0f3dapay000000000" },
      },
    },
  },
  receiveSandboxEvent: {
    header: "Sandbox-Signature",
    scheme: "v1",
    example: {
      id: "sbx_evt_d3m0r3n3wal00000000001",
      type: "invoice.paid",
      created: 1774000200,
      data: { subscriptionId: "sbx_sub_d3m0other0000000000000", invoiceId: "sbx_inv_d3m0r3n3wal0000000000", amount: 2900, currency: "EUR" },
    },
  },
};

function documentProviderEvent(op: Json): void {
  const event = PROVIDER_EVENTS[op.operationId];
  if (!event || op.requestBody) return;
  op.requestBody = {
    required: true,
    description: "The provider's event, exactly as it sends it (its own format; the signature covers these bytes)",
    content: { "application/json": { schema: { type: "object", additionalProperties: {} }, example: event.example } },
  };
  op.parameters = [
    ...(op.parameters ?? []),
    {
      name: event.header,
      in: "header",
      required: true,
      description: `\`t=<unix seconds>,${event.scheme}=<hex HMAC-SHA256(secret, "<t>.<raw body>")>\`; refused outside a 5-minute window`,
      schema: { type: "string" },
      example: `t=1774000200,${event.scheme}=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd`,
    },
  ];
}

/** The id prefix of the record a schema describes, from its component name. */
const PREFIX_OF: Record<string, string> = {
  Ticket: "tkt",
  Queue: "que",
  Organization: "org",
  Location: "loc",
  NearbyLocation: "loc",
  Service: "svc",
  User: "usr",
  Member: "usr",
  ApiKey: "key",
  QrToken: "qrt",
  NfcTag: "nfc",
  CalendarEvent: "evt",
  CalendarOccurrence: "evt",
  Notification: "ntf",
  Webhook: "whk",
  WebhookDelivery: "dlv",
  RemoteJoin: "rjn",
  Invoice: "inv",
  Desk: "dsk",
  Invitation: "ivt",
};

const BY_NAME: Record<string, unknown> = {
  organizationId: DEMO.org,
  locationId: DEMO.loc,
  serviceId: DEMO.svc,
  queueId: DEMO.que,
  targetQueueId: DEMO.que,
  ticketId: DEMO.tkt,
  transferredToId: null,
  recoveredFromId: null,
  userId: DEMO.usr,
  assignedToId: DEMO.usr,
  targetOperatorId: DEMO.usr,
  newOwnerId: DEMO.usr,
  createdById: DEMO.owner,
  defaultOrganizationId: DEMO.org,
  invitationId: DEMO.ivt,
  keyId: DEMO.key,
  locationIds: [DEMO.loc],
  queueIds: [DEMO.que],
  deskId: "dsk_d3m0gu1ch3t300000000",
  weights: { [DEMO.que]: 2 },
  displayName: "Guichet 3",
  attendees: [DEMO.usr],
  displayCode: "A-042",
  number: 42,
  letter: "A",
  position: 4,
  estimatedWaitMinutes: 12,
  low: 9,
  high: 16,
  defaultServiceMinutes: 5,
  counter: "Guichet 3",
  timeZone: "Europe/Paris",
  waitingCount: 4,
  servingCount: 1,
  partySize: 2,
  maxCapacity: 60,
  noShowTimeoutMinutes: 5,
  dataRetentionDays: 90,
  email: "owner@demo.example",
  billingEmail: "billing@demo.example",
  password: "demo-owner-password",
  firstName: "Olivia",
  lastName: "Owner",
  slug: "demo-bank",
  legalName: "Demo Bank SA",
  address: "1 place de l'Opéra, 75009 Paris",
  latitude: 48.8708,
  longitude: 2.3319,
  timezone: "Europe/Paris",
  phone: "+33612345678",
  visitorName: "Awa Diallo",
  language: "fr",
  defaultLanguage: "fr",
  reason: "absent",
  description: "Dépôts, retraits et virements",
  title: "Lunch break",
  color: "#2563eb",
  radiusKm: 5,
  distanceKm: 0.42,
  maxRemoteJoinRadiusKm: 5,
  availabilityRadiusKm: 1,
  website: "https://demo-bank.example",
  logoUrl: "https://demo-bank.example/logo.png",
  returnUrl: "https://demo-bank.example/billing/done",
  url: "https://demo-bank.example/hooks/queue",
  domain: "demo-bank.example",
  serviceTypeId: "st_bank_teller",
  siret: "73282932000074",
  vatNumber: "FR44732829320",
  nfcId: "04:A2:24:B2:5C:6F:80",
  locationName: "Entrance",
  token: "k3v9w2x8c4n7b5m1q6z0r2t8y4u6i9o3",
  fcmToken: "dXN1YWxseS1hLWxvbmctZmNtLXRva2Vu",
  deviceId: "pixel-8-awa",
  message: "Your turn is coming: please come to counter 3.",
  purpose: "ticket_update",
  currency: "EUR",
  amount: 2900,
  type: "banking",
  plan: "pro",
  billingInterval: "monthly",
  recoveryOption: "restore",
  method: "dns",
  accuracy: 12,
  size: 200,
};

export function exampleFor(schema: Json, doc: Json, name?: string, owner?: string, depth = 0): unknown {
  if (depth > 8 || !schema) return undefined;
  if (schema.$ref) {
    const component: string = schema.$ref.split("/").pop();
    return exampleFor(doc.components?.schemas?.[component], doc, name, component, depth + 1);
  }
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum)
    return name !== undefined && schema.enum.includes(BY_NAME[name]) ? BY_NAME[name] : schema.enum.find((v: unknown) => v !== null);
  const variants: Json[] | undefined = schema.anyOf ?? schema.oneOf;
  const nullable = variants !== undefined || (Array.isArray(schema.type) && schema.type.includes("null"));
  if (nullable && owner === "Ticket" && name !== undefined && TICKET_NULL_WHILE_WAITING.has(name)) return null;
  if (variants) {
    const nonNull = variants.find((v) => v.type !== "null");
    return nonNull ? exampleFor(nonNull, doc, name, owner, depth + 1) : null;
  }
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s: Json) => exampleFor(s, doc, name, owner, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  if (type === "object" || schema.properties) {
    const out: Json = {};
    for (const [key, sub] of Object.entries(schema.properties ?? {}) as [string, Json][]) {
      const value = exampleFor(sub, doc, key, owner, depth + 1);
      if (value !== undefined) out[key] = value;
    }
    return out;
  }
  if (type === "array") {
    if (name !== undefined && Array.isArray(BY_NAME[name])) return BY_NAME[name];
    const item = exampleFor(schema.items ?? {}, doc, undefined, owner, depth + 1);
    return item === undefined ? [] : [item];
  }
  return fitting(scalar(schema, type, name, owner), schema);
}

function scalar(schema: Json, type: string | undefined, name: string | undefined, owner: string | undefined): unknown {
  if (name === "id" && owner && PREFIX_OF[owner])
    return PREFIX_OF[owner] === "tkt" ? DEMO.tkt : `${PREFIX_OF[owner]}_d3m0${"0".repeat(16)}`;
  if (name === "name") {
    if (owner === "CreateOrganizationRequest") return "Corner Bank";
    if (owner?.includes("Organization")) return "Demo Bank";
    if (owner?.includes("Location")) return "Demo Bank Opéra";
    if (owner?.includes("Service")) return "Guichet";
    if (owner?.includes("ApiKey")) return "Front desk";
    return "Accueil";
  }
  if (name === "slug") return owner === "CreateOrganizationRequest" ? "corner-bank" : "demo-bank";
  if (name !== undefined && name in BY_NAME && !Array.isArray(BY_NAME[name])) return BY_NAME[name];
  if (type === "boolean") return name === "enabled" || name === "success";
  if (type === "integer" || type === "number") return typeof schema.minimum === "number" ? Math.max(schema.minimum, 1) : 1;
  if (type === "string") {
    if (schema.format === "date-time" || (name !== undefined && /(At|Date|Start|End)$/.test(name))) return WHEN;
    if (schema.format === "email") return "owner@demo.example";
    if (schema.format === "uri" || schema.format === "url") return "https://demo-bank.example";
    return name?.endsWith("Id") ? `${name.slice(0, 3)}_d3m0${"0".repeat(16)}` : "Demo";
  }
  return undefined;
}

/** The value, if it fits the schema's own constraints; undefined otherwise (no wrong example). */
function fitting(value: unknown, schema: Json): unknown {
  if (typeof value === "string") {
    if (schema.pattern && !new RegExp(schema.pattern, "u").test(value)) return undefined;
    if (typeof schema.minLength === "number" && value.length < schema.minLength) return undefined;
    if (typeof schema.maxLength === "number" && value.length > schema.maxLength) return undefined;
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) return undefined;
    if (typeof schema.maximum === "number" && value > schema.maximum) return undefined;
    if (schema.type === "integer" && !Number.isInteger(value)) return undefined;
  }
  return value;
}

/**
 * Path and query parameters name the demo's records (the ids `npm run dev` seeds, or the ones an
 * earlier example creates), so a request example reads as one call of the business flow.
 */
const PARAMETER_EXAMPLES: Record<string, unknown> = {
  organizationId: DEMO.org,
  organization: DEMO.org,
  locationId: DEMO.loc,
  serviceId: DEMO.svc,
  queueId: DEMO.que,
  ticketId: DEMO.tkt,
  userId: DEMO.usr,
  keyId: DEMO.key,
  key: DEMO.keyValue,
  templateKey: "ticket.called",
  eventId: DEMO.evt,
  webhookId: DEMO.whk,
  deliveryId: DEMO.dlv,
  notificationId: DEMO.ntf,
  checkoutId: DEMO.chk,
  deskId: DEMO.dsk,
  invitationId: DEMO.ivt,
  appointmentId: DEMO.apt,
  id: DEMO.qrt,
  token: "k3v9w2x8c4n7b5m1q6z0r2t8y4u6i9o3",
  // A week of calendar from the documented day (a range must end after it starts).
  startDate: "2026-03-20T00:00:00+01:00",
  endDate: "2026-03-27T00:00:00+01:00",
};

function exampleParameters(op: Json): void {
  for (const param of (op.parameters ?? []) as Json[]) {
    if (param.$ref || !(param.name in PARAMETER_EXAMPLES)) continue;
    if (param.in !== "path" && param.in !== "query") continue;
    const value = PARAMETER_EXAMPLES[param.name];
    param.example = value;
    if (param.schema?.example !== undefined) param.schema.example = value;
  }
}

/** Puts an example on every JSON request body and success response that has none. */
export function addExamples(doc: Json): void {
  for (const item of Object.values(doc.paths ?? {}) as Json[]) {
    for (const op of Object.values(item) as Json[]) {
      exampleParameters(op);
      documentProviderEvent(op);
      const media: Json[] = [];
      const body = op?.requestBody?.content?.["application/json"];
      if (body) media.push(body);
      for (const [status, response] of Object.entries(op?.responses ?? {}) as [string, Json][]) {
        const json = response.content?.["application/json"];
        if (Number(status) < 400 && json) media.push(json);
      }
      for (const m of media) {
        if (m.example !== undefined || m.examples !== undefined || !m.schema) continue;
        let example = exampleFor(m.schema, doc);
        if (example === undefined) continue;
        if (m === body && REQUEST_AS[op.operationId]) {
          example = { ...(example as Json), ...REQUEST_AS[op.operationId] };
          for (const [k, v] of Object.entries(example as Json)) if (v === undefined) delete (example as Json)[k];
        }
        const after = m !== body ? TICKET_AFTER[op.operationId] : undefined;
        const data = (example as Json).data;
        if (after && data && typeof data === "object" && "displayCode" in data) Object.assign(data, after);
        if (m !== body && RESPONSE_AS[op.operationId] && data && typeof data === "object") Object.assign(data, RESPONSE_AS[op.operationId]);
        m.example = example;
      }
    }
  }
}
