import { createScheduledController } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { testClock } from "../helpers/clock";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { addMember, createOrganization, registerUser, type TestUser } from "../helpers/fixtures";
import { fakeInternet } from "../helpers/outbound";
import { env } from "cloudflare:test";

// Domain verification through the API, with DNS-over-HTTPS and the customer's site intercepted
// at fetch.

afterEach(() => vi.restoreAllMocks());

let owner: TestUser;
let orgId: string;
let token: string;
const headers = () => ({ "X-Organization-Id": orgId });

async function verify(domain: string, method: string) {
  return call("POST", "/v1/business/verification/verify", { token: owner.token, headers: headers(), body: { domain, method } });
}

beforeAll(async () => {
  owner = await registerUser();
  orgId = (await createOrganization(owner)).id;
  const data = expectOk(await call("POST", "/v1/business/verification/generate-token", { token: owner.token, headers: headers() }), 201);
  token = data.token;
  expect(token).toMatch(/^[0-9a-z]{32}$/);
  expect(data.instructions.dns.value).toBe(`service-verification=${token}`);
});

function site(host: string) {
  return `${unique("s")}.${host}`;
}

describe("dns", () => {
  it("verifies with the TXT record on the host, and fails with a wrong or missing one", async () => {
    const good = site("shop.com");
    const wrong = site("shop.com");
    const missing = site("shop.com");
    fakeInternet({
      [good]: { TXT: ['"v=spf1 -all"', `"service-verification=${token}"`] },
      [wrong]: { TXT: ['"service-verification=0000000000000000000000000000000x"'] },
      [missing]: { A: ["93.184.216.34"] },
    });
    const ok = expectOk(await verify(good, "dns"));
    expect(ok).toMatchObject({ domain: good, status: "verified", method: "dns", failureReason: null });
    expect(ok.verifiedAt).toMatch(/Z$/);
    const bad = expectOk(await verify(wrong, "dns"));
    expect(bad).toMatchObject({ status: "failed", verifiedAt: null });
    expect(bad.failureReason).toContain("no TXT record");
    expect(expectOk(await verify(missing, "dns")).status).toBe("failed");
  });

  it("accepts the record on _service-verification.<host>, split in two strings", async () => {
    const host = site("shop.com");
    const half = token.length / 2;
    const net = fakeInternet({
      [`_service-verification.${host}`]: { TXT: [`"service-verification=${token.slice(0, half)}" "${token.slice(half)}"`] },
    });
    expect(expectOk(await verify(host.toUpperCase() + ".", "dns"))).toMatchObject({ domain: host, status: "verified" });
    expect(net.pageCalls()).toEqual([]);
  });

  it("a regenerated token makes the old proof worthless", async () => {
    const other = await registerUser();
    const org = await createOrganization(other);
    const h = { "X-Organization-Id": org.id };
    const first = expectOk(await call("POST", "/v1/business/verification/generate-token", { token: other.token, headers: h }), 201).token;
    expectOk(await call("POST", "/v1/business/verification/generate-token", { token: other.token, headers: h }), 201);
    const host = site("shop.com");
    fakeInternet({ [host]: { TXT: [`"service-verification=${first}"`] } });
    const res = expectOk(
      await call("POST", "/v1/business/verification/verify", { token: other.token, headers: h, body: { domain: host, method: "dns" } }),
    );
    expect(res.status).toBe("failed");
  });

  it("a resolver failure leaves the domain pending, not failed", async () => {
    const host = site("shop.com");
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => Response.json({ Status: 2 }));
    const res = expectOk(await verify(host, "dns"));
    expect(res.status).toBe("pending");
    expect(res.failureReason).toContain("status 2");
  });
});

describe("file", () => {
  it("verifies with the file holding the token, fails with a wrong one or none", async () => {
    const good = site("shop.com");
    const wrong = site("shop.com");
    const missing = site("shop.com");
    const net = fakeInternet(
      { [good]: { A: ["93.184.216.34"] }, [wrong]: { A: ["93.184.216.34"] }, [missing]: { A: ["93.184.216.34"] } },
      {
        [`https://${good}/service-verification.html`]: () => new Response(`<html><body>service-verification=${token}</body></html>`),
        [`https://${wrong}/service-verification.html`]: () => new Response(`service-verification=${token}x`),
        [`https://${missing}/service-verification.html`]: () => new Response("Not found", { status: 404 }),
      },
    );
    expect(expectOk(await verify(good, "file"))).toMatchObject({ status: "verified", method: "file" });
    expect(expectOk(await verify(wrong, "file")).status).toBe("failed");
    const gone = expectOk(await verify(missing, "file"));
    expect(gone.status).toBe("failed");
    expect(gone.failureReason).toContain("HTTP 404");
    expect(net.pageCalls()).toEqual([
      `https://${good}/service-verification.html`,
      `https://${wrong}/service-verification.html`,
      `https://${missing}/service-verification.html`,
    ]);
  });

  it("follows a redirect on the same domain", async () => {
    const host = site("shop.com");
    fakeInternet(
      { [host]: { A: ["93.184.216.34"] }, [`www.${host}`]: { AAAA: ["2606:2800:220:1:248:1893:25c8:1946"] } },
      {
        [`https://${host}/service-verification.html`]: () =>
          new Response(null, { status: 301, headers: { Location: `https://www.${host}/service-verification.html` } }),
        [`https://www.${host}/service-verification.html`]: () => new Response(`service-verification=${token}`),
      },
    );
    expect(expectOk(await verify(host, "file")).status).toBe("verified");
  });
});

