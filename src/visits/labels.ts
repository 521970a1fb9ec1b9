import { and, asc, count, eq, lt, sql } from "drizzle-orm";
import { organizationLabels } from "../db/schema";
import { ApiError } from "../http/errors";
import { iso } from "../lib/time";
import type { TicketView } from "../queue-room/contract";
import type { QueueRow } from "../http/credentials/queues";
import { inRoom } from "../tickets/queue-rooms";
import type { Deps } from "../http/deps";

// Labels (docs/visits.md): staff tag a ticket ("interpreter", "second-visit") to find it again
// in listings. The ticket's labels live on its row in the room (the single writer of a ticket),
// projected to D1; the organization's list is what staff have used, kept in D1 so a console can
// offer it without reading every room.

/** Labels an organization may have in its list: a pick list, not a free-for-all. */
export const MAX_ORGANIZATION_LABELS = 200;

export type LabelRow = typeof organizationLabels.$inferSelect;

export function labelRecord(row: LabelRow) {
  return { label: row.label, createdAt: iso(row.createdAt) };
}

export async function listLabels({ db }: Deps, organizationId: string): Promise<LabelRow[]> {
  return db
    .select()
    .from(organizationLabels)
    .where(eq(organizationLabels.organizationId, organizationId))
    .orderBy(asc(organizationLabels.label))
    .all();
}

/**
 * The label joins the organization's list first (a no-op when it is there), refused 409
 * CONFLICT once the list is full; then the room puts it on the ticket.
 */
export async function addLabel(deps: Deps, queue: QueueRow, ticketId: string, label: string, at: number): Promise<TicketView> {
  const { db } = deps;
  const l = organizationLabels;
  // A conditional INSERT … SELECT: the row comes from the count of the list, only while it is under the limit.
  const list = db
    .select({ size: count().as("size") })
    .from(l)
    .where(eq(l.organizationId, queue.organizationId))
    .as("list");
  const [inserted, present] = await db.batch([
    db
      .insert(l)
      .select(
        db
          .select({
            organizationId: sql`${queue.organizationId}`.as("organization_id"),
            label: sql`${label}`.as("label"),
            createdAt: sql`${at}`.as("created_at"),
          })
          .from(list)
          .where(lt(list.size, MAX_ORGANIZATION_LABELS)),
      )
      .onConflictDoNothing({ target: [l.organizationId, l.label] }),
    db
      .select({ label: l.label })
      .from(l)
      .where(and(eq(l.organizationId, queue.organizationId), eq(l.label, label))),
  ]);
  if (inserted.meta.changes === 0 && present.length === 0) {
    throw new ApiError("CONFLICT", `An organization has at most ${MAX_ORGANIZATION_LABELS} labels`, {
      field: "label",
      reason: "too_many_labels",
      limit: MAX_ORGANIZATION_LABELS,
    });
  }
  return inRoom(deps, queue, (room) => room.command({ verb: "label", ticketId, label, add: true, at }));
}

/** Takes the label off the ticket; it stays in the organization's list. */
export async function removeLabel(deps: Deps, queue: QueueRow, ticketId: string, label: string, at: number): Promise<TicketView> {
  return inRoom(deps, queue, (room) => room.command({ verb: "label", ticketId, label, add: false, at }));
}
