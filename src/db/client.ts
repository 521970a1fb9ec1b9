import {
  createTableRelationsHelpers,
  extractTablesRelationalConfig,
  type ExtractTablesWithRelations,
  type RelationalSchemaConfig,
} from "drizzle-orm";
import { DrizzleD1Database, SQLiteD1Session } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import * as schema from "./schema";

type Tables = ExtractTablesWithRelations<typeof schema>;

/**
 * The relational schema, read once per isolate. `drizzle(d1, { schema })` reads it again for every
 * client (`extractTablesRelationalConfig`: 0.4 ms, and 0.5 ms more building the client, in the
 * join's CPU profile), and every request builds a client for its own D1 session
 * (src/http/d1-sessions.ts). So the client is assembled here as `drizzle()` does (drizzle-orm
 * 0.45, d1/driver.js), with the schema and the dialect made once.
 */
let relational: RelationalSchemaConfig<Tables> | undefined;
const dialect = new SQLiteAsyncDialect();

function relationalSchema(): RelationalSchemaConfig<Tables> {
  if (!relational) {
    const config = extractTablesRelationalConfig<Tables>(schema, createTableRelationsHelpers);
    relational = { fullSchema: schema, schema: config.tables, tableNamesMap: config.tableNamesMap };
  }
  return relational;
}

function newDatabase(d1: D1Database) {
  const shape = relationalSchema();
  const session = new SQLiteD1Session<typeof schema, Tables>(d1, dialect, shape, {});
  return Object.assign(new DrizzleD1Database<typeof schema>("async", dialect, session, shape), { $client: d1 });
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
