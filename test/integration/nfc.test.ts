import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { database } from "../../src/db/client";
import { testClock } from "../helpers/clock";
import { recordNfcScan } from "../../src/entry/nfc-tags";
import { call, expectError, expectOk, unique } from "../helpers/api";
import {
  addArchivedQueue,
  addMember,
  addQueue,
  createOrganization,
  createQueueFixture,
  type QueueFixture,
  registerUser,
  type TestUser,
} from "../helpers/fixtures";
import { depsOf } from "../../src/http/deps";

let owner: TestUser;
let org: any;
let fx: QueueFixture;
let stranger: TestUser;

beforeAll(async () => {
  owner = await registerUser();
  org = await createOrganization(owner);
  fx = await createQueueFixture(owner, org.id);
  stranger = await registerUser();
  await createOrganization(stranger);
});

function tagBody(overrides: Record<string, unknown> = {}) {
  return {
    nfcId: `04:${unique("T")}`,
    queueId: fx.queueId,
    locationName: "Entrance door",
    latitude: 48.8566,
    longitude: 2.3522,
    ...overrides,
  };
}

async function registerTag(overrides: Record<string, unknown> = {}): Promise<any> {
  return expectOk(await call("POST", "/v1/nfc/tags", { token: owner.token, body: tagBody(overrides) }), 201);
}

describe("POST /v1/nfc/tags", () => {
  it("registers a physical tag by default, enabled, with empty statistics", async () => {
    testClock.set("2026-04-01T09:00:00.000Z");
    const body = tagBody();
    const tag = expectOk(await call("POST", "/v1/nfc/tags", { token: owner.token, body }), 201);
    expect(tag).toEqual({
      id: expect.stringMatching(/^nfc_[0-9a-z]{20}$/),
      nfcId: body.nfcId,
      queueId: fx.queueId,
      kind: "physical",
      locationName: "Entrance door",
      latitude: 48.8566,
      longitude: 2.3522,
      status: "enabled",
      scanCount: 0,
      uniqueDevices: 0,
      lastScannedAt: null,
      createdAt: "2026-04-01T09:00:00.000Z",
      updatedAt: "2026-04-01T09:00:00.000Z",
    });
    const read = expectOk(await call("GET", `/v1/nfc/tags/${encodeURIComponent(body.nfcId)}`, { token: owner.token }));
    expect(read).toEqual(tag);
  });

  it("keeps the kind given", async () => {
    expect((await registerTag({ kind: "mobile_wallet" })).kind).toBe("mobile_wallet");
    expect((await registerTag({ kind: "virtual" })).kind).toBe("virtual");
  });

  it("refuses a registered nfcId with 409 CONFLICT on nfcId", async () => {
    const tag = await registerTag();
    const res = await call("POST", "/v1/nfc/tags", { token: owner.token, body: tagBody({ nfcId: tag.nfcId }) });
    expectError(res, 409, "CONFLICT", "nfcId");
  });

  it.each([
    ["a missing nfcId", { nfcId: undefined }, "nfcId"],
    ["an empty nfcId", { nfcId: "" }, "nfcId"],
    ["an nfcId over 128 characters", { nfcId: "a".repeat(129) }, "nfcId"],
    ["an nfcId with a space", { nfcId: "04 A2" }, "nfcId"],
    ["an nfcId with a slash", { nfcId: "04/A2" }, "nfcId"],
    ["a missing queueId", { queueId: undefined }, "queueId"],
    ["a missing locationName", { locationName: undefined }, "locationName"],
    ["a blank locationName", { locationName: "   " }, "locationName"],
    ["a latitude over 90", { latitude: 90.5 }, "latitude"],
    ["a longitude under -180", { longitude: -181 }, "longitude"],
    ["a latitude as a string", { latitude: "48.8" }, "latitude"],
    ["an unknown kind", { kind: "bluetooth" }, "kind"],
    ["an unknown field", { enabled: false }, "enabled"],
    ["a forced organization", { organizationId: "org_x" }, "organizationId"],
  ])("refuses %s", async (_label, patch, field) => {
    expectError(await call("POST", "/v1/nfc/tags", { token: owner.token, body: tagBody(patch) }), 400, "VALIDATION_ERROR", field);
  });

  it("answers 404 for an unknown queue and another organization's queue alike", async () => {
    const unknown = await call("POST", "/v1/nfc/tags", { token: owner.token, body: tagBody({ queueId: "que_00000000000000000000" }) });
    const foreign = await call("POST", "/v1/nfc/tags", { token: stranger.token, body: tagBody() });
    expectError(unknown, 404, "NOT_FOUND");
    expectError(foreign, 404, "NOT_FOUND");
    expect(foreign.body.error.message).toBe(unknown.body.error.message);
  });

  it("refuses an archived queue with INVALID_STATE", async () => {
    const archived = await addArchivedQueue(fx);
    expectError(await call("POST", "/v1/nfc/tags", { token: owner.token, body: tagBody({ queueId: archived }) }), 409, "INVALID_STATE");
  });

  it("needs QUEUE_MANAGE to register; an operator may read", async () => {
    const operator = await addMember(owner, org.id, "operator");
    expectError(await call("POST", "/v1/nfc/tags", { token: operator.token, body: tagBody() }), 403, "AUTHORIZATION_ERROR");
    const tag = await registerTag();
    expect(expectOk(await call("GET", `/v1/nfc/tags/${tag.nfcId}`, { token: operator.token })).id).toBe(tag.id);
    expectError(
      await call("PATCH", `/v1/nfc/tags/${tag.nfcId}`, { token: operator.token, body: { enabled: false } }),
      403,
      "AUTHORIZATION_ERROR",
    );
  });

  it("needs a credential", async () => {
    expectError(
      await call("POST", "/v1/nfc/tags", { body: tagBody({ queueId: "que_00000000000000000000" }) }),
      401,
      "AUTHENTICATION_ERROR",
    );
    expectError(await call("GET", "/v1/nfc/tags/unknown-tag"), 401, "AUTHENTICATION_ERROR");
  });
});

