// The analytics of tickets that existed before the aggregates (migration 0008 added them,
// 0015 lists every organization that already had tickets). Each minute the sweep takes the
// next page of one listed organization's tickets, oldest first, and counts them with the
// drain's own statements (analyticsDrainStatements): those add a ticket's figures only when
// its stored facts are absent or older than the ticket's version, in one D1 batch with the
// cursor's move. So the backfill may run while the rooms drain the same tickets, a page may
// be replayed after a failure, and a ticket the drain already counted is not counted again:
// the aggregates end equal to a rebuild from the projection, with no manual step and a
// bounded cost per run (one page of one organization).

import { and, eq, gt, or, sql } from "drizzle-orm";
import { batchWrites, preparedWrite, withValues, type BoundWrite } from "../db/prepared";
import { analyticsBackfill, tickets as ticketTable } from "../db/schema";
import type { TicketForAnalytics } from "../domain/analytics";
import { analyticsDrainStatements } from "../queue-room/contract";
import type { Deps } from "../http/deps";

/** Tickets counted per run: one D1 batch of about as many statements. */
export const BACKFILL_PAGE = 250;

type ProjectionRow = TicketForAnalytics & { queue_id: string };

/** The organization's page counted: the cursor moves past its last ticket. */
const cursorMoved = preparedWrite(["organizationId", "afterCreatedAt", "afterId", "tickets"], (db, p) =>
  db
    .update(analyticsBackfill)
    .set({
      afterCreatedAt: sql`${p.afterCreatedAt}`,
      afterId: sql`${p.afterId}`,
      tickets: sql`${analyticsBackfill.tickets} + ${p.tickets}`,
    })
    .where(eq(analyticsBackfill.organizationId, p.organizationId))
    .prepare(),
);

/** The organization's last page counted: nothing is left to backfill. */
const cursorDone = preparedWrite(["organizationId"], (db, p) =>
  db.delete(analyticsBackfill).where(eq(analyticsBackfill.organizationId, p.organizationId)).prepare(),
);

export async function backfillAnalytics(
  { db, env }: Deps,
  _at: number,
): Promise<{ organizationId: string | null; tickets: number; done: boolean }> {
  const orm = db;
  const b = analyticsBackfill;
  const next = await orm
    .select({ organization_id: b.organizationId, after_created_at: b.afterCreatedAt, after_id: b.afterId })
    .from(b)
    .orderBy(b.organizationId)
    .limit(1)
    .get();
  if (!next) return { organizationId: null, tickets: 0, done: true };
  const tk = ticketTable;
  const tickets: ProjectionRow[] = await orm
    .select({
      id: tk.id,
      queue_id: tk.queueId,
      status: tk.status,
      source: tk.source,
      called_at: tk.calledAt,
      serving_at: tk.servingAt,
      served_at: tk.servedAt,
      transferred_to_id: tk.transferredToId,
      first_estimate_minutes: tk.firstEstimateMinutes,
      created_at: tk.createdAt,
      version: tk.version,
    })
    .from(tk)
    .where(
      and(
        eq(tk.organizationId, next.organization_id),
        or(gt(tk.createdAt, next.after_created_at), and(eq(tk.createdAt, next.after_created_at), gt(tk.id, next.after_id))),
      ),
    )
    .orderBy(tk.createdAt, tk.id)
    .limit(BACKFILL_PAGE)
    .all();
  // The cursor's move is written in the same D1 batch as the drain's own statements (the room's
  // projection), so a page is counted once or not at all.
  const byQueue = new Map<string, ProjectionRow[]>();
  for (const t of tickets) byQueue.set(t.queue_id, [...(byQueue.get(t.queue_id) ?? []), t]);
  const statements: BoundWrite[] = [];
  for (const [queueId, rows] of byQueue)
    statements.push(...analyticsDrainStatements({ organization_id: next.organization_id, queue_id: queueId }, rows));
  const last = tickets[tickets.length - 1];
  const done = tickets.length < BACKFILL_PAGE || last === undefined;
  statements.push(
    done
      ? withValues(cursorDone, { organizationId: next.organization_id })
      : withValues(cursorMoved, {
          organizationId: next.organization_id,
          afterCreatedAt: last.created_at,
          afterId: last.id,
          tickets: tickets.length,
        }),
  );
  await batchWrites(env.DB, statements);
  return { organizationId: next.organization_id, tickets: tickets.length, done };
}
