import { abortAllDurableObjects, env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { COUNT_RESERVE, type RateLimiter } from "../../src/rate-limiter/rate-limiter";
import { SESSION_LIMIT_PER_MINUTE } from "../../src/http/rate-limit";
import type { AccessVerdict } from "../../src/rate-limiter/caller-access";
import { insertPreviousFormatSession, meterBindings } from "../helpers/credentials";
import {
  addMember,
  createCatalog,
  createOrganization,
  inviteMember,
  acceptInvitation,
  queueFixture,
  registerUser,
  walkIn,
} from "../helpers/fixtures";

// Issue 43, the caller's own object (docs/hot-path.md): a session token carries its user's id
// under the MAC, so a session request is judged by the user's RateLimiter object (session live?
// memberships? per-user count) in one call, and a warm join or call-next runs no D1 statement.
// Every path that ends a session or changes a membership tells that object before it answers:
// each case below warms the object with the credential on the hot routes, makes the change, and
// is refused (or served) on the very next request.

const join = (token: string, queueId: string) => call("POST", `/v1/queues/${queueId}/join`, { token, body: {} });
const callNext = (token: string, queueId: string) => call("POST", `/v1/queues/${queueId}/call-next`, { token, body: {} });

/** The generation a `load` answer carries (any other answer fails the test). */
function generationOf(verdict: AccessVerdict): string {
  if (verdict.state !== "load") throw new Error(`expected a load, got ${verdict.state}`);
  return verdict.generation;
}

const RPC_METHODS = new Set(["hit", "peek", "record", "admitSession", "admitLoadedSession", "accessChanging", "accessChanged"]);

/** The user's object refuses one of its access methods (as if unreachable); every other call goes through. */
function userObjectRefuses(method: "accessChanging" | "accessChanged"): () => void {
  const get = env.RATE_LIMITER.get.bind(env.RATE_LIMITER);
  const spy = vi.spyOn(env.RATE_LIMITER, "get").mockImplementation((id) => {
    const stub = get(id);
    return new Proxy(stub, {
      get(target, prop) {
        if (prop === method) return () => Promise.reject(new Error("object unreachable"));
        // An RPC stub's members are remote calls: called on the stub itself, never rebound.
        if (typeof prop === "string" && RPC_METHODS.has(prop))
          return (...args: unknown[]) => (target as unknown as Record<string, (...a: unknown[]) => unknown>)[prop]!(...args);
        return Reflect.get(target, prop);
      },
    });
  });
  return () => spy.mockRestore();
}

describe("the session token carries its user", () => {
  it("new tokens name the user under the MAC; a token of the previous signed format still works, through D1", async () => {
    const user = await registerUser({ accountType: "customer" });
    expect(user.token).toMatch(new RegExp(`^sess_${user.id}_[0-9a-z]{40}[0-9a-f]{32}$`));

    const previous = await insertPreviousFormatSession(user.id);
    expect(expectOk(await call("GET", "/v1/auth/me", { token: previous })).user.id).toBe(user.id);
    const f = await queueFixture("pro");
    expectOk(await join(previous, f.queueId), 201);
    expectOk(await call("POST", "/v1/auth/logout", { token: previous }));
    expectError(await join(previous, f.queueId), 401, "AUTHENTICATION_ERROR");
  });

  it("a token naming another user than its session's is refused (the MAC covers the name: only we could make it)", async () => {
    const a = await registerUser();
    const b = await registerUser();
    // b's session row, presented under a's id.
    const token = await insertPreviousFormatSession(b.id, `sess_${a.id}_${"q".repeat(40)}`);
    expectError(await call("GET", "/v1/auth/me", { token }), 401, "AUTHENTICATION_ERROR");
  });
});

describe("a warm session request runs no D1 statement", () => {
  it("join and call-next: the user's object and the room, nothing else", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    // Warm: the isolate keeps the queue row, each user's object holds the session.
    expectOk(await join(customer.token, f.queueId), 201);
    expectOk(await callNext(f.owner.token, f.queueId));

    const meter = meterBindings();
    expectOk(await meter.call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: {} }), 201);
    expect(meter.count).toEqual({ d1: 0, objects: 2, rooms: 1 });
    meter.reset();
    expectOk(await meter.call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: {} }));
    expect(meter.count).toEqual({ d1: 0, objects: 2, rooms: 1 });
  });
});

