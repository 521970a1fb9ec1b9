import { SELF } from "cloudflare:test";
import { expect } from "vitest";

// A thin HTTP client over SELF.fetch: tests talk to the service as an integrator would.

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

export interface TestUser {
  id: string;
  email: string;
  token: string;
}

export async function registerUser(overrides: Record<string, unknown> = {}): Promise<TestUser> {
  const email = `${unique("user")}@example.com`;
  const res = await call("POST", "/v1/auth/register", {
    body: { email, password: "correct horse battery", firstName: "Test", lastName: "User", accountType: "business", ...overrides },
  });
  const data = expectOk(res, 201);
  return { id: data.user.id, email: data.user.email, token: data.session.token };
}

export async function createOrganization(owner: TestUser, overrides: Record<string, unknown> = {}): Promise<any> {
  const res = await call("POST", "/v1/organizations", {
    token: owner.token,
    body: { name: "Test organization", slug: unique("org"), type: "banking", ...overrides },
  });
  return expectOk(res, 201);
}

/** Adds an existing user to the organization with this role (the owner's session does it). */
export async function addMember(owner: TestUser, organizationId: string, user: TestUser, role: string): Promise<any> {
  const res = await call("POST", `/v1/organizations/${organizationId}/members`, { token: owner.token, body: { email: user.email, role } });
  return expectOk(res, 201);
}

/** Creates an API key for the organization and returns its full value and record. */
export async function createApiKey(owner: TestUser, organizationId: string, permissions?: string[]): Promise<{ key: string; id: string }> {
  const res = await call("POST", `/v1/organizations/${organizationId}/api-keys`, {
    token: owner.token,
    body: { name: unique("key"), ...(permissions ? { permissions } : {}) },
  });
  const data = expectOk(res, 201);
  return { key: data.key, id: data.id };
}

/** A location, a service at it and a queue of that service, created through the API by `owner`. */
export async function createCatalog(owner: TestUser, organizationId: string): Promise<{ locationId: string; serviceId: string; queueId: string }> {
  const token = owner.token;
  const location = expectOk(
    await call("POST", "/v1/locations", { token, body: { organizationId, name: "Main", address: "1 rue", latitude: 48.85, longitude: 2.35 } }),
    201,
  );
  const service = expectOk(
    await call("POST", "/v1/services", { token, body: { name: "Teller", locationIds: [location.id], serviceTypeId: "st_bank_teller" } }),
    201,
  );
  const queue = expectOk(await call("POST", "/v1/business/queues", { token, body: { serviceId: service.id, name: "Main" } }), 201);
  return { locationId: location.id, serviceId: service.id, queueId: queue.id };
}
