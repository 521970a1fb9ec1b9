import { Ajv2020 } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";

// Every example of the OpenAPI document checked with ajv (JSON Schema 2020-12, the dialect of
// OpenAPI 3.1), a second opinion on test/integration/openapi-examples.test.ts, whose own small
// validator runs in workerd where ajv (it compiles with `new Function`) cannot. ajv comes with
// @seriousme/openapi-schema-validator.

type Json = Record<string, any>;

async function servedDocument(): Promise<Json> {
  const limiter = {
    hit: async () => ({ allowed: true, retryAfterSeconds: 0, windows: [{ name: "minute", limit: 120, remaining: 119, resetAt: 0 }] }),
  };
  const env = { RATE_LIMITER: { idFromName: () => "ip", get: () => limiter }, DB: { withSession: () => ({ getBookmark: () => null }) } }; // the D1 sessions middleware opens one per request
  const res = await createApp().request("https://api.test/v1/openapi.json", {}, env);
  expect(res.status).toBe(200);
  return (await res.json()) as Json;
}

describe("the document's examples, checked by ajv", () => {
  it("every parameter, request and response example fits its schema", async () => {
    const doc = await servedDocument();
    const ajv = new Ajv2020({ strict: false, allErrors: true, inlineRefs: false });
    addFormats(ajv);
    // The components once, under the document's own id; each checked schema points into it.
    const base = "https://api.test/v1/openapi.json";
    ajv.addSchema({ $id: base, components: doc.components });
    const anchored = (schema: Json): Json => JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', `"$ref":"${base}#/`));
    const resolve = (node: Json): Json =>
      node?.$ref
        ? (node.$ref as string)
            .replace(/^#\//, "")
            .split("/")
            .reduce((n: Json, part) => n[part], doc)
        : node;
    const errors: string[] = [];
    const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
    let checked = 0;
    const check = (where: string, schema: Json | undefined, example: unknown) => {
      if (!schema || example === undefined) return;
      checked += 1;
      const text = JSON.stringify(schema);
      const validate = compiled.get(text) ?? ajv.compile(anchored(schema));
      compiled.set(text, validate);
      if (!validate(example)) errors.push(`${where}: ${ajv.errorsText(validate.errors)}`);
    };
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, op] of Object.entries<Json>(item)) {
        const key = `${method.toUpperCase()} ${path}`;
        for (const param of (op.parameters ?? []).map(resolve) as Json[])
          check(`${key} parameter ${param.name}`, param.schema, param.example);
        const body = op.requestBody?.content?.["application/json"];
        check(`${key} request`, body?.schema, body?.example);
        for (const [status, ref] of Object.entries<Json>(op.responses ?? {})) {
          const json = resolve(ref).content?.["application/json"];
          check(`${key} ${status}`, json?.schema, json?.example);
        }
      }
    }
    expect(errors).toEqual([]);
    expect(checked).toBeGreaterThan(200);
  }, 60_000);
});
