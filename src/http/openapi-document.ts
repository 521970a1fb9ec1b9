import { ERROR_STATUS, type ErrorCode } from "./errors";
import { addExamples } from "./openapi-examples";
import { ERROR_MEANINGS, OPERATIONS, type Operation } from "./operations";

// Turns the document generated from the routes into the one integrators read: operation ids,
// declared tags, header parameters, response headers and per-route error responses, all from
// the tables in operations.ts, so no route repeats them by hand.

type Json = Record<string, any>;

/** Tags in the order an integrator meets them: the organization's flow first. */
export const TAGS: { name: string; description: string }[] = [
  { name: "Session", description: "Accounts and sessions: register, log in, refresh, log out." },
  { name: "Organizations", description: "The business: its details, dashboard and ownership." },
  { name: "Members", description: "Who works in the organization, with which role." },
  { name: "API keys", description: "Server-to-server credentials (`X-API-Key`), scoped by permission." },
  { name: "Locations", description: "Physical sites of the organization." },
  { name: "Services", description: "What the organization offers at its locations; each has queues." },
  { name: "Queues", description: "Waiting lines: create, open, pause, close, join and call." },
  { name: "Tickets", description: "A customer's place in a queue and every operation on it." },
  { name: "Desks", description: "Counters at a location: an operator opens one and calls across its queues." },
  { name: "Remote join", description: "Joining from a distance, confirmed on arrival (geofence, QR, NFC)." },
  { name: "QR codes", description: "QR tokens, their images and scans." },
  { name: "NFC tags", description: "NFC tags placed on site and their scans." },
  { name: "Calendar", description: "Shifts, breaks, closures and appointments; operator availability." },
  { name: "Widget", description: "The embeddable widget, display board and live WebSocket (publishable keys)." },
  { name: "Billing", description: "Subscription, usage, invoices and the payment providers' webhooks." },
  { name: "Notifications", description: "In-app notifications, preferences, push devices and SMS." },
  { name: "Domain verification", description: "Proving ownership of a web domain (unlocks origin-locked widget keys)." },
  {
    name: "Single sign-on",
    description: "Staff sign in with their organization's OpenID Connect identity provider (docs/sso.md).",
  },
  { name: "Webhooks", description: "Signed event deliveries to the organization's own endpoints." },
  {
    name: "Test mode",
    description: "qk_test_… keys work on a sandbox twin of the organization, apart from its live data (docs/test-mode.md).",
  },
  {
    name: "Analytics",
    description: "Figures over a range (pro and enterprise): summary, operators, arrival heatmap, accuracy of estimates.",
  },
  { name: "Errors", description: "What each error code means; every error's `docUrl` points here." },
  { name: "Audit log", description: "Who changed what and when, hash-chained per organization (docs/security.md)." },
  {
    name: "Personal data",
    description: "A customer's data on request: everything the organization holds about them, and its erasure (docs/personal-data.md).",
  },
  {
    name: "Appointments",
    description: "Bookable time: a service's free slots from opening hours, shifts and bookings (docs/appointments.md).",
  },
  {
    name: "Conversations",
    description: "Customers answer back by SMS (keywords, STOP/START) and staff answer them (docs/conversations.md).",
  },
];

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** Codes every route of its kind can answer; the table adds each route's own. */
function defaultErrors(op: Json, method: string): ErrorCode[] {
  const isPublic = Array.isArray(op.security) && op.security.length === 0;
  const codes: ErrorCode[] = ["VALIDATION_ERROR"];
  if (!isPublic) codes.push("AUTHENTICATION_ERROR", "TOKEN_EXPIRED", "AUTHORIZATION_ERROR", "KEY_REVOKED");
  if (!isPublic || op.parameters?.some((p: Json) => p.in === "path")) codes.push("NOT_FOUND");
  if (op.requestBody) codes.push("PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE");
  if (method === "post") codes.push("CONFLICT"); // an Idempotency-Key reused with another body
  codes.push("API_RATE_LIMIT_EXCEEDED");
  return codes;
}

