import type { ContentfulStatusCode } from "hono/utils/http-status";

export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  AUTHENTICATION_ERROR: 401,
  SSO_FAILED: 401,
  TOKEN_EXPIRED: 401,
  PLAN_REQUIRED: 402,
  AUTHORIZATION_ERROR: 403,
  KEY_REVOKED: 403,
  QUOTA_EXCEEDED: 403,
  REMOTE_JOIN_PENALTY: 403,
  SSO_REQUIRED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  INVALID_STATE: 409,
  QUEUE_PAUSED: 409,
  QUEUE_CLOSED: 409,
  QUEUE_FULL: 409,
  QUEUE_EMPTY: 409,
  OPERATOR_UNAVAILABLE: 409,
  RECALL_LIMIT_REACHED: 409,
  INTAKE_REQUIRED: 409,
  DEFER_TOO_FAR: 422,
  DEFER_LIMIT_REACHED: 409,
  SLOT_UNAVAILABLE: 409,
  CHECK_IN_NOT_OPEN: 409,
  FEEDBACK_ALREADY_GIVEN: 409,
  QR_TOKEN_EXPIRED: 410,
  QR_TOKEN_USED: 410,
  FEEDBACK_WINDOW_CLOSED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  OUT_OF_RANGE: 422,
  API_RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  PAYMENT_PROVIDER_ERROR: 502,
  PROVIDER_UNAVAILABLE: 503,
  CHANGE_NOT_CONFIRMED: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorDetails = Record<string, unknown>;

/** The one error type: thrown anywhere, turned into the envelope by the app's onError. */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

export function validationError(field: string, reason: string, extra: ErrorDetails = {}): ApiError {
  return new ApiError("VALIDATION_ERROR", `Invalid value for ${field}: ${reason}`, { field, reason, ...extra });
}

export function notFound(what: string): ApiError {
  return new ApiError("NOT_FOUND", `${what} not found`);
}

export function forbidden(message = "You are not allowed to do this"): ApiError {
  return new ApiError("AUTHORIZATION_ERROR", message);
}

export function conflict(field: string, message: string): ApiError {
  return new ApiError("CONFLICT", message, { field });
}

export function invalidState(status: string, allowed: readonly string[], message?: string): ApiError {
  return new ApiError("INVALID_STATE", message ?? `Not allowed while the status is ${status}`, {
    status,
    allowed: [...allowed],
  });
}

/**
 * The one shape of every 402: what the current plan allows, and the plan that allows more.
 * `limit` is the current plan's allowance (null when the feature is not included at all).
 */
export function planRequired(
  message: string,
  details: { currentPlan: string; limit: number | null; feature: string; requiredPlan?: string },
): ApiError {
  return new ApiError("PLAN_REQUIRED", message, {
    requiredPlan: details.requiredPlan ?? "pro",
    currentPlan: details.currentPlan,
    limit: details.limit,
    feature: details.feature,
  });
}

/**
 * Where a code is explained (`GET /v1/errors/{code}`, src/api-reference/errors.routes.ts), on the deployment
 * that answered, absolute so it opens as is: every error envelope carries it as `docUrl`.
 */
export function errorDocUrl(origin: string, code: ErrorCode): string {
  return `${origin}/v1/errors/${code}`;
}