describe("meta", () => {
  it("verifies with the meta tag in the head (any case), fails without it or in the body", async () => {
    const good = site("shop.com");
    const inBody = site("shop.com");
    const wrong = site("shop.com");
    fakeInternet(
      { [good]: { A: ["93.184.216.34"] }, [inBody]: { A: ["93.184.216.34"] }, [wrong]: { A: ["93.184.216.34"] } },
      {
        [`https://${good}/`]: () =>
          new Response(
            `<!doctype html><HTML><HEAD><TITLE>x</TITLE><META NAME="Service-Verification" CONTENT="${token}"></HEAD><body></body></HTML>`,
          ),
        [`https://${inBody}/`]: () =>
          new Response(`<html><head></head><body><meta name="service-verification" content="${token}"></body></html>`),
        [`https://${wrong}/`]: () => new Response(`<html><head><meta name="service-verification" content="nope"></head></html>`),
      },
    );
    expect(expectOk(await verify(good, "meta"))).toMatchObject({ status: "verified", method: "meta" });
    expect(expectOk(await verify(inBody, "meta")).status).toBe("failed");
    const bad = expectOk(await verify(wrong, "meta"));
    expect(bad.status).toBe("failed");
    expect(bad.failureReason).toContain("meta");
  });
});

describe("status and the daily re-check", () => {
  it("lists every domain; the cron drops a verified domain whose proof is gone, and keeps one whose proof stays", async () => {
    const user = await registerUser();
    const org = await createOrganization(user);
    const h = { "X-Organization-Id": org.id };
    const tok = expectOk(await call("POST", "/v1/business/verification/generate-token", { token: user.token, headers: h }), 201).token;
    const stays = site("shop.com");
    const goes = site("shop.com");
    testClock.set("2026-05-01T10:00:00.000Z");
    const net = fakeInternet({ [stays]: { TXT: [`"service-verification=${tok}"`] }, [goes]: { TXT: [`"service-verification=${tok}"`] } });
    for (const domain of [stays, goes]) {
      expectOk(await call("POST", "/v1/business/verification/verify", { token: user.token, headers: h, body: { domain, method: "dns" } }));
    }
    delete net.dns[goes];

    // Before a day has passed, nothing is checked.
    testClock.set("2026-05-02T09:59:00.000Z");
    await worker.scheduled(
      createScheduledController({ scheduledTime: Date.parse("2026-05-02T09:59:00.000Z"), cron: "* * * * *" }),
      env,
      {} as ExecutionContext,
    );
    let status = expectOk(await call("GET", "/v1/business/verification/status", { token: user.token, headers: h }));
    expect(status.domains.map((d: any) => d.status)).toEqual(["verified", "verified"]);

    const later = Date.parse("2026-05-02T10:01:00.000Z");
    testClock.set(later);
    await worker.scheduled(createScheduledController({ scheduledTime: later, cron: "* * * * *" }), env, {} as ExecutionContext);
    status = expectOk(await call("GET", "/v1/business/verification/status", { token: user.token, headers: h }));
    const byName = Object.fromEntries(status.domains.map((d: any) => [d.domain, d]));
    expect(byName[stays]).toMatchObject({
      status: "verified",
      verifiedAt: "2026-05-01T10:00:00.000Z",
      lastCheckedAt: "2026-05-02T10:01:00.000Z",
    });
    expect(byName[goes]).toMatchObject({ status: "failed", verifiedAt: null, lastCheckedAt: "2026-05-02T10:01:00.000Z" });
    expect(byName[goes].failureReason).toContain("no TXT record");
    expect(status.verified).toBe(true);
  });

  it("needs ORG_MANAGE", async () => {
    const operator = await addMember(owner, orgId, "operator");
    expectError(
      await call("GET", "/v1/business/verification/status", { token: operator.token, headers: headers() }),
      403,
      "AUTHORIZATION_ERROR",
    );
  });
});
