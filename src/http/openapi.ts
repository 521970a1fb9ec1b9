import { z } from "@hono/zod-openapi";
import { ERROR_STATUS, type ErrorCode } from "./errors";

// Building blocks for route definitions, so that every route documents its envelope, its
// credential and its errors the same way, from the same schemas that validate the request.

export const ErrorEnvelope = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
      timestamp: z.string(),
      requestId: z.string(),
      docUrl: z.string().openapi({
        description: "Where this code is explained (GET /v1/errors/{code})",
        example: "https://api.example.com/v1/errors/QUEUE_EMPTY",
      }),
    }),
  })
  .openapi("Error");

export const PageMeta = z
  .object({ total: z.number().int(), page: z.number().int(), limit: z.number().int(), hasMore: z.boolean() })
  .openapi("PageMeta");

export function okEnvelope<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data });
}

export function listEnvelope<T extends z.ZodType>(item: T) {
  return z.object({ success: z.literal(true), data: z.array(item), meta: PageMeta });
}

export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: true, content: { "application/json": { schema } }, ...(description ? { description } : {}) };
}

/** A body the route accepts but does not require: no body at all means `{}`. */
export function optionalJsonBody<T extends z.ZodType>(schema: T) {
  return { required: false, content: { "application/json": { schema } } };
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Invalid input (VALIDATION_ERROR, details.field names the field at fault)",
  401: "Missing, unknown or expired credential",
  402: "The organization's plan does not include this",
  403: "Not allowed for this role, scope, key or quota",
  404: "Unknown id, or an id of another organization",
  409: "Conflict with the current state",
  410: "Gone",
  413: "Body over 64 KiB",
  415: "Body is not JSON",
  422: "Out of range",
  429: "Rate limit exceeded",
  502: "The payment provider could not be reached or refused the request",
  503: "No payment provider is configured for this currency (PROVIDER_UNAVAILABLE)",
};

/** The error responses a route can give, each described with the shared envelope. */
export function errors(...statuses: number[]) {
  const all = [400, 401, 403, 404, 429, ...statuses];
  return Object.fromEntries(
    [...new Set(all)].sort().map((s) => [s, jsonResponse(ErrorEnvelope, ERROR_DESCRIPTIONS[s] ?? "Error")]),
  ) as Record<number, ReturnType<typeof jsonResponse<typeof ErrorEnvelope>>>;
}

type SecurityRequirement = Record<string, string[]>;

export const SECURITY: Record<"session" | "any" | "apiKey" | "none", SecurityRequirement[]> = {
  session: [{ bearerAuth: [] }, { sessionCookie: [] }],
  any: [{ apiKey: [] }, { bearerAuth: [] }, { sessionCookie: [] }],
  apiKey: [{ apiKey: [] }, { bearerAuth: [] }],
  none: [],
};

// Inputs shared by many routes.

export const PaginationQuery = z.object({
  page: z.coerce.number().int().min(1).optional().openapi({ description: "1-indexed page, default 1" }),
  limit: z.coerce.number().int().min(1).max(100).default(10).openapi({ description: "Default 10, maximum 100" }),
  offset: z.coerce.number().int().min(0).optional().openapi({ description: "Alternative to page" }),
});
export type Pagination = z.infer<typeof PaginationQuery>;

/** Offset and meta for a page request; `offset` wins over `page` when both are given. */
export function pageWindow(q: Pagination): { offset: number; limit: number; page: number } {
  const offset = q.offset ?? ((q.page ?? 1) - 1) * q.limit;
  return { offset, limit: q.limit, page: Math.floor(offset / q.limit) + 1 };
}

export function pageMeta(total: number, window: { offset: number; limit: number; page: number }) {
  return { total, page: window.page, limit: window.limit, hasMore: window.offset + window.limit < total };
}

export function idParam<N extends string>(name: N, prefix: string) {
  return z.object({
    [name]: z
      .string()
      .min(1)
      .max(64)
      .openapi({ param: { name, in: "path" }, example: `${prefix}_0123456789abcdefghjk` }),
  } as Record<N, z.ZodString>);
}
