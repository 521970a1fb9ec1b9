import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";

/**
 * Renders /v1/openapi.json with the real app and route handler. The only bindings the
 * anonymous GET touches are the rate limiter's; it is answered by a stand-in that allows.
 */
async function servedDocument(): Promise<unknown> {
  const limiter = {
    hit: async () => ({ allowed: true, retryAfterSeconds: 0, windows: [{ name: "minute", limit: 120, remaining: 119, resetAt: 0 }] }),
  };
  const env = { RATE_LIMITER: { idFromName: () => "ip", get: () => limiter }, DB: {} };
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
  });
});
