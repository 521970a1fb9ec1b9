import { SELF } from "cloudflare:test";
import { expect } from "vitest";

// A thin HTTP client over SELF.fetch: tests talk to the service as an integrator would.
// The fixtures made through it live in ./fixtures.ts.

export interface CallOptions {
  body?: unknown;
  token?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  /** Send this exact text as the body (for malformed input tests). */
  rawBody?: string;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.apiKey) headers["X-API-Key"] = opts.apiKey;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["Content-Type"] ??= "application/json";
  }
  const res = await SELF.fetch(`https://api.test${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: the test sees the text
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

let counter = 0;
/** A name no other test in this file will use (storage is per file, not per test). */
export function unique(prefix = "t"): string {
  counter += 1;
  return `${prefix}${counter}${Math.random().toString(36).slice(2, 8)}`;
}

export function expectError(res: ApiResponse, status: number, code: string, field?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.requestId).toBe("string");
  expect(res.body.error.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  if (field !== undefined) expect(res.body.error.details.field).toBe(field);
}

export function expectOk(res: ApiResponse, status = 200): any {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(true);
  return res.body.data;
}
