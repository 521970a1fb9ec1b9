// Proof that web push works in the real bundle (wrangler dev runs what `wrangler deploy`
// bundles, in workerd), not only in the vitest pool:
//   node test/smoke/web-push-bundle.mjs
// A widget ticket's visitor subscribes; the subscription's endpoint is then pointed at a local
// HTTP receiver (the route only accepts https, so the row is edited in the local D1); a
// call-next goes through the room's outbox, the EVENTS queue and the consumer; the receiver
// checks the VAPID JWT and decrypts the aes128gcm body with the browser's keys.
// Writes VAPID keys to .dev.vars for the run (git-ignored) and removes the file afterwards.
import { spawnSync } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import path from "node:path";
import { client } from "../bench/load.mjs";
import { startWorker } from "../bench/server.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");
const devVars = path.join(root, ".dev.vars");
if (existsSync(devVars)) throw new Error(".dev.vars exists: move it away for this run");
const { subtle } = globalThis.crypto;
const b64url = (b) => Buffer.from(b).toString("base64url");

const vapid = await subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
const vapidPublic = b64url(await subtle.exportKey("raw", vapid.publicKey));
const vapidJwk = await subtle.exportKey("jwk", vapid.privateKey);
writeFileSync(devVars, `VAPID_PUBLIC_KEY=${vapidPublic}\nVAPID_PRIVATE_KEY=${vapidJwk.d}\nVAPID_SUBJECT=mailto:smoke@example.com\n`);

const ua = await subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]);
const uaPublic = new Uint8Array(await subtle.exportKey("raw", ua.publicKey));
const auth = crypto.getRandomValues(new Uint8Array(16));

let received;
const got = new Promise((resolve) => (received = resolve));
const receiver = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    res.writeHead(201).end();
    received({ headers: req.headers, body: new Uint8Array(Buffer.concat(chunks)) });
  });
});
await new Promise((r) => receiver.listen(0, "127.0.0.1", r));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}/push`;

async function hkdf(salt, ikm, info, bytes) {
  const key = await subtle.importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  return new Uint8Array(await subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, key, bytes * 8));
}

async function decrypt(body) {
  const salt = body.slice(0, 16);
  const idlen = body[20];
  const asPublic = body.slice(21, 21 + idlen);
  const as = await subtle.importKey("raw", asPublic, { name: "ECDH", namedCurve: "P-256" }, false, []);
  const secret = new Uint8Array(await subtle.deriveBits({ name: "ECDH", public: as }, ua.privateKey, 256));
  const enc = new TextEncoder();
  const ikm = await hkdf(auth, secret, new Uint8Array([...enc.encode("WebPush: info\0"), ...uaPublic, ...asPublic]), 32);
  const cek = await hkdf(salt, ikm, enc.encode("Content-Encoding: aes128gcm\0"), 16);
  const nonce = await hkdf(salt, ikm, enc.encode("Content-Encoding: nonce\0"), 12);
  const key = await subtle.importKey("raw", cek, "AES-GCM", false, ["decrypt"]);
  const plain = new Uint8Array(await subtle.decrypt({ name: "AES-GCM", iv: nonce }, key, body.slice(21 + idlen)));
  if (plain[plain.length - 1] !== 2) throw new Error("no last-record delimiter");
  return JSON.parse(new TextDecoder().decode(plain.slice(0, -1)));
}

async function verifyVapid(authorization) {
  const [, jwt, k] = /^vapid t=([^,]+), k=(.+)$/.exec(authorization) ?? [];
  if (k !== vapidPublic) throw new Error("wrong k");
  const [h, p, s] = jwt.split(".");
  const ok = await subtle.verify(
    { name: "ECDSA", hash: "SHA-256" },
    vapid.publicKey,
    Buffer.from(s, "base64url"),
    new TextEncoder().encode(`${h}.${p}`),
  );
  if (!ok) throw new Error("VAPID signature does not verify");
  return JSON.parse(Buffer.from(p, "base64url").toString());
}

const worker = await startWorker();
try {
  const call = client(worker.direct ?? worker.base);
  const email = `smoke-${Date.now()}@example.com`;
  const owner = (
    await call("POST", "/v1/auth/register", {
      body: { email, password: "smoke-password-123", firstName: "S", lastName: "M", accountType: "business" },
    })
  ).data;
  const token = owner.session.token;
  const org = (await call("POST", "/v1/organizations", { token, body: { name: "Smoke", slug: `smoke-${Date.now()}`, type: "banking" } }))
    .data;
  const location = (
    await call("POST", "/v1/locations", {
      token,
      body: { organizationId: org.id, name: "S", address: "1 rue", latitude: 48.85, longitude: 2.35 },
    })
  ).data;
  const service = (
    await call("POST", "/v1/services", { token, body: { name: "S", locationIds: [location.id], serviceTypeId: "st_bank_teller" } })
  ).data;
  const queue = (await call("POST", "/v1/business/queues", { token, body: { serviceId: service.id, name: "Accueil" } })).data;
  const key = (
    await call("POST", `/v1/organizations/${org.id}/api-keys`, { token, body: { name: "widget", permissions: ["write:queues"] } })
  ).data.key;
  const ticket = (await call("POST", `/v1/widget/queue/${queue.id}/join`, { token: key, body: { visitorName: "Awa" } })).data;
  await call("POST", `/v1/widget/tickets/${ticket.id}/push-subscription`, {
    token: key,
    body: { endpoint: "https://push.invalid/placeholder", keys: { p256dh: b64url(uaPublic), auth: b64url(auth) }, language: "fr" },
  });
  const persist = path.join(path.dirname(worker.logFile), "state");
  const sql = `UPDATE visitor_push_subscriptions SET endpoint = '${receiverUrl}' WHERE ticket_id = '${ticket.id}'`;
  const edit = spawnSync(
    path.join(root, "node_modules", ".bin", "wrangler"),
    ["d1", "execute", "DB", "--local", "--persist-to", persist, "--command", sql],
    { cwd: root, encoding: "utf8" },
  );
  if (edit.status !== 0) throw new Error(`d1 execute failed: ${edit.stderr}`);
  await call("POST", `/v1/queues/${queue.id}/call-next`, { token, body: {} });
  const push = await Promise.race([got, new Promise((_, reject) => setTimeout(() => reject(new Error("no push within 30 s")), 30_000))]);
  if (push.headers["content-encoding"] !== "aes128gcm") throw new Error(`content-encoding ${push.headers["content-encoding"]}`);
  const claims = await verifyVapid(push.headers.authorization);
  const message = await decrypt(push.body);
  console.log(JSON.stringify({ ok: true, claims, message }, null, 2));
  if (message.data.ticketId !== ticket.id || message.title !== "C'est votre tour") throw new Error("unexpected message");
} finally {
  worker.stop();
  receiver.close();
  rmSync(devVars, { force: true });
}
