import type { Context } from "hono";
import { iso } from "../lib/time";
import { now } from "../lib/clock";
import { errorDocUrl, type ApiError } from "./errors";

export function ok<T>(data: T) {
  return { success: true as const, data };
}

export function okList<T, M extends { total: number; page: number | null; limit: number; hasMore: boolean }>(data: T[], meta: M) {
  return { success: true as const, data, meta };
}

export function errorBody(c: Context, err: ApiError) {
  return {
    success: false as const,
    error: {
      code: err.code,
      message: err.message,
      details: err.details,
      timestamp: iso(now()),
      requestId: (c.get("requestId") as string | undefined) ?? "",
      docUrl: errorDocUrl(new URL(c.req.url).origin, err.code),
    },
  };
}
