import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { newId } from "../../src/lib/ids";
import { call, createOrganization, expectOk, registerUser, unique, type TestUser } from "./api";

// Rows written straight into D1 when a test needs them without going through their own
// routes (or needs what the routes refuse, like a back-dated location), and helpers to settle
// a room's outbox deterministically. Fixtures through the API live in ./api.ts.

/**
 * An active service. By default at a new location of its own; `locationId` links it to an
 * existing one instead, and `null` leaves it at no location (the organization's time zone then
 * stays that of its own first location).
 */
export async function insertService(organizationId: string, locationId?: string | null): Promise<string> {
  const at = Date.now();
  const serviceId = newId("svc");
  const place = locationId === undefined ? newId("loc") : locationId;
  const statements = [
    env.DB.prepare(
      "INSERT INTO services (id, organization_id, name, service_type_id, status, created_at, updated_at) VALUES (?, ?, 'Counter', 'st_retail_checkout', 'active', ?, ?)",
    ).bind(serviceId, organizationId, at, at),
  ];
  if (locationId === undefined) {
    statements.unshift(
      env.DB.prepare(
        "INSERT INTO locations (id, organization_id, name, address, latitude, longitude, timezone, created_at, updated_at) VALUES (?, ?, 'Main', '1 Street', 48.85, 2.35, 'UTC', ?, ?)",
      ).bind(place, organizationId, at, at),
    );
  }
  if (place !== null) statements.push(env.DB.prepare("INSERT INTO service_locations (service_id, location_id) VALUES (?, ?)").bind(serviceId, place));
  await env.DB.batch(statements);
  return serviceId;
}

/** A location in `timezone`, optionally back-dated (the organization's first location sets its time zone). */
export async function insertLocation(organizationId: string, timezone: string, createdAt = Date.now()): Promise<string> {
  const id = newId("loc");
  await env.DB.prepare(
    "INSERT INTO locations (id, organization_id, name, address, latitude, longitude, timezone, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  )
    .bind(id, organizationId, `Site ${timezone}`, "1 rue de la Paix", 48.86, 2.35, timezone, createdAt, createdAt)
    .run();
  return id;
}

export async function setPlan(organizationId: string, plan: "starter" | "pro" | "enterprise"): Promise<void> {
  await env.DB.prepare("UPDATE subscriptions SET plan = ? WHERE organization_id = ?").bind(plan, organizationId).run();
}

export async function addMember(organizationId: string, role: string, overrides: Record<string, unknown> = {}): Promise<TestUser> {
  const user = await registerUser(overrides);
  const at = Date.now();
  await env.DB.prepare("INSERT INTO members (organization_id, user_id, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?)")
    .bind(organizationId, user.id, role, at, at)
    .run();
  return user;
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
  return expectOk(await call("POST", "/v1/business/queues", { token: f.owner.token, body: { serviceId: f.serviceId, name: unique("q"), ...body } }), 201).id;
}

export interface QueueFixture {
  organizationId: string;
  locationId: string;
  serviceId: string;
  queueId: string;
}

/** A location at `place`, a service there and a queue, straight into D1. */
export async function createQueueFixture(
  organizationId: string,
  place: { latitude: number; longitude: number } = { latitude: 48.8566, longitude: 2.3522 },
): Promise<QueueFixture> {
  const at = Date.now();
  const locationId = newId("loc");
  const serviceId = newId("svc");
  const queueId = newId("que");
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO locations (id, organization_id, name, address, latitude, longitude, timezone, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'UTC', ?, ?)",
    ).bind(locationId, organizationId, "Main branch", "1 Main Street", place.latitude, place.longitude, at, at),
    env.DB.prepare(
      "INSERT INTO services (id, organization_id, name, service_type_id, status, created_at, updated_at) VALUES (?, ?, ?, 'st_other_general', 'active', ?, ?)",
    ).bind(serviceId, organizationId, "Counter", at, at),
    env.DB.prepare("INSERT INTO service_locations (service_id, location_id) VALUES (?, ?)").bind(serviceId, locationId),
    env.DB.prepare(
      "INSERT INTO queues (id, organization_id, service_id, name, letter, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'A', 'active', ?, ?)",
    ).bind(queueId, organizationId, serviceId, "Main queue", at, at),
  ]);
  return { organizationId, locationId, serviceId, queueId };
}

/** Another queue of the fixture's service, straight into D1 (letters must differ within a service). */
export async function insertQueue(fixture: QueueFixture, letter: string, archived = false): Promise<string> {
  const at = Date.now();
  const queueId = newId("que");
  await env.DB.prepare(
    "INSERT INTO queues (id, organization_id, service_id, name, letter, status, archived_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?)",
  )
    .bind(queueId, fixture.organizationId, fixture.serviceId, `Queue ${letter}`, letter, archived ? at : null, at, at)
    .run();
  return queueId;
}

export function room(queueId: string) {
  return env.QUEUE_ROOM.get(env.QUEUE_ROOM.idFromName(queueId));
}

export async function outboxSize(queueId: string): Promise<number> {
  return runInDurableObject(room(queueId), (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n);
}

/** Drains the room's outbox to D1 and the queue until it is empty (alarms may also fire on their own). */
export async function settle(queueId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await outboxSize(queueId)) === 0) return;
    const ran = await runDurableObjectAlarm(room(queueId));
    if (!ran) await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`outbox of ${queueId} did not drain`);
}