describe("revocation on the very next request, the user's object warm", () => {
  it("logout: the next join and ticket read are refused", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const ticket = expectOk(await join(customer.token, f.queueId), 201);
    expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { token: customer.token }));
    expectOk(await call("POST", "/v1/auth/logout", { token: customer.token }));
    expectError(await join(customer.token, f.queueId), 401, "AUTHENTICATION_ERROR");
    expectError(await call("GET", `/v1/tickets/${ticket.id}`, { token: customer.token }), 401, "AUTHENTICATION_ERROR");
  });

  it("one session logged out: the user's other session keeps working", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    const second = expectOk(await call("POST", "/v1/auth/login", { body: { email: customer.email, password: "correct horse battery" } }));
    expectOk(await join(customer.token, f.queueId), 201);
    expectOk(await join(second.session.token, f.queueId), 201);
    expectOk(await call("POST", "/v1/auth/logout", { token: customer.token }));
    expectError(await join(customer.token, f.queueId), 401, "AUTHENTICATION_ERROR");
    expectOk(await join(second.session.token, f.queueId), 201);
  });

  it("member removed: the next call-next and ticket read are refused", async () => {
    const f = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    const t = await walkIn({ token: f.owner.token }, f.queueId);
    await walkIn({ token: f.owner.token }, f.queueId);
    expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: operator.token }));
    expectOk(await callNext(operator.token, f.queueId));
    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}/members/${operator.id}`, { token: f.owner.token }));
    expect((await callNext(operator.token, f.queueId)).status).toBe(404);
    expect((await call("GET", `/v1/tickets/${t.id}`, { token: operator.token })).status).toBe(404);
  });

  it("member leaves: their next call-next is refused", async () => {
    const f = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    await walkIn({ token: f.owner.token }, f.queueId);
    expectOk(await callNext(operator.token, f.queueId));
    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}/members/${operator.id}`, { token: operator.token }));
    expect((await callNext(operator.token, f.queueId)).status).toBe(404);
  });

  it("role lowered: a manager made operator cannot change the queue's status on the next request", async () => {
    const f = await queueFixture("pro");
    const manager = await addMember(f.owner, f.organizationId, "manager");
    const status = (token: string, value: string) =>
      call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token, body: { status: value } });
    expectOk(await status(manager.token, "paused"));
    expectOk(
      await call("PATCH", `/v1/organizations/${f.organizationId}/members/${manager.id}`, {
        token: f.owner.token,
        body: { role: "operator" },
      }),
    );
    expectError(await status(manager.token, "active"), 403, "AUTHORIZATION_ERROR");
  });

  it("location scope changed: an operator limited to another location loses this queue on the next call-next", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "banking" });
    const here = await createCatalog(owner, org.id);
    const elsewhere = expectOk(
      await call("POST", "/v1/locations", {
        token: owner.token,
        body: { organizationId: org.id, name: "Elsewhere", address: "2 rue", latitude: 45.75, longitude: 4.85 },
      }),
      201,
    );
    const operator = await addMember(owner, org.id, "operator");
    await walkIn({ token: owner.token }, here.queueId);
    await walkIn({ token: owner.token }, here.queueId);
    expectOk(await callNext(operator.token, here.queueId));
    expectOk(
      await call("PATCH", `/v1/organizations/${org.id}/members/${operator.id}`, {
        token: owner.token,
        body: { locationIds: [elsewhere.id] },
      }),
    );
    expect((await callNext(operator.token, here.queueId)).status).toBe(404);
  });

  it("invitation accepted: an outsider refused a moment ago operates the queue on the next request", async () => {
    const f = await queueFixture("pro");
    const newcomer = await registerUser();
    await walkIn({ token: f.owner.token }, f.queueId);
    expect((await callNext(newcomer.token, f.queueId)).status).toBe(404); // the object holds "no membership"
    await inviteMember(f.owner, f.organizationId, newcomer.email, "operator");
    await acceptInvitation(newcomer, f.organizationId);
    expectOk(await callNext(newcomer.token, f.queueId));
  });

  it("organization created: its owner operates its queue (the object held no membership before)", async () => {
    const owner = await registerUser();
    expectOk(await call("GET", "/v1/auth/me", { token: owner.token })); // warm, no membership
    const org = await createOrganization(owner);
    const { queueId } = await createCatalog(owner, org.id);
    await walkIn({ token: owner.token }, queueId);
    expectOk(await callNext(owner.token, queueId));
  });

  it("organization deleted: its members' next call-next and ticket read are refused", async () => {
    const f = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    const t = await walkIn({ token: f.owner.token }, f.queueId);
    await walkIn({ token: f.owner.token }, f.queueId);
    expectOk(await callNext(operator.token, f.queueId));
    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}`, { token: f.owner.token }));
    expect((await callNext(operator.token, f.queueId)).status).toBe(404);
    expect((await call("GET", `/v1/tickets/${t.id}`, { token: operator.token })).status).toBe(404);
  });

  it("account erased (DELETE /v1/auth/me): the token is refused on the next join", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    expectOk(await join(customer.token, f.queueId), 201);
    expectOk(await call("DELETE", "/v1/auth/me", { token: customer.token }));
    expectError(await join(customer.token, f.queueId), 401, "AUTHENTICATION_ERROR");
  });

  it("the user row changed (default organization): the next request sees it", async () => {
    const owner = await registerUser();
    const a = await createOrganization(owner);
    const b = await createOrganization(owner);
    expectOk(await call("GET", "/v1/auth/me", { token: owner.token }));
    expectOk(await call("PATCH", "/v1/auth/me", { token: owner.token, body: { defaultOrganizationId: b.id } }));
    expect(expectOk(await call("GET", "/v1/auth/me", { token: owner.token })).user.defaultOrganizationId).toBe(b.id);
    expectOk(await call("PATCH", "/v1/auth/me", { token: owner.token, body: { defaultOrganizationId: a.id } }));
    expect(expectOk(await call("GET", "/v1/auth/me", { token: owner.token })).user.defaultOrganizationId).toBe(a.id);
  });

  it("expiry by time: the object judges the idle expiry itself; a session in use slides", async () => {
    testClock.set("2026-03-02T08:00:00.000Z");
    const f = await queueFixture("pro");
    const idle = await registerUser({ accountType: "customer" });
    const busy = await registerUser({ accountType: "customer" });
    expectOk(await join(idle.token, f.queueId), 201);
    for (let hour = 1; hour <= 13; hour++) {
      testClock.set(Date.parse("2026-03-02T08:00:00.000Z") + hour * 3_600_000);
      expectOk(await call("GET", "/v1/auth/me", { token: busy.token }));
    }
    // 13 hours later: the idle one passed its 12 idle hours, the busy one slid.
    expectError(await join(idle.token, f.queueId), 401, "TOKEN_EXPIRED");
    expectOk(await join(busy.token, f.queueId), 201);
  });
});

describe("a change the user's object cannot hear of is never answered as done", () => {
  it("'changing' not delivered: the removal is refused (503, Retry-After: 1), nothing changed; sent again, it applies", async () => {
    const f = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    await walkIn({ token: f.owner.token }, f.queueId);
    await walkIn({ token: f.owner.token }, f.queueId);
    expectOk(await callNext(operator.token, f.queueId));

    const restore = userObjectRefuses("accessChanging");
    let refused;
    try {
      refused = await call("DELETE", `/v1/organizations/${f.organizationId}/members/${operator.id}`, { token: f.owner.token });
    } finally {
      restore();
    }
    expectError(refused, 503, "CHANGE_NOT_CONFIRMED");
    expect(refused.headers.get("Retry-After")).toBe("1");
    // Nothing changed: still a member, still operating.
    const listed = expectOk(await call("GET", `/v1/organizations/${f.organizationId}/members`, { token: f.owner.token })) as {
      userId: string;
    }[];
    expect(listed.map((m) => m.userId)).toContain(operator.id);
    expectOk(await callNext(operator.token, f.queueId));

    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}/members/${operator.id}`, { token: f.owner.token }));
    expect((await callNext(operator.token, f.queueId)).status).toBe(404);
  });

  it("'changed' not delivered: the change is answered, and the object judges on D1 until its lease ends, then reloads", async () => {
    testClock.set("2026-03-02T08:00:00.000Z");
    const f = await queueFixture("pro");
    const operator = await addMember(f.owner, f.organizationId, "operator");
    for (let i = 0; i < 3; i++) await walkIn({ token: f.owner.token }, f.queueId);
    expectOk(await callNext(operator.token, f.queueId));

    const restore = userObjectRefuses("accessChanged");
    try {
      expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}/members/${operator.id}`, { token: f.owner.token }));
    } finally {
      restore();
    }
    expect((await callNext(operator.token, f.queueId)).status).toBe(404);
    testClock.advance(31_000);
    expect((await callNext(operator.token, f.queueId)).status).toBe(404);
    expect((await callNext(operator.token, f.queueId)).status).toBe(404);
  });

  it("logout with 'changing' not delivered: refused, and the session still works (nothing changed)", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    expectOk(await join(customer.token, f.queueId), 201);
    const restore = userObjectRefuses("accessChanging");
    let refused;
    try {
      refused = await call("POST", "/v1/auth/logout", { token: customer.token });
    } finally {
      restore();
    }
    expectError(refused, 503, "CHANGE_NOT_CONFIRMED");
    expectOk(await join(customer.token, f.queueId), 201);
    expectOk(await call("POST", "/v1/auth/logout", { token: customer.token }));
    expectError(await join(customer.token, f.queueId), 401, "AUTHENTICATION_ERROR");
  });
});

describe("the per-user limit, counted in the same call", () => {
  it("is exact under concurrency: 10 of 20 concurrent requests pass the last 10 of 600", async () => {
    testClock.set("2026-03-02T10:00:00.000Z");
    const user = await registerUser();
    const start = Date.parse("2026-03-02T10:00:00.000Z");
    const object = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`user:${user.id}`));
    await runInDurableObject(object, (_instance, state) => {
      state.storage.kv.put("minute", { start, count: 590, end: start + 60_000 });
    });
    const results = await Promise.all(Array.from({ length: 20 }, () => call("GET", "/v1/auth/me", { token: user.token })));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(10);
    for (const r of results.filter((r) => r.status !== 200)) expectError(r, 429, "API_RATE_LIMIT_EXCEEDED");
    expect(ok.map((r) => Number(r.headers.get("X-RateLimit-Remaining"))).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 10 }, (_, i) => i),
    );
  });
});

describe("the per-user count's storage (issue 43: no write on most session requests)", () => {
  it("holds a ceiling 20 requests ahead of the count; an object started again counts from it, early never late", async () => {
    testClock.set("2026-03-02T10:10:00.000Z");
    const user = await registerUser();
    const start = Date.parse("2026-03-02T10:10:00.000Z");
    const object = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`user:${user.id}`));
    const stored = () => runInDurableObject(object, (_instance, state) => state.storage.kv.get<{ start: number; count: number }>("minute"));
    const remaining = async () => {
      const answer = await call("GET", "/v1/auth/me", { token: user.token });
      expectOk(answer);
      return Number(answer.headers.get("X-RateLimit-Remaining"));
    };
    const first = await remaining();
    const counted = SESSION_LIMIT_PER_MINUTE - first;
    // The first count of the window wrote its ceiling, COUNT_RESERVE ahead; the next
    // requests up to it write nothing and are still counted exactly.
    expect(counted).toBeLessThanOrEqual(COUNT_RESERVE);
    expect(await stored()).toMatchObject({ start, count: 1 + COUNT_RESERVE });
    const ceiling = (await stored())!.count;
    // The object is its storage's only writer: while it lives, a request reads no counter from it.
    const reads: string[] = [];
    const restore = await runInDurableObject(object, (_instance, state) => {
      const get = state.storage.kv.get.bind(state.storage.kv);
      const spy = vi.spyOn(state.storage.kv, "get").mockImplementation((key: string) => {
        reads.push(key);
        return get(key) as never;
      });
      return () => spy.mockRestore();
    });
    let before: number;
    try {
      before = await remaining();
    } finally {
      await runInDurableObject(object, () => restore());
    }
    expect(reads.filter((key) => key === "minute")).toEqual([]);
    expect(before).toBe(first - 1);
    expect((await stored())!.count).toBe(ceiling);
    // Started again, the object knows only the ceiling: it counts from there (at most the
    // reserve early), never from below the requests it let through.
    await abortAllDurableObjects();
    const after = await remaining();
    expect(after).toBe(SESSION_LIMIT_PER_MINUTE - ceiling - 1);
    expect(after).toBeLessThan(before);
  });
});

describe("rows read across a change are never kept (the generation check; HTTP cannot time this race)", () => {
  it("a load asked before 'changing' and answered after 'changed' judges its own request, then the object asks again", async () => {
    const user = await registerUser();
    const object = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`user:${user.id}`));
    const slide = { idleMs: 12 * 3_600_000, granularityMs: 300_000 };
    const at = Date.now();
    const stored = expectOk(await call("GET", "/v1/auth/me", { token: user.token })).user;
    const staleRows = {
      session: { expiresAt: at + 3_600_000, lastSeenAt: at, absoluteExpiresAt: at + 86_400_000 },
      user: { ...stored, passwordHash: "x", createdAt: at, updatedAt: at, defaultOrganizationId: null },
      memberships: [{ organizationId: "org_stale", role: "owner" as const, locationIds: null }],
    };
    await runInDurableObject(object, (instance: RateLimiter) => {
      const first = instance.admitSession("hash-of-a-token", at, slide, []);
      expect(first.verdict.state).toBe("load");
      // The change begins and ends while the Worker reads D1 for the first request.
      instance.accessChanging("change-1", at);
      instance.accessChanged("change-1", at);
      const late = instance.admitLoadedSession(generationOf(first.verdict), "hash-of-a-token", staleRows, at, slide, []);
      expect(late.verdict.state).toBe("valid"); // judged on the rows it read: it was concurrent with the change
      // Not kept: the next request is judged on a fresh load.
      expect(instance.admitSession("hash-of-a-token", at, slide, []).verdict.state).toBe("load");
      // While a lease is live, even rows asked for under it are not kept.
      instance.accessChanging("change-2", at);
      const during = instance.admitSession("hash-of-a-token", at, slide, []);
      instance.admitLoadedSession(generationOf(during.verdict), "hash-of-a-token", staleRows, at, slide, []);
      expect(instance.admitSession("hash-of-a-token", at, slide, []).verdict.state).toBe("load");
      // The lease ends by itself after 30 s: the next load is kept again.
      const after = instance.admitSession("hash-of-a-token", at + 30_001, slide, []);
      instance.admitLoadedSession(generationOf(after.verdict), "hash-of-a-token", staleRows, at + 30_001, slide, []);
      expect(instance.admitSession("hash-of-a-token", at + 30_002, slide, []).verdict.state).toBe("valid");
    });
  });
});
