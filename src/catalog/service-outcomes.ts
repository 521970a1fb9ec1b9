import { and, asc, count, eq } from "drizzle-orm";
import { serviceOutcomes } from "../db/schema";
import { ApiError, conflict, notFound, validationError } from "../http/errors";
import { iso } from "../lib/time";
import type { Deps } from "../http/deps";

// The outcomes a service offers at completion (docs/desks.md, outcomes): "opened an account",
// "needs a second visit". Kept in D1 per service; the ticket's room records the code the
// operator picked, checked here first.

/** At most this many outcomes per service: a list an operator can pick from. */
export const MAX_OUTCOMES_PER_SERVICE = 50;

export type OutcomeRow = typeof serviceOutcomes.$inferSelect;

export function outcomeRecord(row: OutcomeRow) {
  return { serviceId: row.serviceId, code: row.code, label: row.label, createdAt: iso(row.createdAt) };
}

export async function listOutcomes({ db }: Deps, serviceId: string): Promise<OutcomeRow[]> {
  return db
    .select()
    .from(serviceOutcomes)
    .where(eq(serviceOutcomes.serviceId, serviceId))
    .orderBy(asc(serviceOutcomes.createdAt), asc(serviceOutcomes.code))
    .all();
}

/** A code already used is 409 CONFLICT (field code); the 51st outcome is 409 CONFLICT too. */
export async function addOutcome(
  { db }: Deps,
  service: { id: string; organizationId: string },
  input: { code: string; label: string },
  at: number,
): Promise<OutcomeRow> {
  const [{ n } = { n: 0 }] = await db.select({ n: count() }).from(serviceOutcomes).where(eq(serviceOutcomes.serviceId, service.id));
  if (n >= MAX_OUTCOMES_PER_SERVICE) {
    throw new ApiError("CONFLICT", `A service has at most ${MAX_OUTCOMES_PER_SERVICE} outcomes`, {
      field: "code",
      reason: "too_many_outcomes",
      limit: MAX_OUTCOMES_PER_SERVICE,
    });
  }
  const row: OutcomeRow = {
    serviceId: service.id,
    organizationId: service.organizationId,
    code: input.code,
    label: input.label,
    createdAt: at,
  };
  const inserted = await db.insert(serviceOutcomes).values(row).onConflictDoNothing().returning().all();
  if (inserted.length === 0) throw conflict("code", "This service already has an outcome with this code");
  return row;
}

export async function removeOutcome({ db }: Deps, serviceId: string, code: string): Promise<void> {
  const gone = await db
    .delete(serviceOutcomes)
    .where(and(eq(serviceOutcomes.serviceId, serviceId), eq(serviceOutcomes.code, code)))
    .returning()
    .all();
  if (gone.length === 0) throw notFound("Outcome");
}

/** The outcome a completion names, or 400 VALIDATION_ERROR (field outcome) when the service has no such code. */
export async function outcomeOfService({ db }: Deps, serviceId: string, code: string): Promise<OutcomeRow> {
  const row = await db
    .select()
    .from(serviceOutcomes)
    .where(and(eq(serviceOutcomes.serviceId, serviceId), eq(serviceOutcomes.code, code)))
    .get();
  if (!row) throw validationError("outcome", "not one of the service's outcomes (GET /v1/services/{serviceId}/outcomes)");
  return row;
}
