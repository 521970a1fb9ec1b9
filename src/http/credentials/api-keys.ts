import { eq, sql, type SQLWrapper } from "drizzle-orm";
import type { Database } from "../../db/client";
import { preparedRead } from "../../db/prepared";
import { apiKeys, subscriptions } from "../../db/schema";
import { constantTimeEqual, sha256Hex } from "../../lib/crypto";
import { credentialForm, MAC_HEX_LENGTH, signCredential, type CredentialForm } from "../../lib/credentials";
import { isTwinOrganizationId, randomString } from "../../lib/ids";

export const KEY_PREFIX = "qk_live_";
/** A key of an organization's test-mode twin (docs/test-mode.md): the same length as `qk_live_`. */
export const TEST_KEY_PREFIX = "qk_test_";
const PREFIX_LENGTH = KEY_PREFIX.length;
const LOOKUP_LENGTH = 8;
const SECRET_LENGTH = 32;
/** Keys issued before they were signed: judged by a lookup only (listed as `legacy`); all were live keys. */
const LEGACY_KEY = new RegExp(`^${KEY_PREFIX}[0-9a-z]{${LOOKUP_LENGTH + SECRET_LENGTH}}$`);
/** `qk_live_` or `qk_test_` + lookup handle + secret + the MAC of all three (src/lib/credentials.ts). */
const SIGNED_KEY = new RegExp(`^qk_(?:live|test)_[0-9a-z]{${LOOKUP_LENGTH + SECRET_LENGTH}}[0-9a-f]{${MAC_HEX_LENGTH}}$`);

/**
 * A key's prefix says its mode, but only for the reader: the key row's organization decides
 * where it works (a twin's key can only ever reach the twin), and the MAC covers the prefix.
 */
export function keyPrefixOf(organizationId: string): string {
  return isTwinOrganizationId(organizationId) ? TEST_KEY_PREFIX : KEY_PREFIX;
}

export function apiKeyForm(env: Parameters<typeof credentialForm>[0], value: string): Promise<CredentialForm> {
  return credentialForm(env, value, { signed: SIGNED_KEY, legacy: LEGACY_KEY });
}

export async function mintApiKey(
  env: Parameters<typeof signCredential>[0],
  organizationId: string,
): Promise<{ value: string; lookupPrefix: string; last4: string }> {
  const lookupPrefix = randomString(LOOKUP_LENGTH);
  const value = await signCredential(env, `${keyPrefixOf(organizationId)}${lookupPrefix}${randomString(SECRET_LENGTH)}`);
  return { value, lookupPrefix, last4: value.slice(-4) };
}

export function maskApiKey(organizationId: string, lookupPrefix: string, last4: string): string {
  return `${keyPrefixOf(organizationId)}${lookupPrefix}…${last4}`;
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(KEY_PREFIX) || value.startsWith(TEST_KEY_PREFIX);
}

export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type SubscriptionRow = typeof subscriptions.$inferSelect;

/** The key's lookup prefix, or null when the value cannot be one of our keys (no lookup then). */
export function apiKeyLookupPrefix(value: string): string | null {
  return LEGACY_KEY.test(value) || SIGNED_KEY.test(value) ? value.slice(PREFIX_LENGTH, PREFIX_LENGTH + LOOKUP_LENGTH) : null;
}

// One table per statement, so they go in one `db.batch` with others (see sessionQuery).

/** The key with this lookup prefix. */
export function apiKeyQuery(db: Database, lookupPrefix: string | SQLWrapper) {
  return db.select().from(apiKeys).where(eq(apiKeys.lookupPrefix, lookupPrefix)).limit(1);
}

/** The subscription of the organization of the key with this lookup prefix (the rate limit depends on it). */
export function apiKeySubscriptionQuery(db: Database, lookupPrefix: string | SQLWrapper) {
  return db
    .select()
    .from(subscriptions)
    .where(
      eq(
        subscriptions.organizationId,
        sql`(SELECT ${apiKeys.organizationId} FROM ${apiKeys} WHERE ${apiKeys.lookupPrefix} = ${lookupPrefix})`,
      ),
    )
    .limit(1);
}

/** The same two reads, prepared once per binding (the credential lookup, src/http/auth.ts). */
export const apiKeyRead = preparedRead(["lookupPrefix"], (db, p) => apiKeyQuery(db, p.lookupPrefix).prepare());
export const apiKeySubscriptionRead = preparedRead(["lookupPrefix"], (db, p) => apiKeySubscriptionQuery(db, p.lookupPrefix).prepare());

export type FoundApiKey = { key: ApiKeyRow; subscription: SubscriptionRow | null };

/** The key found by `apiKeyQuery`, if the whole key's hash matches (compared in constant time). */
export async function apiKeyOf(
  key: ApiKeyRow | undefined,
  subscription: SubscriptionRow | undefined,
  value: string,
): Promise<FoundApiKey | null> {
  if (!key) return null;
  return constantTimeEqual(await sha256Hex(value), key.keyHash) ? { key, subscription: subscription ?? null } : null;
}

/** Finds the key by its lookup prefix, then compares the whole key's hash in constant time. */
export async function findApiKey(db: Database, value: string): Promise<FoundApiKey | null> {
  const lookupPrefix = apiKeyLookupPrefix(value);
  if (lookupPrefix === null) return null;
  const [[key], [subscription]] = await db.batch([apiKeyQuery(db, lookupPrefix), apiKeySubscriptionQuery(db, lookupPrefix)]);
  return apiKeyOf(key, subscription, value);
}
