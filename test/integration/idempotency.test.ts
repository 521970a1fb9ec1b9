import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { now } from "../../src/lib/clock";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk, fetchWorker, unique } from "../helpers/api";
import { createApiKey, createOrganization, registerUser } from "../helpers/fixtures";

async function orgCountWithSlug(slug: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM organizations WHERE slug = ?").bind(slug).first<{ n: number }>();
  return row?.n ?? 0;
}

function createOrg(token: string, key: string, body: Record<string, unknown>) {
  return call("POST", "/v1/organizations", { token, body, headers: { "Idempotency-Key": key } });
}

describe("Idempotency-Key", () => {
  it("replays the first answer for the same key and body, and does nothing again", async () => {
    const user = await registerUser();
    const body = { name: "Once", slug: unique("idem") };
    const key = unique("key-");
    const first = await createOrg(user.token, key, body);
    const created = expectOk(first, 201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const again = await createOrg(user.token, key, body);
    expect(expectOk(again, 201).id).toBe(created.id);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await orgCountWithSlug(body.slug)).toBe(1);
  });

  it("replays the answer as written: one livemode, right after success", async () => {
    const user = await registerUser();
    const body = JSON.stringify({ name: "Once", slug: unique("idem") });
    const headers = { Authorization: `Bearer ${user.token}`, "Content-Type": "application/json", "Idempotency-Key": unique("key-") };
    const first = await fetchWorker("/v1/organizations", { method: "POST", headers, body });
    const again = await fetchWorker("/v1/organizations", { method: "POST", headers, body });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    const [firstText, againText] = [await first.text(), await again.text()];
    expect(againText).toBe(firstText);
    expect(againText.startsWith('{"success":true,"livemode":true,"data":')).toBe(true);
    expect(againText.match(/"livemode"/g)).toHaveLength(1);
  });

  it("answers 409 CONFLICT on Idempotency-Key for the same key with another body", async () => {
    const user = await registerUser();
    const key = unique("key-");
    expectOk(await createOrg(user.token, key, { name: "A", slug: unique("idem") }), 201);
    expectError(await createOrg(user.token, key, { name: "B", slug: unique("idem") }), 409, "CONFLICT", "Idempotency-Key");
  });

  it("creates one thing from five concurrent requests with one key", async () => {
    const user = await registerUser();
    const body = { name: "Concurrent", slug: unique("idem") };
    const key = unique("key-");
    const results = await Promise.all(Array.from({ length: 5 }, () => createOrg(user.token, key, body)));
    const ids = results.map((r) => expectOk(r, 201).id);
    expect(new Set(ids).size).toBe(1);
    expect(results.filter((r) => r.headers.get("Idempotent-Replayed") === "true")).toHaveLength(4);
    expect(await orgCountWithSlug(body.slug)).toBe(1);
  });

  it("replays a 4xx answer too", async () => {
    const user = await registerUser();
    const taken = await createOrganization(user);
    const key = unique("key-");
    const body = { name: "Clash", slug: taken.slug };
    const first = await createOrg(user.token, key, body);
    expectError(first, 409, "CONFLICT", "slug");
    const again = await createOrg(user.token, key, body);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
  });

  it("scopes keys to the credential: another user's identical request runs on its own", async () => {
    const a = await registerUser();
    const b = await registerUser();
    const key = unique("key-");
    const orgA = expectOk(await createOrg(a.token, key, { name: "A", slug: unique("idem") }), 201);
    const orgB = expectOk(await createOrg(b.token, key, { name: "B", slug: unique("idem") }), 201);
    expect(orgB.id).not.toBe(orgA.id);
    const apiKey = await createApiKey(a, orgA.id, ["admin"]);
    const path = `/v1/organizations/${orgA.id}/api-keys`;
    const viaKey = await call("POST", path, { apiKey: apiKey.key, body: { name: "k" }, headers: { "Idempotency-Key": key } });
    expect(viaKey.headers.get("Idempotent-Replayed")).toBeNull();
    expectOk(viaKey, 201);
  });

  it("keeps a key for 24 hours only", async () => {
    testClock.set("2026-03-02T10:00:00.000Z");
    const user = await registerUser();
    const org = await createOrganization(user);
    // An API key, because a session would expire during the wait.
    const admin = await createApiKey(user, org.id, ["admin"]);
    const key = unique("key-");
    const send = () =>
      call("POST", `/v1/organizations/${org.id}/api-keys`, {
        apiKey: admin.key,
        body: { name: "daily" },
        headers: { "Idempotency-Key": key },
      });
    const first = expectOk(await send(), 201);
    testClock.advance(23 * 3_600_000);
    const replayed = await send();
    expect(replayed.headers.get("Idempotent-Replayed")).toBe("true");
    expect(expectOk(replayed, 201).id).toBe(first.id);
    testClock.advance(3_600_000);
    const fresh = await send();
    expect(fresh.headers.get("Idempotent-Replayed")).toBeNull();
    expect(expectOk(fresh, 201).id).not.toBe(first.id);
  });

  it.each([
    ["an empty key", ""],
    ["a key over 255 characters", "k".repeat(256)],
    ["a key with a control character", "abc\tdef"],
  ])("refuses %s with 400 on Idempotency-Key", async (_label, key) => {
    const user = await registerUser();
    const res = await createOrg(user.token, key, { name: "x", slug: unique("idem") });
    expectError(res, 400, "VALIDATION_ERROR", "Idempotency-Key");
  });

  it("stores neither the key nor a replayable secret in clear", async () => {
    const user = await registerUser();
    const org = await createOrganization(user);
    const key = unique("secret-idem-");
    const send = () =>
      call("POST", `/v1/organizations/${org.id}/api-keys`, { token: user.token, body: { name: "k" }, headers: { "Idempotency-Key": key } });
    const created = expectOk(await send(), 201);
    const rows = await env.DB.prepare("SELECT * FROM idempotency_keys WHERE scope = ?").bind(`user:${user.id}`).all();
    const dump = JSON.stringify(rows.results);
    expect(rows.results).toHaveLength(1);
    expect(dump).not.toContain(created.key);
    expect(dump).not.toContain(key);
    expect(expectOk(await send(), 201).key).toBe(created.key);
  });

  it("ignores the header on other methods", async () => {
    const user = await registerUser();
    const org = await createOrganization(user);
    const res = await call("GET", `/v1/organizations/${org.id}`, { token: user.token, headers: { "Idempotency-Key": "x" } });
    expectOk(res);
    expect(res.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("forgets keys older than 24 h at the minute sweep, and only those", async () => {
    testClock.set("2026-03-02T10:00:00.000Z");
    const user = await registerUser();
    const org = await createOrganization(user);
    // An API key, because a session would expire during the wait.
    const admin = await createApiKey(user, org.id, ["admin"]);
    const send = (key: string) =>
      call("POST", `/v1/organizations/${org.id}/api-keys`, { apiKey: admin.key, body: { name: "k" }, headers: { "Idempotency-Key": key } });
    const stored = async () =>
      (
        await env.DB.prepare("SELECT created_at FROM idempotency_keys WHERE scope = ? ORDER BY created_at")
          .bind(`key:${admin.id}`)
          .all<{ created_at: number }>()
      ).results.map((r) => r.created_at);
    expectOk(await send(unique("key-")), 201);
    const oldAt = now();
    testClock.advance(23 * 3_600_000);
    expectOk(await send(unique("key-")), 201);
    const freshAt = now();
    expect(await stored()).toEqual([oldAt, freshAt]);
    testClock.advance(3_600_000 + 1);
    const ctx = createExecutionContext();
    await worker.scheduled!(createScheduledController({ scheduledTime: now(), cron: "* * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await stored()).toEqual([freshAt]);
  });
});
