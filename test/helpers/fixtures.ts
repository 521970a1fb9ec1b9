import { env } from "cloudflare:test";
import { call, expectOk, type Schemas, unique } from "./api";
import { insertService, settle } from "./catalog";

// The one fixture module: users, organizations, members, keys, locations, services and queues
// made through the API, as an integrator would, so every queue's room is configured as in
// production. The plan is set in D1 (no billing route yet). Storage-level helpers (rows the
// API refuses, a room's outbox) are in ./catalog.ts.

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

/**
 * Adds a member with this role as in production: `inviter` (the owner, or any ORG_MANAGE
 * session) invites, and the person accepts with their own session (issue 26: no membership
 * without consent). `user` when given, else a new user registered with `overrides` (e.g. a
 * first name). Answers the member as a TestUser.
 */
export async function addMember(
  inviter: TestUser,
  organizationId: string,
  role: string,
  user?: TestUser | Record<string, unknown>,
): Promise<TestUser> {
  const member = user && "token" in user ? (user as TestUser) : await registerUser(user ?? {});
  await inviteMember(inviter, organizationId, member.email, role);
  await acceptInvitation(member, organizationId);
  return member;
}

/** The inviter's POST …/members (202): answers the invitation record. */
export async function inviteMember(inviter: TestUser, organizationId: string, email: string, role: string): Promise<any> {
  const res = await call("POST", `/v1/organizations/${organizationId}/members`, { token: inviter.token, body: { email, role } });
  return expectOk(res, 202);
}

/** The invitee finds their pending invitation to this organization and accepts it. */
export async function acceptInvitation(member: TestUser, organizationId: string): Promise<any> {
  const mine = expectOk(await call("GET", "/v1/invitations", { token: member.token })) as any[];
  const invitation = mine.find((i) => i.organizationId === organizationId);
  if (!invitation) throw new Error(`no pending invitation to ${organizationId} for ${member.email}`);
  return expectOk(await call("POST", `/v1/invitations/${invitation.id}/accept`, { token: member.token }));
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
export async function createCatalog(
  owner: TestUser,
  organizationId: string,
): Promise<{ locationId: string; serviceId: string; queueId: string }> {
  const token = owner.token;
  const location = expectOk(
    await call("POST", "/v1/locations", {
      token,
      body: { organizationId, name: "Main", address: "1 rue", latitude: 48.85, longitude: 2.35 },
    }),
    201,
  );
  const service = expectOk(
    await call("POST", "/v1/services", { token, body: { name: "Teller", locationIds: [location.id], serviceTypeId: "st_bank_teller" } }),
    201,
  );
  const queue = expectOk(await call("POST", "/v1/business/queues", { token, body: { serviceId: service.id, name: "Main" } }), 201);
  return { locationId: location.id, serviceId: service.id, queueId: queue.id };
}

export async function setPlan(organizationId: string, plan: "starter" | "pro" | "enterprise"): Promise<void> {
  await env.DB.prepare("UPDATE subscriptions SET plan = ? WHERE organization_id = ?").bind(plan, organizationId).run();
}

export interface Fixture {
  owner: TestUser;
  organizationId: string;
  serviceId: string;
  queueId: string;
}

/** An organization (on `plan`), one active service and one queue created through the API. */
export async function queueFixture(plan: "starter" | "pro" = "pro", queueBody: Record<string, unknown> = {}): Promise<Fixture> {
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "retail" });
  await setPlan(org.id, plan);
  const serviceId = await insertService(org.id);
  const queue = expectOk(
    await call("POST", "/v1/business/queues", { token: owner.token, body: { serviceId, name: "Main line", ...queueBody } }),
    201,
  );
  return { owner, organizationId: org.id, serviceId, queueId: queue.id };
}

export async function addQueue(f: Fixture, body: Record<string, unknown> = {}): Promise<string> {
  const headers = { "X-Organization-Id": f.organizationId };
  return expectOk(
    await call("POST", "/v1/business/queues", {
      token: f.owner.token,
      body: { serviceId: f.serviceId, name: unique("q"), ...body },
      headers,
    }),
    201,
  ).id;
}

/** A queue fixture with its own location at `place` (for the scan and nearby tests). */
export interface QueueFixture extends Fixture {
  locationId: string;
}

/**
 * A location at `place`, a service there and a queue, made through the API by `owner`. The
 * organization is moved to the pro plan first, so a test may add more services and queues.
 */
