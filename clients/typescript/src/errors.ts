import type { components } from "../schema.js";

/** Every code the API answers (GET /v1/errors lists them with their meaning). */
export type ErrorCode = components["schemas"]["ErrorCodeDoc"]["code"];

/** The error envelope: `{ success: false, error: {...} }`. */
export interface ErrorEnvelope {
  success: false;
  error: { code: string; message: string; details?: Record<string, unknown>; timestamp?: string; requestId?: string; docUrl?: string };
}

/**
 * A 4xx or 5xx answer. `code` is the envelope's (`UNEXPECTED_RESPONSE` when the answer was not
 * the API's envelope, e.g. a proxy's HTML page); `field` is the field at fault (`details.field`)
 * when there is one; `docUrl` explains the code; `requestId` is what to quote to support.
 */
export class QueueApiError extends Error {
  override readonly name = "QueueApiError";
  readonly status: number;
  readonly code: ErrorCode | "UNEXPECTED_RESPONSE";
  readonly field: string | null;
  readonly details: Record<string, unknown>;
  readonly docUrl: string | null;
  readonly requestId: string | null;
  /** Seconds from `Retry-After`, when the answer had one (429, 503). */
  readonly retryAfterSeconds: number | null;
  readonly method: string;
  readonly url: string;

  constructor(init: {
    status: number;
    code: ErrorCode | "UNEXPECTED_RESPONSE";
    message: string;
    details?: Record<string, unknown>;
    docUrl?: string | null;
    requestId?: string | null;
    retryAfterSeconds?: number | null;
    method: string;
    url: string;
  }) {
    super(`${init.status} ${init.code}: ${init.message}${init.requestId ? ` (request ${init.requestId})` : ""}`);
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? {};
    this.field = typeof this.details.field === "string" ? this.details.field : null;
    this.docUrl = init.docUrl ?? null;
    this.requestId = init.requestId ?? null;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
    this.method = init.method;
    this.url = init.url;
  }
}

export function isErrorEnvelope(value: unknown): value is ErrorEnvelope {
  if (typeof value !== "object" || value === null || !("success" in value) || value.success !== false || !("error" in value)) return false;
  const error = value.error;
  return typeof error === "object" && error !== null && "code" in error && typeof error.code === "string";
}
