import { and, eq, gte, isNotNull, sql, type SQL } from "drizzle-orm";
import { tickets } from "../db/schema";
import { TICKET_STATUSES, type TicketStatus } from "../domain/tickets";
import { MINUTE, utcDayStart } from "../lib/time";
import type { Deps } from "../http/deps";

export interface TicketFigures {
  today: { total: number; byStatus: Record<TicketStatus, number> };
  /** Join → call, over tickets called today (UTC); null before the first call. */
  averageWaitMinutes: number | null;
  /** Serve → complete, over tickets served today (UTC); null before the first one. */
  averageServiceMinutes: number | null;
}

function minutes(ms: number | null | undefined): number | null {
  return ms == null ? null : Math.round((ms / MINUTE) * 10) / 10;
}

/** Today's figures from the tickets projection (the rooms' outboxes keep it up to date). */
export async function ticketFigures(
  { db }: Deps,
  organizationId: string,
  at: number,
  /** Only these tickets (a scoped member's locations, issue 31); absent = the whole organization. */
  only?: SQL,
): Promise<TicketFigures> {
  const dayStart = utcDayStart(at);
  const [counts, wait, service] = await Promise.all([
    db
      .select({ status: tickets.status, n: sql<number>`count(*)` })
      .from(tickets)
      .where(and(eq(tickets.organizationId, organizationId), only, gte(tickets.createdAt, dayStart)))
      .groupBy(tickets.status)
      .all(),
    db
      .select({ avg: sql<number | null>`avg(${tickets.calledAt} - ${tickets.createdAt})` })
      .from(tickets)
      .where(and(eq(tickets.organizationId, organizationId), only, gte(tickets.calledAt, dayStart)))
      .get(),
    db
      .select({ avg: sql<number | null>`avg(${tickets.servedAt} - ${tickets.servingAt})` })
      .from(tickets)
      .where(and(eq(tickets.organizationId, organizationId), only, gte(tickets.servedAt, dayStart), isNotNull(tickets.servingAt)))
      .get(),
  ]);
  const byStatus = Object.fromEntries(TICKET_STATUSES.map((s) => [s, 0])) as Record<TicketStatus, number>;
  let total = 0;
  for (const row of counts) {
    if ((TICKET_STATUSES as readonly string[]).includes(row.status)) byStatus[row.status as TicketStatus] = Number(row.n);
    total += Number(row.n);
  }
  return { today: { total, byStatus }, averageWaitMinutes: minutes(wait?.avg), averageServiceMinutes: minutes(service?.avg) };
}
