import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import { destination } from "../../src/domain/geo";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk } from "../helpers/api";
import { settle } from "../helpers/catalog";
import { addMember, addQueue, createApiKey, type Fixture, type TestUser } from "../helpers/fixtures";
import { sweep } from "../helpers/cron";
import { seedQueueFixture, seedUser } from "../helpers/seed";

// Remote join through HTTP: eligibility, start, location updates, confirmation, and the clocks
// (front expiry, inactivity, penalty) run by the minute sweep with an injected clock.

const SITE = { latitude: 48.85, longitude: 2.35 };
const near = (metres: number) => destination(SITE, 90, metres / 1000);
const MIN = 60_000;

// Every event the file emits, in order, kept out of the EVENTS queue for the whole file (the
// fixtures of `beforeAll` hooks and the rooms' drains between tests included). A plain stand-in
// rather than a vi spy: the setup file restores spies after each test.
const sent: DomainEventMessage[] = [];
const realSendBatch = env.EVENTS.sendBatch;
beforeAll(() => {
  env.EVENTS.sendBatch = async (messages) => {
    for (const m of messages) sent.push(m.body as DomainEventMessage);
    return undefined as never;
  };
});
afterAll(() => {
  env.EVENTS.sendBatch = realSendBatch;
});

// Organizations and customers written straight into D1 (test/helpers/seed.ts): the file tests
// remote join, not registration, and 26 organizations through the API were most of its setup.
function customer(): Promise<TestUser> {
  return seedUser("customer");
}

async function start(user: TestUser, queueId: string, at = near(300)): Promise<any> {
  return expectOk(await call("POST", `/v1/remote-join/${queueId}/start`, { token: user.token, body: at }), 201);
}

async function locate(user: TestUser, ticketId: string, metres: number, accuracy?: number) {
  return call("POST", `/v1/remote-join/${ticketId}/location`, {
    token: user.token,
    body: { ...near(metres), ...(accuracy === undefined ? {} : { accuracy }) },
  });
}

async function remote(ticketId: string, token: string): Promise<any> {
  return expectOk(await call("GET", `/v1/remote-join/${ticketId}`, { token }));
}

function eventsOf(ticketId: string): string[] {
  return sent.filter((m) => m.ticketId === ticketId).map((m) => m.type);
}

let f: Fixture;
beforeAll(async () => {
  f = await seedQueueFixture("pro");
});