const HEADERS: Json = {
  "X-Request-ID": {
    description: "The request's id (yours if you sent a valid one); quote it when asking for help",
    schema: { type: "string" },
  },
  "X-RateLimit-Limit": { description: "Requests allowed in the current minute window", schema: { type: "integer" } },
  "X-RateLimit-Remaining": { description: "Requests left in the current minute window", schema: { type: "integer" } },
  "X-RateLimit-Reset": { description: "Unix time (s) when the minute window resets", schema: { type: "integer" } },
  "X-API-RateLimit-Limit": { description: "API keys: the key's requests allowed per UTC day", schema: { type: "integer" } },
  "X-API-RateLimit-Remaining": { description: "API keys: requests left today", schema: { type: "integer" } },
  "X-API-RateLimit-Reset": { description: "API keys: Unix time (s) of the next UTC midnight", schema: { type: "integer" } },
  "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer" } },
  ETag: { description: "Weak validator of the representation; send it back as If-None-Match", schema: { type: "string" } },
};

const PARAMETERS: Json = {
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    required: false,
    description: "Replays the first response for 24 h when the same key is sent again with the same body; another body is 409 CONFLICT",
    schema: { type: "string", maxLength: 255 },
    example: "b9f1c2e4-3d5a-4f6b-8c7d-0e1f2a3b4c5d",
  },
  OrganizationId: {
    name: "X-Organization-Id",
    in: "header",
    required: false,
    description: "Sessions that belong to several organizations name the one they act in (API keys carry theirs)",
    schema: { type: "string" },
    example: "org_d3m00000000000000000",
  },
  RequestId: {
    name: "X-Request-ID",
    in: "header",
    required: false,
    description: "Your own id for this request (1–128 characters of A-Z a-z 0-9 . _ : -), echoed back",
    schema: { type: "string", maxLength: 128 },
    example: "checkout-7f3a",
  },
  IfNoneMatch: {
    name: "If-None-Match",
    in: "header",
    required: false,
    description: "The ETag of a previous answer: 304 when nothing changed",
    schema: { type: "string" },
  },
};

function ref(kind: "headers" | "parameters", name: string): Json {
  return { $ref: `#/components/${kind}/${name}` };
}

