import { DrizzleD1Database, SQLiteD1Session } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";

/**
 * The client without the relational schema. `drizzle(d1, { schema })` builds a relational query
 * builder for each of the schema's tables in every client (`db.query.<table>`), and every request
 * gets a client for its own D1 session (src/http/d1-sessions.ts): 0.5 ms of a join's CPU profile,
 * though a join runs no D1 statement (issue 43). Nothing of ours uses `db.query` (its type is
 * empty here, so a use would not compile); every query names its tables through the query
 * builder, and batches map their rows without the schema. So the client is assembled as
 * `drizzle()` does (drizzle-orm 0.45, d1/driver.js), with no schema and the dialect made once.
 */
const dialect = new SQLiteAsyncDialect();

function newDatabase(d1: D1Database) {
  const session = new SQLiteD1Session<Record<string, never>, Record<string, never>>(d1, dialect, undefined, {});
  return Object.assign(new DrizzleD1Database<Record<string, never>>("async", dialect, session, undefined), { $client: d1 });
}

export type Database = ReturnType<typeof newDatabase>;

/**
 * One Drizzle client per binding object (issue 43): the primary binding's lives as long as the
 * isolate; a request's D1 session gets its own, now cheap (above). The client holds no state of a
 * request; it is keyed by the binding object, so a test's counting copy of `DB` gets its own.
 */
const clients = new WeakMap<D1Database, Database>();

export function database(d1: D1Database): Database {
  let db = clients.get(d1);
  if (!db) {
    db = newDatabase(d1);
    clients.set(d1, db);
  }
  return db;
}

/** D1 binds at most 100 parameters a statement: split bulk writes into chunks. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** A list as the non-empty tuple `db.batch` takes, or null when there is nothing to run. */
export function nonEmpty<T>(items: readonly T[]): [T, ...T[]] | null {
  const [first, ...rest] = items;
  return first === undefined ? null : [first, ...rest];
}
