import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEMO_API_VERSION } from "../../scripts/seed.mjs";
import { API_VERSIONS, CURRENT_API_VERSION } from "../../src/domain/api-versions";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, queueFixture, walkIn } from "../helpers/fixtures";

// Dated versions (issue #32): a key answers in the version current at its creation, a request
// may name another in Queue-Version, every answer echoes the version used, and an older
// version gets the older shape of what changed (the ticket list's meta, 2026-11-26).

describe("Queue-Version", () => {
  it("the demo keys npm run dev seeds answer in the current version", () => {
    expect(DEMO_API_VERSION).toBe(CURRENT_API_VERSION);
  });

  it("a new key is pinned to the current version; a key from before versions answers in 2026-11-01 with the old list meta", async () => {
    const f = await queueFixture("pro");
    const tickets = [await walkIn(f.owner, f.queueId), await walkIn(f.owner, f.queueId)];
    const { key: fresh } = await createApiKey(f.owner, f.organizationId, ["read"]);
    const { key: old, id: oldId } = await createApiKey(f.owner, f.organizationId, ["read"]);
    await env.DB.prepare("UPDATE api_keys SET api_version = NULL WHERE id = ?").bind(oldId).run(); // made before versions
    const path = `/v1/queues/${f.queueId}/tickets?limit=1`;

    const current = await call("GET", path, { apiKey: fresh });
    expect(current.headers.get("queue-version")).toBe(CURRENT_API_VERSION);
    expect(current.body.meta).toEqual({ total: 2, page: 1, limit: 1, hasMore: true, nextCursor: tickets[0]!.id, previousCursor: null });

    const pinned = await call("GET", path, { apiKey: old });
    expect(pinned.headers.get("queue-version")).toBe("2026-11-01");
    expect(pinned.body.meta).toEqual({ total: 2, page: 1, limit: 1, hasMore: true });
    expect(pinned.body.data.map((t: { id: string }) => t.id)).toEqual([tickets[0]!.id]);

    // A cursor read in the old version keeps an integer page.
    const cursorRead = await call("GET", `${path}&startingAfter=${tickets[0]!.id}`, { apiKey: old });
    expect(cursorRead.body.meta).toEqual({ total: 2, page: 1, limit: 1, hasMore: false });

    // The header wins over the pin, both ways.
    const upgraded = await call("GET", path, { apiKey: old, headers: { "Queue-Version": CURRENT_API_VERSION } });
    expect(upgraded.headers.get("queue-version")).toBe(CURRENT_API_VERSION);
    expect(upgraded.body.meta.nextCursor).toBe(tickets[0]!.id);
    const downgraded = await call("GET", path, { apiKey: fresh, headers: { "Queue-Version": "2026-11-01" } });
    expect(downgraded.body.meta).toEqual({ total: 2, page: 1, limit: 1, hasMore: true });
  });

  it("an unknown version is a 400 naming the header and listing the versions; a session follows the current version; errors echo it too", async () => {
    const f = await queueFixture("pro");
    const bad = await call("GET", `/v1/queues/${f.queueId}/tickets`, { token: f.owner.token, headers: { "Queue-Version": "2025-01-01" } });
    expectError(bad, 400, "VALIDATION_ERROR", "Queue-Version");
    expect(bad.body.error.details.versions).toEqual([...API_VERSIONS]);
    const session = await call("GET", `/v1/queues/${f.queueId}/tickets`, { token: f.owner.token });
    expect(session.headers.get("queue-version")).toBe(CURRENT_API_VERSION);
    const missing = await call("GET", `/v1/queues/que_nothing000000000000/tickets`, {
      token: f.owner.token,
      headers: { "Queue-Version": "2026-11-01" },
    });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("queue-version")).toBe("2026-11-01");
    expectOk(await call("GET", "/v1/errors/QUEUE_EMPTY", { headers: { "Queue-Version": "2026-11-01" } }));
  });
});
