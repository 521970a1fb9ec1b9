import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk } from "../helpers/api";
import { insertService, settle } from "../helpers/catalog";
import { addMember, createOrganization, queueFixture, registerUser, setPlan } from "../helpers/fixtures";
import { sweep } from "../helpers/cron";

describe("POST /v1/business/queues", () => {
  it("creates queues with letters A, B, C per service and a full record", async () => {
    const f = await queueFixture("pro", { description: "Front desk", maxCapacity: 20 });
    const first = expectOk(await call("GET", `/v1/queues/${f.queueId}`, { token: f.owner.token }));
    expect(first).toMatchObject({
      id: f.queueId,
      serviceId: f.serviceId,
      name: "Main line",
      description: "Front desk",
      maxCapacity: 20,
      status: "active",
      letter: "A",
      waitingCount: 0,
      servingCount: 0,
      estimatedWaitMinutes: 0,
      archivedAt: null,
    });
    expect(first.id).toMatch(/^que_[0-9a-z]{20}$/);
    expect(first.createdAt).toMatch(/Z$/);
    const b = expectOk(
      await call("POST", "/v1/business/queues", { token: f.owner.token, body: { serviceId: f.serviceId, name: "Second" } }),
      201,
    );
    const c = expectOk(
      await call("POST", "/v1/business/queues", { token: f.owner.token, body: { serviceId: f.serviceId, name: "Third" } }),
      201,
    );
    expect([b.letter, c.letter]).toEqual(["B", "C"]);
    const other = await insertService(f.organizationId);
    const a2 = expectOk(
      await call("POST", "/v1/business/queues", { token: f.owner.token, body: { serviceId: other, name: "Other" } }),
      201,
    );
    expect(a2.letter).toBe("A");
  });

  it("gives concurrent creations on one service distinct letters", async () => {
    const f = await queueFixture("pro");
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        call("POST", "/v1/business/queues", { token: f.owner.token, body: { serviceId: f.serviceId, name: `Q${i}` } }),
      ),
    );
    const letters = results.map((r) => expectOk(r, 201).letter);
    expect(new Set(letters).size).toBe(5);
    expect(letters.sort()).toEqual(["B", "C", "D", "E", "F"]);
  });

  it("allows one queue on the starter plan, exactly, even under concurrency", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    const serviceId = await insertService(org.id);
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => call("POST", "/v1/business/queues", { token: owner.token, body: { serviceId, name: `Q${i}` } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) {
      expectError(r, 402, "PLAN_REQUIRED");
      expect(r.body.error.details).toEqual({ requiredPlan: "pro", currentPlan: "starter", limit: 1, feature: "queues" });
    }
  });

  it.each([
    ["a missing name", { name: undefined }, "name"],
    ["a wrong type", { name: 3 }, "name"],
    ["an unknown field", { status: "paused" }, "status"],
    ["a capacity out of range", { maxCapacity: 0 }, "maxCapacity"],
    ["a fractional capacity", { maxCapacity: 2.5 }, "maxCapacity"],
  ])("refuses %s", async (_label, patch, field) => {
    const f = await queueFixture("pro");
    const body = { serviceId: f.serviceId, name: "X", ...patch };
    expectError(await call("POST", "/v1/business/queues", { token: f.owner.token, body }), 400, "VALIDATION_ERROR", field);
  });

  it("answers 404 for a service of another organization and 403 for an operator", async () => {
    const f = await queueFixture("pro");
    const stranger = await queueFixture("pro");
    expectError(
      await call("POST", "/v1/business/queues", { token: f.owner.token, body: { serviceId: stranger.serviceId, name: "X" } }),
      404,
      "NOT_FOUND",
      "serviceId",
    );
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expectError(
      await call("POST", "/v1/business/queues", {
        token: operator.token,
        headers: { "X-Organization-Id": f.organizationId },
        body: { serviceId: f.serviceId, name: "X" },
      }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(await call("POST", "/v1/business/queues", { body: { serviceId: f.serviceId, name: "X" } }), 401, "AUTHENTICATION_ERROR");
  });
});

