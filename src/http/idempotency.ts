import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { and, eq, lte, or } from "drizzle-orm";
import { database, type Database } from "../db/client";
import { idempotencyKeys } from "../db/schema";
import { now } from "../lib/clock";
import { sha256Hex } from "../lib/crypto";
import { DAY, MINUTE } from "../lib/time";
import type { AppEnv } from "./context";
import { ApiError, validationError } from "./errors";
import { clientIp } from "./rate-limit";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const IDEMPOTENCY_TTL_MS = DAY;
/** A claim older than this is taken to belong to a request that died mid-way. */
const ABANDONED_AFTER_MS = MINUTE;
const POLL_INTERVAL_MS = 100;
const POLL_ATTEMPTS = 50;
const KEY_PATTERN = /^[\x20-\x7E]{1,255}$/;

type Row = typeof idempotencyKeys.$inferSelect;

/**
 * Keys are per credential: two callers may use the same key without seeing each other. A
 * widget (publishable) key is no one caller: every visitor of the page that embeds it holds
 * it, so its scope is also the visitor's address and the request itself (issue 26). Another
 * visitor reusing a key then runs their own request instead of receiving someone's ticket
 * and token; the same visitor's retry (same address, key and body) still replays.
 */
function scopeOf(c: Context<AppEnv>, requestHash: string): string {
  const p = c.get("principal");
  if (p.kind === "apiKey" && p.widgetOnly) return `key:${p.keyId}:ip:${clientIp(c)}:req:${requestHash}`;
  if (p.kind === "apiKey") return `key:${p.keyId}`;
  if (p.kind === "session") return `user:${p.user.id}`;
  return `ip:${clientIp(c)}`;
}

/**
 * Kept answers can hold secrets (a new API key, a session token), so they are stored
 * encrypted under a key derived from the caller's Idempotency-Key, which itself is stored
 * only as a hash: the table alone reveals neither.
 */
async function answerKey(scope: string, key: string): Promise<CryptoKey> {
  const material = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`idempotency-answer\n${scope}\n${key}`));
  return crypto.subtle.importKey("raw", material, "AES-GCM", false, ["encrypt", "decrypt"]);
}

async function seal(secret: CryptoKey, text: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, secret, new TextEncoder().encode(text)));
  const joined = new Uint8Array(iv.byteLength + sealed.byteLength);
  joined.set(iv);
  joined.set(sealed, iv.byteLength);
  let binary = "";
  for (const byte of joined) binary += String.fromCharCode(byte);
  return btoa(binary);
}

async function open(secret: CryptoKey, stored: string): Promise<string> {
  const joined = Uint8Array.from(atob(stored), (ch) => ch.charCodeAt(0));
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: joined.slice(0, 12) }, secret, joined.slice(12));
  return new TextDecoder().decode(plain);
}

/** Salted with the Idempotency-Key, so a stored hash cannot be used to guess a body (a password). */
async function requestHash(c: Context<AppEnv>, key: string): Promise<string> {
  const url = new URL(c.req.url);
  return sha256Hex(`${key}\n${c.req.method}\n${url.pathname}${url.search}\n${await c.req.text()}`);
}

/** Inserts the claim, or takes over an expired or abandoned one; true when this request owns the key. */
async function claim(db: Database, scope: string, key: string, hash: string, at: number): Promise<boolean> {
  const result = await db
    .insert(idempotencyKeys)
    .values({ scope, key, requestHash: hash, state: "in_progress", createdAt: at, expiresAt: at + IDEMPOTENCY_TTL_MS })
    .onConflictDoUpdate({
      target: [idempotencyKeys.scope, idempotencyKeys.key],
      set: {
        requestHash: hash,
        state: "in_progress",
        responseStatus: null,
        responseBody: null,
        createdAt: at,
        expiresAt: at + IDEMPOTENCY_TTL_MS,
      },
      setWhere: or(
        lte(idempotencyKeys.expiresAt, at),
        and(eq(idempotencyKeys.state, "in_progress"), lte(idempotencyKeys.createdAt, at - ABANDONED_AFTER_MS)),
      ),
    })
    .run();
  return result.meta.changes === 1;
}

function find(db: Database, scope: string, key: string): Promise<Row | undefined> {
  return db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)))
    .get();
}

async function replay(c: Context<AppEnv>, row: Row, secret: CryptoKey): Promise<Response> {
  const body = row.responseBody === null ? "" : await open(secret, row.responseBody);
  return c.newResponse(body, row.responseStatus as ContentfulStatusCode, {
    "Content-Type": "application/json; charset=UTF-8",
    "Idempotent-Replayed": "true",
  });
}

function keyMismatch(): ApiError {
  return new ApiError("CONFLICT", "This Idempotency-Key was already used with a different request", {
    field: IDEMPOTENCY_HEADER,
    reason: "reused with a different request",
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `Idempotency-Key` on a POST (CONTRACT §1): the first request with a key runs and its answer
 * is kept for 24 h; the same key with the same request replays that answer without running
 * anything again, and with a different request is a 409. The claim is one conditional
 * INSERT, so of concurrent requests with one key exactly one runs; the others wait for its
 * answer (up to ~5 s) and replay it. Server faults (5xx) are not kept, so a retry runs again.
 */
export const idempotency = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "POST") return next();
  const key = c.req.header(IDEMPOTENCY_HEADER);
  if (key === undefined) return next();
  if (!KEY_PATTERN.test(key)) throw validationError(IDEMPOTENCY_HEADER, "must be 1 to 255 printable ASCII characters");

  const db = database(c.env.DB);
  const storedKey = await sha256Hex(key);
  const hash = await requestHash(c, key);
  const scope = scopeOf(c, hash);
  const secret = await answerKey(scope, key);

  for (let attempt = 0; attempt <= POLL_ATTEMPTS; attempt++) {
    if (await claim(db, scope, storedKey, hash, now())) {
      await next();
      await settle(db, scope, storedKey, c.res, secret);
      return;
    }
    const row = await find(db, scope, storedKey);
    if (row && row.requestHash !== hash) throw keyMismatch();
    if (row?.state === "done") return replay(c, row, secret);
    if (attempt < POLL_ATTEMPTS) await sleep(POLL_INTERVAL_MS);
  }
  throw new ApiError("CONFLICT", "A request with this Idempotency-Key is still in progress; retry shortly", {
    field: IDEMPOTENCY_HEADER,
    reason: "in progress",
  });
});

/** Keeps a 2xx/4xx answer for replay; a 5xx releases the key so the caller can retry. */
async function settle(db: Database, scope: string, key: string, res: Response, secret: CryptoKey): Promise<void> {
  const where = and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key));
  if (res.status >= 500) {
    await db.delete(idempotencyKeys).where(where).run();
    return;
  }
  const body = await seal(secret, await res.clone().text());
  await db
    .update(idempotencyKeys)
    .set({ state: "done", responseStatus: res.status, responseBody: body })
    .where(and(where, eq(idempotencyKeys.state, "in_progress")))
    .run();
}
