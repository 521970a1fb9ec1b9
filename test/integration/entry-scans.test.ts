import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { destination } from "../../src/domain/geo";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { addMember, addQueue, createApiKey, type Fixture, queueFixture, registerUser, type TestUser } from "../helpers/fixtures";

// POST /v1/qr/scan and POST /v1/nfc/scan: what each purpose does, the refusals, the distance
// rules and the statistics, through HTTP.

const SITE = { latitude: 48.85, longitude: 2.35 };
const near = (metres: number) => destination(SITE, 90, metres / 1000);

function customer(): Promise<TestUser> {
  return registerUser({ accountType: "customer" });
}

async function token(f: Fixture, body: Record<string, unknown>): Promise<any> {
  return expectOk(await call("POST", "/v1/qr-tokens", { token: f.owner.token, body }), 201);
}

function scanQr(user: TestUser, value: string, at = near(50)) {
  return call("POST", "/v1/qr/scan", { token: user.token, body: { token: value, ...at } });
}

let f: Fixture;
beforeAll(async () => {
  f = await queueFixture("pro");
});

describe("POST /v1/qr/scan", () => {
  it("queue_join joins the queue once; a second scan gives back the ticket held", async () => {
    const qr = await token(f, { purpose: "queue_join", queueId: f.queueId });
    const user = await customer();
    const joined = expectOk(await scanQr(user, qr.token), 201);
    expect(joined.action).toBe("joined");
    expect(joined.ticket).toMatchObject({ queueId: f.queueId, userId: user.id, source: "qr", status: "waiting" });
    expect(joined.queues).toEqual([]);
    const again = expectOk(await scanQr(user, qr.token));
    expect([again.action, again.ticket.id]).toEqual(["already_in_queue", joined.ticket.id]);
    // The code stays usable by others.
    expect(expectOk(await scanQr(await customer(), qr.token), 201).action).toBe("joined");
  });

  it("service_checkin joins the service's first active queue", async () => {
    const g = await queueFixture("pro");
    const second = await addQueue(g);
    expectOk(await call("PATCH", `/v1/business/queues/${g.queueId}/status`, { token: g.owner.token, body: { status: "paused" } }));
    const qr = await token(g, { purpose: "service_checkin", serviceId: g.serviceId });
    const joined = expectOk(await scanQr(await customer(), qr.token), 201);
    expect(joined.ticket.queueId).toBe(second);
    expectOk(await call("PATCH", `/v1/business/queues/${second}/status`, { token: g.owner.token, body: { status: "closed" } }));
    const res = await scanQr(await customer(), qr.token);
    expectError(res, 409, "QUEUE_CLOSED");
    expect(res.body.error.details.reason).toBe("no_active_queue");
  });

  it("single_use_invite joins once, then answers 410 QR_TOKEN_USED", async () => {
    const qr = await token(f, { purpose: "single_use_invite", queueId: f.queueId });
    const first = await customer();
    expect(expectOk(await scanQr(first, qr.token), 201).action).toBe("joined");
    expectError(await scanQr(await customer(), qr.token), 410, "QR_TOKEN_USED");
    expectError(await scanQr(first, qr.token), 410, "QR_TOKEN_USED");
    const listed = expectOk(await call("GET", `/v1/qr-tokens?purpose=single_use_invite&queueId=${f.queueId}`, { token: f.owner.token }));
    expect(listed.find((t: any) => t.id === qr.id)).toMatchObject({ status: "used", usedAt: expect.any(String) });
  });

  it("single_use_invite is handed back when the join is refused", async () => {
    const g = await queueFixture("pro");
    const qr = await token(g, { purpose: "single_use_invite", queueId: g.queueId });
    expectOk(await call("PATCH", `/v1/business/queues/${g.queueId}/status`, { token: g.owner.token, body: { status: "paused" } }));
    expectError(await scanQr(await customer(), qr.token), 409, "QUEUE_PAUSED");
    expectOk(await call("PATCH", `/v1/business/queues/${g.queueId}/status`, { token: g.owner.token, body: { status: "active" } }));
    expect(expectOk(await scanQr(await customer(), qr.token), 201).action).toBe("joined");
  });

  it("verification marks the scanner's ticket present; without a ticket it is 404", async () => {
    testClock.set("2026-05-05T09:00:00.000Z");
    const qr = await token(f, { purpose: "verification", queueId: f.queueId });
    const user = await customer();
    const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: user.token }), 201);
    const res = expectOk(await scanQr(user, qr.token));
    expect(res.action).toBe("present");
    expect(res.ticket).toMatchObject({ id: ticket.id, presentAt: "2026-05-05T09:00:00.000Z" });
    expectError(await scanQr(await customer(), qr.token), 404, "NOT_FOUND");
  });

  it("verification of a service-wide code makes a remote join arrive by qr_scan", async () => {
    const g = await queueFixture("pro");
    const user = await customer();
    const joined = expectOk(await call("POST", `/v1/remote-join/${g.queueId}/start`, { token: user.token, body: near(900) }), 201);
    const qr = await token(g, { purpose: "verification", serviceId: g.serviceId });
    expect(expectOk(await scanQr(user, qr.token)).ticket.presentAt).not.toBeNull();
    const rj = expectOk(await call("GET", `/v1/remote-join/${joined.ticket.id}`, { token: user.token }));
    expect(rj.remoteJoin).toMatchObject({ status: "arrived", confirmMethod: "qr_scan" });
  });

  it("operator_access answers the queues to an operator, 403 to anyone else", async () => {
    const qr = await token(f, { purpose: "operator_access", queueId: f.queueId });
    const operator = await addMember(f.owner, f.organizationId, "operator");
    const res = expectOk(await scanQr(operator, qr.token));
    expect(res.action).toBe("operator_access");
    expect(res.ticket).toBeNull();
    expect(res.queues.map((q: any) => q.id)).toEqual([f.queueId]);
    expectError(await scanQr(await customer(), qr.token), 403, "AUTHORIZATION_ERROR");
    // An operator of another organization is nobody here.
    const other = await queueFixture("pro");
    expectError(await scanQr(other.owner, qr.token), 403, "AUTHORIZATION_ERROR");
    const service = await token(f, { purpose: "operator_access", serviceId: f.serviceId });
    expect(expectOk(await scanQr(operator, service.token)).queues.map((q: any) => q.id)).toContain(f.queueId);
  });

  it("refuses an expired code with 410 QR_TOKEN_EXPIRED, and a revoked one alike", async () => {
    testClock.set("2026-05-05T09:00:00.000Z");
    const qr = await token(f, { purpose: "queue_join", queueId: f.queueId, expiresAt: "2026-05-05T10:00:00Z" });
    testClock.set("2026-05-05T10:00:00.000Z");
    const res = await scanQr(await customer(), qr.token);
    expectError(res, 410, "QR_TOKEN_EXPIRED");
    expect(res.body.error.details).toMatchObject({ status: "expired", expiredAt: "2026-05-05T10:00:00.000Z" });
    const revoked = await token(f, { purpose: "queue_join", queueId: f.queueId });
    expectOk(await call("DELETE", `/v1/qr-tokens/${revoked.id}`, { token: f.owner.token }));
    const gone = await scanQr(await customer(), revoked.token);
    expectError(gone, 410, "QR_TOKEN_EXPIRED");
    expect(gone.body.error.details.status).toBe("revoked");
  });

  it("refuses a scan farther than the allowed radius with 422 OUT_OF_RANGE", async () => {
    const qr = await token(f, { purpose: "queue_join", queueId: f.queueId });
    const res = await scanQr(await customer(), qr.token, near(5200));
    expectError(res, 422, "OUT_OF_RANGE");
    expect(res.body.error.details).toEqual({ distanceKm: 5.2, maxKm: 5 });
  });

  it("answers 404 on token for an unknown code", async () => {
    expectError(await scanQr(await customer(), "no-such-token"), 404, "NOT_FOUND", "token");
  });

  it("records each accepted scan with its user", async () => {
    const qr = await token(f, { purpose: "queue_join", queueId: f.queueId });
    const user = await customer();
    expectOk(await scanQr(user, qr.token), 201);
    const rows = await env.DB.prepare("SELECT channel, source_id, queue_id FROM entry_scans WHERE user_id = ?").bind(user.id).all();
    expect(rows.results).toEqual([{ channel: "qr", source_id: qr.id, queue_id: f.queueId }]);
  });

  it("needs a user session", async () => {
    const qr = await token(f, { purpose: "queue_join", queueId: f.queueId });
    const key = await createApiKey(f.owner, f.organizationId, ["admin"]);
    expectError(await call("POST", "/v1/qr/scan", { apiKey: key.key, body: { token: qr.token, ...SITE } }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("POST", "/v1/qr/scan", { body: { token: qr.token, ...SITE } }), 401, "AUTHENTICATION_ERROR");
  });

  it.each([
    ["a missing token", { latitude: 48.85, longitude: 2.35 }, "token"],
    ["an empty token", { token: "", latitude: 48.85, longitude: 2.35 }, "token"],
    ["a token as a number", { token: 42, latitude: 48.85, longitude: 2.35 }, "token"],
    ["a missing latitude", { token: "x", longitude: 2.35 }, "latitude"],
    ["a longitude over 180", { token: "x", latitude: 48.85, longitude: 180.5 }, "longitude"],
    ["an unknown field", { token: "x", latitude: 48.85, longitude: 2.35, queueId: "que_x" }, "queueId"],
  ])("refuses %s", async (_label, body, field) => {
    expectError(await call("POST", "/v1/qr/scan", { token: f.owner.token, body }), 400, "VALIDATION_ERROR", field);
  });
});