function responseHeaders(status: number, extra: string[] = []): Json {
  const names = ["X-Request-ID", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"];
  names.push("X-API-RateLimit-Limit", "X-API-RateLimit-Remaining", "X-API-RateLimit-Reset");
  if (status === 429 || status === 503) names.push("Retry-After"); // 503: CHANGE_NOT_CONFIRMED sends it
  names.push(...extra);
  return Object.fromEntries(names.map((n) => [n, ref("headers", n)]));
}

/** Added to every JSON answer by src/http/livemode.ts. */
const LIVEMODE: Json = {
  type: "boolean",
  description: "false when the answer comes from the organization's test-mode twin (a qk_test_… key: docs/test-mode.md)",
};

/** The shared error envelope with `code` narrowed to what this response can carry. */
function errorSchema(codes: ErrorCode[]): Json {
  return {
    type: "object",
    properties: {
      success: { type: "boolean", enum: [false] },
      livemode: LIVEMODE,
      error: {
        type: "object",
        properties: {
          code: { type: "string", enum: codes },
          message: { type: "string" },
          details: { type: "object", additionalProperties: {} },
          timestamp: { type: "string", format: "date-time" },
          requestId: { type: "string" },
          docUrl: { type: "string", description: "Where this code is explained: GET /v1/errors/{code}" },
        },
        required: ["code", "message", "details", "timestamp", "requestId", "docUrl"],
      },
    },
    required: ["success", "error"],
  };
}

function errorResponse(status: number, codes: ErrorCode[]): Json {
  const description = codes.map((c) => `\`${c}\`: ${ERROR_MEANINGS[c]}`).join("; ");
  const first = codes[0]!;
  return {
    description,
    headers: responseHeaders(status),
    content: {
      "application/json": {
        schema: errorSchema(codes),
        example: {
          success: false,
          error: {
            code: first,
            message: ERROR_MEANINGS[first].split(";")[0],
            details: first === "VALIDATION_ERROR" ? { field: "name", reason: "required" } : {},
            timestamp: "2026-03-20T10:30:00.000Z",
            requestId: "req_8kz2m4q7w1x9c3v5b6n0",
            docUrl: `https://api.example.com/v1/errors/${first}`,
          },
        },
      },
    },
  };
}

/** Error responses shared by every route that answers the same codes, as components.responses. */
class ErrorResponses {
  readonly components: Json = {};
  private readonly names = new Map<string, string>();

  ref(status: number, codes: ErrorCode[]): Json {
    const signature = `${status}:${[...codes].sort().join(",")}`;
    let name = this.names.get(signature);
    if (!name) {
      const taken = [...this.names.values()].filter((n) => n.startsWith(`Error${status}`)).length;
      name = taken === 0 ? `Error${status}` : `Error${status}_${taken + 1}`;
      this.names.set(signature, name);
      this.components[name] = errorResponse(status, codes);
    }
    return { $ref: `#/components/responses/${name}` };
  }
}

function polishOperation(key: string, op: Json, method: string, entry: Operation, errorResponses: ErrorResponses): void {
  op.operationId = entry.id;
  if (!op.description) op.description = `${op.summary ?? entry.id}.`;
  const params: Json[] = op.parameters ?? [];
  params.push(ref("parameters", "RequestId"));
  if (method === "post") params.push(ref("parameters", "IdempotencyKey"));
  if (entry.organizationFromRequest) params.push(ref("parameters", "OrganizationId"));
  if (key === "GET /v1/widget/queue/{queueId}/status") params.push(ref("parameters", "IfNoneMatch"));
  op.parameters = params;

  const responses: Json = {};
  for (const [status, response] of Object.entries(op.responses ?? {}) as [string, Json][]) {
    if (Number(status) >= 400) continue;
    const extra = key === "GET /v1/widget/queue/{queueId}/status" && status === "200" ? ["ETag"] : [];
    responses[status] = { ...response, headers: { ...response.headers, ...responseHeaders(Number(status), extra) } };
    const schema = response.content?.["application/json"]?.schema;
    if (schema?.properties?.success) schema.properties = { success: schema.properties.success, livemode: LIVEMODE, ...schema.properties };
  }
  const codes = [...new Set([...defaultErrors(op, method), ...(entry.errors ?? [])])];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) responses[String(status)] = errorResponses.ref(status, list);
  op.responses = responses;
}

/** Operations present in the document but missing from the table (a test keeps this empty). */
export function unlistedOperations(doc: Json): string[] {
  const missing: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {}) as [string, Json][]) {
    for (const method of METHODS)
      if (item[method] && !OPERATIONS[`${method.toUpperCase()} ${path}`]) missing.push(`${method.toUpperCase()} ${path}`);
  }
  return missing;
}

export function polishDocument(doc: Json): Json {
  const errorResponses = new ErrorResponses();
  for (const [path, item] of Object.entries(doc.paths ?? {}) as [string, Json][]) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const key = `${method.toUpperCase()} ${path}`;
      polishOperation(key, op, method, OPERATIONS[key] ?? { id: fallbackId(method, path) }, errorResponses);
    }
  }
  const used = new Set(Object.values(doc.paths ?? {}).flatMap((item: any) => METHODS.flatMap((m) => item[m]?.tags ?? [])));
  doc.tags = TAGS.filter((t) => used.has(t.name));
  addExamples(doc);
  // Each error response carries its own narrowed envelope (errorSchema), so the generic one goes.
  const { Error: _generic, ...schemas } = doc.components?.schemas ?? {};
  doc.components = {
    ...doc.components,
    schemas,
    responses: errorResponses.components,
    headers: HEADERS,
    parameters: { ...doc.components?.parameters, ...PARAMETERS },
  };
  return doc;
}

/** A route not in the table still gets a unique id (and the test names it). */
function fallbackId(method: string, path: string): string {
  const words = path
    .replace(/^\/v1\//, "")
    .split(/[/{}\-_]+/)
    .filter(Boolean);
  return method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
}
