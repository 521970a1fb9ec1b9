import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { call, expectError, expectOk, unique } from "../helpers/api";
import { createApiKey, createCatalog, createOrganization, registerUser, type TestUser } from "../helpers/fixtures";
import { fakeInternet } from "../helpers/outbound";

// A widget key locked to the organization's verified domains: the widget routes answer CORS
// only to those origins and 403 to any other (or none).

afterEach(() => vi.restoreAllMocks());

let owner: TestUser;
let orgId: string;
let queueId: string;
let domain: string;

beforeAll(async () => {
  owner = await registerUser();
  orgId = (await createOrganization(owner)).id;
  queueId = (await createCatalog(owner, orgId)).queueId;
  const h = { "X-Organization-Id": orgId };
  const token = expectOk(await call("POST", "/v1/business/verification/generate-token", { token: owner.token, headers: h }), 201).token;
  domain = `${unique("shop")}.com`;
  fakeInternet({ [domain]: { TXT: [`"service-verification=${token}"`] } });
  expect(
    expectOk(await call("POST", "/v1/business/verification/verify", { token: owner.token, headers: h, body: { domain, method: "dns" } }))
      .status,
  ).toBe("verified");
  vi.restoreAllMocks();
});

async function lockedKey(origins: string[]) {
  return call("POST", `/v1/organizations/${orgId}/api-keys`, {
    token: owner.token,
    body: { name: unique("k"), permissions: ["widget"], allowedOrigins: origins },
  });
}

describe("creating a locked widget key", () => {
  it("accepts https origins on a verified domain or its subdomains, normalised", async () => {
    const key = expectOk(await lockedKey([`https://${domain}`, `https://WWW.${domain}/`]), 201);
    expect(key.allowedOrigins).toEqual([`https://${domain}`, `https://www.${domain}`]);
    expect(key.permissions).toEqual(["widget"]);
  });

  it("refuses an unverified domain, http, a path, and keys that are not widget-only", async () => {
    for (const origin of [
      "https://unverified-shop.com",
      `http://${domain}`,
      `https://${domain}/shop`,
      `https://not${domain}`,
      "not a url",
    ]) {
      expectError(await lockedKey([origin]), 400, "VALIDATION_ERROR", "allowedOrigins");
    }
    const res = await call("POST", `/v1/organizations/${orgId}/api-keys`, {
      token: owner.token,
      body: { name: "x", permissions: ["read"], allowedOrigins: [`https://${domain}`] },
    });
    expectError(res, 400, "VALIDATION_ERROR", "allowedOrigins");
  });
});

describe("the widget routes with a locked key", () => {
  it("answer CORS to an allowed origin only, and 403 without CORS to others or none", async () => {
    const { key } = expectOk(await lockedKey([`https://${domain}`]), 201);
    const path = `/v1/widget/organization/${orgId}/info`;
    const allowed = await call("GET", path, { apiKey: key, headers: { Origin: `https://${domain}` } });
    expectOk(allowed);
    expect(allowed.headers.get("Access-Control-Allow-Origin")).toBe(`https://${domain}`);
    expect(allowed.headers.get("Vary")).toContain("Origin");

    const others: Record<string, string>[] = [{ Origin: "https://evil.example.com" }, { Origin: `https://other.${domain}` }, {}];
    for (const headers of others) {
      const refused = await call("GET", path, { apiKey: key, headers });
      expectError(refused, 403, "AUTHORIZATION_ERROR");
      expect(refused.headers.get("Access-Control-Allow-Origin")).toBeNull();
    }
    const join = await call("POST", `/v1/widget/queue/${queueId}/join`, {
      apiKey: key,
      headers: { Origin: "https://evil.example.com" },
      body: {},
    });
    expectError(join, 403, "AUTHORIZATION_ERROR");
    const joined = await call("POST", `/v1/widget/queue/${queueId}/join`, {
      apiKey: key,
      headers: { Origin: `https://${domain}` },
      body: { visitorName: "Ada" },
    });
    expect(expectOk(joined, 201).source).toBe("widget");
  });

  it("an unrestricted widget key and the public status keep answering any origin", async () => {
    const open = await createApiKey(owner, orgId, ["widget"]);
    const res = await call("GET", `/v1/widget/organization/${orgId}/info`, {
      apiKey: open.key,
      headers: { Origin: "https://anywhere.example.com" },
    });
    expectOk(res);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const status = await call("GET", `/v1/widget/queue/${queueId}/status`, { headers: { Origin: "https://anywhere.example.com" } });
    expectOk(status);
    expect(status.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });
});
