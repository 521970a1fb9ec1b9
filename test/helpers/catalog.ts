import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { newId } from "../../src/lib/ids";
import { roomClient, type RoomClient, type RoomRulesCopy } from "../../src/queue-room/contract";
import { findQueue } from "../../src/tickets/queues";
import { refreshRoomRules } from "../../src/tickets/room-rules";
import type { QueueRoom } from "../../src/queue-room/queue-room";
import { openRoom } from "../../src/tickets/queue-rooms";
import { depsOf } from "../../src/http/deps";

// Storage-level helpers: rows written straight into D1 that the routes would refuse (a
// back-dated location, a service at no location) and a room's outbox settled
// deterministically. Everything else is made through the API, in ./fixtures.ts.

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
  if (place !== null)
    statements.push(env.DB.prepare("INSERT INTO service_locations (service_id, location_id) VALUES (?, ?)").bind(serviceId, place));
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

/** A queue's room: the contract's client (queue-room/contract.ts), and a stub for runInDurableObject. */
export function room(queueId: string): RoomClient & DurableObjectStub<QueueRoom> {
  return roomClient(env.QUEUE_ROOM, queueId) as RoomClient & DurableObjectStub<QueueRoom>;
}

/**
 * Rules that refuse nothing (no closure, no break, no quota), for a room driven directly by a
 * test: every join names the version of the rules it was checked against, as the Worker's do.
 */
export const OPEN_RULES: RoomRulesCopy = {
  version: 1,
  validFrom: 0,
  validUntil: Date.UTC(2100, 0, 1),
  serviceStatus: "active",
  ticketsPerMonth: null,
  blocks: [],
};

/**
 * Gives a queue's room its rules from D1, as the Worker does before a join, and answers the
 * version a join then names (for tests that send commands to the room directly).
 */
export async function rulesVersionOf(queueId: string, at = Date.now()): Promise<number> {
  const queue = await findQueue(depsOf(env), queueId);
  await refreshRoomRules(depsOf(env), queue, at);
  return queue.rulesVersion;
}

export async function outboxSize(queueId: string): Promise<number> {
  return runInDurableObject(
    room(queueId),
    (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM outbox").one().n,
  );
}

/** Joins the room counted itself and has not had acknowledged by the ledger (src/queue-room/quota-tally.ts). */
export async function talliedJoinsPending(queueId: string): Promise<number> {
  return runInDurableObject(room(queueId), (_instance, state) => {
    const sql = state.storage.sql;
    const counting = sql.exec<{ n: number }>("SELECT COALESCE(SUM(joins), 0) AS n FROM quota_tally").one().n;
    const report = sql.exec<{ counts: string | null }>("SELECT counts FROM quota_report").one().counts;
    const sending = report === null ? 0 : (JSON.parse(report) as { joins: number }[]).reduce((sum, c) => sum + c.joins, 0);
    return counting + sending;
  });
}

/**
 * Drains the room's outbox to D1 and the queue until it is empty, and its counted joins to the
 * ledger (alarms may also fire on their own).
 */
export async function settle(queueId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await outboxSize(queueId)) === 0 && (await talliedJoinsPending(queueId)) === 0) return;
    const ran = await runDurableObjectAlarm(room(queueId));
    if (!ran) await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`outbox of ${queueId} did not drain`);
}

/**
 * A queue with an id of the caller's choosing (the API names queues itself), configured like
 * one the API creates: its room learns the queue before the D1 row exists. Letter A, active.
 */
export async function insertQueue(queue: { id: string; organizationId: string; serviceId: string; name: string }): Promise<void> {
  const at = Date.now();
  const row = {
    ...queue,
    description: null,
    maxCapacity: null,
    noShowTimeoutMinutes: 5,
    defaultServiceMinutes: 5,
    letter: "A",
    status: "active" as const,
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
  await openRoom(depsOf(env), row);
  await env.DB.prepare(
    "INSERT INTO queues (id, organization_id, service_id, name, description, max_capacity, no_show_timeout_minutes, letter, status, archived_at, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, NULL, 5, 'A', 'active', NULL, ?, ?)",
  )
    .bind(row.id, row.organizationId, row.serviceId, row.name, at, at)
    .run();
}

/**
 * Waits, without running the alarm, until the room's own alarm has drained its outbox (the
 * drain is armed a short moment after a change, see DRAIN_DELAY_MS); fails after `withinMs`.
 */
export async function drained(queueId: string, withinMs = 1_000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started <= withinMs) {
    if ((await outboxSize(queueId)) === 0) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`outbox of ${queueId} was not drained by its alarm within ${withinMs} ms`);
}
