import { CURRENT_API_VERSION } from "../domain/api-versions";
import { and, count, desc, eq, isNull, lt, or } from "drizzle-orm";
import { apiKeys } from "../db/schema";
import type { KeyPermission } from "../domain/permissions";
import type { ListWindow } from "../http/cursor";
import { notFound, validationError } from "../http/errors";
import { keysetPage } from "../http/keyset";
import { sha256Hex } from "../lib/crypto";
import { isTwinOrganizationId, newId } from "../lib/ids";
import { isoOrNull, iso } from "../lib/time";
import { changedFields, type AuditOrigin } from "../domain/audit";
import { auditInsert, auditInsertIfChanged } from "../audit/audit";
import { maskApiKey, mintApiKey, type ApiKeyRow } from "../http/credentials/api-keys";
import type { Deps } from "../http/deps";

export function apiKeyRecord(k: ApiKeyRow) {
  return {
    id: k.id,
    name: k.name,
    maskedKey: maskApiKey(k.organizationId, k.lookupPrefix, k.last4),
    // A test key works on the organization's test-mode twin (docs/test-mode.md), whose id this is.
    mode: isTwinOrganizationId(k.organizationId) ? ("test" as const) : ("live" as const),
    organizationId: k.organizationId,
    permissions: k.permissions,
    createdAt: iso(k.createdAt),
    lastUsedAt: isoOrNull(k.lastUsedAt),
    revokedAt: isoOrNull(k.revokedAt),
    allowedOrigins: k.allowedOrigins ?? null,
    // Minted before keys were signed: still accepted (through a lookup, behind the per-address
    // failed-credential limit), but to be replaced by a new key.
    legacy: !k.signed,
  };
}

/**
 * Mints a key and stores only its hash. The full value is returned to the caller once and
 * can never be read again. `createdBy` is the user or the key that asked for it.
 */
export async function createApiKey(
  deps: Deps,
  env: Parameters<typeof mintApiKey>[0],
  organizationId: string,
  input: { name: string; permissions: KeyPermission[]; allowedOrigins?: string[] | null },
  createdBy: string,
  at: number,
  origin?: AuditOrigin,
): Promise<{ key: string; record: ApiKeyRow }> {
  const { db } = deps;
  const minted = await mintApiKey(env, organizationId);
  const record: ApiKeyRow = {
    id: newId("key"),
    organizationId,
    name: input.name,
    lookupPrefix: minted.lookupPrefix,
    keyHash: await sha256Hex(minted.value),
    last4: minted.last4,
    permissions: input.permissions.length === 0 ? ["read"] : [...new Set(input.permissions)],
    createdById: createdBy,
    createdAt: at,
    lastUsedAt: null,
    revokedAt: null,
    allowedOrigins: input.allowedOrigins ?? null,
    signed: true,
    apiVersion: CURRENT_API_VERSION,
  };
  const insert = db.insert(apiKeys).values(record);
  if (origin) {
    const changes = changedFields(
      null,
      { name: record.name, permissions: record.permissions, allowedOrigins: record.allowedOrigins },
      API_KEY_AUDITED,
    );
    const entry = { organizationId, entityType: "api_key", entityId: record.id, action: "api_key.created" as const, changes };
    await db.batch([insert, auditInsert(deps, origin, entry, at)]);
  } else {
    await insert.run();
  }
  return { key: minted.value, record };
}

const API_KEY_AUDITED = ["name", "permissions", "allowedOrigins"] as const;

const active = (organizationId: string) => and(eq(apiKeys.organizationId, organizationId), isNull(apiKeys.revokedAt));

/** Active keys only: a revoked key is gone for good, so it no longer appears. */
export async function listActiveApiKeys({ db }: Deps, organizationId: string, window: ListWindow) {
  const [page, total] = await Promise.all([
    keysetPage(
      db,
      window,
      {
        table: apiKeys,
        cursorColumn: apiKeys.id,
        owner: eq(apiKeys.organizationId, organizationId),
        where: active(organizationId),
        keys: [
          { column: apiKeys.createdAt, direction: "desc" },
          { column: apiKeys.id, direction: "asc" },
        ],
      },
      (q) =>
        db
          .select()
          .from(apiKeys)
          .where(q.where)
          .orderBy(...q.orderBy)
          .limit(q.limit)
          .offset(q.offset)
          .all(),
    ),
    db.select({ n: count() }).from(apiKeys).where(active(organizationId)).get(),
  ]);
  return { ...page, total: total?.n ?? 0 };
}

/**
 * Revokes the key for good. The row stays so that the key is answered with KEY_REVOKED
 * rather than "unknown", which tells an integrator what happened.
 */
export async function revokeApiKey(deps: Deps, organizationId: string, keyId: string, at: number, origin: AuditOrigin): Promise<ApiKeyRow> {
  const { db } = deps;
  // The entry is written in the same batch, only if the revocation changed a row.
  const [[revoked]] = await db.batch([
    db
      .update(apiKeys)
      .set({ revokedAt: at })
      .where(and(eq(apiKeys.id, keyId), active(organizationId)))
      .returning(),
    auditInsertIfChanged(deps, origin, { organizationId, entityType: "api_key", entityId: keyId, action: "api_key.revoked" }, at),
  ]);
  if (!revoked) throw notFound("API key");
  return revoked;
}

/** How stale `lastUsedAt` may get: one write per key per minute at most, whatever the traffic. */
export const LAST_USED_GRANULARITY_MS = 60_000;

export async function recordApiKeyUse({ db }: Deps, keyId: string, at: number): Promise<void> {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: at })
    .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, at - LAST_USED_GRANULARITY_MS))))
    .run();
}

/**
 * The origins a widget key may be used from: each `https://<host>` whose host is one of the
 * organization's verified domains or a subdomain of one. Returns them normalised.
 */
export function allowedWidgetOrigins(
  permissions: readonly KeyPermission[],
  origins: readonly string[],
  verifiedDomains: readonly string[],
): string[] {
  if (permissions.length !== 1 || permissions[0] !== "widget") {
    throw validationError("allowedOrigins", "only a key with the single permission widget can be restricted to origins");
  }
  const out = new Set<string>();
  for (const raw of origins) {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw validationError("allowedOrigins", `${raw} is not an origin (https://host)`);
    }
    if (url.protocol !== "https:" || url.origin !== raw.replace(/\/$/, "").toLowerCase()) {
      throw validationError("allowedOrigins", `${raw} is not an https origin (https://host, no path)`);
    }
    const host = url.hostname;
    if (!verifiedDomains.some((d) => host === d || host.endsWith(`.${d}`))) {
      throw validationError("allowedOrigins", `${host} is not on a verified domain of the organization`);
    }
    out.add(url.origin);
  }
  return [...out];
}
