import { and, asc, desc, eq, gt, is, lt, or, SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Database } from "../db/client";
import { unknownCursor, type ListWindow } from "./cursor";

// The one keyset reader behind every cursor-paginated list (issue #41). A list is ordered by a
// few keys, the last of which is unique (`createdAt desc, id`); a cursor names a record by its
// id, whose keys are read back and the page continues strictly after (or before) them. Rows
// inserted or removed elsewhere in the order move nothing: no row is skipped or repeated, which
// page numbers cannot promise. A page read by number goes through the same reader with its
// offset, so a list has one query either way.

export type Direction = "asc" | "desc";

export interface Key<C> {
  column: C;
  direction: Direction;
}

/** The lexicographic "after these values in this order" condition, as OR of ANDs. */
function after<C, S>(
  keys: readonly Key<C>[],
  values: readonly unknown[],
  build: { eq(c: C, v: unknown): S; gt(c: C, v: unknown): S; lt(c: C, v: unknown): S; and(parts: S[]): S; or(parts: S[]): S },
): S {
  return build.or(
    keys.map((key, i) => {
      const equal = keys.slice(0, i).map((k, j) => build.eq(k.column, values[j]));
      const beyond = key.direction === "asc" ? build.gt(key.column, values[i]) : build.lt(key.column, values[i]);
      return build.and([...equal, beyond]);
    }),
  );
}

const flip = <C>(keys: readonly Key<C>[]): Key<C>[] =>
  keys.map((k) => ({ column: k.column, direction: k.direction === "asc" ? "desc" : "asc" }));

export interface Page<Row> {
  rows: Row[];
  /** More records lie beyond this page in the direction read. */
  hasMore: boolean;
}

function finish<Row>(rows: Row[], window: ListWindow): Page<Row> {
  const page = rows.slice(0, window.limit);
  if (window.cursor?.endingBefore != null) page.reverse();
  return { rows: page, hasMore: rows.length > window.limit };
}

export interface DrizzleList {
  /** The table the cursor's record is looked up in, by `cursorColumn`, within `owner`. */
  table: SQLiteTable;
  cursorColumn: SQLiteColumn;
  /** Whose records these are (organization, user): a cursor outside it is unknown. */
  owner: SQL | undefined;
  /** The list's full filter (owner included). */
  where: SQL | undefined;
  /**
   * The order; the last key is unique. A key is a column of `table`, or an expression over it
   * (`sql\`${table}.rowid\``: the insertion order, for a table with no column that keeps it).
   */
  keys: readonly Key<SQLiteColumn | SQL>[];
}

// A column maps the value to its driver's form; an expression binds it as it is.
const drizzleOps = {
  eq: (c: SQLiteColumn | SQL, v: unknown) => (is(c, SQL) ? eq(c, v) : eq(c, v)),
  gt: (c: SQLiteColumn | SQL, v: unknown) => (is(c, SQL) ? gt(c, v) : gt(c, v)),
  lt: (c: SQLiteColumn | SQL, v: unknown) => (is(c, SQL) ? lt(c, v) : lt(c, v)),
  and: (parts: (SQL | undefined)[]) => and(...parts),
  or: (parts: (SQL | undefined)[]) => or(...parts),
};

/**
 * One page of a Drizzle list. `read` runs the list's own select with the clause given (it may
 * join and pick columns as it likes); it is asked for one row more than the page to know
 * whether more follow.
 */
export async function keysetPage<Row>(
  db: Database,
  window: ListWindow,
  list: DrizzleList,
  read: (clause: { where: SQL | undefined; orderBy: SQL[]; limit: number; offset: number }) => Promise<Row[]>,
): Promise<Page<Row>> {
  let keys = list.keys;
  let where = list.where;
  if (window.cursor !== null) {
    const id = window.cursor.startingAfter ?? window.cursor.endingBefore;
    const anchor = await db
      .select(Object.fromEntries(keys.map((k, i) => [`k${i}`, k.column])) as Record<string, SQLiteColumn | SQL>)
      .from(list.table)
      .where(and(eq(list.cursorColumn, id), list.owner))
      .get();
    if (!anchor) unknownCursor(window.cursor);
    if (window.cursor.endingBefore !== null) keys = flip(keys);
    where = and(
      where,
      after(
        keys,
        keys.map((_, i) => (anchor as Record<string, unknown>)[`k${i}`]),
        drizzleOps,
      ),
    );
  }
  const orderBy = keys.map((k) => (k.direction === "asc" ? asc(k.column) : desc(k.column)));
  return finish(await read({ where, orderBy, limit: window.limit + 1, offset: window.offset }), window);
}

/** One page of a list already in memory, in its order (a user's few organizations). */
export function keysetPageOf<Row>(rows: readonly Row[], window: ListWindow, idOf: (row: Row) => string): Page<Row> {
  if (window.cursor === null) return finish(rows.slice(window.offset, window.offset + window.limit + 1), window);
  const id = window.cursor.startingAfter ?? window.cursor.endingBefore;
  const at = rows.findIndex((r) => idOf(r) === id);
  if (at < 0) unknownCursor(window.cursor);
  if (window.cursor.startingAfter !== null) return finish(rows.slice(at + 1, at + 2 + window.limit), window);
  return finish(rows.slice(Math.max(0, at - window.limit - 1), at).reverse(), window);
}
