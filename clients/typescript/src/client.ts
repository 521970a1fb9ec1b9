// A small typed client over fetch, driven by the generated `paths` (schema.d.ts, from
// openapi.json by openapi-typescript). Each call names an operation's path; its path
// parameters, query, body and answer are typed from the document. No dependencies: it needs
// only fetch and crypto.randomUUID (Node 20+, Workers, browsers, Deno, Bun).
import type { paths } from "../schema.js";
import { QueueApiError, isErrorEnvelope, type ErrorCode } from "./errors.js";
import type { Answer, Args, CursorPaths, Item, Method, Operation, PathsWith, RequestOptions } from "./types.js";

export interface ClientOptions {
  /** The service's origin, e.g. `https://api.example.com` (the paths carry `/v1`). */
  baseUrl: string;
  /** An API key (`qk_live_…`), sent as `X-API-Key`. */
  apiKey?: string;
  /** A user session token (`sess_…`), sent as `Authorization: Bearer`. */
  sessionToken?: string;
  /** Pins the answers' shapes to a dated version (`Queue-Version`). */
  queueVersion?: string;
  /**
   * How many times a call is sent again after a network error or a 502/503/504 (default 2).
   * GET, PUT, DELETE and POST are retried; a POST always carries an `Idempotency-Key`, the same
   * on every attempt, so the service does it once. PATCH is not retried.
   */
  retries?: number;
  /** The first retry's delay in ms, doubled each time (default 250); `Retry-After` wins when sent (capped at 30 s). */
  retryDelayMs?: number;
  /** Another fetch (a test double, a proxy agent). */
  fetch?: typeof fetch;
}

const RETRY_STATUSES = new Set([502, 503, 504]);
const MAX_RETRY_AFTER_MS = 30_000;

type Loose = {
  path?: Record<string, string | number> | undefined;
  query?: Record<string, unknown> | undefined;
  body?: unknown;
  idempotencyKey?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
};

export class QueueClient {
  private readonly options: ClientOptions;
  private readonly fetcher: typeof fetch;

  constructor(options: ClientOptions) {
    this.options = options;
    this.fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  }

  get<P extends PathsWith<"get">>(path: P, ...args: Args<Operation<P, "get">>): Promise<Answer<Operation<P, "get">>> {
    return this.request("get", path, ...(args as [never]));
  }
  post<P extends PathsWith<"post">>(path: P, ...args: Args<Operation<P, "post">>): Promise<Answer<Operation<P, "post">>> {
    return this.request("post", path, ...(args as [never]));
  }
  put<P extends PathsWith<"put">>(path: P, ...args: Args<Operation<P, "put">>): Promise<Answer<Operation<P, "put">>> {
    return this.request("put", path, ...(args as [never]));
  }
  patch<P extends PathsWith<"patch">>(path: P, ...args: Args<Operation<P, "patch">>): Promise<Answer<Operation<P, "patch">>> {
    return this.request("patch", path, ...(args as [never]));
  }
  delete<P extends PathsWith<"delete">>(path: P, ...args: Args<Operation<P, "delete">>): Promise<Answer<Operation<P, "delete">>> {
    return this.request("delete", path, ...(args as [never]));
  }

  /**
   * Every record of a list read by cursor, page after page (`startingAfter` = the last page's
   * `meta.nextCursor`, until `meta.hasMore` is false). `query.limit` sets the page size.
   */
  async *paginate<P extends CursorPaths>(
    path: P,
    ...args: Args<Operation<P, "get">>
  ): AsyncGenerator<Item<Operation<P, "get">>, void, undefined> {
    for await (const page of this.pages(path, ...args)) {
      const data = (page as unknown as { data: Item<Operation<P, "get">>[] }).data;
      yield* data;
    }
  }

