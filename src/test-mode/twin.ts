import { and, eq, inArray, isNull, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { chunk } from "../db/client";
import {
  apiKeys,
  desks,
  locations,
  organizations,
  queues,
  serviceIntake,
  serviceLocations,
  serviceOutcomes,
  services,
  subscriptions,
} from "../db/schema";
import { isUniqueViolation } from "../db/errors";
import { notFound } from "../http/errors";
import { isTwinOrganizationId, newId, newTwinOrganizationId } from "../lib/ids";
import { openRoom, retireQueues } from "../tickets/queue-rooms";
import { deleteTwinRows } from "./leftovers";
import { type Deps } from "../http/deps";

// Test mode (docs/test-mode.md). An organization's twin is an organization row of its own, linked
// to the live one by `live_organization_id`; a test key belongs to the twin. Every read and write
// of the service is scoped by organization, so the twin's tickets, webhooks, events and analytics
// are apart from the live ones without a check of their own: a live credential meets a twin's id
// as any other organization's (404), and a test key the live ids.

export type OrganizationRow = typeof organizations.$inferSelect;
type QueueRow = typeof queues.$inferSelect;
type Statement = BatchItem<"sqlite">;

/** The twin with this id (a test key's organization), or undefined. */
export function findTwin({ db }: Deps, twinId: string): Promise<OrganizationRow | undefined> {
  return db.select().from(organizations).where(eq(organizations.id, twinId)).get();
}

export function twinOf({ db }: Deps, liveOrganizationId: string): Promise<OrganizationRow | undefined> {
  return db.select().from(organizations).where(eq(organizations.liveOrganizationId, liveOrganizationId)).get();
}

/** The live organization's twin, made (with a copy of the catalogue) on first use. */
export async function ensureTwin(deps: Deps, liveOrganizationId: string, at: number): Promise<OrganizationRow> {
  const { db } = deps;
  if (isTwinOrganizationId(liveOrganizationId)) throw new Error("a twin has no twin");
  const existing = await twinOf(deps, liveOrganizationId);
  if (existing) return existing;
  const live = await db.select().from(organizations).where(eq(organizations.id, liveOrganizationId)).get();
  if (!live) throw notFound("Organization");
  const twin = twinRow(live, at);
  try {
    const subscription = await twinSubscription(deps, live.id, twin.id, at);
    await db.batch([db.insert(organizations).values(twin), db.insert(subscriptions).values(subscription)]);
  } catch (err) {
    // Two first uses at once: the unique link lets one twin exist; the other caller takes it.
    if (isUniqueViolation(err, "live_organization_id")) {
      const made = await twinOf(deps, liveOrganizationId);
      if (made) return made;
    }
    throw err;
  }
  await copyCatalogue(deps, live.id, twin.id, at);
  return (await db.select().from(organizations).where(eq(organizations.id, twin.id)).get()) ?? twin;
}

function twinRow(live: OrganizationRow, at: number): OrganizationRow {
  const id = newTwinOrganizationId();
  return {
    ...live,
    id,
    // Slugs are unique and public: the twin's is its id, never one a business could ask for.
    slug: id.replace("_", "-"),
    liveOrganizationId: live.id,
    catalogueCopiedAt: null,
    createdAt: at,
    updatedAt: at,
  };
}

/** The twin has the live plan's features and limits, and no payment provider: nothing is ever charged. */
async function twinSubscription({ db }: Deps, liveId: string, twinId: string, at: number): Promise<typeof subscriptions.$inferInsert> {
  const live = await db.select().from(subscriptions).where(eq(subscriptions.organizationId, liveId)).get();
  return {
    organizationId: twinId,
    plan: live?.plan ?? "starter",
    billingInterval: live?.billingInterval ?? "monthly",
    status: "active",
    currency: live?.currency ?? "EUR",
    currentPeriodStart: live?.currentPeriodStart ?? at,
    currentPeriodEnd: live?.currentPeriodEnd ?? at,
    rateTierOverride: live?.rateTierOverride ?? null,
    customRatePerMinute: live?.customRatePerMinute ?? null,
    customRatePerDay: live?.customRatePerDay ?? null,
    provider: null,
    createdAt: at,
    updatedAt: at,
  };
}

/**
 * Copies the live catalogue into an empty twin, with new ids: locations, services (with their
 * locations, intake questions and outcomes), open queues (each room configured before its row
 * exists, as a queue's creation does) and desks. Keywords customers text to join are not copied,
 * so an inbound message always reaches the live queue.
 */
async function copyCatalogue(deps: Deps, liveId: string, twinId: string, at: number): Promise<void> {
  const { db } = deps;
  const [liveLocations, liveServices, liveQueues, liveDesks] = await Promise.all([
    db.select().from(locations).where(eq(locations.organizationId, liveId)).all(),
    db.select().from(services).where(eq(services.organizationId, liveId)).all(),
    db
      .select()
      .from(queues)
      .where(and(eq(queues.organizationId, liveId), isNull(queues.archivedAt)))
      .all(),
    db.select().from(desks).where(eq(desks.organizationId, liveId)).all(),
  ]);
  const serviceIds = liveServices.map((s) => s.id);
  const [links, intake, outcomes] =
    serviceIds.length === 0
      ? [[], [], []]
      : await Promise.all([
          db.select().from(serviceLocations).where(inArray(serviceLocations.serviceId, serviceIds)).all(),
          db.select().from(serviceIntake).where(eq(serviceIntake.organizationId, liveId)).all(),
          db.select().from(serviceOutcomes).where(eq(serviceOutcomes.organizationId, liveId)).all(),
        ]);
  const locationIds = new Map(liveLocations.map((l) => [l.id, newId("loc")]));
  const serviceIdsNew = new Map(liveServices.map((s) => [s.id, newId("svc")]));
  const queueIds = new Map(liveQueues.map((q) => [q.id, newId("que")]));
  const twinQueues: QueueRow[] = liveQueues.map((q) => ({
    ...q,
    id: queueIds.get(q.id)!,
    organizationId: twinId,
    serviceId: serviceIdsNew.get(q.serviceId)!,
    rulesVersion: 0,
    smsKeyword: null,
    createdAt: at,
    updatedAt: at,
  }));
  const writes: Statement[] = [
    ...liveLocations.map((l) =>
      db.insert(locations).values({ ...l, id: locationIds.get(l.id)!, organizationId: twinId, createdAt: at, updatedAt: at }),
    ),
    ...liveServices.map((s) =>
      db.insert(services).values({ ...s, id: serviceIdsNew.get(s.id)!, organizationId: twinId, createdAt: at, updatedAt: at }),
    ),
    ...links
      .filter((l) => locationIds.has(l.locationId))
      .map((l) =>
        db.insert(serviceLocations).values({ serviceId: serviceIdsNew.get(l.serviceId)!, locationId: locationIds.get(l.locationId)! }),
      ),
    ...intake
      .filter((i) => serviceIdsNew.has(i.serviceId))
      .map((i) =>
        db.insert(serviceIntake).values({ ...i, serviceId: serviceIdsNew.get(i.serviceId)!, organizationId: twinId, updatedAt: at }),
      ),
    ...outcomes
      .filter((o) => serviceIdsNew.has(o.serviceId))
      .map((o) =>
        db.insert(serviceOutcomes).values({ ...o, serviceId: serviceIdsNew.get(o.serviceId)!, organizationId: twinId, createdAt: at }),
      ),
    ...twinQueues.map((q) => db.insert(queues).values(q)),
    ...liveDesks
      .filter((d) => locationIds.has(d.locationId))
      .map((d) =>
        db.insert(desks).values({
          ...d,
          id: newId("dsk"),
          organizationId: twinId,
          locationId: locationIds.get(d.locationId)!,
          queueIds: d.queueIds.flatMap((q) => (queueIds.has(q) ? [queueIds.get(q)!] : [])),
          queueWeights: Object.fromEntries(
            Object.entries(d.queueWeights).flatMap(([q, w]) => (queueIds.has(q) ? [[queueIds.get(q)!, w]] : [])),
          ),
          operatorId: null,
          openedAt: null,
          createdAt: at,
          updatedAt: at,
        }),
      ),
    db.update(organizations).set({ catalogueCopiedAt: at }).where(eq(organizations.id, twinId)),
  ];
  // The rooms learn their queues before any row names them (src/tickets/queues.ts createQueue).
  for (const group of chunk(twinQueues, 10)) await Promise.all(group.map((q) => openRoom(deps, q)));
  for (const group of chunk(writes, 50)) await db.batch(group as [Statement, ...Statement[]]);
}

/**
 * Empties the twin: a new twin takes its place, with the test keys moved onto it and a fresh
 * copy of the live catalogue. The old twin's rows go (its organization row, and by cascade what
 * it owned) and its rooms are retired; whatever an old room still flushes afterwards names the
 * old twin's id, which no key resolves to any more, so a reset can never leave old data visible.
 * Answers the new twin.
 */
export async function resetTwin(deps: Deps, twinId: string, at: number): Promise<OrganizationRow> {
  const { db } = deps;
  const old = await db.select().from(organizations).where(eq(organizations.id, twinId)).get();
  if (!old || old.liveOrganizationId === null) throw notFound("Organization");
  const liveId = old.liveOrganizationId;
  const live = await db.select().from(organizations).where(eq(organizations.id, liveId)).get();
  if (!live) throw notFound("Organization");
  const oldQueues = await db.select({ id: queues.id }).from(queues).where(eq(queues.organizationId, twinId)).all();
  const twin = twinRow(live, at);
  const moveKeys: SQL = eq(apiKeys.organizationId, twinId);
  const subscription = await twinSubscription(deps, liveId, twin.id, at);
  await db.batch([
    db.update(organizations).set({ liveOrganizationId: null }).where(eq(organizations.id, twinId)),
    db.insert(organizations).values(twin),
    db.insert(subscriptions).values(subscription),
    db.update(apiKeys).set({ organizationId: twin.id }).where(moveKeys),
    db.delete(organizations).where(eq(organizations.id, twinId)),
  ]);
  await retireQueues(
    deps,
    oldQueues.map((q) => q.id),
    at,
  );
  // What the cascade did not remove (tickets, events, deliveries, analytics…; ./leftovers.ts).
  await deleteTwinRows(deps, twinId);
  await copyCatalogue(deps, liveId, twin.id, at);
  return (await db.select().from(organizations).where(eq(organizations.id, twin.id)).get()) ?? twin;
}
