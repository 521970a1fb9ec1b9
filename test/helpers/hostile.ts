import { expect } from "vitest";
import { testClock } from "./clock";
import { type ApiResponse, call, expectOk } from "./api";
import { createApiKey, createCatalog, createOrganization, registerUser, setPlan } from "./fixtures";

// Every documented operation, read from /v1/openapi.json (so a new route is covered the day it
// is added), is sent hostile input: wrong types in every body field, extreme values, odd ids,
// garbage query strings, no credential. Whatever the input, the answer is a 4xx or 2xx in the
// envelope, never a 500.

type Operation = { method: string; path: string; bodyProperties: Record<string, { type?: string }> };

const WRONG_TYPE: Record<string, unknown> = {
  string: 12345,
  number: "twelve",
  integer: 1.5,
  boolean: "yes",
  array: { not: "an array" },
  object: ["not", "an", "object"],
};
const EXTREME: Record<string, unknown> = {
  string: "\u0000'\";--<script>".repeat(500),
  number: 1e308,
  integer: -9007199254740993,
  boolean: null,
  array: Array.from({ length: 500 }, (_, i) => i),
  object: { deep: { deeper: { deepest: [{}] } } },
};
const ODD_IDS = ["%27%3B--", "x".repeat(300), "tkt_00000000000000000000", "..%2F..%2Fetc", "%F0%9F%92%A5"];
const GARBAGE_QUERY =
  "?limit=-5&page=abc&offset=1e99&status=%E2%9C%93&startDate=nope&endDate=2026-13-45&format=gif&size=99999&token=&latitude=NaN&radiusKm=-1";

function operationsOf(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const schema = op.requestBody?.content?.["application/json"]?.schema;
      const resolved = schema?.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema;
      ops.push({ method: method.toUpperCase(), path, bodyProperties: resolved?.properties ?? {} });
    }
  }
  // Deletions last, so the other operations still find the fixture's records.
  return ops.sort((a, b) => Number(a.method === "DELETE") - Number(b.method === "DELETE"));
}

function bodyWith(op: Operation, values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(op.bodyProperties).map(([name, prop]) => [name, values[prop.type ?? "string"] ?? values.string]),
  );
}

function expectHandled(res: ApiResponse, what: string): void {
  expect(res.status, `${what} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`).toBeLessThan(500);
  const json = (res.headers.get("Content-Type") ?? "").includes("application/json");
  if (res.status >= 400 || json) {
    expect(typeof res.body?.success, `${what}: not in the envelope`).toBe("boolean");
    expect(JSON.stringify(res.body), what).not.toMatch(/\bat \w+ \(|\.ts:\d+/);
  }
}

/**
 * Runs the hostile inputs on every `count`-th documented operation starting at `shard`: the
 * operations are split over a few test files so each runs in its own storage and in parallel.
 */
export async function hostileShard(shard: number, count: number): Promise<void> {
  {
    testClock.set("2026-10-05T08:00:00.000Z");
    const owner = await registerUser();
    const org = await createOrganization(owner);
    await setPlan(org.id, "pro");
    const catalog = await createCatalog(owner, org.id);
    const key = await createApiKey(owner, org.id, ["admin"]);
    const ticket = expectOk(await call("POST", `/v1/queues/${catalog.queueId}/operator-join`, { token: owner.token }), 201);
    const ids: Record<string, string> = {
      organizationId: org.id,
      locationId: catalog.locationId,
      serviceId: catalog.serviceId,
      queueId: catalog.queueId,
      ticketId: ticket.id,
      userId: owner.id,
      keyId: key.id,
    };
    const doc = (await call("GET", "/v1/openapi.json")).body;
    const all = operationsOf(doc);
    expect(all.length).toBeGreaterThan(60);
    const operations = all.filter((_op, i) => i % count === shard);

    for (const op of operations) {
      // A fresh rate-limit window per operation: the point is to reach the handlers.
      testClock.advance(61_000);
      const real = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => ids[name] ?? "zzz_unknown");
      const hasBody = op.method !== "GET" && op.method !== "DELETE";
      const tries: [string, Promise<ApiResponse>][] = [
        ["wrong types", call(op.method, real, { token: owner.token, body: hasBody ? bodyWith(op, WRONG_TYPE) : undefined })],
        ["extremes", call(op.method, real, { token: owner.token, body: hasBody ? bodyWith(op, EXTREME) : undefined })],
        ["garbage query", call(op.method, real + GARBAGE_QUERY, { apiKey: key.key, body: hasBody ? {} : undefined })],
        ["no credential", call(op.method, real, { body: hasBody ? {} : undefined })],
        ...ODD_IDS.map((odd): [string, Promise<ApiResponse>] => [
          `id ${odd.slice(0, 20)}`,
          call(op.method, op.path.replace(/\{(\w+)\}/g, odd), { token: owner.token, body: hasBody ? [] : undefined }),
        ]),
      ];
      for (const [label, pending] of tries) expectHandled(await pending, `${op.method} ${op.path} (${label})`);
    }
  }
}
