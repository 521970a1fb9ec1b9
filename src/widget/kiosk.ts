import { and, asc, eq, isNull } from "drizzle-orm";
import { locations, organizations, queues, serviceLocations, services } from "../db/schema";
import { notFound } from "../http/errors";
import { offeredLanguages, placeLanguage } from "../domain/languages";
import type { Deps } from "../http/deps";

/**
 * What a ticket kiosk at one location shows (GET /v1/widget/locations/{locationId}/kiosk): the
 * location, its organization's public face, and the queues of the location's active services
 * that take tickets now (status `active`, not archived), one button each.
 */
export async function kioskInfo({ db }: Deps, locationId: string, allow: (organizationId: string) => Promise<unknown>) {
  const location = await db.select().from(locations).where(eq(locations.id, locationId)).get();
  if (!location) throw notFound("Location");
  // Who may read it depends on the location's organization, known only now.
  await allow(location.organizationId);
  const [org, rows] = await Promise.all([
    db.select().from(organizations).where(eq(organizations.id, location.organizationId)).get(),
    db
      .select({ queueId: queues.id, queueName: queues.name, letter: queues.letter, serviceId: services.id, serviceName: services.name })
      .from(serviceLocations)
      .innerJoin(services, eq(services.id, serviceLocations.serviceId))
      .innerJoin(queues, eq(queues.serviceId, services.id))
      .where(
        and(
          eq(serviceLocations.locationId, locationId),
          eq(services.status, "active"),
          eq(queues.status, "active"),
          isNull(queues.archivedAt),
        ),
      )
      .orderBy(asc(services.name), asc(queues.letter), asc(queues.id))
      .all(),
  ]);
  if (!org) throw notFound("Location");
  return {
    locationId: location.id,
    organizationId: org.id,
    name: location.name,
    organizationName: org.name,
    logoUrl: org.logoUrl,
    timezone: location.timezone,
    // The location's own default (docs/languages.md) while the organization still offers it.
    defaultLanguage: placeLanguage(location.defaultLanguage, org.languages, org.defaultLanguage),
    languages: offeredLanguages(org.languages),
    queues: rows,
  };
}