describe("GET /v1/business/queues and /v1/queues/{id}", () => {
  it("lists the organization's queues by service, paginated, without archived ones", async () => {
    const f = await queueFixture("pro");
    const ids = [f.queueId];
    for (let i = 0; i < 3; i++) {
      ids.push(
        expectOk(await call("POST", "/v1/business/queues", { token: f.owner.token, body: { serviceId: f.serviceId, name: `Q${i}` } }), 201)
          .id,
      );
    }
    const otherService = await insertService(f.organizationId);
    await call("POST", "/v1/business/queues", { token: f.owner.token, body: { serviceId: otherService, name: "Other" } });
    const page1 = await call("GET", `/v1/business/queues?serviceId=${f.serviceId}&limit=2`, { token: f.owner.token });
    expect(expectOk(page1).map((q: any) => q.id)).toEqual(ids.slice(0, 2));
    expect(page1.body.meta).toMatchObject({ total: 4, page: 1, limit: 2, hasMore: true });
    expectOk(await call("POST", `/v1/queues/${ids[1]}/archive`, { token: f.owner.token }));
    const all = await call("GET", `/v1/business/queues?serviceId=${f.serviceId}`, { token: f.owner.token });
    expect(expectOk(all).map((q: any) => q.id)).toEqual([ids[0], ids[2], ids[3]]);
    expect((await call("GET", "/v1/business/queues", { token: f.owner.token })).body.meta.total).toBe(4);
    expectError(await call("GET", "/v1/business/queues?limit=101", { token: f.owner.token }), 400, "VALIDATION_ERROR", "limit");
    const archived = expectOk(await call("GET", `/v1/queues/${ids[1]}`, { token: f.owner.token }));
    expect(archived.status).toBe("closed");
    expect(archived.archivedAt).not.toBeNull();
  });

  it("shows live counts and hides queues of other organizations from API keys", async () => {
    const f = await queueFixture("pro");
    const customer = await registerUser({ accountType: "customer" });
    expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: { partySize: 2 } }), 201);
    const q = expectOk(await call("GET", `/v1/queues/${f.queueId}`, { token: customer.token }));
    expect(q).toMatchObject({ waitingCount: 2, servingCount: 0, estimatedWaitMinutes: 10 });
    expectError(await call("GET", "/v1/queues/que_00000000000000000000", { token: f.owner.token }), 404, "NOT_FOUND");
  });
});

