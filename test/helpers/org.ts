import { env } from "cloudflare:test";
import { newId } from "../../src/lib/ids";
import { registerUser, type TestUser } from "./api";

// Rows the calendar tests need from areas whose routes live elsewhere (members, locations,
// services), written straight into D1.

export async function addMember(organizationId: string, role: "owner" | "admin" | "manager" | "operator", firstName = "Member"): Promise<TestUser> {
  const user = await registerUser({ firstName });
  await env.DB.prepare("INSERT INTO members (organization_id, user_id, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?)")
    .bind(organizationId, user.id, role, Date.now(), Date.now())
    .run();
  return user;
}

export async function insertLocation(organizationId: string, timezone: string, createdAt = Date.now()): Promise<string> {
  const id = newId("loc");
  await env.DB.prepare(
    "INSERT INTO locations (id, organization_id, name, address, latitude, longitude, timezone, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  )
    .bind(id, organizationId, `Site ${timezone}`, "1 rue de la Paix", 48.86, 2.35, timezone, createdAt, createdAt)
    .run();
  return id;
}

export async function insertService(organizationId: string): Promise<string> {
  const id = newId("svc");
  await env.DB.prepare(
    "INSERT INTO services (id, organization_id, name, service_type_id, created_at, updated_at) VALUES (?, ?, ?, 'st_other_general', ?, ?)",
  )
    .bind(id, organizationId, "Counter", Date.now(), Date.now())
    .run();
  return id;
}
