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
  "deskId",
  "recalledAt",
]);

/** The ticket an operation answers, as it is after that operation. */
const TICKET_AFTER: Record<string, Json> = {
  callNext: { status: "called", calledAt: WHEN, assignedToId: "usr_d3m0p3rat0r000000000", position: null, estimatedWaitMinutes: null },
  serveTicket: {
    status: "serving",
    calledAt: WHEN,
    servingAt: WHEN,
    assignedToId: "usr_d3m0p3rat0r000000000",
    position: null,
    estimatedWaitMinutes: null,
  },
  completeTicket: {
    status: "served",
    calledAt: WHEN,
    servingAt: WHEN,
    servedAt: WHEN,
    assignedToId: "usr_d3m0p3rat0r000000000",
    position: null,
    estimatedWaitMinutes: null,
  },
  skipAbsentTicket: {
    status: "skipped",
    calledAt: WHEN,
    skipReason: "absent",
    assignedToId: "usr_d3m0p3rat0r000000000",
    position: null,
    estimatedWaitMinutes: null,
  },
  cancelTicket: { status: "cancelled", position: null, estimatedWaitMinutes: null },
  createWalkInTicket: { isGhostMode: true, source: "operator", visitorName: "Awa Diallo" },
  createVipTicket: { isGhostMode: true, isPriority: true, source: "vip", position: 1, estimatedWaitMinutes: 3 },
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
  keyId: DEMO.key,
  locationIds: [DEMO.loc],
  queueIds: [DEMO.que],
  deskId: "dsk_d3m0gu1ch3t300000000",
  displayName: "Guichet 3",
  attendees: [DEMO.usr],
  displayCode: "A-042",
  number: 42,
  letter: "A",
  position: 4,
  estimatedWaitMinutes: 12,
  waitingCount: 4,
  servingCount: 1,
  partySize: 2,
  maxCapacity: 60,
  noShowTimeoutMinutes: 5,
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
  description: "Deposits, withdrawals and transfers",
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
    const component = schema.$ref.split("/").pop() as string;
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
    if (owner?.includes("Service")) return "Teller";
    if (owner?.includes("ApiKey")) return "Front desk";
    return "Main queue";
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

/** Puts an example on every JSON request body and success response that has none. */
export function addExamples(doc: Json): void {
  for (const item of Object.values(doc.paths ?? {}) as Json[]) {
    for (const op of Object.values(item) as Json[]) {
      const media: Json[] = [];
      const body = op?.requestBody?.content?.["application/json"];
      if (body) media.push(body);
      for (const [status, response] of Object.entries(op?.responses ?? {}) as [string, Json][]) {
        const json = response.content?.["application/json"];
        if (Number(status) < 400 && json) media.push(json);
      }
      for (const m of media) {
        if (m.example !== undefined || m.examples !== undefined || !m.schema) continue;
        const example = exampleFor(m.schema, doc);
        if (example === undefined) continue;
        const after = m !== body ? TICKET_AFTER[op.operationId] : undefined;
        const data = (example as Json).data;
        if (after && data && typeof data === "object" && "displayCode" in data) Object.assign(data, after);
        m.example = example;
      }
    }
  }
}
