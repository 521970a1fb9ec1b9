import { env } from "cloudflare:test";
import { mintApiKey } from "../../src/http/credentials/api-keys";
import { createSession } from "../../src/http/credentials/sessions";
import { database } from "../../src/db/client";
import { CURRENT_API_VERSION } from "../../src/domain/api-versions";
import { DEFAULT_NO_SHOW_MINUTES } from "../../src/domain/tickets";
import { DEFAULT_MINUTES_PER_TICKET } from "../../src/domain/wait-estimate";
import type { QueueRow } from "../../src/http/credentials/queues";
import { hashPassword, sha256Hex } from "../../src/lib/crypto";
import { newId } from "../../src/lib/ids";
import { openRoom } from "../../src/tickets/queue-rooms";
import { unique } from "./api";
import type { Fixture, TestUser } from "./fixtures";
import { depsOf } from "../../src/http/deps";

// A whole organization written straight into D1 (issue 37): an owner with a session, the
// organization and its subscription, a location, a service there, a queue and an admin key,
// in one batch, instead of the eight HTTP calls of ./fixtures.ts (register with its password
// hash, create the organization, set the plan, the location, the service, the queue, the key).
// The rows are those the routes write; the queue's room is configured as the route does it
// (openRoom before the row exists). What is NOT written: the audit rows and domain events of
// those creations. Use it where a test needs an organization to work in, not where it tests
// how one is made (those go through ./fixtures.ts).

export const SEED_PASSWORD = "correct horse battery";
let passwordHash: Promise<string> | null = null;

export interface SeededFixture extends Fixture {
  locationId: string;
  /** An API key with the `admin` permission. */
  adminKey: string;
}

export interface SeedOptions {
  plan?: "starter" | "pro" | "enterprise";
  type?: "retail" | "healthcare" | "banking" | "government" | "other";
  place?: { latitude: number; longitude: number };
  queue?: Partial<Pick<QueueRow, "name" | "description" | "maxCapacity" | "noShowTimeoutMinutes" | "defaultServiceMinutes">>;
}

/** A user with a session, as registerUser makes one (password SEED_PASSWORD), in one insert. */
export async function seedUser(accountType: "business" | "customer" = "business"): Promise<TestUser> {
  const at = Date.now();
  passwordHash ??= hashPassword(SEED_PASSWORD);
  const id = newId("usr");
  const email = `${unique("user")}@example.com`;
  await env.DB.prepare(
    "INSERT INTO users (id, email, password_hash, first_name, last_name, account_type, created_at, updated_at) VALUES (?, ?, ?, 'Test', 'User', ?, ?, ?)",
  )
    .bind(id, email, await passwordHash, accountType, at, at)
    .run();
  const session = await createSession(database(env.DB), env, id, at);
  return { id, email, token: session.token };
}

/** An organization as queueFixture makes it (retail, `plan`, one service at a location of its own at 48.85, 2.35, one queue). */
export async function seedQueueFixture(plan: SeedOptions["plan"] = "pro", opts: Omit<SeedOptions, "plan"> = {}): Promise<SeededFixture> {
  const at = Date.now();
  passwordHash ??= hashPassword(SEED_PASSWORD);
  const email = `${unique("user")}@example.com`;
  const userId = newId("usr");
  const organizationId = newId("org");
  const locationId = newId("loc");
  const serviceId = newId("svc");
  const place = opts.place ?? { latitude: 48.85, longitude: 2.35 };
  const queue: QueueRow = {
    id: newId("que"),
    organizationId,
    serviceId,
    name: opts.queue?.name ?? "Main line",
    description: opts.queue?.description ?? null,
    maxCapacity: opts.queue?.maxCapacity ?? null,
    noShowTimeoutMinutes: opts.queue?.noShowTimeoutMinutes ?? DEFAULT_NO_SHOW_MINUTES,
    defaultServiceMinutes: opts.queue?.defaultServiceMinutes ?? DEFAULT_MINUTES_PER_TICKET,
    letter: "A",
    status: "active",
    archivedAt: null,
    createdAt: at,
    updatedAt: at,
    rulesVersion: 0,
    intakeQuestions: 0,
    blendPolicy: null,
    targetWaitMinutes: null,
    maxDeferMinutes: 60,
    maxDefers: 2,
    smsKeyword: null,
  };
  const minted = await mintApiKey(env, organizationId);
  const keyHash = await sha256Hex(minted.value);
  const month = new Date(at);
  const periodStart = Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1);
  const periodEnd = Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1);
  const db = env.DB;
  // As the queue route: the room learns its queue before the row exists.
  await openRoom(depsOf(env), queue);
  await db.batch([
    db
      .prepare(
        "INSERT INTO users (id, email, password_hash, first_name, last_name, account_type, created_at, updated_at) VALUES (?, ?, ?, 'Test', 'User', 'business', ?, ?)",
      )
      .bind(userId, email, await passwordHash, at, at),
    db
      .prepare("INSERT INTO organizations (id, name, slug, type, created_at, updated_at) VALUES (?, 'Test organization', ?, ?, ?, ?)")
      .bind(organizationId, unique("org"), opts.type ?? "retail", at, at),
    db
      .prepare("INSERT INTO members (organization_id, user_id, role, created_at, updated_at) VALUES (?, ?, 'owner', ?, ?)")
      .bind(organizationId, userId, at, at),
    db
      .prepare(
        "INSERT INTO subscriptions (organization_id, plan, current_period_start, current_period_end, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
      )
      .bind(organizationId, plan, periodStart, periodEnd, at, at),
    db
      .prepare(
        "INSERT INTO locations (id, organization_id, name, address, latitude, longitude, timezone, created_at, updated_at) VALUES (?, ?, 'Main', '1 Street', ?, ?, 'UTC', ?, ?)",
      )
      .bind(locationId, organizationId, place.latitude, place.longitude, at, at),
    db
      .prepare(
        "INSERT INTO services (id, organization_id, name, service_type_id, status, created_at, updated_at) VALUES (?, ?, 'Counter', 'st_retail_checkout', 'active', ?, ?)",
      )
      .bind(serviceId, organizationId, at, at),
    db.prepare("INSERT INTO service_locations (service_id, location_id) VALUES (?, ?)").bind(serviceId, locationId),
    db
      .prepare(
        "INSERT INTO queues (id, organization_id, service_id, name, description, max_capacity, no_show_timeout_minutes, default_service_minutes, letter, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?)",
      )
      .bind(
        queue.id,
        organizationId,
        serviceId,
        queue.name,
        queue.description,
        queue.maxCapacity,
        queue.noShowTimeoutMinutes,
        queue.defaultServiceMinutes,
        queue.letter,
        at,
        at,
      ),
    db
      .prepare(
        "INSERT INTO api_keys (id, organization_id, name, lookup_prefix, key_hash, last4, permissions, created_by_id, created_at, signed, api_version) VALUES (?, ?, ?, ?, ?, ?, '[\"admin\"]', ?, ?, 1, ?)",
      )
      .bind(newId("key"), organizationId, unique("key"), minted.lookupPrefix, keyHash, minted.last4, userId, at, CURRENT_API_VERSION),
  ]);
  const session = await createSession(database(env.DB), env, userId, at);
  const owner: TestUser = { id: userId, email, token: session.token };
  return { owner, organizationId, locationId, serviceId, queueId: queue.id, adminKey: minted.value };
}
