import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { decodeAuditCursor, encodeAuditCursor } from "../domain/audit";
import { csvRecord, UTF8_BOM } from "../domain/csv";
import { auditOrigin } from "../http/audit-origin";
import { authorize } from "../http/auth";
import type { AppEnv } from "../http/context";
import { validationError } from "../http/errors";
import { errors, idParam, jsonResponse, SECURITY } from "../http/openapi";
import { ok } from "../http/respond";
import { router } from "../http/router";
import { now } from "../lib/clock";
import { parseInstantInput, utcInstant } from "../lib/instant";
import { AUDIT_CSV_COLUMNS, auditCsvRows, listAuditEvents, recordAudit, verifyAuditChain, type AuditFilters } from "./audit";
import { deps } from "../http/deps";

// The audit log, read-only (docs/security.md): admins and owners, or a key with read:audit.
// Nothing here changes an entry; entries are written by the services that make the changes.

const app = router();
const tags = ["Audit log"];

const OrganizationParam = idParam("organizationId", "org");

const Instant = z
  .string()
  .max(40)
  .transform((value, ctx) => {
    const parsed = parseInstantInput(value);
    if (!parsed) {
      ctx.addIssue({ code: "custom", message: "expected an ISO 8601 timestamp with Z or an offset, or a date YYYY-MM-DD" });
      return z.NEVER;
    }
    return utcInstant(parsed);
  })
  .openapi({ example: "2026-03-01T00:00:00Z" });

const Filters = z.object({
  entityType: z.string().min(1).max(40).optional().openapi({ example: "queue" }),
  entityId: z.string().min(1).max(64).optional(),
  actorId: z.string().min(1).max(64).optional().openapi({ description: "A user id (usr_…) or an API key id (key_…)" }),
  action: z.string().min(1).max(60).optional().openapi({ example: "queue.updated" }),
  from: Instant.optional().openapi({ description: "Entries at or after this instant", example: "2026-03-01T00:00:00Z" }),
  to: Instant.optional().openapi({ description: "Entries before this instant", example: "2026-04-01T00:00:00Z" }),
});

const ListQuery = Filters.extend({
  limit: z.coerce.number().int().min(1).max(100).default(50).openapi({ description: "Default 50, maximum 100" }),
  cursor: z.string().max(40).optional().openapi({ description: "meta.nextCursor of the previous page" }),
});

const FieldChange = z.object({ before: z.unknown(), after: z.unknown() });

const AuditEvent = z
  .object({
    id: z.string(),
    sequence: z.number().int().openapi({ description: "The entry's number in its organization's chain (1, 2, …)" }),
    actor: z.object({ type: z.enum(["user", "api_key", "system"]), id: z.string().nullable() }),
    entityType: z.string(),
    entityId: z.string(),
    action: z.string(),
    changes: z.record(z.string(), FieldChange).openapi({ description: "Changed fields, before and after; secrets never appear" }),
    ipAddress: z.string().nullable(),
    requestId: z.string().nullable(),
    createdAt: z.string(),
    previousHash: z.string().nullable(),
    hash: z.string(),
  })
  .openapi("AuditEvent");

function filtersOf(q: z.infer<typeof Filters>): AuditFilters {
  if (q.from !== undefined && q.to !== undefined && q.from >= q.to) throw validationError("to", "must be after from");
  return { entityType: q.entityType, entityId: q.entityId, actorId: q.actorId, action: q.action, from: q.from, to: q.to };
}

async function auditReader(c: Context<AppEnv>, organizationId: string) {
  return authorize(c, organizationId, "AUDIT_VIEW");
}

const list = createRoute({
  method: "get",
  path: "/organizations/{organizationId}/audit-events",
  tags,
  summary: "The organization's audit log, newest first (admins, owners, keys with read:audit)",
  description:
    "Every change made by a person or a key: who, what (entity and action), the changed fields before and after (secrets never), when, " +
    "from which address, with which request id. Filters combine; pages follow meta.nextCursor. Kept per plan: starter 30 days, pro 1 year, enterprise 7 years.",
  security: SECURITY.any,
  request: { params: OrganizationParam, query: ListQuery },
  responses: {
    200: jsonResponse(
      z.object({
        success: z.literal(true),
        data: z.array(AuditEvent),
        meta: z.object({ limit: z.number().int(), hasMore: z.boolean(), nextCursor: z.string().nullable() }),
      }),
      "Entries, newest first",
    ),
    ...errors(),
  },
});

