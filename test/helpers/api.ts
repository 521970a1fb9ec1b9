import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import type { components } from "../../clients/typescript/schema";
import worker from "../../src/index";

// A thin HTTP client: tests talk to the service as an integrator would. The fixtures made
// through it live in ./fixtures.ts.
//
// `call` hands the request to the Worker's own fetch handler in the test's isolate (the same
// bindings, an execution context of its own that nobody waits on: what the Worker leaves
// running after its answer runs on, as behind SELF.fetch). It does not go through SELF.fetch:
// under @cloudflare/vitest-pool-workers every SELF.fetch costs more than the one before in the
// same file (cloudflare/workers-sdk#15446; measured here: 11 ms a call for the first 150
// calls, 237 ms after 750, while the handler itself stays at 0.2 ms), so the last tests of a
// long file were 25x slower than its first. `callSelf` keeps the runtime's path for a test
// that needs it.

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
  return send<T>(method, path, opts, async (request) => worker.fetch(request, env, createExecutionContext()));
}

/** `call` through the runtime's SELF.fetch (each one slower than the last in a file: see above). */
export async function callSelf<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> {
  return send<T>(method, path, opts, (request) => SELF.fetch(request));
}

/**
 * The Worker's raw Response to a request (an HTML page, a CSV, a PNG, a redirect not followed), on
 * `call`'s path: its own fetch handler, not SELF.fetch. `input` is a URL or a path on api.test.
 * SELF.fetch stays for what needs the runtime's HTTP layer: a WebSocket upgrade, the assets router
 * (paths outside /v1), a Content-Length the runtime sets.
 */
export async function fetchWorker(input: string | URL, init?: RequestInit): Promise<Response> {
  const url = typeof input === "string" && input.startsWith("/") ? `https://api.test${input}` : input;
  return worker.fetch(new Request(url, init), env, createExecutionContext());
}

/**
 * `call`, answered by the Worker's own handler in an execution context that the test then waits
 * on: when it returns, everything the Worker left running after its answer (ctx.waitUntil: a
 * session's slide, a key's lastUsedAt) has finished, so a test may assert that something did
 * NOT happen without sleeping first.
 */
export async function callSettled<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> {
  return callSettledIn(env, method, path, opts);
}

/** `callSettled` with these bindings (a test's metered or reconfigured copy of `env`). */
export async function callSettledIn<T = any>(
  bindings: typeof env,
  method: string,
  path: string,
  opts: CallOptions = {},
): Promise<ApiResponse<T>> {
  const ctx = createExecutionContext();
  const res = await send<T>(method, path, opts, async (request) => worker.fetch(request, bindings, ctx));
  await waitOnExecutionContext(ctx);
  return res;
}

async function send<T>(
  method: string,
  path: string,
  opts: CallOptions,
  fetcher: (request: Request) => Promise<Response>,
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (!Object.keys(headers).some((name) => /^(cf-connecting-ip|x-forwarded-for)$/i.test(name))) headers["X-Forwarded-For"] = fileAddress();
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  if (opts.apiKey) headers["X-API-Key"] = opts.apiKey;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["Content-Type"] ??= "application/json";
  }
  const res = await fetcher(new Request(`https://api.test${path}`, { method, headers, body }));
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: the test sees the text
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

/**
 * The address a test file's requests come from when they name none. The integration files share
 * runtimes (vitest.config.ts), and with them the RateLimiter objects: without an address every
 * file's anonymous calls (registrations, logins) and failed credentials would count in one
 * `ip:unknown` bucket, and a file would be refused for what the files before it did. Each file
 * gets an address of its own in 198.18.0.0/15 (set aside for tests), as if alone.
 */
function fileAddress(): string {
  let hash = 2166136261;
  for (const ch of expect.getState().testPath ?? "") hash = Math.imul(hash ^ ch.charCodeAt(0), 16777619);
  hash >>>= 0;
  return `198.${18 + (hash & 1)}.${(hash >>> 8) & 255}.${(hash >>> 16) & 255}`;
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

/** The documented bodies, as the generated client declares them (clients/typescript/schema.d.ts). */
export type Schemas = components["schemas"];

/**
 * The envelope's data after checking the status and `success`. Untyped unless the caller names
 * the documented schema it expects: `expectOk<Schemas["Ticket"]>(res, 201)`.
 */
export function expectOk<T = any>(res: ApiResponse, status = 200): T {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.success).toBe(true);
  return res.body.data as T;
}
