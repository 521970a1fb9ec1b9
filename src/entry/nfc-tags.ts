import { and, count, desc, eq, sql, type SQL } from "drizzle-orm";
import type { ListWindow } from "../http/cursor";
import { keysetPage } from "../http/keyset";
import { nfcTagDevices, nfcTags } from "../db/schema";
import { conflict, notFound } from "../http/errors";
import { newId } from "../lib/ids";
import { iso, isoOrNull } from "../lib/time";
import type { Deps } from "../http/deps";

export type NfcTagRow = typeof nfcTags.$inferSelect;
export type NfcTagKind = NfcTagRow["kind"];

export function nfcTagRecord(t: NfcTagRow, uniqueDevices: number) {
  return {
    id: t.id,
    nfcId: t.nfcId,
    queueId: t.queueId,
    kind: t.kind,
    locationName: t.locationName,
    latitude: t.latitude,
    longitude: t.longitude,
    status: t.enabled ? ("enabled" as const) : ("disabled" as const),
    scanCount: t.scanCount,
    uniqueDevices,
    lastScannedAt: isoOrNull(t.lastScannedAt),
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
  };
}

function isUniqueClash(err: unknown): boolean {
  return String(err).includes("UNIQUE") || String((err as { cause?: unknown })?.cause).includes("UNIQUE");
}

export async function createNfcTag(
  { db }: Deps,
  input: {
    nfcId: string;
    organizationId: string;
    queueId: string;
    kind: NfcTagKind;
    locationName: string;
    latitude: number;
    longitude: number;
  },
  at: number,
): Promise<NfcTagRow> {
  const row: NfcTagRow = { id: newId("nfc"), ...input, enabled: true, scanCount: 0, lastScannedAt: null, createdAt: at, updatedAt: at };
  try {
    await db.insert(nfcTags).values(row);
  } catch (err) {
    // The unique index decides: two registrations of one identifier cannot both pass a pre-check.
    if (isUniqueClash(err)) throw conflict("nfcId", "A tag with this nfcId is already registered");
    throw err;
  }
  return row;
}

export async function tagByNfcId({ db }: Deps, nfcId: string): Promise<NfcTagRow> {
  const row = await db.select().from(nfcTags).where(eq(nfcTags.nfcId, nfcId)).get();
  if (!row) throw notFound("NFC tag");
  return row;
}

export async function uniqueDevicesOf({ db }: Deps, tagId: string): Promise<number> {
  const row = await db.select({ n: count() }).from(nfcTagDevices).where(eq(nfcTagDevices.tagId, tagId)).get();
  return row?.n ?? 0;
}

export interface NfcTagChanges {
  enabled?: boolean | undefined;
  locationName?: string | undefined;
  latitude?: number | undefined;
  longitude?: number | undefined;
  queueId?: string | undefined;
}

export async function updateNfcTag({ db }: Deps, tagId: string, changes: NfcTagChanges, at: number): Promise<NfcTagRow> {
  // Drizzle leaves out undefined values: only the fields named in the request change.
  const row = await db
    .update(nfcTags)
    .set({ ...changes, updatedAt: at })
    .where(eq(nfcTags.id, tagId))
    .returning()
    .get();
  if (!row) throw notFound("NFC tag");
  return row;
}

/** The organization's tags, newest first, optionally those of one queue. */
export async function listNfcTags(
  { db }: Deps,
  organizationId: string,
  filter: { queueId?: string | undefined },
  window: ListWindow,
): Promise<{ rows: { tag: NfcTagRow; uniqueDevices: number }[]; total: number; hasMore: boolean }> {
  const conditions: SQL[] = [eq(nfcTags.organizationId, organizationId)];
  if (filter.queueId) conditions.push(eq(nfcTags.queueId, filter.queueId));
  const where = and(...conditions);
  const devices = sql<number>`(SELECT count(*) FROM ${nfcTagDevices} WHERE ${nfcTagDevices.tagId} = ${nfcTags.id})`;
  const [page, totals] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: nfcTags,
        cursorColumn: nfcTags.id,
        owner: eq(nfcTags.organizationId, organizationId),
        where,
        keys: [
          { column: nfcTags.createdAt, direction: "desc" },
          { column: nfcTags.id, direction: "desc" },
        ],
      },
      (c) =>
        db
          .select({ tag: nfcTags, uniqueDevices: devices })
          .from(nfcTags)
          .where(c.where)
          .orderBy(...c.orderBy)
          .limit(c.limit)
          .offset(c.offset)
          .all(),
    ),
    db.select({ total: count() }).from(nfcTags).where(where).get(),
  ]);
  return { ...page, total: totals?.total ?? 0 };
}

/**
 * Counts one scan of a tag: the scan count, the last scan time and the scanning device (once
 * per device), in one batch so the statistics never disagree. The scan route calls this
 * after it has accepted the scan; `deviceHash` is a hash, never the raw device details.
 */
export async function recordNfcScan({ db }: Deps, tagId: string, deviceHash: string, at: number): Promise<void> {
  await db.batch([
    db
      .update(nfcTags)
      .set({
        scanCount: sql`${nfcTags.scanCount} + 1`,
        // Scans may be recorded out of order; the latest one wins.
        lastScannedAt: sql`max(coalesce(${nfcTags.lastScannedAt}, 0), ${at})`,
      })
      .where(eq(nfcTags.id, tagId)),
    db.insert(nfcTagDevices).values({ tagId, deviceHash, firstSeenAt: at }).onConflictDoNothing(),
  ]);
}