  /** The pages themselves (each answer with its `data` and `meta`), for a list read by cursor. */
  async *pages<P extends CursorPaths>(
    path: P,
    ...args: Args<Operation<P, "get">>
  ): AsyncGenerator<Answer<Operation<P, "get">>, void, undefined> {
    const options = (args[0] ?? {}) as Loose;
    let cursor = options.query?.startingAfter as string | undefined;
    for (;;) {
      const query = cursor === undefined ? options.query : { ...options.query, startingAfter: cursor };
      const page = (await this.request("get", path, { ...options, query } as never)) as Answer<Operation<P, "get">>;
      yield page;
      const meta = (page as { meta?: { hasMore?: boolean; nextCursor?: string | null } }).meta;
      if (!meta?.hasMore || !meta.nextCursor || meta.nextCursor === cursor) return;
      cursor = meta.nextCursor;
    }
  }

  /** Any operation by method and path; `get`, `post`, … are this with the method named. */
  async request<M extends Method, P extends PathsWith<M>>(
    method: M,
    path: P,
    ...args: Args<Operation<P, M>>
  ): Promise<Answer<Operation<P, M>>> {
    const options = (args[0] ?? {}) as Loose & RequestOptions<unknown>;
    const url = this.url(String(path), options.path, options.query);
    const headers = new Headers(options.headers);
    headers.set("Accept", "application/json");
    if (this.options.apiKey) headers.set("X-API-Key", this.options.apiKey);
    if (this.options.sessionToken) headers.set("Authorization", `Bearer ${this.options.sessionToken}`);
    if (this.options.queueVersion) headers.set("Queue-Version", this.options.queueVersion);
    if (options.body !== undefined) headers.set("Content-Type", "application/json");
    if (method === "post") headers.set("Idempotency-Key", options.idempotencyKey ?? crypto.randomUUID());
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const retries = method === "patch" ? 0 : (this.options.retries ?? 2);
    const verb = method.toUpperCase();

    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetcher(url, { method: verb, headers, body, signal: options.signal });
      } catch (err) {
        if (attempt >= retries || options.signal?.aborted) throw err;
        await this.pause(attempt, null, options.signal);
        continue;
      }
      if (RETRY_STATUSES.has(res.status) && attempt < retries) {
        await res.body?.cancel();
        await this.pause(attempt, retryAfterSeconds(res), options.signal);
        continue;
      }
      return (await this.read(res, verb, url)) as Answer<Operation<P, M>>;
    }
  }

  private url(template: string, pathParams: Loose["path"], query: Loose["query"]): string {
    let path = template;
    for (const [name, value] of Object.entries(pathParams ?? {})) path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
    const url = new URL(path, this.options.baseUrl);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      url.searchParams.set(name, Array.isArray(value) ? value.join(",") : String(value));
    }
    return url.toString();
  }

  private async read(res: Response, method: string, url: string): Promise<unknown> {
    const text = await res.text();
    const json = /json/i.test(res.headers.get("Content-Type") ?? "") && text !== "" ? parseJson(text) : undefined;
    if (res.ok) return json ?? (text === "" ? undefined : text);
    const requestId = res.headers.get("X-Request-ID");
    if (isErrorEnvelope(json)) {
      const e = json.error;
      throw new QueueApiError({
        status: res.status,
        code: e.code as ErrorCode,
        message: e.message,
        details: e.details,
        docUrl: e.docUrl,
        requestId: e.requestId || requestId,
        retryAfterSeconds: retryAfterSeconds(res),
        method,
        url,
      });
    }
    throw new QueueApiError({
      status: res.status,
      code: "UNEXPECTED_RESPONSE",
      message: `${method} ${url} answered ${res.status} without the API's error envelope: ${text.slice(0, 200)}`,
      requestId,
      retryAfterSeconds: retryAfterSeconds(res),
      method,
      url,
    });
  }

  private pause(attempt: number, retryAfter: number | null, signal: AbortSignal | undefined): Promise<void> {
    const base = this.options.retryDelayMs ?? 250;
    const ms = retryAfter !== null ? Math.min(retryAfter * 1000, MAX_RETRY_AFTER_MS) : base * 2 ** attempt * (0.5 + Math.random() / 2);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener("abort", () => (clearTimeout(timer), reject(signal.reason)), { once: true });
    });
  }
}

function retryAfterSeconds(res: Response): number | null {
  const value = res.headers.get("Retry-After");
  if (value === null) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export type { paths };