describe("GET /v1/nfc/tags/{nfcId}", () => {
  it("answers 404 for an unknown tag and for another organization's tag alike", async () => {
    const tag = await registerTag();
    const foreign = await call("GET", `/v1/nfc/tags/${tag.nfcId}`, { token: stranger.token });
    const unknown = await call("GET", "/v1/nfc/tags/no-such-tag", { token: stranger.token });
    expectError(foreign, 404, "NOT_FOUND");
    expectError(unknown, 404, "NOT_FOUND");
    expect(foreign.body.error.message).toBe(unknown.body.error.message);
  });

  it("refuses a malformed nfcId with 400 on nfcId", async () => {
    expectError(await call("GET", `/v1/nfc/tags/${"a".repeat(129)}`, { token: owner.token }), 400, "VALIDATION_ERROR", "nfcId");
    expectError(await call("GET", "/v1/nfc/tags/a%20b", { token: owner.token }), 400, "VALIDATION_ERROR", "nfcId");
  });
});

describe("PATCH /v1/nfc/tags/{nfcId}", () => {
  it("disables and re-enables a tag, keeping its statistics", async () => {
    testClock.set("2026-04-02T09:00:00.000Z");
    const tag = await registerTag();
    await recordNfcScan(depsOf(env), tag.id, "device-a", Date.parse("2026-04-02T09:30:00.000Z"));
    testClock.set("2026-04-02T10:00:00.000Z");
    const disabled = expectOk(await call("PATCH", `/v1/nfc/tags/${tag.nfcId}`, { token: owner.token, body: { enabled: false } }));
    expect(disabled).toMatchObject({
      status: "disabled",
      scanCount: 1,
      uniqueDevices: 1,
      updatedAt: "2026-04-02T10:00:00.000Z",
      createdAt: tag.createdAt,
    });
    expect(disabled).toMatchObject({
      locationName: tag.locationName,
      latitude: tag.latitude,
      longitude: tag.longitude,
      queueId: tag.queueId,
    });
    const enabled = expectOk(await call("PATCH", `/v1/nfc/tags/${tag.nfcId}`, { token: owner.token, body: { enabled: true } }));
    expect(enabled.status).toBe("enabled");
  });

  it("moves a tag and points it at another queue of the organization", async () => {
    const tag = await registerTag();
    const otherQueue = await addQueue(fx);
    const moved = expectOk(
      await call("PATCH", `/v1/nfc/tags/${tag.nfcId}`, {
        token: owner.token,
        body: { locationName: "Side door", latitude: 45.764, longitude: 4.8357, queueId: otherQueue },
      }),
    );
    expect(moved).toMatchObject({ locationName: "Side door", latitude: 45.764, longitude: 4.8357, queueId: otherQueue, nfcId: tag.nfcId });
    expect(expectOk(await call("GET", `/v1/nfc/tags/${tag.nfcId}`, { token: owner.token })).queueId).toBe(otherQueue);
  });

  it("never points a tag at another organization's queue, even one the caller manages", async () => {
    const tag = await registerTag();
    const secondOrg = await createOrganization(owner);
    const elsewhere = await createQueueFixture(owner, secondOrg.id);
    const res = await call("PATCH", `/v1/nfc/tags/${tag.nfcId}`, { token: owner.token, body: { queueId: elsewhere.queueId } });
    expectError(res, 404, "NOT_FOUND");
  });

  it("answers 404 for another organization's tag", async () => {
    const tag = await registerTag();
    expectError(await call("PATCH", `/v1/nfc/tags/${tag.nfcId}`, { token: stranger.token, body: { enabled: false } }), 404, "NOT_FOUND");
    expect(expectOk(await call("GET", `/v1/nfc/tags/${tag.nfcId}`, { token: owner.token })).status).toBe("enabled");
  });

  it.each([
    ["an empty body", {}, "body"],
    ["enabled as a string", { enabled: "no" }, "enabled"],
    ["enabled as null", { enabled: null }, "enabled"],
    ["a latitude out of range", { latitude: -91 }, "latitude"],
    ["an unknown field", { scanCount: 0 }, "scanCount"],
    ["a new nfcId", { nfcId: "other" }, "nfcId"],
    ["a kind change", { kind: "virtual" }, "kind"],
  ])("refuses %s", async (_label, body, field) => {
    const tag = await registerTag();
    expectError(await call("PATCH", `/v1/nfc/tags/${tag.nfcId}`, { token: owner.token, body }), 400, "VALIDATION_ERROR", field);
  });
});

