import { and, eq, gte, lt, notInArray } from "drizzle-orm";
import { getTableConfig, SQLiteTable, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import { database, nonEmpty } from "../db/client";
import * as schema from "../db/schema";
import { organizations } from "../db/schema";
import type { Env } from "../env";

// A reset twin leaves nothing behind (docs/test-mode.md). Most of what a twin owns goes with its
// organization row by cascade; the rest (tickets and their history, events, deliveries, analytics,
// the audit chain: rows keyed by organization id without a foreign key, so they outlive a delete)
// is deleted here, from every table of the schema with an `organization_id` column. Rows a retired
// room or the EVENTS consumer writes after the reset name the old twin too: the sweep below
// deletes them later, by the twin's id mark, once no organization row has that id.

type TwinTable = { table: SQLiteTable; organizationId: SQLiteColumn };

/** Every table of the schema with an `organization_id` column (the organizations table has `id`). */
function tablesWithOrganization(): TwinTable[] {
  const found: TwinTable[] = [];
  for (const value of Object.values(schema)) {
    if (!(value instanceof SQLiteTable)) continue;
    const column = getTableConfig(value).columns.find((c) => c.name === "organization_id");
    if (column) found.push({ table: value, organizationId: column });
  }
  return found;
}

let tables: TwinTable[] | null = null;
const TABLES = () => (tables ??= tablesWithOrganization());

/** Deletes every row that names this (removed) twin, in one D1 batch. */
export async function deleteTwinRows(env: Env, twinId: string): Promise<void> {
  const db = database(env.DB);
  const deletes = TABLES().map(({ table, organizationId }) => db.delete(table).where(eq(organizationId, twinId)));
  const statements = nonEmpty(deletes);
  if (statements) await db.batch(statements);
}

/** A twin's id starts with `org_test` (src/lib/ids.ts): the range of every twin's id. */
const TWIN_FROM = "org_test";
const TWIN_TO = "org_tesu";

/**
 * The cron's pass over leftovers: rows of a twin that no longer exists (written after its reset by
 * a room or a consumer). Every 10 minutes, one indexed range per table. Answers the rows deleted.
 */
export async function sweepTwinLeftovers(env: Env, at: number): Promise<number> {
  if (new Date(at).getUTCMinutes() % 10 !== 0) return 0;
  const db = database(env.DB);
  const twins = db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(gte(organizations.id, TWIN_FROM), lt(organizations.id, TWIN_TO)));
  const deletes = TABLES().map(({ table, organizationId }) =>
    db.delete(table).where(and(gte(organizationId, TWIN_FROM), lt(organizationId, TWIN_TO), notInArray(organizationId, twins))),
  );
  const statements = nonEmpty(deletes);
  const results = statements ? await db.batch(statements) : [];
  return results.reduce((n, r) => n + (r.meta?.changes ?? 0), 0);
}
