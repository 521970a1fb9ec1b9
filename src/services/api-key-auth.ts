import { eq } from "drizzle-orm";
import type { Database } from "../db/client";
import { apiKeys, subscriptions } from "../db/schema";
import { constantTimeEqual, sha256Hex } from "../lib/crypto";
import { randomString } from "../lib/ids";

export const KEY_PREFIX = "qk_live_";
const LOOKUP_LENGTH = 8;
const SECRET_LENGTH = 32;
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9a-z]{${LOOKUP_LENGTH + SECRET_LENGTH}}$`);

export function mintApiKey(): { value: string; lookupPrefix: string; last4: string } {
  const lookupPrefix = randomString(LOOKUP_LENGTH);
  const value = `${KEY_PREFIX}${lookupPrefix}${randomString(SECRET_LENGTH)}`;
  return { value, lookupPrefix, last4: value.slice(-4) };
}

export function maskApiKey(lookupPrefix: string, last4: string): string {
  return `${KEY_PREFIX}${lookupPrefix}…${last4}`;
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(KEY_PREFIX);
}

export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type SubscriptionRow = typeof subscriptions.$inferSelect;

/**
 * Finds the key by its lookup prefix, then compares the whole key's hash in constant time.
 * The organization's subscription comes in the same read: the rate limit depends on it.
 */
export async function findApiKey(db: Database, value: string): Promise<{ key: ApiKeyRow; subscription: SubscriptionRow | null } | null> {
  if (!KEY_PATTERN.test(value)) return null;
  const row = await db
    .select({ key: apiKeys, subscription: subscriptions })
    .from(apiKeys)
    .leftJoin(subscriptions, eq(subscriptions.organizationId, apiKeys.organizationId))
    .where(eq(apiKeys.lookupPrefix, value.slice(KEY_PREFIX.length, KEY_PREFIX.length + LOOKUP_LENGTH)))
    .get();
  if (!row) return null;
  return constantTimeEqual(await sha256Hex(value), row.key.keyHash) ? row : null;
}
