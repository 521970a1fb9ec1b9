import { is, Param, Placeholder, sql } from "drizzle-orm";
import { database, type Database } from "./client";

/**
 * Statements built once per isolate, prepared once per D1 binding, run many times (issue 43).
 * Drizzle builds the statement from its query builder with `sql.placeholder(…)` for the values,
 * once; D1 prepares its text once; each use only binds its values. Rebuilding the same SELECTs through the
 * query builder on every request cost ~0.5 ms of a join's 4.4 ms of isolate time. The credential
 * reads use it, and so do the room's drain writes (queue-room/projection.ts: a drain's tickets in
 * one statement, their analytics in two, many tickets a drain).
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
 * and answers the Drizzle query's `.prepare()`. Built on its first use in the isolate (with the
 * first binding's client: only its text and the mapping of its rows are kept), prepared by D1 on
 * its first use with each binding.
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

type Fill = (values: Record<string, Value>) => unknown;

function valueOf(values: Record<string, Value>, name: string): Value {
  const value = values[name];
  if (value === undefined) throw new Error(`No value for placeholder "${name}" was provided`);
  return value;
}

/**
 * Drizzle's `fillPlaceholders`, with its checks of each parameter's kind made once per statement
 * rather than at every bind: a drain binds a hundred tickets' statements of a few shapes, and those
 * checks were a third of its CPU.
 */
function fillOf(param: unknown): Fill {
  if (is(param, Placeholder)) {
    const name = param.name;
    return (values) => valueOf(values, name);
  }
  if (is(param, Param) && is(param.value, Placeholder)) {
    const { encoder } = param;
    const name = param.value.name;
    return (values) => encoder.mapToDriverValue(valueOf(values, name));
  }
  return () => param;
}

/** A statement as Drizzle built it: its text does not depend on the binding it runs on. */
interface Built {
  query: DrizzleStatement;
  sql: string;
  /** How each parameter is filled from the values, in order. */
  fills: Fill[];
}

interface Ready {
  built: Built;
  statement: D1PreparedStatement;
}

/** Built once per isolate (the room's drain statements take tens of milliseconds to build). */
const built = new WeakMap<PreparedRead<string, unknown>, Built>();
/** Prepared by D1 once per binding. */
const ready = new WeakMap<D1Database, Map<PreparedRead<string, unknown>, Ready>>();

function builtFor(d1: D1Database, read: PreparedRead<string, unknown>): Built {
  let entry = built.get(read);
  if (!entry) {
    const query = read.build(database(d1));
    const { sql, params } = query.getQuery();
    entry = { query, sql, fills: params.map(fillOf) };
    built.set(read, entry);
  }
  return entry;
}

function readyFor(d1: D1Database, read: PreparedRead<string, unknown>): Ready {
  let reads = ready.get(d1);
  if (!reads) {
    reads = new Map();
    ready.set(d1, reads);
  }
  let entry = reads.get(read);
  if (!entry) {
    const shape = builtFor(d1, read);
    entry = { built: shape, statement: d1.prepare(shape.sql) };
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
  const results = await d1.batch(
    entries.map((e, i) => {
      const values = statements[i]!.values;
      return e.statement.bind(...e.built.fills.map((fill) => fill(values)));
    }),
  );
  return { entries, results };
}

/** Runs the reads in one D1 round trip (one `batch`); each answers its rows, mapped as Drizzle would. */
export async function batchReads<T extends readonly BoundRead<unknown>[]>(d1: D1Database, reads: readonly [...T]): Promise<Rows<T>> {
  const { entries, results } = await send(d1, reads);
  return results.map((result, i) => entries[i]!.built.query.mapResult(result, true)) as Rows<T>;
}

/**
 * Runs the writes in one D1 batch: all of them or none (D1's batch is one transaction). Answers
 * D1's result of each, in order (`meta.changes`: the rows it wrote).
 */
export async function batchWrites(d1: D1Database, writes: readonly BoundWrite[]): Promise<D1Result[]> {
  if (writes.length === 0) return [];
  return (await send(d1, writes)).results;
}
