import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, fetchWorker, expectOk } from "../helpers/api";
import { ownerWithOrganization } from "../helpers/billing";

// Issue 26: the sandbox checkout page sent the payer on to any https `returnUrl` after its POST,
// and could be framed. It now goes on only to the service's own origin or a verified domain of
// the organization, and forbids framing.

async function openCheckout(returnUrl: string) {
  const { owner, org } = await ownerWithOrganization();
  const pending = expectOk(
    await call("PATCH", `/v1/billing/subscription/${org.id}`, { token: owner.token, body: { plan: "pro", returnUrl } }),
  );
  return { org, url: new URL(pending.checkoutUrl) };
}

// The handler's own answer: a redirect is seen, not followed.
const pay = (url: URL) => fetchWorker(url, { method: "POST", headers: { Accept: "text/html" } });

function expectProtected(res: Response) {
  const csp = res.headers.get("Content-Security-Policy") ?? "";
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("default-src 'none'");
  expect(res.headers.get("X-Frame-Options")).toBe("DENY");
}

describe("the sandbox checkout page", () => {
  it("is never framed: CSP frame-ancestors 'none' and X-Frame-Options DENY", async () => {
    const { url } = await openCheckout("https://shop.example.com/back");
    const res = await fetchWorker(url, { headers: { Accept: "text/html" } });
    expect(res.status).toBe(200);
    expectProtected(res);
    await res.text();
  });

  it("does not send the payer on to a return URL outside the organization's verified domains", async () => {
    const { url } = await openCheckout("https://attacker.example.net/phish");
    const res = await pay(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("Location")).toBeNull();
    expectProtected(res);
    expect(await res.text()).toContain("Paid. You can close this page.");
  });

  it("sends the payer on to a verified domain of the organization (or below it), or to the service's own origin", async () => {
    const { org, url } = await openCheckout("https://billing.shop-verified.example/done");
    await env.DB.prepare(
      "INSERT INTO verified_domains (organization_id, domain, status, method, verified_at, created_at, updated_at) VALUES (?, 'shop-verified.example', 'verified', 'dns', 1, 1, 1)",
    )
      .bind(org.id)
      .run();
    const res = await pay(url);
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("https://billing.shop-verified.example/done");
    expectProtected(res);

    const own = await openCheckout("https://api.test/v1/billing/subscription/back");
    const back = await pay(own.url);
    expect(back.status).toBe(303);
    expect(back.headers.get("Location")).toBe("https://api.test/v1/billing/subscription/back");
  });
});
