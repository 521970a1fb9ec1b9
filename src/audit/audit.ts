import { and, desc, eq, gt, gte, isNotNull, isNull, lt, lte, max, min, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { database, nonEmpty } from "../db/client";
import { isUniqueViolation } from "../db/errors";
import { auditChainAnchors, auditCheckpoints, auditEvents, subscriptions } from "../db/schema";
import { auditHashInput, auditRetentionCutoff, type AuditChange, type AuditEntry, type AuditOrigin } from "../domain/audit";
import { PLANS, type Plan } from "../domain/plans";
import { auditKeyring, type AuditKeyEnv } from "../lib/audit-key";
import { sha256Hex } from "../lib/crypto";
import { randomString } from "../lib/ids";
import { iso } from "../lib/time";
import { type Deps } from "../http/deps";

// The audit log (docs/security.md, "Audit log"). A change and its entry are written in one D1
// batch (`auditInsert` is a statement to put in it), so an entry exists exactly when the change
// does. Entries are then sealed into their organization's hash chain: each gets the next number
// and the hash of the entry before it. Sealing is a conditional update guarded by the unique
// index on (organization_id, seq), so two sealers at once cannot fork the chain: the loser's
// batch fails as a whole and it starts again from the chain's new head. Sealing is
// deterministic (same head, same order, same hashes), so a sealer that lost the race to one
// doing the very same work finds its updates already made.
//
// What stays prepared SQL on the binding here (allow-listed, scripts/check-data-access.mjs):
// - the entry inserted only if the statement before it changed a row (`WHERE changes() > 0`: an
//   INSERT … SELECT <values> with no table, which Drizzle cannot build);
// - the verify walk, whose `rowsRead` is D1's own count (`meta.rows_read`), which Drizzle's
//   select does not hand back.
// Everything else is Drizzle's; the reads that must go through one index name it in their FROM
// (`indexedBy`, Drizzle having no index hint for SQLite).

export function newAuditId(): string {
  return `aud_${randomString(20)}`;
}

/** The insert of one entry, to run in the batch of the change it records. */
export function auditInsert({ db }: Pick<Deps, "db">, origin: AuditOrigin, change: AuditChange, at: number) {
  return db.insert(auditEvents).values({
    id: newAuditId(),
    organizationId: change.organizationId,
    seq: null,
    actorType: origin.actor.type,
    actorId: origin.actor.id,
    entityType: change.entityType,
    entityId: change.entityId,
    action: change.action,
    changes: JSON.stringify(change.changes ?? {}),
    ip: origin.ip,
    requestId: origin.requestId,
    createdAt: at,
  });
}

/**
 * The insert of one entry that happens only if the statement just before it in the batch
 * changed a row (SQLite's changes()): for a conditional update whose condition decides whether
 * the change happened at all (a revocation of a key not revoked yet).
 */
export function auditInsertIfChanged({ db }: Pick<Deps, "db">, origin: AuditOrigin, change: AuditChange, at: number) {
  // Drizzle's insert … select names every column of the table, in the schema's order.
  return db.insert(auditEvents).select(
    sql`SELECT ${newAuditId()}, ${change.organizationId}, NULL, ${origin.actor.type}, ${origin.actor.id}, ${change.entityType},
      ${change.entityId}, ${change.action}, ${JSON.stringify(change.changes ?? {})}, ${origin.ip}, ${origin.requestId}, ${at}, NULL, NULL, NULL
    WHERE changes() > 0`,
  );
}

/** Records an entry on its own: for a change that has no write of ours to share a batch with (an export, a sign-in). */
export async function recordAudit(deps: Pick<Deps, "db">, origin: AuditOrigin, change: AuditChange, at: number): Promise<void> {
  await auditInsert(deps, origin, change, at).run();
}

/** An entry as stored: the columns its hash is computed over, as they are in D1. */
type AuditRow = typeof auditEvents.$inferSelect;

/** The columns of `AuditRow` for the verify walk's prepared reads (named as Drizzle names them). */
const AUDIT_ROW_COLUMNS = `id, organization_id AS organizationId, seq, actor_type AS actorType, actor_id AS actorId,
  entity_type AS entityType, entity_id AS entityId, action, changes, ip, request_id AS requestId, created_at AS createdAt,
  prev_hash AS prevHash, hash, key_id AS keyId`;

function entryOf(row: AuditRow, seq: number, prevHash: string | null): AuditEntry {
  return {
    id: row.id,
    organizationId: row.organizationId,
    seq,
    actorType: row.actorType,
    actorId: row.actorId,
    entityType: row.entityType,
    entityId: row.entityId,
    action: row.action,
    changes: row.changes,
    ip: row.ip,
    requestId: row.requestId,
    createdAt: row.createdAt,
    prevHash,
  };
}

/**
 * `table INDEXED BY index` as a FROM: the read goes through that index whatever SQLite's planner
 * would have preferred (Drizzle has no index hint for SQLite).
 */
function indexedBy(table: SQLiteTable, index: string): SQL {
  return sql`${table} INDEXED BY ${sql.identifier(index)}`;
}

/**
 * A column selected from an `indexedBy` FROM, typed as the column: Drizzle refuses a column field
 * whose table is not the query's own, and a FROM fragment is not one.
 */
function read<C extends SQLiteColumn>(column: C) {
  return sql`${column}`.mapWith(column);
}

/** What the chain's functions need: the database and the audit key (never in the database). */
export type AuditEnv = { DB: D1Database } & AuditKeyEnv;

const SEAL_PAGE = 200;
const SEAL_ATTEMPTS = 8;

/** The chain's last sealed entry, else the anchor left by retention, else the chain's start. */
async function chainHead(d1: D1Database, organizationId: string): Promise<{ seq: number; hash: string | null }> {
  const db = database(d1);
  const [last, anchor] = await db.batch([
    db
      .select({ seq: auditEvents.seq, hash: auditEvents.hash })
      .from(auditEvents)
      .where(and(eq(auditEvents.organizationId, organizationId), isNotNull(auditEvents.seq)))
      .orderBy(desc(auditEvents.seq))
      .limit(1),
    db
      .select({ seq: auditChainAnchors.seq, hash: auditChainAnchors.hash })
      .from(auditChainAnchors)
      .where(eq(auditChainAnchors.organizationId, organizationId)),
  ]);
  // A sealed entry has its number (seq IS NOT NULL above).
  const row = last[0] ?? anchor[0];
  return row ? { seq: row.seq ?? 0, hash: row.hash } : { seq: 0, hash: null };
}

/**
 * Chains every entry of the organization not sealed yet; answers how many it sealed. Each
 * entry's hash is the HMAC, under the current audit key, of its fields and the hash before it.
 * Run after a write (src/http/audit-sealing.ts) and by the minute cron, never by a read.
 */
export async function sealAuditChain(env: AuditEnv, organizationId: string): Promise<number> {
  const d1 = env.DB;
  const db = database(d1);
  const e = auditEvents;
  const keys = auditKeyring(env);
  let sealed = 0;
  for (let attempt = 0; attempt < SEAL_ATTEMPTS;) {
    const head = await chainHead(d1, organizationId);
    const pending = await db
      .select()
      .from(e)
      .where(and(eq(e.organizationId, organizationId), isNull(e.seq)))
      .orderBy(e.createdAt, e.id)
      .limit(SEAL_PAGE);
    let { seq, hash } = head;
    const updates = [];
    for (const row of pending) {
      seq += 1;
      const entry = entryOf(row, seq, hash);
      const next = (await keys.sign(keys.currentId, auditHashInput(entry)))!;
      updates.push(
        db
          .update(e)
          .set({ seq, prevHash: hash, hash: next, keyId: keys.currentId })
          .where(and(eq(e.id, row.id), isNull(e.seq))),
      );
      hash = next;
    }
    const batch = nonEmpty(updates);
    if (batch === null) return sealed;
    try {
      await db.batch(batch);
      sealed += batch.length;
    } catch (err) {
      // Another sealer took one of these numbers first (the unique (organization_id, seq)): read the new head and go again.
      if (!isUniqueViolation(err, "audit_events.")) throw err;
      attempt += 1;
    }
  }
  return sealed;
}

/** Seals every organization with entries not sealed yet (read through audit_events_unsealed_idx). */
export async function sealPendingAudit(env: AuditEnv, limit = 100): Promise<string[]> {
  const pending = await database(env.DB)
    .selectDistinct({ organizationId: read(auditEvents.organizationId) })
    .from(indexedBy(auditEvents, "audit_events_unsealed_idx"))
    .where(isNull(auditEvents.seq))
    .limit(limit);
  const organizations = pending.map((r) => r.organizationId);
  for (const organizationId of organizations) await sealAuditChain(env, organizationId);
  return organizations;
}

export interface AuditFilters {
  entityType?: string;
  entityId?: string;
  actorId?: string;
  action?: string;
  from?: number;
  to?: number;
}

/** The sealed entries of the organization that match the filters, before the cursor's number. */
function whereOf(organizationId: string, f: AuditFilters, beforeSeq: number | null): SQL | undefined {
  const e = auditEvents;
  return and(
    eq(e.organizationId, organizationId),
    isNotNull(e.seq),
    f.entityType === undefined ? undefined : eq(e.entityType, f.entityType),
    f.entityId === undefined ? undefined : eq(e.entityId, f.entityId),
    f.actorId === undefined ? undefined : eq(e.actorId, f.actorId),
    f.action === undefined ? undefined : eq(e.action, f.action),
    f.from === undefined ? undefined : gte(e.createdAt, f.from),
    f.to === undefined ? undefined : lt(e.createdAt, f.to),
    beforeSeq === null ? undefined : lt(e.seq, beforeSeq),
  );
}

export function auditRecord(row: AuditRow) {
  return {
    id: row.id,
    sequence: row.seq!,
    actor: { type: row.actorType, id: row.actorId },
    entityType: row.entityType,
    entityId: row.entityId,
    action: row.action,
    changes: JSON.parse(row.changes) as Record<string, { before: unknown; after: unknown }>,
    ipAddress: row.ip,
    requestId: row.requestId,
    createdAt: iso(row.createdAt),
    previousHash: row.prevHash,
    hash: row.hash!,
  };
}
export type AuditRecord = ReturnType<typeof auditRecord>;

/** One page, newest first, after the cursor (the number of the last entry of the page before). */
export async function listAuditEvents(
  { db }: Deps,
  organizationId: string,
  filters: AuditFilters,
  page: { limit: number; beforeSeq: number | null },
): Promise<{ rows: AuditRecord[]; hasMore: boolean }> {
  // A read never writes (issue 40): entries are sealed by the request that wrote them and by the cron.
  const found = await db
    .select()
    .from(auditEvents)
    .where(whereOf(organizationId, filters, page.beforeSeq))
    .orderBy(desc(auditEvents.seq))
    .limit(page.limit + 1);
  const rows = found.slice(0, page.limit).map(auditRecord);
  return { rows, hasMore: found.length > page.limit };
}

export const AUDIT_CSV_COLUMNS = [
  "sequence",
  "createdAt",
  "actorType",
  "actorId",
  "entityType",
  "entityId",
  "action",
  "changes",
  "ipAddress",
  "requestId",
  "hash",
] as const;

/** Every matching entry, newest first, a page at a time, as CSV rows (domain/csv.ts). */
export async function* auditCsvRows(deps: Deps, organizationId: string, filters: AuditFilters): AsyncGenerator<unknown[]> {
  let beforeSeq: number | null = null;
  for (;;) {
    const { rows, hasMore } = await listAuditEvents(deps, organizationId, filters, { limit: 100, beforeSeq });
    for (const r of rows) {
      yield [
        r.sequence,
        r.createdAt,
        r.actor.type,
        r.actor.id,
        r.entityType,
        r.entityId,
        r.action,
        JSON.stringify(r.changes),
        r.ipAddress,
        r.requestId,
        r.hash,
      ];
    }
    if (!hasMore || rows.length === 0) return;
    beforeSeq = rows[rows.length - 1]!.sequence;
  }
}

export interface ChainBreak {
  sequence: number;
  entryId: string | null;
  reason:
    | "hash_mismatch"
    | "previous_hash_mismatch"
    | "missing_entry"
    | "unkeyed_entry"
    | "unknown_key"
    | "checkpoint_signature_invalid"
    | "checkpoint_mismatch";
}

export interface ChainVerdict {
  valid: boolean;
  checked: number;
  firstSequence: number | null;
  lastSequence: number | null;
  /** The signed checkpoint the walk started from (null: from the chain's start or retention's anchor). */
  fromCheckpoint: number | null;
  /** Rows D1 read to answer (its own count): bounded by the entries after the last checkpoint. */
  rowsRead: number;
  brokenAt: ChainBreak | null;
}

interface CheckpointRow {
  seq: number;
  hash: string;
  key_id: string;
  signature: string;
}

function checkpointText(organizationId: string, seq: number, hash: string): string {
  return JSON.stringify(["audit-checkpoint", organizationId, seq, hash]);
}

const VERIFY_PAGE = 500;

/**
 * Walks the organization's chain from its last signed checkpoint (else retention's anchor, else
 * its start) and recomputes every keyed hash: an entry altered in place no longer matches its
 * hash, one removed leaves a gap in the numbers, and one re-hashed without the audit key (plain
 * SHA-256, or an HMAC under another key) no longer matches. Entries sealed before the chain was
 * keyed (key_id null, plain SHA-256) are accepted only before the first keyed one. Reads only.
 */
export async function verifyAuditChain(env: AuditEnv, organizationId: string): Promise<ChainVerdict> {
  const d1 = env.DB;
  const keys = auditKeyring(env);
  let rowsRead = 0;
  const [cpResult, anchorResult] = await d1.batch([
    d1
      .prepare("SELECT seq, hash, key_id, signature FROM audit_checkpoints WHERE organization_id = ? ORDER BY seq DESC LIMIT 1")
      .bind(organizationId),
    d1.prepare("SELECT seq, hash FROM audit_chain_anchors WHERE organization_id = ?").bind(organizationId),
  ]);
  rowsRead += (cpResult!.meta.rows_read ?? 0) + (anchorResult!.meta.rows_read ?? 0);
  const checkpoint = (cpResult!.results[0] as CheckpointRow | undefined) ?? null;
  const anchor = (anchorResult!.results[0] as { seq: number; hash: string } | undefined) ?? null;
  let expectedSeq = (anchor?.seq ?? 0) + 1;
  let prevHash: string | null = anchor?.hash ?? null;
  let keyedSeen = false;
  let checked = 0;
  let firstSequence: number | null = null;
  let fromCheckpoint: number | null = null;
  const verdict = (brokenAt: ChainBreak | null): ChainVerdict => ({
    valid: brokenAt === null,
    checked,
    firstSequence,
    lastSequence: checked === 0 ? (fromCheckpoint ?? null) : expectedSeq - 1,
    fromCheckpoint,
    rowsRead,
    brokenAt,
  });
  if (checkpoint) {
    const expected = await keys.sign(checkpoint.key_id, checkpointText(organizationId, checkpoint.seq, checkpoint.hash));
    if (expected === null || expected !== checkpoint.signature) {
      return verdict({ sequence: checkpoint.seq, entryId: null, reason: "checkpoint_signature_invalid" });
    }
    const at = await d1
      .prepare("SELECT id, hash, prev_hash FROM audit_events WHERE organization_id = ? AND seq = ?")
      .bind(organizationId, checkpoint.seq)
      .run<{ id: string; hash: string; prev_hash: string | null }>();
    rowsRead += at.meta.rows_read ?? 0;
    const entry = at.results[0];
    if (entry && entry.hash !== checkpoint.hash)
      return verdict({ sequence: checkpoint.seq, entryId: entry.id, reason: "checkpoint_mismatch" });
    // A checkpointed entry retention has since removed: the kept chain starts at the anchor, past it.
    if (entry || !anchor || anchor.seq < checkpoint.seq) {
      if (!entry) return verdict({ sequence: checkpoint.seq, entryId: null, reason: "missing_entry" });
      // The walk starts with the checkpointed entry itself: its own keyed hash is checked too.
      fromCheckpoint = checkpoint.seq;
      expectedSeq = checkpoint.seq;
      prevHash = entry.prev_hash;
      keyedSeen = true;
    }
  }
  for (;;) {
    const page = await d1
      .prepare(`SELECT ${AUDIT_ROW_COLUMNS} FROM audit_events WHERE organization_id = ? AND seq >= ? ORDER BY seq LIMIT ?`)
      .bind(organizationId, expectedSeq, VERIFY_PAGE)
      .run<AuditRow>();
    rowsRead += page.meta.rows_read ?? 0;
    for (const row of page.results) {
      if (row.seq !== expectedSeq) return verdict({ sequence: expectedSeq, entryId: null, reason: "missing_entry" });
      if (row.prevHash !== prevHash) return verdict({ sequence: row.seq, entryId: row.id, reason: "previous_hash_mismatch" });
      const input = auditHashInput(entryOf(row, row.seq, row.prevHash));
      let hash: string | null;
      if (row.keyId === null) {
        if (keyedSeen) return verdict({ sequence: row.seq, entryId: row.id, reason: "unkeyed_entry" });
        hash = await sha256Hex(input);
      } else {
        hash = await keys.sign(row.keyId, input);
        if (hash === null) return verdict({ sequence: row.seq, entryId: row.id, reason: "unknown_key" });
        keyedSeen = true;
      }
      if (hash !== row.hash) return verdict({ sequence: row.seq, entryId: row.id, reason: "hash_mismatch" });
      firstSequence ??= row.seq;
      checked += 1;
      prevHash = row.hash;
      expectedSeq += 1;
    }
    if (page.results.length < VERIFY_PAGE) return verdict(null);
  }
}

/**
 * Signs a checkpoint at the chain's head once the part after the last checkpoint verifies, so
 * the next `verify` starts there. The work is the entries since the last checkpoint. Answers
 * the new checkpoint's sequence, or null (nothing new, or the chain is broken: no checkpoint
 * vouches for a broken chain).
 */
export async function checkpointAuditChain(env: AuditEnv, organizationId: string, at: number, every = 1): Promise<number | null> {
  const verdict = await verifyAuditChain(env, organizationId);
  if (!verdict.valid || verdict.lastSequence === null || verdict.checked < every) return null;
  const db = database(env.DB);
  const head = await db
    .select({ seq: auditEvents.seq, hash: auditEvents.hash, keyId: auditEvents.keyId })
    .from(auditEvents)
    .where(and(eq(auditEvents.organizationId, organizationId), eq(auditEvents.seq, verdict.lastSequence)))
    .get();
  // Only a keyed entry is checkpointed: a walk from a checkpoint accepts no unkeyed entry after it.
  if (!head || head.keyId === null || head.hash === null) return null;
  const keys = auditKeyring(env);
  const signature = (await keys.sign(keys.currentId, checkpointText(organizationId, verdict.lastSequence, head.hash)))!;
  await db
    .insert(auditCheckpoints)
    .values({ organizationId, seq: verdict.lastSequence, hash: head.hash, keyId: keys.currentId, signature, createdAt: at })
    .onConflictDoNothing({ target: [auditCheckpoints.organizationId, auditCheckpoints.seq] })
    .run();
  return head.seq;
}

/**
 * Retention (issue 31: starter 30 days, pro 1 year, enterprise 7 years): the oldest sealed
 * entries past their plan's limit are deleted, and the last one deleted becomes the anchor the
 * kept chain starts from, in the same batch.
 */
export async function pruneAuditEvents({ db }: Pick<Deps, "db">, at: number, limit = 1000): Promise<number> {
  // Per plan, the organizations with an entry past that plan's limit (read through
  // audit_events_created_idx, named: left to itself SQLite walked the whole (organization, time)
  // index for the DISTINCT, query-plans.test caught it): an enterprise organization's month-old
  // entries never take the place of a starter organization's due ones.
  const e = auditEvents;
  const s = subscriptions;
  const reads = nonEmpty(
    PLANS.map((plan) =>
      db
        .selectDistinct({ organizationId: read(e.organizationId), plan: sql<Plan>`${plan}` })
        .from(indexedBy(e, "audit_events_created_idx"))
        .leftJoin(s, eq(s.organizationId, e.organizationId))
        .where(and(lt(e.createdAt, auditRetentionCutoff(plan, at)), eq(sql`COALESCE(${s.plan}, 'starter')`, plan)))
        .limit(100),
    ),
  );
  const orgs = reads ? (await db.batch(reads)).flat() : [];
  let deleted = 0;
  for (const { organizationId, plan } of orgs) {
    const cutoff = auditRetentionCutoff(plan, at);
    // Only a run of the chain's oldest entries goes (never past a kept one), so the kept chain has no hole.
    const sealedOf = and(eq(auditEvents.organizationId, organizationId), isNotNull(auditEvents.seq));
    const firstKept = db
      .select({ seq: min(auditEvents.seq) })
      .from(auditEvents)
      .where(and(sealedOf, gte(auditEvents.createdAt, cutoff)));
    const bounds = await db
      .select({ first: min(auditEvents.seq), last: max(auditEvents.seq), firstKept: sql<number | null>`${firstKept}` })
      .from(auditEvents)
      .where(sealedOf)
      .get();
    if (bounds?.first == null || bounds.last == null) continue;
    const throughSeq = Math.min(bounds.firstKept === null ? bounds.last : bounds.firstKept - 1, bounds.first + limit - 1);
    if (throughSeq < bounds.first) continue;
    const through = await db
      .select({ hash: auditEvents.hash })
      .from(auditEvents)
      .where(and(eq(auditEvents.organizationId, organizationId), eq(auditEvents.seq, throughSeq)))
      .get();
    // A sealed entry has its hash.
    if (!through?.hash) continue;
    const [, removed] = await db.batch([
      db
        .insert(auditChainAnchors)
        .values({ organizationId, seq: throughSeq, hash: through.hash, updatedAt: at })
        .onConflictDoUpdate({
          target: auditChainAnchors.organizationId,
          set: { seq: sql`excluded.seq`, hash: sql`excluded.hash`, updatedAt: sql`excluded.updated_at` },
          setWhere: sql`excluded.seq > ${auditChainAnchors.seq}`,
        }),
      db.delete(auditEvents).where(and(sealedOf, lte(auditEvents.seq, throughSeq))),
    ]);
    deleted += removed.meta.changes;
  }
  return deleted;
}

/** The minute sweep: seals what requests left unsealed and signs a checkpoint at each head it moved, then applies retention. */
export async function sweepAuditLog(env: AuditEnv, at: number): Promise<void> {
  const sealed = await sealPendingAudit(env);
  const db = database(env.DB);
  const e = auditEvents;
  const c = auditCheckpoints;
  const lastCheckpoint = db
    .select({ seq: max(c.seq) })
    .from(c)
    .where(eq(c.organizationId, e.organizationId));
  // The last two minutes' entries through the created_at index (a range), not a walk of every
  // organization's entries in the (organization, time) index the GROUP BY would tempt SQLite into.
  const uncheckpointed = await db
    .select({ organizationId: read(e.organizationId) })
    .from(indexedBy(e, "audit_events_created_idx"))
    .where(and(isNotNull(e.seq), gte(e.createdAt, at - 2 * 60_000), gt(e.seq, sql`COALESCE(${lastCheckpoint}, 0)`)))
    .groupBy(e.organizationId)
    .limit(100);
  for (const organizationId of new Set([...sealed, ...uncheckpointed.map((r) => r.organizationId)])) {
    await checkpointAuditChain(env, organizationId, at);
  }
  await pruneAuditEvents({ db: database(env.DB) }, at);
}
