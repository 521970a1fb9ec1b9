import { count, eq } from "drizzle-orm";
import { invoices } from "../db/schema";
import type { ListWindow } from "../http/cursor";
import type { Deps } from "../http/deps";
import { keysetPage } from "../http/keyset";

/** The organization's invoices, newest first, one cursor page, with the total. */
export async function listInvoices({ db }: Deps, organizationId: string, window: ListWindow) {
  const where = eq(invoices.organizationId, organizationId);
  const [{ rows, hasMore }, total] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: invoices,
        cursorColumn: invoices.id,
        owner: where,
        where,
        keys: [
          { column: invoices.createdAt, direction: "desc" },
          { column: invoices.id, direction: "desc" },
        ],
      },
      (q) =>
        db
          .select()
          .from(invoices)
          .where(q.where)
          .orderBy(...q.orderBy)
          .limit(q.limit)
          .offset(q.offset)
          .all(),
    ),
    db.select({ n: count() }).from(invoices).where(where).get(),
  ]);
  return { rows, hasMore, total: total?.n ?? 0 };
}
