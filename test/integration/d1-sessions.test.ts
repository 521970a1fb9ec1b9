import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { addMember, queueFixture, registerUser } from "../helpers/fixtures";

// Issue 43: reads that stay on D1 go through D1's Sessions API, and the bookmark travels back to
// the client (`X-D1-Bookmark`) so its next request sees its own writes (docs/hot-path.md).

const BOOKMARK = /^[0-9a-f]+(-[0-9a-f]+)*$/i;

describe("X-D1-Bookmark", () => {
  it("a write answers its bookmark; a listing sent with it sees the write and answers a bookmark no older", async () => {
    const f = await queueFixture("pro");
    const created = await call("POST", "/v1/locations", {
      token: f.owner.token,
      body: { organizationId: f.organizationId, name: "Annex", address: "2 rue", latitude: 48.86, longitude: 2.36 },
    });
    const location = expectOk(created, 201);
    const written = created.headers.get("X-D1-Bookmark");
    expect(written).toMatch(BOOKMARK);

    const listed = await call("GET", "/v1/business/locations", {
      token: f.owner.token,
      headers: { "X-Organization-Id": f.organizationId, "X-D1-Bookmark": written! },
    });
    expect(expectOk(listed).map((l: { id: string }) => l.id)).toContain(location.id);
    const read = listed.headers.get("X-D1-Bookmark");
    expect(read).toMatch(BOOKMARK);
    // Bookmarks compare as strings: the read's session is at least where the write left it.
    expect(read! >= written!).toBe(true);
  });

  it("a listing without one is answered too, with a bookmark to send next", async () => {
    const f = await queueFixture("pro");
    const listed = await call("GET", "/v1/business/locations", {
      token: f.owner.token,
      headers: { "X-Organization-Id": f.organizationId },
    });
    expectOk(listed);
    expect(listed.headers.get("X-D1-Bookmark")).toMatch(BOOKMARK);
  });

  it("a value that is not a bookmark is refused 400 naming the header", async () => {
    const f = await queueFixture("pro");
    const refused = await call("GET", "/v1/business/locations", {
      token: f.owner.token,
      headers: { "X-Organization-Id": f.organizationId, "X-D1-Bookmark": "not a bookmark; drop table" },
    });
    expectError(refused, 400, "VALIDATION_ERROR");
    expect(refused.body.error.details.field).toBe("X-D1-Bookmark");
  });

  it("access is still decided on the primary: a member removed is refused the very next listing, bookmark or not", async () => {
    const f = await queueFixture("pro");
    const manager = await addMember(f.owner, f.organizationId, "manager");
    const headers = { "X-Organization-Id": f.organizationId };
    const before = await call("GET", "/v1/business/locations", { token: manager.token, headers });
    expectOk(before);
    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}/members/${manager.id}`, { token: f.owner.token }));
    const after = await call("GET", "/v1/business/locations", {
      token: manager.token,
      headers: { ...headers, "X-D1-Bookmark": before.headers.get("X-D1-Bookmark")! },
    });
    expect(after.status).toBe(404);
  });

  it("is opened only by a route that reaches D1: a join and a call-next open none", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
    const second = await registerUser({ accountType: "customer" });
    const opened = vi.spyOn(env.DB, "withSession");
    try {
      expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: second.token }), 201);
      const afterJoin = opened.mock.calls.length;
      expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
      expect([afterJoin, opened.mock.calls.length]).toEqual([0, 0]);
      expectOk(await call("GET", `/v1/business/queues`, { token: f.owner.token, headers: { "X-Organization-Id": f.organizationId } }));
      expect(opened.mock.calls.length).toBeGreaterThan(0);
    } finally {
      opened.mockRestore();
    }
  });
});