describe("PATCH /v1/business/queues/{id}/status", () => {
  it("pauses (no joins, calls allowed), closes (neither) and reopens; D1 follows", async () => {
    const f = await queueFixture("pro");
    const token = f.owner.token;
    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token }), 201);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token }), 201);
    const paused = expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token, body: { status: "paused" } }));
    expect(paused.status).toBe("paused");
    expectError(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token }), 409, "QUEUE_PAUSED");
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token }));
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token, body: { status: "closed" } }));
    expectError(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token }), 409, "QUEUE_CLOSED");
    expectError(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token }), 409, "QUEUE_CLOSED");
    await settle(f.queueId);
    const row = await env.DB.prepare("SELECT status FROM queues WHERE id = ?").bind(f.queueId).first<{ status: string }>();
    expect(row?.status).toBe("closed");
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}/status`, { token, body: { status: "active" } }));
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token }));
  });

  it("D1 keeps the room's latest status when an earlier change's request finishes last (the outbox is its one writer)", async () => {
    const f = await queueFixture("pro");
    const token = f.owner.token;
    const path = `/v1/business/queues/${f.queueId}/status`;
    // D1 is intercepted at its binding, as outbound HTTP is at fetch: the first statement a
    // request sends that writes queues.status waits until the test lets it go.
    let release!: () => void;
    const late = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    const prepare = env.DB.prepare.bind(env.DB);
    const spy = vi.spyOn(env.DB, "prepare").mockImplementation((query: string) => {
      const statement = prepare(query);
      if (held || !/^update "queues" set "status"/i.test(query)) return statement;
      held = true;
      const delayed = (s: D1PreparedStatement): D1PreparedStatement =>
        new Proxy(s, {
          get(target, prop) {
            const value = Reflect.get(target, prop, target);
            if (typeof value !== "function") return value;
            if (prop === "bind") return (...args: unknown[]) => delayed(value.apply(target, args));
            if (["run", "all", "first", "raw"].includes(String(prop)))
              return async (...args: unknown[]) => (await late, value.apply(target, args));
            return value.bind(target);
          },
        });
      return delayed(statement);
    });
    try {
      const first = call("PATCH", path, { token, body: { status: "paused" } });
      let settled = false;
      void first.finally(() => (settled = true));
      while (!held && !settled) await new Promise((r) => setTimeout(r, 5));
      // The room has paused the queue; now it is reopened, and that request finishes first.
      expectOk(await call("PATCH", path, { token, body: { status: "active" } }));
      await settle(f.queueId);
      release();
      expectOk(await first);
      await settle(f.queueId);
    } finally {
      release();
      spy.mockRestore();
    }
    expect(expectOk(await call("GET", `/v1/queues/${f.queueId}`, { token })).status).toBe("active");
    const row = await env.DB.prepare("SELECT status FROM queues WHERE id = ?").bind(f.queueId).first<{ status: string }>();
    expect(row?.status).toBe("active");
  });

  it("refuses bad input, operators, and any change to an archived queue", async () => {
    const f = await queueFixture("pro");
    const path = `/v1/business/queues/${f.queueId}/status`;
    expectError(await call("PATCH", path, { token: f.owner.token, body: { status: "open" } }), 400, "VALIDATION_ERROR", "status");
    expectError(await call("PATCH", path, { token: f.owner.token, body: {} }), 400, "VALIDATION_ERROR", "status");
    expectError(
      await call("PATCH", path, { token: f.owner.token, body: { status: "active", name: "x" } }),
      400,
      "VALIDATION_ERROR",
      "name",
    );
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expectError(await call("PATCH", path, { token: operator.token, body: { status: "paused" } }), 403, "AUTHORIZATION_ERROR");
    expectOk(await call("POST", `/v1/queues/${f.queueId}/archive`, { token: f.owner.token }));
    const res = await call("PATCH", path, { token: f.owner.token, body: { status: "active" } });
    expectError(res, 409, "INVALID_STATE");
    expect(res.body.error.details).toEqual({ status: "archived", allowed: ["active", "paused", "closed"] });
    expectError(await call("POST", `/v1/queues/${f.queueId}/archive`, { token: f.owner.token }), 409, "INVALID_STATE");
    expectError(await call("POST", `/v1/queues/${f.queueId}/clear`, { token: f.owner.token }), 409, "INVALID_STATE");
  });
});

describe("PATCH /v1/business/queues/{queueId}", () => {
  it("renames, describes and sets capacity and no-show timeout; null clears", async () => {
    const f = await queueFixture("pro", { description: "Front desk", maxCapacity: 20 });
    const patched = expectOk(
      await call("PATCH", `/v1/business/queues/${f.queueId}`, {
        token: f.owner.token,
        body: { name: "Counter 1", description: null, maxCapacity: 3, noShowTimeoutMinutes: 2 },
      }),
    );
    expect(patched).toMatchObject({ name: "Counter 1", description: null, maxCapacity: 3, noShowTimeoutMinutes: 2, letter: "A" });
    expect(expectOk(await call("GET", `/v1/queues/${f.queueId}`, { token: f.owner.token }))).toMatchObject({
      name: "Counter 1",
      maxCapacity: 3,
      noShowTimeoutMinutes: 2,
    });
    expect(
      expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: { maxCapacity: null } })).maxCapacity,
    ).toBeNull();
    expect(expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: {} })).name).toBe("Counter 1");
    const created = expectOk(
      await call("POST", "/v1/business/queues", {
        token: f.owner.token,
        body: { serviceId: f.serviceId, name: "Lab", noShowTimeoutMinutes: 15 },
      }),
      201,
    );
    expect(created.noShowTimeoutMinutes).toBe(15);
  });

  it("a lower capacity refuses joins until the line is under it, and removes nobody", async () => {
    const f = await queueFixture("pro");
    for (let i = 0; i < 3; i++) expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: { maxCapacity: 2 } }));
    expectError(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 409, "QUEUE_FULL");
    expect(expectOk(await call("GET", `/v1/queues/${f.queueId}`, { token: f.owner.token })).waitingCount).toBe(3);
  });

  it("a new no-show timeout applies to a ticket already called, through the minute sweep", async () => {
    testClock.set("2026-05-06T10:00:00.000Z");
    const f = await queueFixture("pro");
    const t = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token }), 201);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    await settle(f.queueId);
    expectOk(await call("PATCH", `/v1/business/queues/${f.queueId}`, { token: f.owner.token, body: { noShowTimeoutMinutes: 2 } }));
    await settle(f.queueId);
    await sweep(Date.parse("2026-05-06T10:01:59.999Z"));
    expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token })).status).toBe("called");
    await sweep(Date.parse("2026-05-06T10:02:00.000Z"));
    expect(expectOk(await call("GET", `/v1/tickets/${t.id}`, { token: f.owner.token })).status).toBe("expired");
  });

  it("refuses bad input on the field, operators, other organizations and archived queues", async () => {
    const f = await queueFixture("pro");
    const path = `/v1/business/queues/${f.queueId}`;
    for (const [body, field] of [
      [{ noShowTimeoutMinutes: 0 }, "noShowTimeoutMinutes"],
      [{ noShowTimeoutMinutes: 61 }, "noShowTimeoutMinutes"],
      [{ noShowTimeoutMinutes: "5" }, "noShowTimeoutMinutes"],
      [{ maxCapacity: 0 }, "maxCapacity"],
      [{ name: "  " }, "name"],
      [{ name: null }, "name"],
      [{ letter: "Z" }, "letter"],
    ] as const) {
      expectError(await call("PATCH", path, { token: f.owner.token, body }), 400, "VALIDATION_ERROR", field);
    }
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expectError(await call("PATCH", path, { token: operator.token, body: { name: "Mine" } }), 403, "AUTHORIZATION_ERROR");
    const stranger = await registerUser();
    expectError(await call("PATCH", path, { token: stranger.token, body: { name: "Theirs" } }), 404, "NOT_FOUND");
    expectOk(await call("POST", `/v1/queues/${f.queueId}/archive`, { token: f.owner.token }));
    expectError(await call("PATCH", path, { token: f.owner.token, body: { name: "Late" } }), 409, "INVALID_STATE");
  });
});
