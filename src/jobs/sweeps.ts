import type { Env } from "../env";
import { roomOf } from "../services/queue-rooms";

/** How many rooms one sweep wakes at most; the rest are due again next minute. */
const SWEEP_LIMIT = 500;
const PARALLEL = 20;

/**
 * The minute sweep: every room whose next no-show deadline has passed expires its overdue
 * called tickets. Running it twice changes nothing (a room only expires what is due). The
 * rooms themselves move `room_deadlines` forward through their outbox; only the row of a room
 * that no longer exists is removed here.
 */
export async function sweepNoShows(env: Env, at: number): Promise<{ rooms: number; expired: number }> {
  const due = await env.DB.prepare("SELECT queue_id FROM room_deadlines WHERE due_at <= ? ORDER BY due_at LIMIT ?")
    .bind(at, SWEEP_LIMIT)
    .all<{ queue_id: string }>();
  let expired = 0;
  for (let i = 0; i < due.results.length; i += PARALLEL) {
    const slice = due.results.slice(i, i + PARALLEL);
    const outcomes = await Promise.all(slice.map((r) => roomOf(env, r.queue_id).expireDue(at)));
    const gone: string[] = [];
    outcomes.forEach((o, j) => {
      expired += o.expired;
      if (o.gone) gone.push(slice[j]!.queue_id);
    });
    if (gone.length > 0) {
      await env.DB.batch(gone.map((id) => env.DB.prepare("DELETE FROM room_deadlines WHERE queue_id = ?").bind(id)));
    }
  }
  return { rooms: due.results.length, expired };
}

/** Rows purged per sweep; a backlog drains over the next minutes instead of one long delete. */
const PURGE_LIMIT = 1000;

/** Idempotency keys are answered for 24 h only; after that their stored responses are dead weight. */
export async function purgeIdempotencyKeys(env: Env, at: number): Promise<number> {
  const result = await env.DB.prepare(
    "DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)",
  )
    .bind(at, PURGE_LIMIT)
    .run();
  return result.meta.changes;
}

export async function runSweeps(env: Env, scheduledTime: number): Promise<void> {
  await sweepNoShows(env, scheduledTime);
  await purgeIdempotencyKeys(env, scheduledTime);
}
