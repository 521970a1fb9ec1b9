// Types over the generated `paths` (schema.d.ts, written by openapi-typescript from openapi.json):
// which operations a method has, what each one takes (path, query, body) and what it answers.
import type { paths } from "../schema.js";

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** The paths that have an operation for this method. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: [NonNullable<paths[P][M]>] extends [never] ? never : P;
}[keyof paths];

export type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

type ParametersOf<O> = O extends { parameters: infer X } ? X : {};
type JsonOf<T> = T extends { content: { "application/json": infer B } } ? B : undefined;

/** The path parameters, e.g. `{ queueId: string }`; never when the path has none. */
export type PathParams<O> = ParametersOf<O> extends { path: infer X } ? X : never;
/** The query parameters, typed from the document (enums, numbers, booleans). */
export type QueryParams<O> = ParametersOf<O> extends { query?: infer Q } ? Q : never;
/** The JSON body, when the operation takes one. */
export type RequestBody<O> = O extends { requestBody?: infer R } ? JsonOf<NonNullable<R>> : never;

type SuccessStatus = 200 | 201 | 202 | 204;
/** The answer of a 2xx: the envelope `{ success: true, data, meta? }` (undefined for a 204). */
export type Answer<O> = O extends { responses: infer R } ? JsonOf<R[Extract<keyof R, SuccessStatus>]> : never;

type PathPart<O> = [PathParams<O>] extends [never] ? { path?: undefined } : { path: PathParams<O> };
type QueryPart<O> = [QueryParams<O>] extends [never]
  ? { query?: undefined }
  : ParametersOf<O> extends { query: object }
    ? { query: QueryParams<O> }
    : { query?: QueryParams<O> };
type BodyPart<O> = O extends { requestBody: object }
  ? { body: RequestBody<O> }
  : [RequestBody<O>] extends [never]
    ? { body?: undefined }
    : { body?: RequestBody<O> };

/** What every call may add. */
export interface CallOptions {
  /** For a POST: the `Idempotency-Key` (by default a random UUID per call, reused by its retries). */
  idempotencyKey?: string;
  /** Extra headers, e.g. `X-Request-ID`. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export type RequestOptions<O> = PathPart<O> & QueryPart<O> & BodyPart<O> & CallOptions;
/** The options argument, optional when the operation needs nothing. */
export type Args<O> = {} extends RequestOptions<O> ? [options?: RequestOptions<O>] : [options: RequestOptions<O>];

/** The GET lists read by cursor: `startingAfter` in, `meta.nextCursor` out. */
export type CursorPaths = {
  [P in PathsWith<"get">]: [QueryParams<Operation<P, "get">>] extends [never]
    ? never
    : QueryParams<Operation<P, "get">> extends { startingAfter?: string }
      ? Answer<Operation<P, "get">> extends { meta: { nextCursor: string | null } }
        ? P
        : never
      : never;
}[PathsWith<"get">];

/** One record of a list's `data`. */
export type Item<O> = Answer<O> extends { data: (infer T)[] } ? T : never;