app.openapi(list, async (c) => {
  const { organizationId } = c.req.valid("param");
  await auditReader(c, organizationId);
  const q = c.req.valid("query");
  const filters = filtersOf(q);
  let beforeSeq: number | null = null;
  if (q.cursor !== undefined) {
    beforeSeq = decodeAuditCursor(q.cursor);
    if (beforeSeq === null) throw validationError("cursor", "not a cursor this route gave");
  }
  const { rows, hasMore } = await listAuditEvents(deps(c), organizationId, filters, { limit: q.limit, beforeSeq });
  const last = rows[rows.length - 1];
  const nextCursor = hasMore && last ? encodeAuditCursor(last.sequence) : null;
  return c.json({ ...ok(rows), meta: { limit: q.limit, hasMore, nextCursor } }, 200);
});

const exportCsv = createRoute({
  method: "get",
  path: "/organizations/{organizationId}/audit-events/export.csv",
  tags,
  summary: "The audit log as CSV, newest first (same access and filters as the list); the export is itself audited",
  security: SECURITY.any,
  request: { params: OrganizationParam, query: Filters },
  responses: {
    200: {
      description: "The CSV file (Content-Disposition: attachment)",
      content: { "text/csv": { schema: z.string().openapi({ example: `\uFEFF${AUDIT_CSV_COLUMNS.join(",")}\r\n` }) } },
    },
    ...errors(),
  },
});

app.openapi(exportCsv, async (c) => {
  const { organizationId } = c.req.valid("param");
  const actor = await auditReader(c, organizationId);
  const q = c.req.valid("query");
  const filters = filtersOf(q);
  await recordAudit(
    deps(c),
    auditOrigin(c, actor),
    {
      organizationId,
      entityType: "audit_log",
      entityId: organizationId,
      action: "export.audit",
      changes: { filters: { before: null, after: filters } },
    },
    now(),
  );
  const encoder = new TextEncoder();
  const rows = auditCsvRows(deps(c), organizationId, filters);
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(UTF8_BOM + csvRecord([...AUDIT_CSV_COLUMNS])));
    },
    async pull(controller) {
      const next = await rows.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(csvRecord(next.value as never)));
    },
  });
  return c.body(stream, 200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="audit-${organizationId}.csv"`,
    "Cache-Control": "no-store",
  });
});

const verify = createRoute({
  method: "get",
  path: "/organizations/{organizationId}/audit-events/verify",
  tags,
  summary:
    "Walks the organization's keyed hash chain from its last signed checkpoint and says where it breaks (admins, owners, keys with read:audit)",
  description:
    "Checks the last checkpoint's signature, then recomputes each later entry's HMAC (keyed with a secret the database does not hold) from its fields and the previous entry's hash. " +
    "An entry changed in the database no longer matches (hash_mismatch), a removed one leaves a gap (missing_entry), one re-hashed without the key no longer matches " +
    "(hash_mismatch, or previous_hash_mismatch for the entry after it). Reads only: entries not sealed yet are not part of the answer.",
  security: SECURITY.any,
  request: { params: OrganizationParam },
  responses: {
    200: jsonResponse(
      z.object({
        success: z.literal(true),
        data: z
          .object({
            valid: z.boolean(),
            checked: z.number().int(),
            firstSequence: z.number().int().nullable(),
            lastSequence: z.number().int().nullable(),
            fromCheckpoint: z.number().int().nullable().openapi({
              description: "The signed checkpoint the walk started from; null: from the chain's start (or retention's anchor)",
            }),
            rowsRead: z
              .number()
              .int()
              .openapi({ description: "Rows the database read to answer: grows with the entries after the checkpoint only" }),
            brokenAt: z
              .object({
                sequence: z.number().int(),
                entryId: z.string().nullable(),
                reason: z.enum([
                  "hash_mismatch",
                  "previous_hash_mismatch",
                  "missing_entry",
                  "unkeyed_entry",
                  "unknown_key",
                  "checkpoint_signature_invalid",
                  "checkpoint_mismatch",
                ]),
              })
              .nullable(),
          })
          .openapi("AuditChainVerdict"),
      }),
      "The verdict",
    ),
    ...errors(),
  },
});

app.openapi(verify, async (c) => {
  const { organizationId } = c.req.valid("param");
  await auditReader(c, organizationId);
  return c.json(ok(await verifyAuditChain(c.env, organizationId)), 200);
});

export default app;