describe("POST /v1/nfc/scan", () => {
  let nfcId: string;
  beforeAll(async () => {
    nfcId = `scan-${unique("tag")}`;
    expectOk(
      await call("POST", "/v1/nfc/tags", { token: f.owner.token, body: { nfcId, queueId: f.queueId, locationName: "Door", ...SITE } }),
      201,
    );
  });

  function scanNfc(user: TestUser, extra: Record<string, unknown> = {}, at = near(30)) {
    return call("POST", "/v1/nfc/scan", { token: user.token, body: { nfcId, ...at, ...extra } });
  }

  it("joins the tag's queue and counts the scan, the device and the time", async () => {
    testClock.set("2026-05-06T09:00:00.000Z");
    const user = await customer();
    const device = { deviceInfo: { phoneModel: "Pixel 8", osVersion: "Android 15" } };
    const joined = expectOk(await scanNfc(user, device), 201);
    expect(joined.action).toBe("joined");
    expect(joined.ticket).toMatchObject({ queueId: f.queueId, source: "nfc", userId: user.id });
    testClock.set("2026-05-06T09:01:00.000Z");
    expect(expectOk(await scanNfc(user, device)).action).toBe("already_in_queue");
    testClock.set("2026-05-06T09:02:00.000Z");
    expectOk(await scanNfc(await customer()), 201);
    const tag = expectOk(await call("GET", `/v1/nfc/tags/${nfcId}`, { token: f.owner.token }));
    expect(tag).toMatchObject({ scanCount: 3, uniqueDevices: 2, lastScannedAt: "2026-05-06T09:02:00.000Z", status: "enabled" });
    const rows = await env.DB.prepare("SELECT phone_model, os_version FROM entry_scans WHERE user_id = ? AND channel = 'nfc'")
      .bind(user.id)
      .all();
    expect(rows.results).toEqual([
      { phone_model: "Pixel 8", os_version: "Android 15" },
      { phone_model: "Pixel 8", os_version: "Android 15" },
    ]);
  });

  it("refuses a disabled tag until it is enabled again", async () => {
    expectOk(await call("PATCH", `/v1/nfc/tags/${nfcId}`, { token: f.owner.token, body: { enabled: false } }));
    const res = await scanNfc(await customer());
    expectError(res, 409, "INVALID_STATE");
    expect(res.body.error.details).toMatchObject({ status: "disabled", allowed: ["enabled"] });
    expectOk(await call("PATCH", `/v1/nfc/tags/${nfcId}`, { token: f.owner.token, body: { enabled: true } }));
    expectOk(await scanNfc(await customer()), 201);
  });

  it("refuses a scan over 200 m from the tag with 422 OUT_OF_RANGE", async () => {
    const before = expectOk(await call("GET", `/v1/nfc/tags/${nfcId}`, { token: f.owner.token })).scanCount;
    const res = await scanNfc(await customer(), {}, near(250));
    expectError(res, 422, "OUT_OF_RANGE");
    expect(res.body.error.details).toEqual({ distanceKm: 0.25, maxKm: 0.2 });
    expectOk(await scanNfc(await customer(), {}, near(190)), 201);
    expect(expectOk(await call("GET", `/v1/nfc/tags/${nfcId}`, { token: f.owner.token })).scanCount).toBe(before + 1);
  });

  it("answers 404 for an unknown tag and a tag of an archived queue is closed", async () => {
    expectError(await call("POST", "/v1/nfc/scan", { token: f.owner.token, body: { nfcId: "unknown-tag", ...SITE } }), 404, "NOT_FOUND");
    const g = await queueFixture("pro");
    const id = `arch-${unique("t")}`;
    expectOk(
      await call("POST", "/v1/nfc/tags", { token: g.owner.token, body: { nfcId: id, queueId: g.queueId, locationName: "x", ...SITE } }),
      201,
    );
    expectOk(await call("POST", `/v1/queues/${g.queueId}/archive`, { token: g.owner.token }));
    expectError(await call("POST", "/v1/nfc/scan", { token: (await customer()).token, body: { nfcId: id, ...SITE } }), 409, "QUEUE_CLOSED");
  });

  it("needs a user session", async () => {
    const key = await createApiKey(f.owner, f.organizationId, ["admin"]);
    expectError(await call("POST", "/v1/nfc/scan", { apiKey: key.key, body: { nfcId, ...SITE } }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("POST", "/v1/nfc/scan", { body: { nfcId, ...SITE } }), 401, "AUTHENTICATION_ERROR");
  });

  it.each([
    ["a missing nfcId", { latitude: 48.85, longitude: 2.35 }, "nfcId"],
    ["an nfcId with a space", { nfcId: "04 A2", latitude: 48.85, longitude: 2.35 }, "nfcId"],
    ["a latitude as a string", { nfcId: "x", latitude: "48.85", longitude: 2.35 }, "latitude"],
    ["a latitude over 90", { nfcId: "x", latitude: 95, longitude: 2.35 }, "latitude"],
    [
      "a deviceInfo without osVersion",
      { nfcId: "x", latitude: 48.85, longitude: 2.35, deviceInfo: { phoneModel: "P" } },
      "deviceInfo.osVersion",
    ],
    [
      "an unknown deviceInfo field",
      { nfcId: "x", latitude: 48.85, longitude: 2.35, deviceInfo: { phoneModel: "P", osVersion: "1", imei: "1" } },
      "deviceInfo.imei",
    ],
    ["an unknown field", { nfcId: "x", latitude: 48.85, longitude: 2.35, queueId: "que_x" }, "queueId"],
  ])("refuses %s", async (_label, body, field) => {
    expectError(await call("POST", "/v1/nfc/scan", { token: f.owner.token, body }), 400, "VALIDATION_ERROR", field);
  });
});
