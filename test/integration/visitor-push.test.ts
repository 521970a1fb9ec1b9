import { env } from "cloudflare:test";
import { importJWK, jwtVerify } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { createApiKey, queueFixture, registerUser } from "../helpers/fixtures";
import { capture, eventsOf, feedEvents, type Captured } from "../helpers/notifications";

// Web push for widget visitors: the subscription is tied to the ticket by the widget key that
// took it plus the ticket id; delivery is VAPID + aes128gcm, checked here by decrypting it
// with the browser's keys (an HKDF of WebCrypto's own, not the service's code).

let captured: Captured;
afterEach(() => {
  captured?.restore();
  vi.restoreAllMocks();
});

const b64url = (bytes: ArrayBuffer | Uint8Array) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const unb64url = (s: string) =>
  Uint8Array.from(
    atob(
      s
        .replace(/-/g, "+")
        .replace(/_/g, "/")
        .padEnd(Math.ceil(s.length / 4) * 4, "="),
    ),
    (c) => c.charCodeAt(0),
  );

async function vapidKeys() {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const jwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  const raw = await crypto.subtle.exportKey("raw", pair.publicKey);
  return { publicKey: b64url(raw as ArrayBuffer), privateKey: jwk.d!, jwk };
}

async function browser() {
  const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])) as CryptoKeyPair;
  const raw = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  const auth = crypto.getRandomValues(new Uint8Array(16));
  const endpoint = `https://push.test/send/${b64url(crypto.getRandomValues(new Uint8Array(8)))}`;
  return { pair, raw, auth, endpoint, subscription: { endpoint, keys: { p256dh: b64url(raw), auth: b64url(auth) } } };
}

async function hkdf(salt: Uint8Array, ikm: Uint8Array, info: Uint8Array, bytes: number) {
  const key = await crypto.subtle.importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, key, bytes * 8));
}

/** RFC 8291 decryption as a browser does it. */
async function decrypt(body: Uint8Array, b: Awaited<ReturnType<typeof browser>>) {
  const salt = body.slice(0, 16);
  const rs = new DataView(body.buffer, body.byteOffset).getUint32(16);
  const idlen = body[20]!;
  const asPublic = body.slice(21, 21 + idlen);
  const sealed = body.slice(21 + idlen);
  const as = await crypto.subtle.importKey("raw", asPublic, { name: "ECDH", namedCurve: "P-256" }, false, []);
  const secret = new Uint8Array(await crypto.subtle.deriveBits({ name: "ECDH", public: as } as any, b.pair.privateKey, 256));
  const enc = new TextEncoder();
  const info = new Uint8Array([...enc.encode("WebPush: info\0"), ...b.raw, ...asPublic]);
  const ikm = await hkdf(b.auth, secret, info, 32);
  const cek = await hkdf(salt, ikm, enc.encode("Content-Encoding: aes128gcm\0"), 16);
  const nonce = await hkdf(salt, ikm, enc.encode("Content-Encoding: nonce\0"), 12);
  const key = await crypto.subtle.importKey("raw", cek, "AES-GCM", false, ["decrypt"]);
  const plain = new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv: nonce }, key, sealed));
  expect(plain[plain.length - 1]).toBe(2);
  return { rs, idlen, message: JSON.parse(new TextDecoder().decode(plain.slice(0, -1))) };
}

async function widgetTicket() {
  const f = await queueFixture("pro");
  const key = await createApiKey(f.owner, f.organizationId, ["write:queues"]);
  const t = expectOk(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { apiKey: key.key, body: { visitorName: "Awa" } }), 201);
  return { f, key, t };
}

