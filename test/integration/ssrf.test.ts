import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { env } from "cloudflare:test";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { createOrganization, registerUser, type TestUser } from "../helpers/fixtures";
import { fakeInternet, slowAnswer } from "../helpers/outbound";

// The outbound guard, seen from the API: customer-chosen domains (verification) and URLs
// (webhooks) that point at our own network are refused with 400 VALIDATION_ERROR on the field,
// and no request ever reaches the refused address.

afterEach(() => vi.restoreAllMocks());

let owner: TestUser;
let orgId: string;
let token: string;

beforeAll(async () => {
  owner = await registerUser();
  orgId = (await createOrganization(owner)).id;
  // Enterprise: the webhook quota never stands in the way of these refusals.
  await env.DB.prepare("UPDATE subscriptions SET plan = 'enterprise' WHERE organization_id = ?").bind(orgId).run();
  token = expectOk(
    await call("POST", "/v1/business/verification/generate-token", { token: owner.token, headers: { "X-Organization-Id": orgId } }),
    201,
  ).token;
});

const verify = (domain: string, method = "file") =>
  call("POST", "/v1/business/verification/verify", {
    token: owner.token,
    headers: { "X-Organization-Id": orgId },
    body: { domain, method },
  });
const subscribe = (url: string) =>
  call("POST", `/v1/organizations/${orgId}/webhooks`, { token: owner.token, body: { url, events: ["*"] } });

const LITERALS = [
  "127.0.0.1",
  "localhost",
  "10.0.0.8",
  "[::1]",
  "169.254.169.254",
  "0x7f000001",
  "[::ffff:127.0.0.1]",
  "2130706433",
  "127.1",
  "[fd00:ec2::254]",
];

describe("refused before any request", () => {
  it.each(LITERALS)("%s as a verification domain and as a webhook host", async (host) => {
    const net = fakeInternet();
    for (const method of ["file", "meta", "dns"]) {
      const res = await verify(host, method);
      expectError(res, 400, "VALIDATION_ERROR", "domain");
      expect(typeof res.body.error.details.reason).toBe("string");
    }
    for (const url of [`https://${host}/hook`, `https://${host}:443/hook`]) {
      expectError(await subscribe(url), 400, "VALIDATION_ERROR", "url");
    }
    expect(net.calls).toEqual([]);
  });

  it.each(["intranet", "printer.local", "db.internal", "router.lan", "api.localhost", "x.corp"])("the internal name %s", async (host) => {
    const net = fakeInternet();
    expectError(await verify(host), 400, "VALIDATION_ERROR", "domain");
    expectError(await subscribe(`https://${host}/hook`), 400, "VALIDATION_ERROR", "url");
    expect(net.calls).toEqual([]);
  });

  it("http, credentials in the URL and other ports", async () => {
    const host = `${unique("h")}.shop.com`;
    const net = fakeInternet({ [host]: { A: ["93.184.216.34"] } });
    const http = await subscribe(`http://${host}/hook`);
    expectError(http, 400, "VALIDATION_ERROR", "url");
    expect(http.body.error.details.reason).toContain("https");
    expectError(await subscribe(`https://user:pass@${host}/hook`), 400, "VALIDATION_ERROR", "url");
    expectError(await subscribe(`https://${host}:8443/hook`), 400, "VALIDATION_ERROR", "url");
    expect(net.calls).toEqual([]);
  });
});

describe("refused after the DNS lookup", () => {
  it("a public name whose DoH answer is 10.1.2.3 (or a private IPv6, or a mapped loopback)", async () => {
    const cases = { "10.1.2.3": "A", "fd12::1": "AAAA", "::ffff:127.0.0.1": "AAAA", "100.64.0.1": "A", "169.254.169.254": "A" } as const;
    for (const [address, type] of Object.entries(cases)) {
      const host = `${unique("h")}.shop.com`;
      // One public address beside the private one does not make it acceptable.
      const zone = type === "A" ? { A: ["93.184.216.34", address] } : { A: ["93.184.216.34"], AAAA: [address] };
      const net = fakeInternet(
        { [host]: zone },
        { [`https://${host}/service-verification.html`]: () => new Response(`service-verification=${token}`) },
      );
      const res = await verify(host);
      expectError(res, 400, "VALIDATION_ERROR", "domain");
      expect(res.body.error.details.reason).toContain(address);
      expectError(await subscribe(`https://${host}/hook`), 400, "VALIDATION_ERROR", "url");
      expect(net.pageCalls()).toEqual([]);
      expect(net.calls.length).toBeGreaterThan(0);
      vi.restoreAllMocks();
    }
  });

  it("a name that does not resolve", async () => {
    const net = fakeInternet();
    expectError(await subscribe(`https://${unique("nx")}.shop.com/hook`), 400, "VALIDATION_ERROR", "url");
    expect(net.pageCalls()).toEqual([]);
  });
});