describe("GET /v1/nfc/tags", () => {
  it("lists the organization's tags newest first, filtered by queue", async () => {
    const o = await registerUser();
    const own = await createOrganization(o);
    const q = await createQueueFixture(o, own.id);
    const second = await addQueue(q);
    const made: string[] = [];
    for (const [i, queueId] of [q.queueId, q.queueId, second].entries()) {
      testClock.set(Date.parse("2026-04-03T09:00:00.000Z") + i * 1000);
      const body = { nfcId: unique("L"), queueId, locationName: "Desk", latitude: 1, longitude: 2 };
      made.push(expectOk(await call("POST", "/v1/nfc/tags", { token: o.token, body }), 201).id);
    }
    const all = await call("GET", "/v1/nfc/tags?limit=2", { token: o.token });
    expect(expectOk(all).map((t: any) => t.id)).toEqual([made[2], made[1]]);
    expect(all.body.meta).toMatchObject({ total: 3, page: 1, limit: 2, hasMore: true });
    const ofQueue = await call("GET", `/v1/nfc/tags?queueId=${second}`, { token: o.token });
    expect(expectOk(ofQueue).map((t: any) => t.id)).toEqual([made[2]]);
    expectError(await call("GET", "/v1/nfc/tags?limit=0", { token: o.token }), 400, "VALIDATION_ERROR", "limit");
  });
});

describe("recordNfcScan", () => {
  it("counts scans, distinct devices and the latest scan time", async () => {
    const tag = await registerTag();
    const db = database(env.DB);
    const t0 = Date.parse("2026-04-04T08:00:00.000Z");
    await recordNfcScan(depsOf(env), tag.id, "device-a", t0);
    await recordNfcScan(depsOf(env), tag.id, "device-b", t0 + 60_000);
    await recordNfcScan(depsOf(env), tag.id, "device-a", t0 + 120_000);
    // A late-arriving scan does not move lastScannedAt backwards.
    await recordNfcScan(depsOf(env), tag.id, "device-c", t0 + 30_000);
    const read = expectOk(await call("GET", `/v1/nfc/tags/${tag.nfcId}`, { token: owner.token }));
    expect(read).toMatchObject({ scanCount: 4, uniqueDevices: 3, lastScannedAt: "2026-04-04T08:02:00.000Z" });
    const listed = expectOk(
      await call("GET", `/v1/nfc/tags?queueId=${fx.queueId}&limit=100`, { token: owner.token, headers: { "X-Organization-Id": org.id } }),
    );
    expect(listed.find((t: any) => t.id === tag.id)).toMatchObject({ scanCount: 4, uniqueDevices: 3 });
  });

  it("stays exact under concurrent scans", async () => {
    const tag = await registerTag();
    const db = database(env.DB);
    const at = Date.parse("2026-04-05T08:00:00.000Z");
    await Promise.all(Array.from({ length: 20 }, (_, i) => recordNfcScan(depsOf(env), tag.id, `device-${i % 5}`, at + i)));
    const read = expectOk(await call("GET", `/v1/nfc/tags/${tag.nfcId}`, { token: owner.token }));
    expect(read).toMatchObject({ scanCount: 20, uniqueDevices: 5, lastScannedAt: new Date(at + 19).toISOString() });
  });
});
