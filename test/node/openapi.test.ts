import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { unlistedOperations } from "../../src/http/openapi-document";

/**
 * Renders /v1/openapi.json with the real app and route handler. The only bindings the
 * anonymous GET touches are the rate limiter's; it is answered by a stand-in that allows.
 */
async function servedDocument(): Promise<unknown> {
  const limiter = {
    hit: async () => ({ allowed: true, retryAfterSeconds: 0, windows: [{ name: "minute", limit: 120, remaining: 119, resetAt: 0 }] }),
  };
  const env = { RATE_LIMITER: { idFromName: () => "ip", get: () => limiter }, DB: { withSession: () => ({ getBookmark: () => null }) } }; // the D1 sessions middleware opens one per request
  const res = await createApp().request("https://api.test/v1/openapi.json", {}, env);
  expect(res.status).toBe(200);
  return res.json();
}

describe("the OpenAPI document", () => {
  it("validates against the OpenAPI 3.1 schema", async () => {
    const validator = new Validator();
    const result = await validator.validate((await servedDocument()) as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    // 1.2 s on a quiet machine; it passed 5 s beside a loaded Workers half.
  }, 30_000);
});

describe("the operations table (src/http/operations.ts)", () => {
  it("names every operation of the document, with unique operation ids", async () => {
    const doc = (await servedDocument()) as { paths: Record<string, Record<string, { operationId?: string }>> };
    expect(unlistedOperations(doc)).toEqual([]);
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("declares every tag it uses and lists each route's own error codes", async () => {
    const doc = (await servedDocument()) as any;
    const used = new Set(Object.values(doc.paths).flatMap((item: any) => Object.values(item).flatMap((op: any) => op.tags ?? [])));
    expect([...used].every((t) => doc.tags.some((d: { name: string }) => d.name === t))).toBe(true);
    const callNext = doc.paths["/v1/queues/{queueId}/call-next"].post;
    const conflict = doc.components.responses[callNext.responses["409"].$ref.split("/").pop()];
    expect(conflict.content["application/json"].schema.properties.error.properties.code.enum).toEqual(
      expect.arrayContaining(["QUEUE_EMPTY", "QUEUE_CLOSED", "OPERATOR_UNAVAILABLE"]),
    );
    expect(callNext.parameters.map((p: any) => p.$ref ?? p.name)).toContain("#/components/parameters/IdempotencyKey");
    expect(doc.components.schemas.Ticket.type).toBe("object");
  });
});

describe("examples", () => {
  it("every JSON request body and success response carries a realistic example", async () => {
    const doc = (await servedDocument()) as any;
    const missing: string[] = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const body = op.requestBody?.content?.["application/json"];
        if (body && body.example === undefined) missing.push(`${method} ${path} request`);
        for (const [status, res] of Object.entries<any>(op.responses)) {
          const json = res.content?.["application/json"];
          if (Number(status) < 400 && json && json.example === undefined) missing.push(`${method} ${path} ${status}`);
        }
      }
    }
    expect(missing).toEqual([]);
    const called = doc.paths["/v1/queues/{queueId}/call-next"].post.responses["200"].content["application/json"].example.data;
    expect(called).toMatchObject({ status: "called", displayCode: "A-042", id: expect.stringMatching(/^tkt_/), counter: "Guichet 3" });
    expect(doc.paths["/v1/queues/{queueId}/call-next"].post.requestBody.content["application/json"].example).toEqual({
      serviceId: "svc_d3m0s3rv1c3000000000",
      counter: "Guichet 3",
      previousOutcome: "served",
    });
  });
});
