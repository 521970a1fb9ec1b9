import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, call, createApiKey, createOrganization, expectError, expectOk, registerUser, type TestUser } from "../helpers/api";

// Tenant isolation: the owner and an admin key of organization B call every route that takes
// an id of organization A. Every one answers 404 NOT_FOUND, never 403: the caller cannot
// even learn that the id exists. Later areas append rows to ROUTES.

interface Tenant {
  owner: TestUser;
  org: { id: string };
  member: TestUser;
  key: { id: string; key: string };
}

interface IsolationCase {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** `a` is the victim organization, `b` the caller's own. */
  path: (a: Tenant, b: Tenant) => string;
  body?: (a: Tenant, b: Tenant) => unknown;
}

const ROUTES: IsolationCase[] = [
  { method: "GET", path: (a) => `/v1/organizations/${a.org.id}` },
  { method: "PATCH", path: (a) => `/v1/organizations/${a.org.id}`, body: () => ({ name: "Hijacked" }) },
  { method: "DELETE", path: (a) => `/v1/organizations/${a.org.id}` },
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/transfer-ownership`, body: (a) => ({ newOwnerId: a.member.id }) },
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/transfer-ownership`, body: (_a, b) => ({ newOwnerId: b.owner.id }) },
  { method: "GET", path: (a) => `/v1/organizations/${a.org.id}/members` },
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/members`, body: (_a, b) => ({ email: b.owner.email, role: "admin" }) },
  { method: "PATCH", path: (a) => `/v1/organizations/${a.org.id}/members/${a.member.id}`, body: () => ({ role: "admin" }) },
  { method: "DELETE", path: (a) => `/v1/organizations/${a.org.id}/members/${a.member.id}` },
  { method: "GET", path: (a) => `/v1/organizations/${a.org.id}/api-keys` },
  { method: "POST", path: (a) => `/v1/organizations/${a.org.id}/api-keys`, body: () => ({ name: "stolen", permissions: ["admin"] }) },
  { method: "DELETE", path: (a) => `/v1/organizations/${a.org.id}/api-keys/${a.key.id}` },
  // A's ids inside B's own paths: the id is looked up within B only.
  { method: "PATCH", path: (a, b) => `/v1/organizations/${b.org.id}/members/${a.member.id}`, body: () => ({ role: "admin" }) },
  { method: "DELETE", path: (a, b) => `/v1/organizations/${b.org.id}/members/${a.member.id}` },
  { method: "DELETE", path: (a, b) => `/v1/organizations/${b.org.id}/api-keys/${a.key.id}` },
];

async function tenant(): Promise<Tenant> {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  const member = await registerUser();
  await addMember(owner, org.id, member, "operator");
  const key = await createApiKey(owner, org.id, ["admin"]);
  return { owner, org, member, key };
}

describe("tenant isolation", () => {
  let a: Tenant;
  let b: Tenant;
  beforeAll(async () => {
    a = await tenant();
    b = await tenant();
  });

  it.each(ROUTES.map((route, i) => [i, route.method, route] as const))("row %i (%s) answers 404 to another organization's session and key", async (_i, _m, route) => {
    for (const auth of [{ token: b.owner.token }, { apiKey: b.key.key }]) {
      const body = route.body?.(a, b);
      const res = await call(route.method, route.path(a, b), { ...auth, ...(body === undefined ? {} : { body }) });
      expectError(res, 404, "NOT_FOUND");
    }
  });

  it("left organization A exactly as it was", async () => {
    const org = expectOk(await call("GET", `/v1/organizations/${a.org.id}`, { token: a.owner.token }));
    expect(org.name).toBe("Test organization");
    const members = expectOk(await call("GET", `/v1/organizations/${a.org.id}/members`, { token: a.owner.token }));
    expect(members.map((m: any) => [m.userId, m.role]).sort()).toEqual([[a.owner.id, "owner"], [a.member.id, "operator"]].sort());
    const keys = expectOk(await call("GET", `/v1/organizations/${a.org.id}/api-keys`, { token: a.owner.token }));
    expect(keys.map((k: any) => k.id)).toEqual([a.key.id]);
    const bMembers = await env.DB.prepare("SELECT count(*) AS n FROM members WHERE organization_id = ?").bind(b.org.id).first<{ n: number }>();
    expect(bMembers?.n).toBe(2);
  });
});
