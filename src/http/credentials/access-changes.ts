import type { Env } from "../../env";
import { now } from "../../lib/clock";
import { ACCESS_LEASE_MS } from "../../rate-limiter/caller-access";
import { ApiError } from "../errors";

// Every write that ends a session, changes a membership or changes a user row goes through
// `changingAccess` (issue 43, docs/hot-path.md "The caller's object"): the user's object holds
// those rows for the hot path, so it must hear of the change before the change is answered, from
// whichever isolate. scripts/check-access-writes.mjs refuses a write to `sessions` or `members`
// (or an UPDATE of `users`) anywhere but in the files that call this.
//
// The protocol, per change: tell each user's object "changing" (it then judges every request on
// rows read from D1, keeps nothing, until "changed" or its lease ends); if any of them cannot be
// told, refuse the change (503 CHANGE_NOT_CONFIRMED, Retry-After: 1) with nothing written; write
// D1; tell them "changed". A lost "changed" costs D1 reads until the lease ends, never a stale
// answer: the lease is held in the object's storage and the writer only writes while it is
// surely live (within half of it since it asked).

export const ACCESS_CHANGE_RETRY_AFTER_S = 1;

function notConfirmed(): ApiError {
  return new ApiError(
    "CHANGE_NOT_CONFIRMED",
    "Nothing was changed: the accounts concerned could not be told of the change in time; send the same request again",
    { change: "access" },
    { "Retry-After": String(ACCESS_CHANGE_RETRY_AFTER_S) },
  );
}

function userObject(env: Env, userId: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`user:${userId}`));
}

/**
 * Runs `write` (the D1 write that changes these users' sessions, memberships or rows) between
 * "changing" and "changed" told to each user's object. Refused with nothing written when an
 * object cannot be told.
 */
export async function changingAccess<T>(env: Env, userIds: readonly string[], write: () => Promise<T>): Promise<T> {
  const people = [...new Set(userIds)];
  if (people.length === 0) return write();
  const changeId = crypto.randomUUID();
  const asked = Date.now();
  const objects = people.map((id) => userObject(env, id));
  const told = await Promise.allSettled(objects.map((o) => o.accessChanging(changeId, now())));
  const refused = told.find((t) => t.status === "rejected");
  // Half the lease: the write below is sent well before any object's lease can end.
  if (refused || Date.now() - asked > ACCESS_LEASE_MS / 2) {
    if (refused) console.warn(`access change refused, an account's object not reached: ${String(refused.reason)}`);
    await tellChanged(objects, changeId);
    throw notConfirmed();
  }
  try {
    return await write();
  } finally {
    await tellChanged(objects, changeId);
  }
}

/** "changed" to each object; one that is not reached reloads when its lease ends. */
async function tellChanged(objects: ReturnType<typeof userObject>[], changeId: string): Promise<void> {
  const told = await Promise.allSettled(objects.map((o) => o.accessChanged(changeId, now())));
  const missed = told.filter((t) => t.status === "rejected").length;
  if (missed > 0) console.warn(`access change: ${missed} account object(s) not told it ended; they reload when its lease ends`);
}
