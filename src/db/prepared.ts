import { fillPlaceholders, sql, type Placeholder } from "drizzle-orm";
import { database, type Database } from "./client";

/**
 * Statements built once per isolate and D1 binding, run many times (issue 43). Drizzle builds the
 * statement from its query builder with `sql.placeholder(…)` for the values, once; D1 prepares
 * its text once; each use only binds its values. Rebuilding the same SELECTs through the
 * query builder on every request cost ~0.5 ms of a join's 4.4 ms of isolate time. The credential
 * reads use it, and so do the room's drain writes (queue-room/projection.ts: about two statements
 * per ticket, many tickets a drain).
 *
 * Drizzle's own `db.batch` rebuilds every query it is given and does not fill placeholders, so
 * the batch is sent here, with Drizzle's own mapping of each result (`mapResult`, as its batch does).
 */

/** What a Drizzle prepared statement gives us: its SQL and parameters, and the mapping of its result. */
interface DrizzleStatement {
  getQuery(): { sql: string; params: unknown[] };
  mapResult(response: unknown, isFromBatch?: boolean): unknown;
}

/** A prepared read answers rows too. */
interface DrizzlePrepared<Row> extends DrizzleStatement {
  all(placeholderValues?: Record<string, unknown>): Promise<Row[]>;
}

type Value = string | number | null;

/** A read named once (module scope), with the placeholder values it takes and the row it answers. */
export interface PreparedRead<Name extends string, Row> {
  readonly build: (db: Database) => DrizzleStatement;
  /** Type only. */
  readonly _name?: Name;
  /** Type only. */
  readonly _row?: Row;
}

/**
 * A read whose values are the placeholders `names`: `build` gets one `sql.placeholder` per name
 * and answers the Drizzle query's `.prepare()`. Built on its first use with each binding.
 */
export function preparedRead<Name extends string, Row>(
  names: readonly Name[],
  build: (db: Database, p: Record<Name, Placeholder<Name>>) => DrizzlePrepared<Row>,
): PreparedRead<Name, Row> {
  return withPlaceholders(names, build);
}

function withPlaceholders<Name extends string, Row>(
  names: readonly Name[],
  build: (db: Database, p: Record<Name, Placeholder<Name>>) => DrizzleStatement,
): PreparedRead<Name, Row> {
  const placeholders = Object.fromEntries(names.map((n) => [n, sql.placeholder(n)])) as Record<Name, Placeholder<Name>>;
  return { build: (db) => build(db, placeholders) };
}

interface Ready {
  query: DrizzleStatement;
  params: unknown[];
  statement: D1PreparedStatement;
}

const ready = new WeakMap<D1Database, Map<PreparedRead<string, unknown>, Ready>>();

function readyFor(d1: D1Database, read: PreparedRead<string, unknown>): Ready {
  let reads = ready.get(d1);
  if (!reads) {
    reads = new Map();
    ready.set(d1, reads);
  }
  let entry = reads.get(read);
  if (!entry) {
    const query = read.build(database(d1));
    const { sql, params } = query.getQuery();
    entry = { query, params, statement: d1.prepare(sql) };
    reads.set(read, entry);
  }
  return entry;
}

/**
 * A write built the same way (an insert, update or delete's `.prepare()`), run by `batchWrites`.
 * Its values are bound as given (D1 binds a JS number as REAL: a statement casts where it matters).
 */
export function preparedWrite<Name extends string>(
  names: readonly Name[],
  build: (db: Database, p: Record<Name, Placeholder<Name>>) => DrizzleStatement,
): PreparedWrite<Name> {
  return withPlaceholders(names, build);
}

export type PreparedWrite<Name extends string> = PreparedRead<Name, unknown>;

/** A read or a write with its values, for `batchReads` or `batchWrites`. */
export interface BoundRead<Row> {
  read: PreparedRead<string, unknown>;
  values: Record<string, Value>;
  /** Type only. */
  _row?: Row;
}

export function withValues<Name extends string, Row>(read: PreparedRead<Name, Row>, values: Record<Name, Value>): BoundRead<Row> {
  return { read, values };
}

type Rows<T extends readonly BoundRead<unknown>[]> = { [K in keyof T]: T[K] extends BoundRead<infer R> ? R[] : never };

/** A write with its values: one statement of a `batchWrites`. */
export type BoundWrite = BoundRead<unknown>;

/** The statements with their values, in one D1 `batch` (one round trip, one transaction). */
async function send(d1: D1Database, statements: readonly BoundRead<unknown>[]) {
  const entries = statements.map((r) => readyFor(d1, r.read));
  const results = await d1.batch(entries.map((e, i) => e.statement.bind(...fillPlaceholders(e.params, statements[i]!.values))));
  return { entries, results };
}

/** Runs the reads in one D1 round trip (one `batch`); each answers its rows, mapped as Drizzle would. */
export async function batchReads<T extends readonly BoundRead<unknown>[]>(d1: D1Database, reads: readonly [...T]): Promise<Rows<T>> {
  const { entries, results } = await send(d1, reads);
  return results.map((result, i) => entries[i]!.query.mapResult(result, true)) as Rows<T>;
}

/**
 * Runs the writes in one D1 batch: all of them or none (D1's batch is one transaction). Answers
 * D1's result of each, in order (`meta.changes`: the rows it wrote).
 */
export async function batchWrites(d1: D1Database, writes: readonly BoundWrite[]): Promise<D1Result[]> {
  if (writes.length === 0) return [];
  return (await send(d1, writes)).results;
}