describe("widget visitors' web push", () => {
  it("publishes the VAPID key (null when not configured)", async () => {
    expect(expectOk(await call("GET", "/v1/widget/push/public-key"))).toEqual({ publicKey: null });
  });

  it("ties a subscription to the ticket through the key that took it; others get 404", async () => {
    const { f, key, t } = await widgetTicket();
    const b = await browser();
    const path = `/v1/widget/tickets/${t.id}/push-subscription`;
    expectOk(await call("POST", path, { apiKey: key.key, body: { ...b.subscription, language: "fr" } }), 201);
    expectOk(await call("POST", path, { apiKey: key.key, body: b.subscription }), 201); // idempotent
    const rows = await env.DB.prepare("SELECT endpoint FROM visitor_push_subscriptions WHERE ticket_id = ?").bind(t.id).all();
    expect(rows.results).toHaveLength(1);

    const otherKey = await createApiKey(f.owner, f.organizationId, ["write:queues"]);
    expectError(await call("POST", path, { apiKey: otherKey.key, body: b.subscription }), 404, "NOT_FOUND");
    const stranger = await queueFixture("pro");
    const strangerKey = await createApiKey(stranger.owner, stranger.organizationId, ["write:queues"]);
    expectError(await call("POST", path, { apiKey: strangerKey.key, body: b.subscription }), 404, "NOT_FOUND");
    const customer = await registerUser({ accountType: "customer" });
    const appTicket = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token }), 201);
    expectError(
      await call("POST", `/v1/widget/tickets/${appTicket.id}/push-subscription`, { apiKey: key.key, body: b.subscription }),
      404,
      "NOT_FOUND",
    );
    expectError(
      await call("POST", "/v1/widget/tickets/tkt_nonsense/push-subscription", { apiKey: key.key, body: b.subscription }),
      404,
      "NOT_FOUND",
    );

    expectError(
      await call("POST", path, { apiKey: key.key, body: { ...b.subscription, endpoint: "http://push.test/x" } }),
      400,
      "VALIDATION_ERROR",
      "endpoint",
    );
    expectError(
      await call("POST", path, { apiKey: key.key, body: { ...b.subscription, keys: { ...b.subscription.keys, p256dh: "abc" } } }),
      400,
      "VALIDATION_ERROR",
    );
    expectError(
      await call("POST", path, { apiKey: key.key, body: { ...b.subscription, keys: { ...b.subscription.keys, auth: "" } } }),
      400,
      "VALIDATION_ERROR",
    );

    expectOk(await call("DELETE", path, { apiKey: key.key, body: { endpoint: b.endpoint } }));
    expectError(await call("DELETE", path, { apiKey: key.key, body: { endpoint: b.endpoint } }), 404, "NOT_FOUND");
  });

  it("sends the visitor's ticket notifications as VAPID-signed aes128gcm pushes, until the ticket ends", async () => {
    captured = capture();
    const vapid = await vapidKeys();
    const { f, key, t } = await widgetTicket();
    const b = await browser();
    expectOk(
      await call("POST", `/v1/widget/tickets/${t.id}/push-subscription`, { apiKey: key.key, body: { ...b.subscription, language: "fr" } }),
      201,
    );
    await eventsOf(captured, f.queueId);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: { counter: "Guichet 4" } }));
    const sent: { url: string; init: RequestInit }[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      sent.push({ url: String(input), init: init ?? {} });
      return new Response(null, { status: 201 });
    });
    const over = { VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey, VAPID_SUBJECT: "mailto:ops@example.com" };
    await feedEvents(await eventsOf(captured, f.queueId), over);

    expect(sent.map((s) => s.url)).toEqual([b.endpoint]);
    const headers = new Headers(sent[0]!.init.headers);
    expect(headers.get("Content-Encoding")).toBe("aes128gcm");
    expect(headers.get("TTL")).toMatch(/^\d+$/);
    const [, jwt, k] = /^vapid t=([^,]+), k=(.+)$/.exec(headers.get("Authorization")!)!;
    expect(k).toBe(vapid.publicKey);
    const verifyKey = await importJWK({ kty: "EC", crv: "P-256", x: vapid.jwk.x, y: vapid.jwk.y }, "ES256");
    const { payload } = await jwtVerify(jwt!, verifyKey, { audience: "https://push.test" });
    expect(payload.sub).toBe("mailto:ops@example.com");
    const { rs, idlen, message } = await decrypt(new Uint8Array(sent[0]!.init.body as Uint8Array), b);
    expect(rs).toBe(4096);
    expect(idlen).toBe(65);
    expect(message).toEqual({
      title: "C'est votre tour",
      body: `Ticket ${t.displayCode} : présentez-vous maintenant au Guichet 4 (Main line).`,
      data: expect.objectContaining({ type: "ticket.called", ticketId: t.id, displayCode: t.displayCode }),
    });

    // Served: ticket.served and review.request go, then the subscription ends with the ticket.
    await call("POST", `/v1/tickets/${t.id}/serve`, { token: f.owner.token });
    await call("POST", `/v1/tickets/${t.id}/complete`, { token: f.owner.token });
    await feedEvents(await eventsOf(captured, f.queueId), over);
    expect(sent).toHaveLength(3);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM visitor_push_subscriptions WHERE ticket_id = ?").bind(t.id).first("n")).toBe(0);
  });

  it("a subscription in any catalogue language (Portuguese) gets its pushes in it; a code outside the catalogue is refused naming the field", async () => {
    captured = capture();
    const vapid = await vapidKeys();
    const { f, key, t } = await widgetTicket();
    const b = await browser();
    const path = `/v1/widget/tickets/${t.id}/push-subscription`;
    expectError(
      await call("POST", path, { apiKey: key.key, body: { ...b.subscription, language: "xx" } }),
      400,
      "VALIDATION_ERROR",
      "language",
    );
    expectOk(await call("POST", path, { apiKey: key.key, body: { ...b.subscription, language: "pt" } }), 201);
    await eventsOf(captured, f.queueId);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token, body: { counter: "Balcão 2" } }));
    const sent: RequestInit[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (_input: RequestInfo | URL, init?: RequestInit) => {
      sent.push(init ?? {});
      return new Response(null, { status: 201 });
    });
    await feedEvents(await eventsOf(captured, f.queueId), { VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey });
    expect(sent).toHaveLength(1);
    const { message } = await decrypt(new Uint8Array(sent[0]!.body as Uint8Array), b);
    expect(message).toMatchObject({ title: "É a sua vez", body: `Senha ${t.displayCode}: dirija-se agora ao Balcão 2 (Main line).` });
  });

  it("a 410 from the push service drops the subscription", async () => {
    captured = capture();
    const vapid = await vapidKeys();
    const { f, key, t } = await widgetTicket();
    const b = await browser();
    expectOk(await call("POST", `/v1/widget/tickets/${t.id}/push-subscription`, { apiKey: key.key, body: b.subscription }), 201);
    await eventsOf(captured, f.queueId);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    vi.spyOn(globalThis, "fetch").mockResolvedValue(new Response("gone", { status: 410 }));
    await feedEvents(await eventsOf(captured, f.queueId), { VAPID_PUBLIC_KEY: vapid.publicKey, VAPID_PRIVATE_KEY: vapid.privateKey });
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM visitor_push_subscriptions WHERE ticket_id = ?").bind(t.id).first("n")).toBe(0);
    expect(captured.retries).toEqual([]);
  });
});
