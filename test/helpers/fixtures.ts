import { env } from "cloudflare:test";
import { newId } from "../../src/lib/ids";

// Catalog rows written straight into D1, for areas that need a queue before the catalog
// routes exist in their branch. Organizations still come from the HTTP helper.

export interface QueueFixture {
  organizationId: string;
  locationId: string;
  serviceId: string;
  queueId: string;
}

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

/** Another queue of an existing service (letters must differ within a service). */
export async function addQueue(fixture: QueueFixture, letter: string, archived = false): Promise<string> {
  const at = Date.now();
  const queueId = newId("que");
  await env.DB.prepare(
    "INSERT INTO queues (id, organization_id, service_id, name, letter, status, archived_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?)",
  )
    .bind(queueId, fixture.organizationId, fixture.serviceId, `Queue ${letter}`, letter, archived ? at : null, at, at)
    .run();
  return queueId;
}

/** Adds a user to an organization with a role, as the members routes would. */
export async function addMember(organizationId: string, userId: string, role: "owner" | "admin" | "manager" | "operator"): Promise<void> {
  const at = Date.now();
  await env.DB.prepare("INSERT INTO members (organization_id, user_id, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?)")
    .bind(organizationId, userId, role, at, at)
    .run();
}
