import { decode } from "fast-png";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import jsQR from "jsqr";
import { beforeAll, describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { call, fetchWorker, expectError, expectOk } from "../helpers/api";
import {
  addArchivedQueue,
  addMember,
  addQueue,
  createCatalog,
  createOrganization,
  createQueueFixture,
  type QueueFixture,
  registerUser,
  type TestUser,
} from "../helpers/fixtures";

async function fetchImage(query: string): Promise<Response> {
  return fetchWorker(`/v1/qr/generate?${query}`);
}

/** Decodes a PNG with an independent decoder and reads the QR code in it with jsQR. */
function readPng(bytes: Uint8Array): { width: number; height: number; text: string | null } {
  const png = decode(bytes);
  const rgba = new Uint8ClampedArray(png.width * png.height * 4);
  const stride = Math.ceil((png.width * png.depth * png.channels) / 8);
  for (let y = 0; y < png.height; y++) {
    for (let x = 0; x < png.width; x++) {
      let gray: number;
      if (png.depth === 1) {
        gray = (png.data[y * stride + (x >> 3)]! >> (7 - (x & 7))) & 1 ? 255 : 0;
      } else {
        gray = Number(png.data[(y * png.width + x) * png.channels]);
      }
      rgba.set([gray, gray, gray, 255], (y * png.width + x) * 4);
    }
  }
  const found = jsQR(rgba, png.width, png.height);
  return { width: png.width, height: png.height, text: found?.data ?? null };
}

describe("GET /v1/qr/generate", () => {
  it.each([64, 200, 1024])("draws a PNG of exactly %i px that decodes to the token", async (size) => {
    const token = "k3v9x2m8q4w7z1p5r6t0y8u2i4o6a1s3";
    const res = await fetchImage(`token=${token}&size=${size}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("image/png");
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=86400, immutable");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.slice(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const read = readPng(bytes);
    expect([read.width, read.height]).toEqual([size, size]);
    expect(read.text).toBe(token);
  });

  it("defaults to a 200 px PNG", async () => {
    const res = await fetchImage("token=hello");
    expect(res.headers.get("Content-Type")).toBe("image/png");
    const read = readPng(new Uint8Array(await res.arrayBuffer()));
    expect([read.width, read.height, read.text]).toEqual([200, 200, "hello"]);
  });

  it("encodes a 512-character token and text outside ASCII exactly", async () => {
    const long = Array.from({ length: 512 }, (_, i) => "abcdefghijklmnopqrstuvwxyz0123456789-_.~"[i % 40]).join("");
    const res = await fetchImage(`token=${long}&size=1024`);
    expect(readPng(new Uint8Array(await res.arrayBuffer())).text).toBe(long);
    const accented = "file d'attente — guichet 3 é";
    const accentedRes = await fetchImage(`token=${encodeURIComponent(accented)}&size=400`);
    expect(readPng(new Uint8Array(await accentedRes.arrayBuffer())).text).toBe(accented);
  });

  it("refuses a token too dense for the size with 400 on size and the minimum", async () => {
    const res = await call("GET", `/v1/qr/generate?token=${"x".repeat(512)}&size=64`);
    expectError(res, 400, "VALIDATION_ERROR", "size");
    expect(res.body.error.details.minimum).toBeGreaterThan(64);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
  });

  it("draws a well-formed SVG with a viewBox in modules and the requested size", async () => {
    const res = await fetchImage("token=hello-svg&format=svg&size=300");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^image\/svg\+xml/);
    expect(res.headers.get("Cache-Control")).toBe("public, max-age=86400, immutable");
    const text = await res.text();
    expect(XMLValidator.validate(text)).toBe(true);
    const svg = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(text).svg;
    // "hello-svg" fits version 1 (21 modules) at level M; plus 4 quiet modules each side.
    expect(svg.viewBox).toBe("0 0 29 29");
    expect([svg.width, svg.height]).toEqual(["300", "300"]);
    expect(svg["shape-rendering"]).toBe("crispEdges");
    expect(svg.path.d).toMatch(/^M4 4h7v1h-7z/);
  });

  it("encodes a query that is not valid percent-encoding as its literal text", async () => {
    const res = await fetchImage("token=%ED%A0%80");
    expect(res.status).toBe(200);
    expect(readPng(new Uint8Array(await res.arrayBuffer())).text).toBe("%ED%A0%80");
  });

  it("needs no credential and counts against the public per-IP bucket (docs/limits.md)", async () => {
    const res = await fetchImage("token=abc");
    expect(res.status).toBe(200);
    expect(res.headers.get("X-RateLimit-Limit")).toBe("6000");
  });

  it.each([
    ["size=63", "size"],
    ["size=1025", "size"],
    ["size=abc", "size"],
    ["size=100.5", "size"],
    ["format=gif", "format"],
  ])("refuses %s", async (query, field) => {
    expectError(await call("GET", `/v1/qr/generate?token=abc&${query}`), 400, "VALIDATION_ERROR", field);
  });

  it.each([
    ["", "a missing token"],
    ["token=", "an empty token"],
    [`token=${"a".repeat(513)}`, "a token over 512 characters"],
  ])("refuses %s (%s) on token", async (query) => {
    expectError(await call("GET", `/v1/qr/generate?${query}`), 400, "VALIDATION_ERROR", "token");
  });

  it("is described in the OpenAPI document with PNG and SVG responses", async () => {
    const doc = expectOkDoc(await call("GET", "/v1/openapi.json"));
    const op = doc.paths["/v1/qr/generate"].get;
    expect(Object.keys(op.responses["200"].content).sort()).toEqual(["image/png", "image/svg+xml"]);
    expect(op.security).toEqual([]);
    expect(
      op.parameters
        .filter((p: any) => p.in === "query")
        .map((p: any) => p.name)
        .sort(),
    ).toEqual(["format", "size", "token"]);
  });
});

function expectOkDoc(res: { status: number; body: any }): any {
  expect(res.status).toBe(200);
  return res.body;
}

describe("QR tokens", () => {
  let owner: TestUser;
  let org: any;
  let fx: QueueFixture;

  beforeAll(async () => {
    owner = await registerUser();
    org = await createOrganization(owner);
    fx = await createQueueFixture(owner, org.id);
  });

  const create = (body: unknown, token = owner.token) => call("POST", "/v1/qr-tokens", { token, body });

  it("creates a queue_join token whose image decodes to its token", async () => {
    const data = expectOk(await create({ purpose: "queue_join", queueId: fx.queueId }), 201);
    expect(data).toMatchObject({
      purpose: "queue_join",
      queueId: fx.queueId,
      serviceId: fx.serviceId,
      status: "active",
      expiresAt: null,
      usedAt: null,
    });
    expect(data.id).toMatch(/^qrt_[0-9a-z]{20}$/);
    expect(data.token).toMatch(/^[0-9a-z]{32}$/);
    expect(data.imageUrl).toBe(`/v1/qr/generate?token=${data.token}`);
    const image = await fetchWorker(data.imageUrl);
    expect(readPng(new Uint8Array(await image.arrayBuffer())).text).toBe(data.token);
  });

  it("creates service_checkin, verification and operator_access tokens with an expiry", async () => {
    testClock.set("2026-05-01T10:00:00.000Z");
    const checkin = expectOk(
      await create({ purpose: "service_checkin", serviceId: fx.serviceId, expiresAt: "2026-05-01T12:00:00+01:00" }),
      201,
    );
    expect(checkin).toMatchObject({ serviceId: fx.serviceId, queueId: null, expiresAt: "2026-05-01T11:00:00.000Z" });
    expect(checkin.status).toBe("active");
    const verification = expectOk(await create({ purpose: "verification", serviceId: fx.serviceId, expiresAt: "2026-05-02" }), 201);
    expect(verification.expiresAt).toBe("2026-05-02T00:00:00.000Z");
    expectOk(await create({ purpose: "operator_access", queueId: fx.queueId, serviceId: fx.serviceId }), 201);
    expectOk(await create({ purpose: "single_use_invite", queueId: fx.queueId }), 201);
  });

  it.each([
    [{ purpose: "queue_join" }, "queueId"],
    [{ purpose: "single_use_invite" }, "queueId"],
    [{ purpose: "service_checkin" }, "serviceId"],
    [{ purpose: "verification" }, "queueId"],
    [{ purpose: "operator_access" }, "queueId"],
    [{ purpose: "teleport", queueId: "que_x" }, "purpose"],
    [{ queueId: "que_x" }, "purpose"],
    [{ purpose: 3 }, "purpose"],
    [{ purpose: "queue_join", queueId: 12 }, "queueId"],
    [{ purpose: "queue_join", queueId: "que_x", organizationId: "org_x" }, "organizationId"],
    [{ purpose: "queue_join", queueId: "que_x", expiresAt: "tomorrow" }, "expiresAt"],
    [{ purpose: "queue_join", queueId: "que_x", expiresAt: "2020-01-01T00:00:00Z" }, "expiresAt"],
    [{ purpose: "queue_join", queueId: "que_x", expiresAt: "2030-02-30" }, "expiresAt"],
  ])("refuses %j on %s", async (body, field) => {
    expectError(await create(body), 400, "VALIDATION_ERROR", field);
  });

  it("refuses a queueId on service_checkin and a queue of another service", async () => {
    expectError(
      await create({ purpose: "service_checkin", serviceId: fx.serviceId, queueId: fx.queueId }),
      400,
      "VALIDATION_ERROR",
      "queueId",
    );
    const other = await createQueueFixture(owner, org.id);
    expectError(
      await create({ purpose: "verification", serviceId: other.serviceId, queueId: fx.queueId }),
      400,
      "VALIDATION_ERROR",
      "serviceId",
    );
  });

  it("refuses an archived queue with INVALID_STATE", async () => {
    const archived = await addArchivedQueue(fx);
    const res = await create({ purpose: "queue_join", queueId: archived });
    expectError(res, 409, "INVALID_STATE");
    expect(res.body.error.details.status).toBe("archived");
  });

  it("answers 404 for unknown ids and for another organization's, with the same message", async () => {
    const stranger = await registerUser();
    await createOrganization(stranger);
    const unknown = await create({ purpose: "queue_join", queueId: "que_00000000000000000000" }, stranger.token);
    const foreign = await create({ purpose: "queue_join", queueId: fx.queueId }, stranger.token);
    expectError(unknown, 404, "NOT_FOUND");
    expectError(foreign, 404, "NOT_FOUND");
    expect(foreign.body.error.message).toBe(unknown.body.error.message);
    expectError(await create({ purpose: "service_checkin", serviceId: fx.serviceId }, stranger.token), 404, "NOT_FOUND");
  });

  it("answers 404, not 400, for another organization's queue paired with the caller's own service", async () => {
    const stranger = await registerUser();
    const strangerOrg = await createOrganization(stranger);
    const own = await createCatalog(stranger, strangerOrg.id);
    const unknown = await create(
      { purpose: "verification", serviceId: own.serviceId, queueId: "que_00000000000000000000" },
      stranger.token,
    );
    const foreign = await create({ purpose: "verification", serviceId: own.serviceId, queueId: fx.queueId }, stranger.token);
    expectError(unknown, 404, "NOT_FOUND");
    expectError(foreign, 404, "NOT_FOUND");
    expect(foreign.body.error).toMatchObject({ message: unknown.body.error.message, details: unknown.body.error.details });
  });

  it("needs QUEUE_MANAGE to create and revoke; an operator may list", async () => {
    const operator = await addMember(owner, org.id, "operator");
    const made = expectOk(await create({ purpose: "queue_join", queueId: fx.queueId }), 201);
    expectError(await create({ purpose: "queue_join", queueId: fx.queueId }, operator.token), 403, "AUTHORIZATION_ERROR");
    expectError(await call("DELETE", `/v1/qr-tokens/${made.id}`, { token: operator.token }), 403, "AUTHORIZATION_ERROR");
    const listed = expectOk(await call("GET", "/v1/qr-tokens?limit=100", { token: operator.token }));
    expect(listed.map((t: any) => t.id)).toContain(made.id);
  });

  it("lists live tokens newest first, paginated and filtered, and revokes", async () => {
    const o = await registerUser();
    const own = await createOrganization(o);
    const q = await createQueueFixture(o, own.id);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      testClock.set(Date.parse("2026-06-01T10:00:00Z") + i * 1000);
      made.push(expectOk(await create({ purpose: "queue_join", queueId: q.queueId }, o.token), 201).id);
    }
    testClock.set("2026-06-01T10:00:10Z");
    made.push(expectOk(await create({ purpose: "service_checkin", serviceId: q.serviceId }, o.token), 201).id);

    const page1 = await call("GET", "/v1/qr-tokens?limit=2", { token: o.token });
    expect(expectOk(page1).map((t: any) => t.id)).toEqual([made[3], made[2]]);
    expect(page1.body.meta).toMatchObject({ total: 4, page: 1, limit: 2, hasMore: true });
    const page2 = await call("GET", "/v1/qr-tokens?limit=2&page=2", { token: o.token });
    expect(expectOk(page2).map((t: any) => t.id)).toEqual([made[1], made[0]]);
    expect(page2.body.meta.hasMore).toBe(false);
    const filtered = await call("GET", "/v1/qr-tokens?purpose=service_checkin", { token: o.token });
    expect(expectOk(filtered).map((t: any) => t.id)).toEqual([made[3]]);

    const stranger = await registerUser();
    await createOrganization(stranger);
    expectError(await call("DELETE", `/v1/qr-tokens/${made[0]}`, { token: stranger.token }), 404, "NOT_FOUND");
    const revoked = expectOk(await call("DELETE", `/v1/qr-tokens/${made[0]}`, { token: o.token }));
    expect(revoked).toMatchObject({ id: made[0], status: "revoked", revokedAt: "2026-06-01T10:00:10.000Z" });
    expectError(await call("DELETE", `/v1/qr-tokens/${made[0]}`, { token: o.token }), 404, "NOT_FOUND");
    const after = await call("GET", "/v1/qr-tokens", { token: o.token });
    expect(after.body.meta.total).toBe(3);
    expect(expectOk(after).map((t: any) => t.id)).not.toContain(made[0]);
  });

  it("shows an expired token as expired", async () => {
    testClock.set("2026-07-01T10:00:00Z");
    const t = expectOk(await create({ purpose: "verification", queueId: fx.queueId, expiresAt: "2026-07-01T10:05:00Z" }), 201);
    testClock.advance(5 * 60_000);
    const listed = expectOk(await call("GET", `/v1/qr-tokens?queueId=${fx.queueId}&limit=100`, { token: owner.token }));
    expect(listed.find((x: any) => x.id === t.id).status).toBe("expired");
  });

  it.each([
    ["limit=101", "limit"],
    ["purpose=nope", "purpose"],
    ["page=0", "page"],
  ])("refuses a list query %s", async (query, field) => {
    expectError(await call("GET", `/v1/qr-tokens?${query}`, { token: owner.token }), 400, "VALIDATION_ERROR", field);
  });

  it("needs a credential", async () => {
    expectError(await call("GET", "/v1/qr-tokens"), 401, "AUTHENTICATION_ERROR");
    expectError(await call("POST", "/v1/qr-tokens", { body: { purpose: "queue_join", queueId: fx.queueId } }), 401, "AUTHENTICATION_ERROR");
    expectError(await call("DELETE", "/v1/qr-tokens/qrt_00000000000000000000"), 401, "AUTHENTICATION_ERROR");
  });

  it("asks a user of several organizations which one to list", async () => {
    const multi = await registerUser();
    await createOrganization(multi);
    const second = await createOrganization(multi);
    expectError(await call("GET", "/v1/qr-tokens", { token: multi.token }), 400, "VALIDATION_ERROR", "X-Organization-Id");
    expectOk(await call("GET", "/v1/qr-tokens", { token: multi.token, headers: { "X-Organization-Id": second.id } }));
  });
});
