import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { openSecret } from "../../src/lib/secret-box";
import { call, expectOk } from "../helpers/api";
import { createOrganization, registerUser, setPlan } from "../helpers/fixtures";

// Secrets at rest (issue 31, docs/security.md): no webhook signing secret is readable in D1.
// That deliveries still sign with them is proven by test/integration/webhooks.test.ts.

describe("webhook signing secrets at rest", () => {
  it("are stored sealed with AES-GCM and a key id, through creation and rotations", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner);
    await setPlan(org.id, "pro");
    const hook = expectOk(
      await call("POST", `/v1/organizations/${org.id}/webhooks`, {
        token: owner.token,
        body: { url: "https://hooks.example.com/queue", events: ["*"] },
      }),
      201,
    );
    const path = `/v1/organizations/${org.id}/webhooks/${hook.id}/rotate-secret`;
    const second = expectOk(await call("POST", path, { token: owner.token }));
    const third = expectOk(await call("POST", path, { token: owner.token }));
    const secrets = [hook.secret, second.secret, third.secret] as string[];
    for (const s of secrets) expect(s).toMatch(/^whsec_/);

    const row = await env.DB.prepare("SELECT * FROM webhooks WHERE id = ?").bind(hook.id).first<Record<string, string>>();
    const dump = JSON.stringify(row);
    for (const s of secrets) {
      expect(dump).not.toContain(s);
      expect(dump).not.toContain(s.slice("whsec_".length));
    }
    expect(row!.secret).toMatch(/^sbx1\.dev\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    // Each stored value opens to the secret the API handed out, and nothing else in D1 holds one.
    expect(await openSecret(env, row!.secret!)).toBe(third.secret);
    expect(await openSecret(env, row!.previous_secret!)).toBe(second.secret);
    const retired = JSON.parse(row!.retired_secrets!) as { secret: string }[];
    expect(await Promise.all(retired.map((r) => openSecret(env, r.secret)))).toEqual([hook.secret]);
    const everywhere = await env.DB.prepare("SELECT * FROM webhook_deliveries WHERE webhook_id = ?").bind(hook.id).all();
    for (const s of secrets) expect(JSON.stringify(everywhere.results)).not.toContain(s);
  });

  it("a row written before encryption is still read as it is (lazy migration)", async () => {
    expect(await openSecret(env, "whsec_legacyplaintextvalue")).toBe("whsec_legacyplaintextvalue");
  });

  it("refuses to run in production without its own key", async () => {
    await expect(openSecret({ ENVIRONMENT: "production" }, "sbx1.k1.AAAAAAAAAAAAAAAA.AAAA")).rejects.toThrow(/SECRETS_KEY/);
  });
});
