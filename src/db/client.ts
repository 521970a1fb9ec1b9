import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Database = ReturnType<typeof database>;

export function database(d1: D1Database) {
  return drizzle(d1, { schema });
}

/** D1 binds at most 100 parameters a statement: split bulk writes into chunks. */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
