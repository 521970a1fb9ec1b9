import { and, asc, eq, inArray, isNull } from "drizzle-orm";
import { queues, serviceLocations, services } from "../db/schema";
import type { RouteLeg } from "../domain/visit-route";
import { validationError } from "../http/errors";
import type { QueueRow } from "../http/credentials/queues";
import type { TicketView } from "../queue-room/contract";
import { roomOf } from "./queue-rooms";
import type { Deps } from "../http/deps";

// Several services in one visit (docs/visits.md): the Worker's side. A join's `route` (service
// ids) is checked and resolved once, to the queue each leg waits in and where it enters that
// queue's line; the rooms then carry the visitor from leg to leg (queue-room/visit-routes.ts).

/**
 * The legs of a join's route, or null without one. Each entry must be a service of the
 * organization, active, at a location of the joined queue's service, with a queue there (its
 * first open one; the first leg is the joined queue). A wrong entry is 400 naming `route.<i>`.
 */
export async function resolveRoute(deps: Deps, queue: QueueRow, serviceIds: readonly string[] | undefined): Promise<RouteLeg[] | null> {
  if (serviceIds === undefined || serviceIds.length === 0) return null;
  if (serviceIds[0] !== queue.serviceId) {
    throw validationError("route.0", `must be the service of the queue joined (${queue.serviceId})`);
  }
  if (serviceIds.length === 1) return null;
  const { db } = deps;
  const ids = [...new Set(serviceIds)];
  const [found, links, open] = await db.batch([
    db
      .select({ id: services.id, status: services.status, routeEntry: services.routeEntry })
      .from(services)
      .where(and(inArray(services.id, ids), eq(services.organizationId, queue.organizationId))),
    db
      .select({ serviceId: serviceLocations.serviceId, locationId: serviceLocations.locationId })
      .from(serviceLocations)
      .where(inArray(serviceLocations.serviceId, ids)),
    db
      .select({ id: queues.id, serviceId: queues.serviceId })
      .from(queues)
      .where(and(inArray(queues.serviceId, ids), isNull(queues.archivedAt)))
      .orderBy(asc(queues.createdAt), asc(queues.id)),
  ]);
  const here = new Set(links.filter((l) => l.serviceId === queue.serviceId).map((l) => l.locationId));
  const byId = new Map(found.map((s) => [s.id, s]));
  return serviceIds.map((serviceId, i): RouteLeg => {
    const field = `route.${i}`;
    const service = byId.get(serviceId);
    if (!service) throw validationError(field, "is not a service of this organization");
    if (service.status !== "active") throw validationError(field, `is ${service.status}: only an active service takes visitors`);
    if (i === 0) return { serviceId, queueId: queue.id, entry: service.routeEntry };
    if (!links.some((l) => l.serviceId === serviceId && here.has(l.locationId))) {
      throw validationError(field, "is not offered at a location of the queue joined");
    }
    const next = open.find((q) => q.serviceId === serviceId);
    if (!next) throw validationError(field, "has no open queue");
    return { serviceId, queueId: next.id, entry: service.routeEntry };
  });
}

/**
 * The rest of a visit (docs/visits.md): this leg's wait, then for every later leg its queue's
 * current wait, plus each remaining leg's service time (its queue's default minutes per
 * visitor). Null for a one-service visit or a finished leg.
 */
export async function withVisitEstimate(deps: Deps, ticket: TicketView, at: number): Promise<TicketView> {
  if (ticket.route === null || ticket.leg === null || !["waiting", "called", "serving", "held"].includes(ticket.status)) return ticket;
  const remaining = ticket.route.slice(ticket.leg.index - 1);
  const summaries = await Promise.all(remaining.map((leg) => roomOf(deps, leg.queueId).query({ question: "summary", at })));
  let minutes = ticket.estimatedWaitMinutes ?? 0;
  summaries.forEach((summary, i) => {
    if (summary === null) return;
    if (i > 0) minutes += summary.estimatedWaitMinutes;
    minutes += summary.defaultServiceMinutes;
  });
  return { ...ticket, estimatedVisitMinutes: Math.round(minutes) };
}
