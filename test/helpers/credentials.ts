import { env } from "cloudflare:test";
import { callSettledIn, type ApiResponse, type CallOptions } from "./api";

// Credentials of the unsigned formats issued before keys and tokens carried a MAC (written
// straight into D1, as an older deployment left them), and a meter of the bindings a request
// reaches: D1 statements and Durable Object stubs (src/lib/credentials.ts, CONTRACT §10).

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

function randomBody(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return [...bytes].map((b) => ALPHABET[b & 31]).join("");
}

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** An API key of the format minted before signatures (`qk_live_` + 40 characters), stored as it was. */
export async function insertLegacyApiKey(organizationId: string, permissions: string[] = ["admin"]): Promise<{ id: string; key: string }> {
  const body = randomBody(40);
  const key = `qk_live_${body}`;
  const id = `key_${randomBody(20)}`;
  await env.DB.prepare(
    "INSERT INTO api_keys (id, organization_id, name, lookup_prefix, key_hash, last4, permissions, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  )
    .bind(id, organizationId, "Legacy key", body.slice(0, 8), await sha256Hex(key), key.slice(-4), JSON.stringify(permissions), Date.now())
    .run();
  return { id, key };
}

/** A session token of the format issued before signatures (`sess_` + 40 characters), live for a day. */
export async function insertLegacySession(userId: string, at = Date.now()): Promise<string> {
  const token = `sess_${randomBody(40)}`;
  await env.DB.prepare(
    "INSERT INTO sessions (token_hash, user_id, created_at, last_seen_at, expires_at, absolute_expires_at) VALUES (?, ?, ?, ?, ?, ?)",
  )
    .bind(await sha256Hex(token), userId, at, at, at + 86_400_000, at + 30 * 86_400_000)
    .run();
  return token;
}

/** `body` + its MAC under `secret` (by default the tests' TOKEN_SECRET), as src/lib/credentials.ts signs. */
export async function signedWith(body: string, secret = env.TOKEN_SECRET!): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)));
  return (
    body +
    [...mac]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("")
      .slice(0, 32)
  );
}

/**
 * A live session token of the signed format issued until issue 43 (`sess_` + 40 characters + MAC,
 * no user id): judged by the D1 lookup, as before, so no one is signed out by the new format.
 */
export async function insertPreviousFormatSession(userId: string, body = `sess_${randomBody(40)}`, at = Date.now()): Promise<string> {
  const token = await signedWith(body);
  await env.DB.prepare(
    "INSERT INTO sessions (token_hash, user_id, created_at, last_seen_at, expires_at, absolute_expires_at) VALUES (?, ?, ?, ?, ?, ?)",
  )
    .bind(await sha256Hex(token), userId, at, at, at + 86_400_000, at + 30 * 86_400_000)
    .run();
  return token;
}

/** A well-shaped credential whose MAC is wrong: what a guesser can make. */
export function forgedApiKey(): string {
  return `qk_live_${randomBody(40)}${"0".repeat(32)}`;
}
export function forgedSessionToken(): string {
  return `sess_${randomBody(40)}${"f".repeat(32)}`;
}
/**
 * `value` with its last `count` characters replaced by others of the same alphabet, each one
 * different from the one it replaces (a fixed substitute matches the original 1 time in 16).
 */
export function alterTail(value: string, count = 1): string {
  const tail = [...value.slice(-count)].map((c) => (c === "0" ? "1" : "0")).join("");
  return `${value.slice(0, -count)}${tail}`;
}
/** Unsigned shapes: only a lookup can judge them. */
export function legacyShapedApiKey(): string {
  return `qk_live_${randomBody(40)}`;
}
export function legacyShapedSessionToken(): string {
  return `sess_${randomBody(40)}`;
}

export interface BindingCount {
  d1: number;
  /** Durable Object stubs of every class (rooms, rate limiters, ledgers). */
  objects: number;
  /** Of which rooms and ledgers: what a ticket token's lookup would reach. */
  rooms: number;
}

/** `target` whose `methods` call `count` first; every other member is the target's own. */
function counting<T extends object>(target: T, methods: string[], count: () => void): T {
  return new Proxy(target, {
    get(t, name) {
      const value = Reflect.get(t, name, t);
      if (typeof value !== "function") return value;
      const bound = value.bind(t);
      return methods.includes(String(name))
        ? (...args: unknown[]) => {
            count();
            return bound(...args);
          }
        : bound;
    },
  });
}

/**
 * A copy of the Worker's bindings that counts the D1 statements and Durable Object stubs taken
 * through it, and a `call` answered with it (settled: the request's own background work counts
 * too). Only the requests sent through `call` are metered: what another request or a room does
 * meanwhile in the same isolate is not (a global spy counted a previous request's late write).
 */
export function meterBindings(): {
  count: BindingCount;
  reset: () => void;
  call: <T = any>(method: string, path: string, opts?: CallOptions) => Promise<ApiResponse<T>>;
} {
  const count: BindingCount = { d1: 0, objects: 0, rooms: 0 };
  const metered = {
    ...env,
    DB: counting(env.DB, ["prepare", "batch", "exec"], () => (count.d1 += 1)),
    RATE_LIMITER: counting(env.RATE_LIMITER, ["get", "getByName"], () => (count.objects += 1)),
    QUEUE_ROOM: counting(env.QUEUE_ROOM, ["get", "getByName"], () => ((count.objects += 1), (count.rooms += 1))),
    ORG_LEDGER: counting(env.ORG_LEDGER, ["get", "getByName"], () => ((count.objects += 1), (count.rooms += 1))),
  } as typeof env;
  return {
    count,
    reset: () => Object.assign(count, { d1: 0, objects: 0, rooms: 0 }),
    call: (method, path, opts) => callSettledIn(metered, method, path, opts),
  };
}
