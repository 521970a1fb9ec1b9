import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

// `npm run deploy` runs scripts/check-deploy.mjs first (issue 26): with a fake wrangler.toml and
// a fake list of the Worker's secrets, it must refuse a deploy whose providers lack their secrets.

const root = path.join(import.meta.dirname, "..", "..");
const script = path.join(root, "scripts", "check-deploy.mjs");
const real = readFileSync(path.join(root, "wrangler.toml"), "utf8");

/** wrangler.toml with a real-looking database id and `vars` added to [vars]. */
function config(vars: Record<string, string> = {}, environment = "production"): string {
  const dir = mkdtempSync(path.join(tmpdir(), "check-deploy-"));
  const file = path.join(dir, "wrangler.toml");
  let text = real.replace(/^database_id\s*=\s*"[^"]*"/m, 'database_id = "3f2a9c1e-8b7d-4e6f-a5c4-1d2e3f4a5b6c"');
  text = text.replace(
    /^ENVIRONMENT\s*=\s*"[^"]*"/m,
    [`ENVIRONMENT = "${environment}"`, ...Object.entries(vars).map(([k, v]) => `${k} = "${v}"`)].join("\n"),
  );
  writeFileSync(file, text);
  return file;
}

function run(configFile: string, secrets: string[]) {
  const out = spawnSync(process.execPath, [script], {
    env: { ...process.env, CHECK_DEPLOY_CONFIG: configFile, CHECK_DEPLOY_SECRETS: secrets.join(",") },
    encoding: "utf8",
  });
  return { code: out.status, stderr: out.stderr, stdout: out.stdout };
}

const ALL_BILLING = ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "FEDAPAY_SECRET_KEY", "FEDAPAY_WEBHOOK_SECRET"];
/** Signs every credential (issue 33): always required. */
const TOKEN = "TOKEN_SECRET";
/** Seals the secrets D1 keeps (issue 31): always required. */
const SEALING = "SECRETS_KEY";
/** Keys the audit log's hash chain (issue 40): always required. */
const AUDIT = "AUDIT_KEY";

describe("scripts/check-deploy.mjs", () => {
  it("refuses a deploy whose billing providers lack secrets, naming each missing one", () => {
    const r = run(config(), [TOKEN, SEALING, AUDIT, "STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("fedapay needs the secret(s) FEDAPAY_SECRET_KEY, FEDAPAY_WEBHOOK_SECRET");
    expect(r.stderr).not.toContain("stripe needs");
  });

  it("passes when every chosen provider has its secrets", () => {
    const r = run(config(), [TOKEN, SEALING, AUDIT, ...ALL_BILLING, "FCM_SERVICE_ACCOUNT"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("BILLING_PROVIDERS narrows the providers; SMS_PROVIDER adds its own", () => {
    expect(run(config({ BILLING_PROVIDERS: "stripe" }), [TOKEN, SEALING, AUDIT, "STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET"]).code).toBe(
      0,
    );
    const r = run(config({ BILLING_PROVIDERS: "stripe", SMS_PROVIDER: "twilio" }), [
      TOKEN,
      SEALING,
      AUDIT,
      "STRIPE_SECRET_KEY",
      "STRIPE_WEBHOOK_SECRET",
      "TWILIO_FROM",
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("twilio needs the secret(s) TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN");
  });

  it("refuses a deploy without SECRETS_KEY, whatever the providers", () => {
    const r = run(config(), [TOKEN, ...ALL_BILLING]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the secret SECRETS_KEY is not set");
  });

  it("refuses a deploy without AUDIT_KEY, whatever the providers", () => {
    const r = run(config(), [TOKEN, SEALING, ...ALL_BILLING, "FCM_SERVICE_ACCOUNT"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the secret AUDIT_KEY is not set");
  });

  it("refuses a deploy without TOKEN_SECRET, whatever the providers", () => {
    const r = run(config(), [...ALL_BILLING]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the secret TOKEN_SECRET is not set");
  });

  it("still refuses the placeholder database and a development ENVIRONMENT", () => {
    const r = run(config({}, "development"), ALL_BILLING);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('ENVIRONMENT is "development"');
  });
});