describe("POST /v1/queues/{queueId}/eligibility", () => {
  it("answers eligible inside the default 5 km, with the distance to the nearest location", async () => {
    const user = await customer();
    const data = expectOk(await call("POST", `/v1/queues/${f.queueId}/eligibility`, { token: user.token, body: near(1200) }));
    expect(data).toEqual({ eligible: true, distanceKm: 1.2, maxRadiusKm: 5 });
  });

  it("answers out_of_range beyond the radius; the service's radius wins over the organization's", async () => {
    const user = await customer();
    const far = expectOk(await call("POST", `/v1/queues/${f.queueId}/eligibility`, { token: user.token, body: near(6000) }));
    expect(far).toEqual({ eligible: false, distanceKm: 6, maxRadiusKm: 5, reason: "out_of_range" });

    const g = await seedQueueFixture("pro");
    await env.DB.prepare("UPDATE organizations SET availability_radius_km = 10 WHERE id = ?").bind(g.organizationId).run();
    expect(expectOk(await call("POST", `/v1/queues/${g.queueId}/eligibility`, { token: user.token, body: near(6000) }))).toMatchObject({
      eligible: true,
      maxRadiusKm: 10,
    });
    await env.DB.prepare("UPDATE services SET max_remote_join_radius_km = 0.5 WHERE id = ?").bind(g.serviceId).run();
    expect(expectOk(await call("POST", `/v1/queues/${g.queueId}/eligibility`, { token: user.token, body: near(600) }))).toEqual({
      eligible: false,
      distanceKm: 0.6,
      maxRadiusKm: 0.5,
      reason: "out_of_range",
    });
  });

  it("measures to the nearest of the service's locations", async () => {
    const g = await seedQueueFixture("pro");
    const far = destination(SITE, 0, 50);
    const at = Date.now();
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO locations (id, organization_id, name, address, latitude, longitude, timezone, created_at, updated_at) VALUES ('loc_second0000000000000', ?, 'North', 'x', ?, ?, 'UTC', ?, ?)",
      ).bind(g.organizationId, far.latitude, far.longitude, at, at),
      env.DB.prepare("INSERT INTO service_locations (service_id, location_id) VALUES (?, 'loc_second0000000000000')").bind(g.serviceId),
    ]);
    const user = await customer();
    const data = expectOk(await call("POST", `/v1/queues/${g.queueId}/eligibility`, { token: user.token, body: destination(far, 180, 1) }));
    expect(data).toEqual({ eligible: true, distanceKm: 1, maxRadiusKm: 5 });
  });

  it("answers queue_paused on a paused queue", async () => {
    const g = await seedQueueFixture("pro");
    expectOk(await call("PATCH", `/v1/business/queues/${g.queueId}/status`, { token: g.owner.token, body: { status: "paused" } }));
    const data = expectOk(await call("POST", `/v1/queues/${g.queueId}/eligibility`, { token: g.owner.token, body: near(10) }));
    expect(data).toMatchObject({ eligible: false, reason: "queue_paused" });
  });

  it("takes the organization's own API key and answers 404 to another organization's key", async () => {
    const own = await createApiKey(f.owner, f.organizationId, ["read"]);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/eligibility`, { apiKey: own.key, body: near(10) }));
    const other = await seedQueueFixture("pro");
    const stranger = await createApiKey(other.owner, other.organizationId, ["admin"]);
    expectError(await call("POST", `/v1/queues/${f.queueId}/eligibility`, { apiKey: stranger.key, body: near(10) }), 404, "NOT_FOUND");
    expectError(
      await call("POST", "/v1/queues/que_00000000000000000000/eligibility", { token: f.owner.token, body: near(10) }),
      404,
      "NOT_FOUND",
    );
  });

  it.each([
    ["a missing latitude", { longitude: 2.35 }, "latitude"],
    ["a latitude as a string", { latitude: "48.85", longitude: 2.35 }, "latitude"],
    ["a latitude over 90", { latitude: 91, longitude: 2.35 }, "latitude"],
    ["a longitude under -180", { latitude: 48, longitude: -181 }, "longitude"],
    ["an unknown field", { latitude: 48, longitude: 2, radiusKm: 100 }, "radiusKm"],
  ])("refuses %s", async (_label, body, field) => {
    expectError(await call("POST", `/v1/queues/${f.queueId}/eligibility`, { token: f.owner.token, body }), 400, "VALIDATION_ERROR", field);
  });

  it("needs a credential", async () => {
    expectError(await call("POST", `/v1/queues/${f.queueId}/eligibility`, { body: near(10) }), 401, "AUTHENTICATION_ERROR");
  });
});

describe("POST /v1/remote-join/{queueId}/start", () => {
  it("creates a pending remote join and a waiting remote ticket", async () => {
    testClock.set("2026-05-04T10:00:00.000Z");
    const g = await seedQueueFixture("pro");
    const user = await customer();
    const data = await start(user, g.queueId);
    expect(data.remoteJoin).toMatchObject({
      id: expect.stringMatching(/^rjn_/),
      status: "pending",
      ticketId: data.ticket.id,
      geofenceRadiusM: 100,
      queueId: g.queueId,
      userId: user.id,
      lastLocation: null,
      lastLocationAt: "2026-05-04T10:00:00.000Z",
      // Alone in the queue: at the front at once, so the 30-minute clock runs from the start.
      reachedFrontAt: "2026-05-04T10:00:00.000Z",
      expiresAt: "2026-05-04T10:30:00.000Z",
      arrivedAt: null,
      confirmMethod: null,
    });
    expect(data.ticket).toMatchObject({ status: "waiting", source: "remote", userId: user.id, position: 1, presentAt: null });
    expect(await remote(data.ticket.id, user.token)).toEqual(data);
  });

  it("refuses a start outside the radius with 422 OUT_OF_RANGE and the distance", async () => {
    const user = await customer();
    const res = await call("POST", `/v1/remote-join/${f.queueId}/start`, { token: user.token, body: near(7500) });
    expectError(res, 422, "OUT_OF_RANGE");
    expect(res.body.error.details).toEqual({ distanceKm: 7.5, maxKm: 5 });
  });

  it("refuses a second remote join on its way in the same queue", async () => {
    const user = await customer();
    const first = await start(user, f.queueId);
    const res = await call("POST", `/v1/remote-join/${f.queueId}/start`, { token: user.token, body: near(100) });
    expectError(res, 409, "CONFLICT", "queueId");
    expect(res.body.error.details.ticketId).toBe(first.ticket.id);
  });

  it("follows the queue's rules: paused queues refuse", async () => {
    const g = await seedQueueFixture("pro");
    expectOk(await call("PATCH", `/v1/business/queues/${g.queueId}/status`, { token: g.owner.token, body: { status: "paused" } }));
    expectError(
      await call("POST", `/v1/remote-join/${g.queueId}/start`, { token: (await customer()).token, body: near(10) }),
      409,
      "QUEUE_PAUSED",
    );
  });

  it("needs a user session", async () => {
    const key = await createApiKey(f.owner, f.organizationId, ["admin"]);
    expectError(await call("POST", `/v1/remote-join/${f.queueId}/start`, { apiKey: key.key, body: near(10) }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("POST", `/v1/remote-join/${f.queueId}/start`, { body: near(10) }), 401, "AUTHENTICATION_ERROR");
    expectError(
      await call("POST", "/v1/remote-join/que_00000000000000000000/start", { token: f.owner.token, body: near(10) }),
      404,
      "NOT_FOUND",
    );
  });

  it.each([
    ["a missing longitude", { latitude: 48.85 }, "longitude"],
    ["a longitude as a string", { latitude: 48.85, longitude: "2.35" }, "longitude"],
    ["a latitude under -90", { latitude: -90.1, longitude: 2 }, "latitude"],
    ["an unknown field", { latitude: 48.85, longitude: 2.35, partySize: 3 }, "partySize"],
  ])("refuses %s", async (_label, body, field) => {
    expectError(await call("POST", `/v1/remote-join/${f.queueId}/start`, { token: f.owner.token, body }), 400, "VALIDATION_ERROR", field);
  });
});

describe("call-next and remote tickets", () => {
  it("passes over a remote ticket that has not arrived without losing its place, and calls it once arrived", async () => {
    testClock.set("2026-05-04T11:00:00.000Z");
    const g = await seedQueueFixture("pro");
    const user = await customer();
    const joined = await start(user, g.queueId);
    const walkIn = expectOk(await call("POST", `/v1/queues/${g.queueId}/operator-join`, { token: g.owner.token, body: {} }), 201);
    expect(walkIn.position).toBe(2);

    testClock.set("2026-05-04T11:05:00.000Z");
    const called = expectOk(await call("POST", `/v1/queues/${g.queueId}/call-next`, { token: g.owner.token }));
    expect(called.id).toBe(walkIn.id);
    const still = await remote(joined.ticket.id, user.token);
    expect([still.ticket.status, still.ticket.position]).toEqual(["waiting", 1]);
    expectError(await call("POST", `/v1/queues/${g.queueId}/call-next`, { token: g.owner.token }), 409, "QUEUE_EMPTY");

    const arrived = expectOk(await call("POST", `/v1/remote-join/${joined.ticket.id}/confirm`, { token: g.owner.token }));
    expect(arrived.remoteJoin).toMatchObject({ status: "arrived", confirmMethod: "manual", arrivedAt: "2026-05-04T11:05:00.000Z" });
    expect(arrived.ticket.presentAt).toBe("2026-05-04T11:05:00.000Z");
    expect(expectOk(await call("POST", `/v1/queues/${g.queueId}/call-next`, { token: g.owner.token })).id).toBe(joined.ticket.id);
  });

  it("starts the front clock when no callable ticket is left ahead", async () => {
    testClock.set("2026-05-04T12:00:00.000Z");
    const g = await seedQueueFixture("pro");
    expectOk(await call("POST", `/v1/queues/${g.queueId}/operator-join`, { token: g.owner.token, body: {} }), 201);
    const user = await customer();
    const joined = await start(user, g.queueId);
    expect(joined.remoteJoin).toMatchObject({ reachedFrontAt: null, expiresAt: null });
    testClock.set("2026-05-04T12:04:00.000Z");
    expectOk(await call("POST", `/v1/queues/${g.queueId}/call-next`, { token: g.owner.token }));
    expect((await remote(joined.ticket.id, user.token)).remoteJoin).toMatchObject({
      reachedFrontAt: "2026-05-04T12:04:00.000Z",
      expiresAt: "2026-05-04T12:34:00.000Z",
    });
  });

  it("an operator's present is a manual arrival", async () => {
    const g = await seedQueueFixture("pro");
    const user = await customer();
    const joined = await start(user, g.queueId);
    expectOk(await call("POST", `/v1/tickets/${joined.ticket.id}/present`, { token: g.owner.token }));
    expect((await remote(joined.ticket.id, user.token)).remoteJoin).toMatchObject({ status: "arrived", confirmMethod: "manual" });
  });

  it("a cancelled ticket cancels its remote join", async () => {
    const user = await customer();
    const g = await seedQueueFixture("pro");
    const joined = await start(user, g.queueId);
    expectOk(await call("POST", `/v1/tickets/${joined.ticket.id}/cancel`, { token: user.token }));
    expect((await remote(joined.ticket.id, user.token)).remoteJoin.status).toBe("cancelled");
    expectError(await locate(user, joined.ticket.id, 10), 409, "INVALID_STATE");
  });
});

describe("POST /v1/remote-join/{ticketId}/location", () => {
  let user: TestUser;
  let ticketId: string;
  let g: Fixture;
  beforeAll(async () => {
    user = await customer();
    g = await seedQueueFixture("pro");
    ticketId = (await start(user, g.queueId)).ticket.id;
  });

  it("sets travelling outside the geofence and within_geofence inside it", async () => {
    const far = expectOk(await locate(user, ticketId, 1000));
    expect(far.remoteJoin).toMatchObject({ status: "travelling", lastLocation: { accuracyM: 0, distanceM: 1000 } });
    expect(expectOk(await locate(user, ticketId, 80)).remoteJoin.status).toBe("within_geofence");
  });

  it("takes the accuracy into account: distance − accuracy ≤ 100 m", async () => {
    expect(expectOk(await locate(user, ticketId, 150, 60)).remoteJoin.status).toBe("within_geofence");
    expect(expectOk(await locate(user, ticketId, 150, 40)).remoteJoin.status).toBe("travelling");
  });

  it("is for the owner only: another user, even the organization's owner, gets 404", async () => {
    expectError(await locate(await customer(), ticketId, 10), 404, "NOT_FOUND");
    expectError(await locate(g.owner, ticketId, 10), 404, "NOT_FOUND");
    const key = await createApiKey(g.owner, g.organizationId, ["admin"]);
    expectError(await call("POST", `/v1/remote-join/${ticketId}/location`, { apiKey: key.key, body: near(10) }), 404, "NOT_FOUND");
    expectError(await locate(user, "tkt_000000000000000000000000000000000", 10), 404, "NOT_FOUND");
  });

  it("answers 404 for a ticket that is not a remote join", async () => {
    const plain = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: user.token }), 201);
    expectError(await locate(user, plain.id, 10), 404, "NOT_FOUND");
  });

  it.each([
    ["a negative accuracy", { latitude: 48.85, longitude: 2.35, accuracy: -1 }, "accuracy"],
    ["an accuracy over 1000 m", { latitude: 48.85, longitude: 2.35, accuracy: 1001 }, "accuracy"],
    ["an accuracy as a string", { latitude: 48.85, longitude: 2.35, accuracy: "5" }, "accuracy"],
    ["a missing latitude", { longitude: 2.35 }, "latitude"],
    ["an unknown field", { latitude: 48.85, longitude: 2.35, speed: 3 }, "speed"],
  ])("refuses %s", async (_label, body, field) => {
    expectError(await call("POST", `/v1/remote-join/${ticketId}/location`, { token: user.token, body }), 400, "VALIDATION_ERROR", field);
  });
});

describe("POST /v1/remote-join/{ticketId}/confirm", () => {
  it("by geofence needs within_geofence", async () => {
    const user = await customer();
    const joined = await start(user, (await seedQueueFixture("pro")).queueId);
    const res = await call("POST", `/v1/remote-join/${joined.ticket.id}/confirm`, { token: user.token, body: { method: "geofence" } });
    expectError(res, 409, "INVALID_STATE");
    expect(res.body.error.details).toMatchObject({ status: "pending", allowed: ["within_geofence"] });
    expectOk(await locate(user, joined.ticket.id, 30));
    // The owner's default method is geofence.
    const ok = expectOk(await call("POST", `/v1/remote-join/${joined.ticket.id}/confirm`, { token: user.token }));
    expect(ok.remoteJoin).toMatchObject({ status: "arrived", confirmMethod: "geofence" });
    expect(ok.ticket.presentAt).not.toBeNull();
    expectError(await call("POST", `/v1/remote-join/${joined.ticket.id}/confirm`, { token: user.token }), 409, "INVALID_STATE");
  });

  it("by qr_scan needs the owner's scan of the queue's code in the last 10 minutes", async () => {
    testClock.set("2026-05-04T14:00:00.000Z");
    const g = await seedQueueFixture("pro");
    const user = await customer();
    const joined = await start(user, g.queueId);
    const confirm = () => call("POST", `/v1/remote-join/${joined.ticket.id}/confirm`, { token: user.token, body: { method: "qr_scan" } });
    expectError(await confirm(), 409, "INVALID_STATE");
    const qr = expectOk(
      await call("POST", "/v1/qr-tokens", { token: g.owner.token, body: { purpose: "queue_join", queueId: g.queueId } }),
      201,
    );
    // Scanning the door's code on arrival gives back the ticket held, not a second one.
    const scan = expectOk(await call("POST", "/v1/qr/scan", { token: user.token, body: { token: qr.token, ...near(20) } }));
    expect([scan.action, scan.ticket.id]).toEqual(["already_in_queue", joined.ticket.id]);
    testClock.set("2026-05-04T14:10:01.000Z");
    expectOk(await locate(user, joined.ticket.id, 20));
    expectError(await confirm(), 409, "INVALID_STATE");
    expectOk(await call("POST", "/v1/qr/scan", { token: user.token, body: { token: qr.token, ...near(20) } }));
    expect(expectOk(await confirm()).remoteJoin).toMatchObject({ status: "arrived", confirmMethod: "qr_scan" });
  });

  it("by nfc_scan needs the owner's scan of the queue's tag", async () => {
    const g = await seedQueueFixture("pro");
    const user = await customer();
    const joined = await start(user, g.queueId);
    const confirm = () => call("POST", `/v1/remote-join/${joined.ticket.id}/confirm`, { token: user.token, body: { method: "nfc_scan" } });
    expectError(await confirm(), 409, "INVALID_STATE");
    const nfcId = `rj-${g.queueId}`;
    expectOk(
      await call("POST", "/v1/nfc/tags", { token: g.owner.token, body: { nfcId, queueId: g.queueId, locationName: "Door", ...SITE } }),
      201,
    );
    // Someone else's scan is no proof of this owner's arrival.
    const other = await customer();
    expectOk(await call("POST", "/v1/nfc/scan", { token: other.token, body: { nfcId, ...near(5) } }), 201);
    expectError(await confirm(), 409, "INVALID_STATE");
    expect(expectOk(await call("POST", "/v1/nfc/scan", { token: user.token, body: { nfcId, ...near(5) } })).action).toBe(
      "already_in_queue",
    );
    expect(expectOk(await confirm()).remoteJoin).toMatchObject({ status: "arrived", confirmMethod: "nfc_scan" });
  });

  it("manual needs an operator: the owner gets 403, an operator of the organization confirms", async () => {
    const g = await seedQueueFixture("pro");
    const user = await customer();
    const joined = await start(user, g.queueId);
    const path = `/v1/remote-join/${joined.ticket.id}/confirm`;
    expectError(await call("POST", path, { token: user.token, body: { method: "manual" } }), 403, "AUTHORIZATION_ERROR");
    const operator = await addMember(g.owner, g.organizationId, "operator");
    expect(expectOk(await call("POST", path, { token: operator.token, body: { method: "manual" } })).remoteJoin.status).toBe("arrived");
  });

  it("answers 404 to other users and other organizations, 403 to a read-only key", async () => {
    const g = await seedQueueFixture("pro");
    const user = await customer();
    const joined = await start(user, g.queueId);
    const path = `/v1/remote-join/${joined.ticket.id}/confirm`;
    expectError(await call("POST", path, { token: (await customer()).token, body: { method: "manual" } }), 404, "NOT_FOUND");
    const other = await seedQueueFixture("pro");
    expectError(await call("POST", path, { token: other.owner.token, body: { method: "manual" } }), 404, "NOT_FOUND");
    const otherKey = await createApiKey(other.owner, other.organizationId, ["admin"]);
    expectError(await call("POST", path, { apiKey: otherKey.key }), 404, "NOT_FOUND");
    const readKey = await createApiKey(g.owner, g.organizationId, ["read"]);
    expectError(await call("POST", path, { apiKey: readKey.key }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("GET", `/v1/remote-join/${joined.ticket.id}`, { token: (await customer()).token }), 404, "NOT_FOUND");
    expectError(await call("GET", `/v1/remote-join/${joined.ticket.id}`, { token: other.owner.token }), 404, "NOT_FOUND");
    expect((await remote(joined.ticket.id, g.owner.token)).remoteJoin.status).toBe("pending");
  });

  it.each([
    ["an unknown method", { method: "telepathy" }, "method"],
    ["a method as a number", { method: 1 }, "method"],
    ["an unknown field", { method: "manual", force: true }, "force"],
  ])("refuses %s", async (_label, body, field) => {
    const user = await customer();
    const joined = await start(user, f.queueId, near(10));
    expectError(
      await call("POST", `/v1/remote-join/${joined.ticket.id}/confirm`, { token: user.token, body }),
      400,
      "VALIDATION_ERROR",
      field,
    );
  });
});

describe("clocks run by the sweep", () => {
  it("warns at 7 minutes without a location update and auto-skips at 10", async () => {
    const t0 = Date.parse("2026-06-01T09:00:00.000Z");
    testClock.set(t0);
    const g = await seedQueueFixture("pro");
    const user = await customer();
    const joined = await start(user, g.queueId);
    const id = joined.ticket.id;
    await settle(g.queueId);

    testClock.set(t0 + 6 * MIN);
    await sweep(t0 + 6 * MIN);
    expect(eventsOf(id)).not.toContain("inactivity.warning");

    testClock.set(t0 + 7 * MIN);
    await sweep(t0 + 7 * MIN);
    await settle(g.queueId);
    const warned = await remote(id, user.token);
    expect(warned.remoteJoin).toMatchObject({ status: "pending", warnedAt: "2026-06-01T09:07:00.000Z" });
    expect(warned.ticket.status).toBe("waiting");
    expect(eventsOf(id).filter((t) => t === "inactivity.warning")).toHaveLength(1);

    testClock.set(t0 + 10 * MIN);
    await sweep(t0 + 10 * MIN);
    await settle(g.queueId);
    const skipped = await remote(id, user.token);
    expect(skipped.ticket).toMatchObject({ status: "skipped", skipReason: "auto_skipped", position: null });
    expect(skipped.remoteJoin.status).toBe("cancelled");
    expect(eventsOf(id)).toContain("ticket.auto_skipped");
    expect(eventsOf(id).filter((t) => t === "inactivity.warning")).toHaveLength(1);

    // Restored, it starts its journey again with fresh clocks.
    testClock.set(t0 + 11 * MIN);
    expectOk(await call("POST", `/v1/tickets/${id}/recover`, { token: g.owner.token, body: { recoveryOption: "restore" } }));
    expect((await remote(id, user.token)).remoteJoin).toMatchObject({
      status: "pending",
      lastLocationAt: "2026-06-01T09:11:00.000Z",
      warnedAt: null,
    });
  });

  it("a location update restarts the inactivity clock and clears the warning", async () => {
    const t0 = Date.parse("2026-06-02T09:00:00.000Z");
    testClock.set(t0);
    const g = await seedQueueFixture("pro");
    const user = await customer();
    const id = (await start(user, g.queueId)).ticket.id;
    await settle(g.queueId);
    testClock.set(t0 + 7 * MIN);
    await sweep(t0 + 7 * MIN);
    await settle(g.queueId);
    testClock.set(t0 + 8 * MIN);
    expect(expectOk(await locate(user, id, 2000)).remoteJoin).toMatchObject({ status: "travelling", warnedAt: null });
    testClock.set(t0 + 12 * MIN);
    await sweep(t0 + 12 * MIN);
    expect((await remote(id, user.token)).ticket.status).toBe("waiting");
    testClock.set(t0 + 18 * MIN);
    await sweep(t0 + 18 * MIN);
    await settle(g.queueId);
    expect((await remote(id, user.token)).ticket.status).toBe("skipped");
  });

  it("expires a join that has not arrived 30 minutes after reaching the front", async () => {
    const t0 = Date.parse("2026-06-03T09:00:00.000Z");
    const g = await seedQueueFixture("pro");
    const user = await customer();
    const id = await expireOne(user, g.queueId, t0);
    const expired = await remote(id, user.token);
    expect(expired.remoteJoin.status).toBe("expired");
    expect(expired.ticket.status).toBe("expired");
    expect(eventsOf(id)).toEqual(expect.arrayContaining(["ticket.expired", "remote_join.expired"]));
    expect(eventsOf(id)).not.toContain("ticket.auto_skipped");
    const row = await env.DB.prepare("SELECT user_id, expired_at FROM remote_join_expiries WHERE ticket_id = ?").bind(id).first<any>();
    expect(row).toEqual({ user_id: user.id, expired_at: t0 + 30 * MIN });
  });

  it("does not expire a join that arrived in time", async () => {
    const t0 = Date.parse("2026-06-04T09:00:00.000Z");
    testClock.set(t0);
    const g = await seedQueueFixture("pro");
    const user = await customer();
    const id = (await start(user, g.queueId)).ticket.id;
    await locate(user, id, 10);
    expectOk(await call("POST", `/v1/remote-join/${id}/confirm`, { token: user.token }));
    await settle(g.queueId);
    testClock.set(t0 + 40 * MIN);
    await sweep(t0 + 40 * MIN);
    const after = await remote(id, user.token);
    expect([after.remoteJoin.status, after.ticket.status]).toEqual(["arrived", "waiting"]);
  });

  it("penalises 3 expiries in 7 days for 24 hours", async () => {
    const user = await customer();
    const g = await seedQueueFixture("pro");
    const t0 = Date.parse("2026-07-01T09:00:00.000Z");
    await expireOne(user, g.queueId, t0);
    await expireOne(user, g.queueId, t0 + 2 * 24 * 60 * MIN);
    const third = t0 + 6 * 24 * 60 * MIN;
    await expireOne(user, g.queueId, third);
    const penaltyEnd = third + 30 * MIN + 24 * 60 * MIN;

    testClock.set(third + 31 * MIN);
    const res = await call("POST", `/v1/remote-join/${g.queueId}/start`, { token: user.token, body: near(10) });
    expectError(res, 403, "REMOTE_JOIN_PENALTY");
    expect(res.body.error.details).toEqual({ status: "penalty", until: new Date(penaltyEnd).toISOString() });
    const other = await seedQueueFixture("pro");
    expectError(
      await call("POST", `/v1/remote-join/${other.queueId}/start`, { token: user.token, body: near(10) }),
      403,
      "REMOTE_JOIN_PENALTY",
    );
    expect(expectOk(await call("POST", `/v1/queues/${g.queueId}/eligibility`, { token: user.token, body: near(10) }))).toMatchObject({
      eligible: false,
      reason: "penalty",
      penaltyUntil: new Date(penaltyEnd).toISOString(),
    });
    // Joining in person is not restricted.
    expectOk(await call("POST", `/v1/queues/${other.queueId}/join`, { token: user.token }), 201);

    testClock.set(penaltyEnd);
    await start(user, g.queueId, near(10));
  });

  it("forgets an expiry at the sweep once the penalty rule can no longer count it", async () => {
    const user = await customer();
    const g = await seedQueueFixture("pro");
    const t0 = Date.parse("2026-09-01T09:00:00.000Z");
    const old = await expireOne(user, g.queueId, t0);
    const recent = await expireOne(user, g.queueId, t0 + 7 * 24 * 60 * MIN);
    const stored = async () =>
      (
        await env.DB.prepare("SELECT ticket_id FROM remote_join_expiries WHERE user_id = ? ORDER BY expired_at").bind(user.id).all<any>()
      ).results.map((r) => r.ticket_id);
    const oldExpiredAt = t0 + 30 * MIN;
    await sweep(oldExpiredAt + 8 * 24 * 60 * MIN);
    expect(await stored()).toEqual([old, recent]);
    await sweep(oldExpiredAt + 8 * 24 * 60 * MIN + 1);
    expect(await stored()).toEqual([recent]);
  });

  it("does not penalise 3 expiries spread over more than 7 days", async () => {
    const user = await customer();
    const g = await seedQueueFixture("pro");
    const t0 = Date.parse("2026-08-01T09:00:00.000Z");
    await expireOne(user, g.queueId, t0);
    await expireOne(user, g.queueId, t0 + 4 * 24 * 60 * MIN);
    await expireOne(user, g.queueId, t0 + 8 * 24 * 60 * MIN);
    testClock.set(t0 + 8 * 24 * 60 * MIN + 31 * MIN);
    await start(user, g.queueId, near(10));
  });
});

/** Starts a remote join at `t0` in an empty queue, keeps it alive with location updates, and lets it expire at t0 + 30 min. */
async function expireOne(user: TestUser, queueId: string, t0: number): Promise<string> {
  testClock.set(t0);
  const id = (await start(user, queueId, near(500))).ticket.id;
  await settle(queueId);
  for (let m = 6; m < 30; m += 6) {
    testClock.set(t0 + m * MIN);
    expectOk(await locate(user, id, 500));
    await sweep(t0 + m * MIN);
  }
  testClock.set(t0 + 29 * MIN);
  await sweep(t0 + 29 * MIN);
  expect((await remote(id, user.token)).ticket.status).toBe("waiting");
  testClock.set(t0 + 30 * MIN);
  await sweep(t0 + 30 * MIN);
  await settle(queueId);
  return id;
}
