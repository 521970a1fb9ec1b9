import { and, eq, gte, lt, notInArray } from "drizzle-orm";
import { getTableConfig, SQLiteTable, type SQLiteColumn } from "drizzle-orm/sqlite-core";
import { nonEmpty } from "../db/client";
import * as schema from "../db/schema";
import { organizations } from "../db/schema";
import type { Deps } from "../http/deps";

// A reset twin leaves nothing behind (docs/test-mode.md). Most of what a twin owns goes with its
// organization row by cascade; the rest (tickets and their history, events, deliveries, analytics,
// the audit chain: rows keyed by organization id without a foreign key, so they outlive a delete)
// is deleted here, from every table of the schema with an `organization_id` column. Rows a retired
// room or the EVENTS consumer writes after the reset name the old twin too: the sweep below
// deletes them later, by the twin's id mark, once no organization row has that id.

/**
 * `swept`: the leftover pass reads this table (below): its organization_id is no foreign key (so
 * its rows outlive their organization) and leads an index, the primary key or a unique constraint.
 */
type TwinTable = { table: SQLiteTable; organizationId: SQLiteColumn; swept: boolean };

/** Every table of the schema with an `organization_id` column (the organizations table has `id`). */
function tablesWithOrganization(): TwinTable[] {
  const found: TwinTable[] = [];
  for (const value of Object.values(schema)) {
    if (!(value instanceof SQLiteTable)) continue;
    const config = getTableConfig(value);
    const column = config.columns.find((c) => c.name === "organization_id");
    if (!column) continue;
    const leads = (columns: readonly unknown[]) => columns[0] === column;
    // A row whose organization_id is a foreign key went with its organization (cascade): never a leftover.
    const cascades = config.foreignKeys.some((fk) => fk.reference().columns.includes(column));
    const swept =
      (!cascades && config.indexes.some((i) => i.config.where === undefined && leads(i.config.columns))) ||
      config.primaryKeys.some((k) => leads(k.columns)) ||
      config.uniqueConstraints.some((u) => leads(u.columns));
    found.push({ table: value, organizationId: column, swept });
  }
  return found;
}

let tables: TwinTable[] | null = null;
const TABLES = () => (tables ??= tablesWithOrganization());

/** Deletes every row that names this (removed) twin, in one D1 batch. */
export async function deleteTwinRows({ db }: Deps, twinId: string): Promise<void> {
  const deletes = TABLES().map(({ table, organizationId }) => db.delete(table).where(eq(organizationId, twinId)));
  const statements = nonEmpty(deletes);
  if (statements) await db.batch(statements);
}

/** A twin's id starts with `org_test` (src/lib/ids.ts): the range of every twin's id. */
const TWIN_FROM = "org_test";
const TWIN_TO = "org_tesu";

/**
 * The cron's pass over leftovers: rows of a twin that no longer exists (written after its reset by
 * a room or a consumer). Every 10 minutes, one indexed range of twin ids per table whose
 * `organization_id` leads an index: tickets, events, the audit chain, analytics, usage… The other
 * tables (their rows reached through another key: a delivery by its webhook, a message by its
 * ticket) would be read whole every 10 minutes for rows no reader ever reaches again; their
 * leftovers go with their own retention purge instead (query-plans.test holds the pass to its
 * indexes). Answers the rows deleted.
 */
export async function sweepTwinLeftovers({ db }: Deps, at: number): Promise<number> {
  if (new Date(at).getUTCMinutes() % 10 !== 0) return 0;
  const twins = db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(gte(organizations.id, TWIN_FROM), lt(organizations.id, TWIN_TO)));
  const deletes = TABLES()
    .filter((t) => t.swept)
    .map(({ table, organizationId }) =>
      db.delete(table).where(and(gte(organizationId, TWIN_FROM), lt(organizationId, TWIN_TO), notInArray(organizationId, twins))),
    );
  const statements = nonEmpty(deletes);
  const results = statements ? await db.batch(statements) : [];
  return results.reduce((n, r) => n + (r.meta?.changes ?? 0), 0);
}
