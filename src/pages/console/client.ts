// The console's typed door to the API: a path of the generated client (`paths`,
// clients/typescript/schema.d.ts) decides the request's body and the answer's type; the caller
// names only the path and its parameters. Built on the pages' one fetch (../shared/api.ts).
import type { paths } from "../../../clients/typescript/schema";
import { api } from "../shared/api";

type Method = "get" | "post" | "delete" | "patch" | "put";
type PathsWith<M extends Method> = { [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never }[keyof paths];
type Op<P extends keyof paths, M extends Method> = paths[P][M];
type Json<R> = R extends { content: { "application/json": infer J } } ? J : never;
type Success<O> = O extends { responses: infer R } ? (Json<R[keyof R & (200 | 201 | 202)]> extends { data: infer D } ? D : never) : never;
type BodyOf<O> = O extends { requestBody: { content: { "application/json": infer B } } }
  ? B
  : O extends { requestBody?: { content: { "application/json": infer B } } }
    ? B | undefined
    : undefined;
type ParamsOf<O> = O extends { parameters: { path: infer A } } ? A : Record<string, never>;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? Q : never;

/** A path's answer (`data` of its 2xx envelope). */
export type Answer<P extends keyof paths, M extends Method = "get"> = Success<Op<P, M>>;

function fill(path: string, params: Record<string, string>, query?: Record<string, unknown>): string {
  let out = path.replace(/^\/v1/, "").replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
  const q = Object.entries(query ?? {}).filter(([, v]) => v !== undefined && v !== null);
  if (q.length > 0) out += `?${new URLSearchParams(q.map(([k, v]) => [k, String(v)])).toString()}`;
  return out;
}

export function get<P extends PathsWith<"get">>(
  path: P,
  params: ParamsOf<Op<P, "get">>,
  query?: QueryOf<Op<P, "get">>,
): Promise<Answer<P, "get">> {
  return api<Answer<P, "get">>("GET", fill(path, params as Record<string, string>, query as Record<string, unknown>));
}

export function post<P extends PathsWith<"post">>(
  path: P,
  params: ParamsOf<Op<P, "post">>,
  body?: BodyOf<Op<P, "post">>,
): Promise<Answer<P, "post">> {
  return api<Answer<P, "post">>("POST", fill(path, params as Record<string, string>), body === undefined ? {} : { body });
}

export function del<P extends PathsWith<"delete">>(path: P, params: ParamsOf<Op<P, "delete">>): Promise<Answer<P, "delete">> {
  return api<Answer<P, "delete">>("DELETE", fill(path, params as Record<string, string>));
}

export function patch<P extends PathsWith<"patch">>(
  path: P,
  params: ParamsOf<Op<P, "patch">>,
  body: BodyOf<Op<P, "patch">>,
): Promise<Answer<P, "patch">> {
  return api<Answer<P, "patch">>("PATCH", fill(path, params as Record<string, string>), { body });
}
