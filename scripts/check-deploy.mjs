// `npm run deploy` runs this first. It refuses (exit 1, naming each problem) a deploy that would
// ship the placeholder D1 database id, a development ENVIRONMENT, or a payment or SMS provider
// without the secrets it needs: in production the sandbox does not exist (docs/billing.md), so
// a billing provider without keys means its currencies cannot be paid at all.
//
// Which providers: [vars] BILLING_PROVIDERS (comma-separated, default "stripe,fedapay") and
// [vars] SMS_PROVIDER (twilio | orange; none when unset). The secrets are read with
// `wrangler secret list`; CHECK_DEPLOY_SECRETS (comma-separated names) stands in for it and
// CHECK_DEPLOY_CONFIG for the path of wrangler.toml (test/node/check-deploy.test.ts, CI).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const config = readFileSync(process.env.CHECK_DEPLOY_CONFIG ?? path.join(root, "wrangler.toml"), "utf8");
const problems = [];

/** A top-level `NAME = "value"` of wrangler.toml (the [vars] are the only such strings we read). */
const setting = (name) => new RegExp(`^${name}\\s*=\\s*"([^"]*)"`, "m").exec(config)?.[1];

const databaseId = setting("database_id") ?? "";
if (/^[0-]*$/.test(databaseId)) {
  problems.push("wrangler.toml: database_id is the placeholder; run `npx wrangler d1 create queue-service` and paste its id");
}
const environment = setting("ENVIRONMENT");
if (environment !== "production") problems.push(`wrangler.toml: [vars] ENVIRONMENT is "${environment}", not "production"`);

const NEEDS = {
  stripe: ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET"],
  fedapay: ["FEDAPAY_SECRET_KEY", "FEDAPAY_WEBHOOK_SECRET"],
  twilio: ["TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_FROM"],
  orange: ["ORANGE_CLIENT_ID", "ORANGE_CLIENT_SECRET", "ORANGE_SENDER"],
};
const billing = (setting("BILLING_PROVIDERS") ?? "stripe,fedapay")
  .split(",")
  .map((p) => p.trim().toLowerCase())
  .filter(Boolean);
const sms = setting("SMS_PROVIDER")?.trim().toLowerCase();
const chosen = [...billing, ...(sms ? [sms] : [])];
for (const provider of chosen) {
  if (!NEEDS[provider]) problems.push(`wrangler.toml: unknown provider "${provider}" (known: ${Object.keys(NEEDS).join(", ")})`);
}

let secrets = null;
if (process.env.CHECK_DEPLOY_SECRETS !== undefined) {
  secrets = new Set(
    process.env.CHECK_DEPLOY_SECRETS.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );
} else {
  try {
    const listed = JSON.parse(
      execFileSync(path.join(root, "node_modules", ".bin", "wrangler"), ["secret", "list", "--format", "json"], { encoding: "utf8" }),
    );
    secrets = new Set(listed.map((s) => s.name));
  } catch {
    problems.push("could not list the Worker's secrets (`npx wrangler login` first); the providers' secrets cannot be checked");
  }
}
if (secrets) {
  for (const provider of chosen) {
    const missing = (NEEDS[provider] ?? []).filter((name) => !secrets.has(name));
    if (missing.length > 0) {
      problems.push(`${provider} needs the secret(s) ${missing.join(", ")}: \`npx wrangler secret put ${missing[0]}\``);
    }
  }
}

// TOKEN_SECRET signs every session token, API key and ticket token (src/lib/credentials.ts):
// without it the deployed Worker can neither issue nor accept one, so it is required. (The
// development value is public and refused by the Worker in production.)
if (secrets && !secrets.has("TOKEN_SECRET")) {
  problems.push(
    "the secret TOKEN_SECRET is not set (it signs every credential): `openssl rand -base64 48 | npx wrangler secret put TOKEN_SECRET`" +
      " (when rotating, keep the old value in TOKEN_SECRET_PREVIOUS for the grace period; docs/hot-path.md)",
  );
}

// SECRETS_KEY seals the secrets D1 keeps (webhook signing secrets, src/lib/secret-box.ts): the
// Worker refuses to seal or open one without it in production (docs/security.md).
if (secrets && !secrets.has("SECRETS_KEY")) {
  problems.push(
    "the secret SECRETS_KEY is not set (it encrypts the webhook signing secrets in D1): `openssl rand -base64 32 | npx wrangler secret put SECRETS_KEY`" +
      " (when rotating, keep the old value in SECRETS_KEY_PREVIOUS with its id in SECRETS_KEY_PREVIOUS_ID; docs/security.md)",
  );
}

// AUDIT_KEY keys the audit chain (src/lib/audit-key.ts): without it a database writer could re-hash entries.
if (secrets && !secrets.has("AUDIT_KEY")) {
  problems.push(
    "the secret AUDIT_KEY is not set (it keys the audit log's hash chain): `openssl rand -base64 32 | npx wrangler secret put AUDIT_KEY`" +
      " (when rotating, keep the old value in AUDIT_KEY_PREVIOUS with its id in AUDIT_KEY_PREVIOUS_ID; docs/security.md)",
  );
}

if (problems.length > 0) {
  console.error(`Not deploying:\n- ${problems.join("\n- ")}`);
  process.exit(1);
}

// Push notifications are optional: without FCM the outbox records what would have been sent.
if (secrets && !secrets.has("FCM_SERVICE_ACCOUNT")) console.warn("Warning: FCM_SERVICE_ACCOUNT is not set: no push notifications");
console.log(`Deploy checks passed (billing: ${billing.join(", ") || "none"}; SMS: ${sms ?? "none"}).`);