describe("redirects", () => {
  it("to a private address, to an IP literal, off the domain, or more than 3: refused, and the target is never fetched", async () => {
    const host = `${unique("h")}.shop.com`;
    const sub = `evil.${host}`;
    const net = fakeInternet(
      { [host]: { A: ["93.184.216.34"] }, [sub]: { A: ["10.0.0.8"] }, "other.com": { A: ["93.184.216.35"] } },
      {
        [`https://${host}/service-verification.html`]: () =>
          new Response(null, { status: 302, headers: { Location: `https://${sub}/service-verification.html` } }),
        [`https://${host}/`]: () => new Response(null, { status: 307, headers: { Location: "https://127.0.0.1/" } }),
        [`https://${sub}/service-verification.html`]: () => new Response(`service-verification=${token}`),
      },
    );
    const toPrivate = await verify(host, "file");
    expectError(toPrivate, 400, "VALIDATION_ERROR", "domain");
    expect(toPrivate.body.error.details.reason).toContain("redirect refused");
    const toLiteral = await verify(host, "meta");
    expectError(toLiteral, 400, "VALIDATION_ERROR", "domain");
    expect(net.pageCalls()).toEqual([`https://${host}/service-verification.html`, `https://${host}/`]);

    const hop = `${unique("h")}.shop.com`;
    const loop = fakeInternet(
      { [hop]: { A: ["93.184.216.34"] } },
      {
        [`https://${hop}/`]: () => new Response(null, { status: 302, headers: { Location: "https://other.com/" } }),
        [`https://${hop}/service-verification.html`]: () =>
          new Response(null, { status: 302, headers: { Location: "/service-verification.html" } }),
      },
    );
    expect((await verify(hop, "meta")).body.error.details.reason).toContain("off the domain");
    expect((await verify(hop, "file")).body.error.details.reason).toContain("more than 3 redirects");
    expect(loop.pageCalls()).toEqual([`https://${hop}/`, ...Array(4).fill(`https://${hop}/service-verification.html`)]);
  });
});

describe("limits", () => {
  it("a 2 MiB body is cut off at 1 MiB", async () => {
    const host = `${unique("h")}.shop.com`;
    let sent = 0;
    fakeInternet(
      { [host]: { A: ["93.184.216.34"] } },
      {
        [`https://${host}/service-verification.html`]: () => {
          const chunk = new Uint8Array(64 * 1024).fill(0x61);
          let left = 32;
          const stream = new ReadableStream<Uint8Array>({
            pull(controller) {
              if (left-- === 0) return controller.close();
              sent += chunk.byteLength;
              controller.enqueue(chunk);
            },
          });
          return new Response(stream);
        },
      },
    );
    const res = expectOk(await verify(host, "file"));
    expect(res.status).toBe("failed");
    expect(res.failureReason).toContain("larger than 1 MiB");
    expect(sent).toBeLessThan(2 * 1024 * 1024);
  });

  it("a declared 2 MiB body is not read at all", async () => {
    const host = `${unique("h")}.shop.com`;
    fakeInternet(
      { [host]: { A: ["93.184.216.34"] } },
      {
        [`https://${host}/`]: () => new Response("x".repeat(2 * 1024 * 1024), { headers: { "Content-Length": String(2 * 1024 * 1024) } }),
      },
    );
    expect(expectOk(await verify(host, "meta")).failureReason).toContain("larger than 1 MiB");
  });

  it("a 10 s answer is cut off at 5 s", async () => {
    const host = `${unique("h")}.shop.com`;
    fakeInternet(
      { [host]: { A: ["93.184.216.34"] } },
      { [`https://${host}/service-verification.html`]: slowAnswer(10_000, `service-verification=${token}`) },
    );
    const started = Date.now();
    const res = expectOk(await verify(host, "file"));
    const elapsed = Date.now() - started;
    expect(res.status).toBe("failed");
    expect(res.failureReason).toContain("within 5 s");
    expect(elapsed).toBeGreaterThanOrEqual(4_900);
    expect(elapsed).toBeLessThan(9_000);
  });

  it("sends no cookie or credential of ours", async () => {
    const host = `${unique("h")}.shop.com`;
    let seen: Headers | null = null;
    fakeInternet(
      { [host]: { A: ["93.184.216.34"] } },
      {
        [`https://${host}/service-verification.html`]: (req) => {
          seen = req.headers;
          return new Response(`service-verification=${token}`);
        },
      },
    );
    const res = await call("POST", "/v1/business/verification/verify", {
      token: owner.token,
      headers: { "X-Organization-Id": orgId, Cookie: `service.session_token=${owner.token}` },
      body: { domain: host, method: "file" },
    });
    expect(expectOk(res).status).toBe("verified");
    const names = [...(seen as unknown as Headers).keys()];
    expect(names.filter((n) => ["cookie", "authorization", "x-api-key"].includes(n))).toEqual([]);
  });
});
