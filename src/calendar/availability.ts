import { asc, count, eq } from "drizzle-orm";
import type { ListWindow } from "../http/cursor";
import { keysetPage } from "../http/keyset";
import { members, users } from "../db/schema";
import { occurrencesCovering, type EventType, type ExpandedOccurrence } from "./calendar";
import { type Deps } from "../http/deps";

// Real-time effect of the calendar (CONTRACT §6): who may call tickets now, and which
// services refuse joins now.

/** Event types that make the operators they concern unavailable while they run. */
export const BLOCKING_TYPES = ["break", "closure", "unavailability"] as const satisfies readonly EventType[];

export interface Block {
  eventId: string;
  eventType: EventType;
  /** End of the covering occurrence (epoch ms); the latest one when several cover. */
  until: number;
}

/** An event with no attendees concerns the whole organization. */
function concerns(o: ExpandedOccurrence, userId: string): boolean {
  return o.event.attendees.length === 0 || o.event.attendees.includes(userId);
}

function latest(covering: readonly ExpandedOccurrence[]): Block | null {
  let best: ExpandedOccurrence | null = null;
  for (const o of covering) {
    if (!best || o.occurrence.occurrenceEnd > best.occurrence.occurrenceEnd) best = o;
  }
  return best && { eventId: best.event.id, eventType: best.event.eventType, until: best.occurrence.occurrenceEnd };
}

/**
 * Whether `userId` is unavailable at `at`: a break, closure or unavailability occurrence
 * covers `at` and lists them, or lists nobody.
 */
export async function operatorBlock(
  deps: Deps,
  organizationId: string,
  userId: string,
  at: number,
): Promise<{ eventId: string; until: number } | null> {
  const covering = await occurrencesCovering(deps, organizationId, at, BLOCKING_TYPES);
  const block = latest(covering.filter((o) => concerns(o, userId)));
  return block && { eventId: block.eventId, until: block.until };
}

/** A closure of this service covering `at`: joins to its queues are refused until it ends. */
export async function serviceClosure(
  deps: Deps,
  organizationId: string,
  serviceId: string,
  at: number,
): Promise<{ eventId: string; until: number } | null> {
  const covering = await occurrencesCovering(deps, organizationId, at, ["closure"], serviceId);
  const block = latest(covering);
  return block && { eventId: block.eventId, until: block.until };
}

/** Each member of the organization, one page, with what blocks them at `at`. */
export async function membersAvailability(deps: Deps, organizationId: string, at: number, window: ListWindow) {
  const { db } = deps;
  const where = eq(members.organizationId, organizationId);
  const [{ rows, hasMore }, totals, covering] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: members,
        cursorColumn: members.userId,
        owner: where,
        where,
        keys: [
          { column: members.createdAt, direction: "asc" },
          { column: members.userId, direction: "asc" },
        ],
      },
      (c) =>
        db
          .select({ userId: members.userId, role: members.role, firstName: users.firstName, lastName: users.lastName })
          .from(members)
          .innerJoin(users, eq(users.id, members.userId))
          .where(c.where)
          .orderBy(...c.orderBy)
          .limit(c.limit)
          .offset(c.offset)
          .all(),
    ),
    db.select({ total: count() }).from(members).where(eq(members.organizationId, organizationId)).all(),
    occurrencesCovering(deps, organizationId, at, BLOCKING_TYPES),
  ]);
  const items = rows.map((m) => {
    const block = latest(covering.filter((o) => concerns(o, m.userId)));
    return { ...m, available: block === null, blockedBy: block };
  });
  return { items, total: totals[0]?.total ?? 0, hasMore };
}