export async function createQueueFixture(
  owner: TestUser,
  organizationId: string,
  place: { latitude: number; longitude: number } = { latitude: 48.8566, longitude: 2.3522 },
): Promise<QueueFixture> {
  await setPlan(organizationId, "pro");
  const token = owner.token;
  const location = expectOk(
    await call("POST", "/v1/locations", { token, body: { organizationId, name: "Main branch", address: "1 Main Street", ...place } }),
    201,
  );
  const service = expectOk(
    await call("POST", "/v1/services", {
      token,
      body: { name: "Counter", locationIds: [location.id], serviceTypeId: "st_other_general" },
      headers: { "X-Organization-Id": organizationId },
    }),
    201,
  );
  const queue = expectOk(
    await call("POST", "/v1/business/queues", {
      token,
      body: { serviceId: service.id, name: "Main queue" },
      headers: { "X-Organization-Id": organizationId },
    }),
    201,
  );
  return { owner, organizationId, locationId: location.id, serviceId: service.id, queueId: queue.id };
}

/** Another queue of the fixture's service, archived through the API. */
export async function addArchivedQueue(f: Fixture): Promise<string> {
  const queueId = await addQueue(f);
  expectOk(await call("POST", `/v1/queues/${queueId}/archive`, { token: f.owner.token }));
  return queueId;
}

export type QueueState = "active" | "paused" | "closed" | "archived";

/**
 * A queue of `serviceId` made through the API (so its room is configured as in production),
 * then paused, closed or archived the way a manager would. The organization's plan must allow it.
 */
export async function createQueue(
  user: TestUser,
  organizationId: string,
  serviceId: string,
  opts: { name?: string; state?: QueueState } = {},
): Promise<string> {
  const headers = { "X-Organization-Id": organizationId };
  const token = user.token;
  const queue = expectOk(
    await call("POST", "/v1/business/queues", { token, headers, body: { serviceId, name: opts.name ?? unique("q") } }),
    201,
  );
  const state = opts.state ?? "active";
  if (state === "archived") expectOk(await call("POST", `/v1/queues/${queue.id}/archive`, { token, headers }));
  else if (state !== "active") {
    expectOk(await call("PATCH", `/v1/business/queues/${queue.id}/status`, { token, headers, body: { status: state } }));
  }
  // D1's queue status follows the room's drain (a moment after the change): tests that read D1
  // next see the state they asked for.
  if (state !== "active") await settle(queue.id);
  return queue.id;
}

/** Who acts: a member's session (a TestUser will do) or an API key. */
export type Caller = { token: string } | { apiKey: string };

/**
 * A walk-in registered at the counter by `caller` (operator-join; `vip` for a VIP ticket at the
 * front of the line): the ticket made, typed as documented.
 */
export async function walkIn(caller: Caller, queueId: string, opts: { vip?: boolean } = {}): Promise<Schemas["Ticket"]> {
  const auth = "token" in caller ? { token: caller.token } : { apiKey: caller.apiKey };
  const path = `/v1/queues/${queueId}/${opts.vip ? "vip-ticket" : "operator-join"}`;
  return expectOk<Schemas["Ticket"]>(await call("POST", path, { ...auth, body: {} }), 201);
}

/** A test-mode organization's two sides (docs/test-mode.md): its live catalogue and admin key, and a test key of its twin. */
export interface TestModeSides {
  owner: TestUser;
  liveId: string;
  liveQueueId: string;
  liveKey: string;
  testKey: string;
  twinId: string;
  /** The twin's copy of the live queue. */
  twinQueueId: string;
}

export async function testModeSides(): Promise<TestModeSides> {
  const owner = await registerUser();
  const org = await createOrganization(owner);
  await setPlan(org.id, "pro");
  const { queueId } = await createCatalog(owner, org.id);
  const { key: liveKey } = await createApiKey(owner, org.id, ["admin"]);
  const created = expectOk(
    await call("POST", `/v1/organizations/${org.id}/api-keys`, {
      token: owner.token,
      body: { name: "Sandbox", permissions: ["admin"], mode: "test" },
    }),
    201,
  );
  const twinQueues = expectOk(await call("GET", "/v1/business/queues", { apiKey: created.key }));
  return {
    owner,
    liveId: org.id,
    liveQueueId: queueId,
    liveKey,
    testKey: created.key,
    twinId: created.organizationId,
    twinQueueId: twinQueues[0].id,
  };
}
