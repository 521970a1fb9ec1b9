import { penaltyLookback } from "../domain/remote-join";
import { and, eq, inArray, lt, lte, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { nonEmpty } from "../db/client";
import { idempotencyKeys, remoteJoinExpiries, roomDeadlines } from "../db/schema";
import { roomOf } from "../tickets";
import { sweepSubscriptions } from "./billing-sweep";
import { purgeExpiredSignIns, recheckDomains } from "../identity";
import { remindAppointments } from "./appointment-reminders";
import { anonymisePersonalData } from "./anonymisation";
import { backfillAnalytics } from "./analytics-backfill";
import { sweepAuditLog } from "../audit";
import { purgeInboundThreads } from "../conversations";
import { sweepMissedAppointments } from "../appointments";
import { sweepTwinLeftovers } from "../test-mode";
import type { Deps } from "../http/deps";

/** How many rooms one sweep wakes at most; the rest are due again next minute. */
const SWEEP_LIMIT = 500;
const PARALLEL = 20;

/**
 * The minute sweep: every room whose next deadline has passed applies what is due (no-show
 * expiry of called tickets; remote joins' inactivity warning, auto-skip and front expiry).
 * Running it twice changes nothing (a room only acts on what is due). The rooms move
 * `room_deadlines` through their outbox; here only the row of a room that no longer exists is
 * removed, and a row left behind by a deadline that moved later is moved on.
 */
export async function sweepNoShows(deps: Deps, at: number): Promise<{ rooms: number; expired: number }> {
  const { db } = deps;
  const d = roomDeadlines;
  const due = await db.select({ queueId: d.queueId, dueAt: d.dueAt }).from(d).where(lte(d.dueAt, at)).orderBy(d.dueAt).limit(SWEEP_LIMIT);
  let expired = 0;
  for (let i = 0; i < due.length; i += PARALLEL) {
    const slice = due.slice(i, i + PARALLEL);
    const outcomes = await Promise.all(slice.map((r) => roomOf(deps, r.queueId).command({ verb: "expireDue", at })));
    const writes: BatchItem<"sqlite">[] = [];
    outcomes.forEach((o, j) => {
      expired += o.expired;
      const row = slice[j]!;
      if (o.gone) writes.push(db.delete(d).where(eq(d.queueId, row.queueId)));
      // A deadline can move later without an outbox row (a remote join's location update
      // restarts its inactivity clock): move the row on, unless the room's own drain already
      // wrote a newer one since it was read.
      else if (o.nextDeadline !== null && o.nextDeadline > row.dueAt) {
        writes.push(
          db
            .update(d)
            .set({ dueAt: o.nextDeadline })
            .where(and(eq(d.queueId, row.queueId), eq(d.dueAt, row.dueAt))),
        );
      }
    });
    const batch = nonEmpty(writes);
    if (batch) await db.batch(batch);
  }
  return { rooms: due.length, expired };
}

/** Rows purged per sweep; a backlog drains over the next minutes instead of one long delete. */
const PURGE_LIMIT = 1000;

/**
 * The first `PURGE_LIMIT` rows of `table` matching `where`, by rowid: SQLite's DELETE takes no
 * LIMIT unless built with it, so the bounded delete names its rows through a limited select.
 */
function firstRows({ db }: Deps, table: SQLiteTable, where: SQL) {
  return inArray(
    sql`rowid`,
    db
      .select({ rowid: sql`rowid` })
      .from(table)
      .where(where)
      .limit(PURGE_LIMIT),
  );
}

/** Idempotency keys are answered for 24 h only; after that their stored responses are dead weight. */
export async function purgeIdempotencyKeys(deps: Deps, at: number): Promise<number> {
  const { db } = deps;
  const result = await db
    .delete(idempotencyKeys)
    .where(firstRows(deps, idempotencyKeys, lte(idempotencyKeys.expiresAt, at)))
    .run();
  return result.meta.changes;
}

/** Remote-join expiries older than the penalty rule can ever look back are dropped. */
export async function purgeRemoteJoinExpiries(deps: Deps, at: number): Promise<number> {
  const { db } = deps;
  const result = await db
    .delete(remoteJoinExpiries)
    .where(firstRows(deps, remoteJoinExpiries, lt(remoteJoinExpiries.expiredAt, penaltyLookback(at))))
    .run();
  return result.meta.changes;
}

const SWEEPS: [string, (deps: Deps, at: number) => Promise<unknown>][] = [
  ["no-shows", sweepNoShows],
  ["idempotency keys", purgeIdempotencyKeys],
  ["remote-join expiries", purgeRemoteJoinExpiries],
  ["subscriptions", sweepSubscriptions],
  ["domains", recheckDomains],
  ["single sign-on attempts", purgeExpiredSignIns],
  ["appointment reminders", remindAppointments],
  ["missed appointments", sweepMissedAppointments],
  ["personal data", anonymisePersonalData],
  ["inbound threads", purgeInboundThreads],
  ["analytics backfill", backfillAnalytics],
  ["audit log", ({ env }, at) => sweepAuditLog(env, at)],
  ["reset test-mode twins' leftovers", sweepTwinLeftovers],
];

/**
 * The minute cron. Each sweep runs on its own: one that fails (a provider or a database hiccup)
 * is logged and retried next minute, and never keeps the others from running.
 */
export async function runSweeps(deps: Deps, scheduledTime: number): Promise<void> {
  for (const [name, sweep] of SWEEPS) {
    try {
      await sweep(deps, scheduledTime);
    } catch (err) {
      console.error(JSON.stringify({ sweep: name, error: String(err) }));
    }
  }
}
