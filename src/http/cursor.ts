import { z } from "@hono/zod-openapi";
import { validationError } from "./errors";
import { PaginationQuery, type Pagination } from "./openapi";

// Cursor pagination (issue #32, Stripe's model): `startingAfter` / `endingBefore` name the id
// of the last / first record of the page already read, and the next page is read by key from
// there, so rows created or removed meanwhile neither shift it (no skipped or repeated row, as
// `page`/`offset` do while a queue moves) nor cost an OFFSET scan. Ids are opaque already: the
// cursor is the id, and `meta.nextCursor` / `meta.previousCursor` hand the right one back.
// `page` and `offset` keep working as before for existing clients.

const CursorId = (name: "startingAfter" | "endingBefore", description: string) =>
  z
    .string()
    .min(1)
    .max(64)
    .optional()
    .openapi({ param: { name, in: "query" }, description });

export const CursorQuery = PaginationQuery.extend({
  startingAfter: CursorId(
    "startingAfter",
    "The page after this record's id (meta.nextCursor of the previous page); not with page, offset or endingBefore",
  ),
  endingBefore: CursorId("endingBefore", "The page before this record's id (meta.previousCursor); not with page, offset or startingAfter"),
});
export type CursorPagination = z.infer<typeof CursorQuery>;

export type Cursor = { startingAfter: string; endingBefore: null } | { startingAfter: null; endingBefore: string };

/** The cursor the query names, or null for a page/offset read; mixing the two is refused. */
export function cursorOf(query: Pagination & { startingAfter?: string | undefined; endingBefore?: string | undefined }): Cursor | null {
  const { startingAfter, endingBefore } = query;
  if (startingAfter !== undefined && endingBefore !== undefined) {
    throw validationError("endingBefore", "give startingAfter or endingBefore, not both");
  }
  const field = startingAfter !== undefined ? "startingAfter" : endingBefore !== undefined ? "endingBefore" : null;
  if (field === null) return null;
  if (query.page !== undefined || query.offset !== undefined) {
    throw validationError(field, "a cursor reads from a record, not from a page: leave page and offset out");
  }
  return startingAfter !== undefined ? { startingAfter, endingBefore: null } : { startingAfter: null, endingBefore: endingBefore! };
}

/** A cursor naming no record of this list: the field at fault, and why. */
export function unknownCursor(cursor: Cursor): never {
  const field = cursor.startingAfter !== null ? "startingAfter" : "endingBefore";
  throw validationError(field, "no record of this list has this id (read the list again from its start)");
}

export const CursorPageMeta = z
  .object({
    total: z.number().int(),
    page: z.number().int().nullable().openapi({ description: "The page number; null when the page was read with a cursor" }),
    limit: z.number().int(),
    hasMore: z.boolean().openapi({ description: "More records lie beyond this page, in the direction read" }),
    nextCursor: z.string().nullable().openapi({
      description: "Send as startingAfter for the next page; null when there is none",
      example: "tkt_d3m0q000000000000000k7x2m9p4w8n3",
    }),
    previousCursor: z
      .string()
      .nullable()
      .openapi({ description: "Send as endingBefore for the page before; null on a page read from the start" }),
  })
  .openapi("CursorPageMeta");
export type CursorMeta = z.infer<typeof CursorPageMeta>;

export function cursorListEnvelope<T extends z.ZodType>(item: T) {
  return z.object({ success: z.literal(true), data: z.array(item), meta: CursorPageMeta });
}

/**
 * The meta of a page read either way. With a cursor, `hasMore` is about the direction read;
 * the other direction is known to hold at least the cursor's own record.
 */
export function cursorMeta(
  items: readonly { id: string }[],
  read: { total: number; limit: number } & ({ cursor: Cursor; hasMore: boolean } | { cursor: null; page: number; offset: number }),
): CursorMeta {
  const first = items[0]?.id ?? null;
  const last = items.at(-1)?.id ?? null;
  if (read.cursor === null) {
    const hasMore = read.offset + read.limit < read.total;
    return {
      total: read.total,
      page: read.page,
      limit: read.limit,
      hasMore,
      nextCursor: hasMore ? last : null,
      previousCursor: read.offset > 0 ? first : null,
    };
  }
  const forward = read.cursor.startingAfter !== null;
  return {
    total: read.total,
    page: null,
    limit: read.limit,
    hasMore: read.hasMore,
    nextCursor: forward ? (read.hasMore ? last : null) : last,
    previousCursor: forward ? first : read.hasMore ? first : null,
  };
}

/** How one page of a list is read: by number (page/offset) or from a record (a cursor). */
export interface ListWindow {
  offset: number;
  limit: number;
  page: number;
  cursor: Cursor | null;
}

/** The window a list's query asks for; a cursor mixed with page/offset is refused (cursorOf). */
export function listWindow(query: CursorPagination): ListWindow {
  const cursor = cursorOf(query);
  const offset = cursor ? 0 : (query.offset ?? ((query.page ?? 1) - 1) * query.limit);
  return { offset, limit: query.limit, page: Math.floor(offset / query.limit) + 1, cursor };
}

/** The meta of a page of any list (issue #41): `ids` are the page's record ids, in order. */
export function listMeta(ids: readonly string[], total: number, window: ListWindow, hasMore: boolean): CursorMeta {
  const items = ids.map((id) => ({ id }));
  return window.cursor === null
    ? cursorMeta(items, { total, limit: window.limit, cursor: null, page: window.page, offset: window.offset })
    : cursorMeta(items, { total, limit: window.limit, cursor: window.cursor, hasMore });
}
