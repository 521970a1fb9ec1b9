import { eq } from "drizzle-orm";
import { locations, organizations, serviceLocations } from "../db/schema";
import { offeredLanguages } from "../domain/languages";
import type { Deps } from "../http/deps";

// What a join needs to choose its ticket's language (tickets/joins.ts, docs/languages.md): the
// organization's offered languages and default, and the default languages of the service's
// locations. A join read them from D1 every time (two statements, 1.3 ms of a join's 11.7 ms of
// isolate time: issue 43), so the isolate keeps them a short while. A change made through this
// isolate (the organization's languages, a location's default or its deletion, a service's
// locations) forgets them at once; another isolate's change is seen within JOIN_LANGUAGES_TTL_MS.

/** How long an isolate uses the language facts it read (a change made elsewhere shows within this). */
export const JOIN_LANGUAGES_TTL_MS = 30_000;
const CACHE_SIZE = 1_000;

export interface JoinLanguages {
  /** The organization's default language. */
  organizationDefault: string;
  /** The languages the organization offers. */
  offered: readonly string[];
  /** The default language of each of the service's locations (null: none set). */
  locationDefaults: readonly (string | null)[];
}

const kept = new Map<string, { facts: JoinLanguages; until: number }>();

/** The organization's and the service's language facts; null when the organization is gone. */
export async function joinLanguages(deps: Deps, organizationId: string, serviceId: string, at = Date.now()): Promise<JoinLanguages | null> {
  const key = `${organizationId}|${serviceId}`;
  const hit = kept.get(key);
  if (hit && hit.until > at) return hit.facts;
  const { db } = deps;
  const [org, places] = await Promise.all([
    db
      .select({ defaultLanguage: organizations.defaultLanguage, languages: organizations.languages })
      .from(organizations)
      .where(eq(organizations.id, organizationId))
      .get(),
    db
      .select({ defaultLanguage: locations.defaultLanguage })
      .from(serviceLocations)
      .innerJoin(locations, eq(locations.id, serviceLocations.locationId))
      .where(eq(serviceLocations.serviceId, serviceId))
      .all(),
  ]);
  if (!org) return null;
  const facts: JoinLanguages = {
    organizationDefault: org.defaultLanguage,
    offered: offeredLanguages(org.languages),
    locationDefaults: places.map((p) => p.defaultLanguage),
  };
  kept.delete(key);
  if (kept.size >= CACHE_SIZE) kept.delete(kept.keys().next().value!);
  kept.set(key, { facts, until: at + JOIN_LANGUAGES_TTL_MS });
  return facts;
}

/** A change to an organization's languages, a location's default language or a service's locations: read them again. */
export function forgetJoinLanguages(): void {
  kept.clear();
}
