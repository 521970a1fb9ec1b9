// A small typed client over fetch, driven by the generated `paths` (schema.d.ts, from
// openapi.json by openapi-typescript). Each call names an operation's path and method; the
// body, the path parameters and the answer are typed from the document.
import type { paths } from "./schema";

type Method = "get" | "post" | "patch" | "delete";
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type JsonOf<T> = T extends { content: { "application/json": infer B } } ? B : never;
type BodyOf<O> = O extends { requestBody?: infer R } ? JsonOf<NonNullable<R>> : never;
type PathParamsOf<O> = O extends { parameters: { path: infer P } } ? P : Record<string, never>;
type Success<O> = O extends { responses: infer R } ? JsonOf<R[Extract<keyof R, 200 | 201>]> : never;
type Failure = { success: false; error: { code: string; message: string; details: Record<string, unknown>; requestId: string } };

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
}

export class QueueClient {
  constructor(private readonly options: ClientOptions) {}

  async request<P extends keyof paths, M extends Method>(
    method: M,
    path: P,
    params: PathParamsOf<Operation<P, M>>,
    body?: BodyOf<Operation<P, M>>,
  ): Promise<Success<Operation<P, M>>> {
    let url = String(path);
    for (const [name, value] of Object.entries(params)) url = url.replace(`{${name}}`, encodeURIComponent(String(value)));
    const headers: Record<string, string> = { "X-API-Key": this.options.apiKey };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(new URL(url, this.options.baseUrl), {
      method: method.toUpperCase(),
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer: Success<Operation<P, M>> | Failure = await res.json();
    if (isFailure(answer)) throw new Error(`${answer.error.code}: ${answer.error.message} (request ${answer.error.requestId})`);
    return answer;
  }
}

function isFailure(answer: unknown): answer is Failure {
  return typeof answer === "object" && answer !== null && "success" in answer && answer.success === false;
}
