import { beforeAll, describe, expect, it } from "vitest";
import { keyPermissions, roleAllows, type Permission, type Role } from "../../src/domain/permissions";
import {
  addMember,
  call,
  createApiKey,
  createOrganization,
  expectError,
  registerUser,
  unique,
  type ApiResponse,
  type TestUser,
} from "../helpers/api";

// The role and key-permission matrix: every route that acts inside an organization, tried by
// every role and by keys of each permission value; allowed or 403 exactly as the table in
// src/domain/permissions.ts says. Later areas append rows to ROUTES.

interface Fixture {
  org: { id: string };
  users: Record<Role, TestUser>;
  keys: Record<KeyKind, string>;
}

const KEY_KINDS = ["read", "write", "admin", "widget"] as const;
type KeyKind = (typeof KEY_KINDS)[number];

/** Made fresh for each call: things a call may consume (a member to change, a key to revoke). */
type Extra = Record<string, string>;

interface RouteCase {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: (f: Fixture, x: Extra) => string;
  body?: (f: Fixture, x: Extra) => unknown;
  /** "member": any member of the organization; otherwise a permission of src/domain/permissions.ts. */
  permission: Permission | "member";
  /** What a key needs, when it differs from `permission`: "anyButWidget" = every key but a widget-only one. */
  keyPermission?: Permission | "anyButWidget";
  prepare?: (f: Fixture) => Promise<Extra>;
  /** The allowed call destroys the fixture (delete, transfer): the row gets its own organization. */
  destructive?: boolean;
}

async function makeFixture(): Promise<Fixture> {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  const users = { owner } as Record<Role, TestUser>;
  for (const role of ["admin", "manager", "operator"] as const) {
    users[role] = await registerUser();
    await addMember(owner, org.id, users[role], role);
  }
  const keys = {} as Record<KeyKind, string>;
  for (const kind of KEY_KINDS) keys[kind] = (await createApiKey(owner, org.id, [kind])).key;
  return { org, users, keys };
}

async function newMember(f: Fixture): Promise<Extra> {
  const user = await registerUser();
  await addMember(f.users.owner, f.org.id, user, "operator");
  return { userId: user.id };
}

const ROUTES: RouteCase[] = [
  { method: "GET", path: (f) => `/v1/organizations/${f.org.id}`, permission: "member", keyPermission: "anyButWidget" },
  { method: "PATCH", path: (f) => `/v1/organizations/${f.org.id}`, body: () => ({ description: unique("d") }), permission: "ORG_MANAGE" },
  { method: "DELETE", path: (f) => `/v1/organizations/${f.org.id}`, permission: "ORG_DELETE", destructive: true },
  {
    method: "POST",
    path: (f) => `/v1/organizations/${f.org.id}/transfer-ownership`,
    body: (f) => ({ newOwnerId: f.users.admin.id }),
    permission: "ORG_TRANSFER",
    destructive: true,
  },
  { method: "GET", path: (f) => `/v1/organizations/${f.org.id}/members`, permission: "member", keyPermission: "ORG_MANAGE" },
  {
    method: "POST",
    path: (f) => `/v1/organizations/${f.org.id}/members`,
    body: (_f, x) => ({ email: x.email, role: "operator" }),
    permission: "ORG_MANAGE",
    prepare: async () => ({ email: (await registerUser()).email }),
  },
  {
    method: "PATCH",
    path: (f, x) => `/v1/organizations/${f.org.id}/members/${x.userId}`,
    body: () => ({ role: "manager" }),
    permission: "ORG_MANAGE",
    prepare: newMember,
  },
  { method: "DELETE", path: (f, x) => `/v1/organizations/${f.org.id}/members/${x.userId}`, permission: "ORG_MANAGE", prepare: newMember },
  { method: "GET", path: (f) => `/v1/organizations/${f.org.id}/api-keys`, permission: "ORG_MANAGE" },
  { method: "POST", path: (f) => `/v1/organizations/${f.org.id}/api-keys`, body: () => ({ name: "matrix" }), permission: "ORG_MANAGE" },
  {
    method: "DELETE",
    path: (f, x) => `/v1/organizations/${f.org.id}/api-keys/${x.keyId}`,
    permission: "ORG_MANAGE",
    prepare: async (f) => ({ keyId: (await createApiKey(f.users.owner, f.org.id)).id }),
  },
];

type Caller = { label: string; auth: { token: string } | { apiKey: string }; allowed: (route: RouteCase) => boolean };

function callers(f: Fixture): Caller[] {
  // Keys first and the owner last: the owner's allowed call may delete or hand over the organization.
  const keyCallers: Caller[] = KEY_KINDS.map((kind) => ({
    label: `${kind} key`,
    auth: { apiKey: f.keys[kind] },
    allowed: (route) => {
      const needed = route.keyPermission ?? route.permission;
      if (needed === "anyButWidget") return kind !== "widget";
      if (needed === "member") return true;
      return keyPermissions([kind]).has(needed);
    },
  }));
  const roleCallers: Caller[] = (["operator", "manager", "admin", "owner"] as const).map((role) => ({
    label: role,
    auth: { token: f.users[role].token },
    allowed: (route) => route.permission === "member" || roleAllows(role, route.permission),
  }));
  return [...keyCallers, ...roleCallers];
}

/** Names the table's rows with their path templates. */
const PLACEHOLDERS = { org: { id: "{organizationId}" } } as Fixture;
const PLACEHOLDER_EXTRA: Extra = new Proxy({}, { get: (_target, name) => `{${String(name)}}` });

function expectAllowed(res: ApiResponse, label: string): void {
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBeGreaterThanOrEqual(200);
  expect(res.status, `${label}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
}

describe("roles and key permissions", () => {
  let shared: Fixture;
  beforeAll(async () => {
    shared = await makeFixture();
  });

  it.each(ROUTES.map((route) => [`${route.method} ${route.path(PLACEHOLDERS, PLACEHOLDER_EXTRA)}`, route] as const))(
    "%s",
    async (_name, route) => {
      const f = route.destructive ? await makeFixture() : shared;
      for (const caller of callers(f)) {
        const extra = route.prepare ? await route.prepare(f) : {};
        const body = route.body?.(f, extra);
        const res = await call(route.method, route.path(f, extra), { ...caller.auth, ...(body === undefined ? {} : { body }) });
        if (caller.allowed(route)) expectAllowed(res, caller.label);
        else expectError(res, 403, "AUTHORIZATION_ERROR");
      }
    },
  );
});
