// `npm run deploy` runs this first: it refuses a deploy that would ship the placeholder D1
// database id or a development ENVIRONMENT, and lists the secrets that are not set (warnings).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const config = readFileSync(path.join(root, "wrangler.toml"), "utf8");
const problems = [];

const databaseId = /^database_id\s*=\s*"([^"]*)"/m.exec(config)?.[1] ?? "";
if (/^[0-]*$/.test(databaseId)) {
  problems.push("wrangler.toml: database_id is the placeholder; run `npx wrangler d1 create queue-service` and paste its id");
}
const environment = /^ENVIRONMENT\s*=\s*"([^"]*)"/m.exec(config)?.[1];
if (environment !== "production") problems.push(`wrangler.toml: [vars] ENVIRONMENT is "${environment}", not "production"`);

if (problems.length > 0) {
  console.error(`Not deploying:\n- ${problems.join("\n- ")}`);
  process.exit(1);
}

// Secrets are optional (each provider falls back to its local stand-in), so only warn.
const wanted = ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "FEDAPAY_SECRET_KEY", "FEDAPAY_WEBHOOK_SECRET", "FCM_SERVICE_ACCOUNT"];
try {
  const listed = JSON.parse(
    execFileSync(path.join(root, "node_modules", ".bin", "wrangler"), ["secret", "list", "--format", "json"], { encoding: "utf8" }),
  );
  const names = new Set(listed.map((s) => s.name));
  const missing = wanted.filter((n) => !names.has(n));
  if (missing.length > 0) console.warn(`Warning: secrets not set (their providers stay in local stand-in mode): ${missing.join(", ")}`);
} catch {
  console.warn("Warning: could not list the Worker's secrets (not logged in yet?); check them with `npx wrangler secret list`");
}

// TOKEN_SECRET signs every session token, API key and ticket token (src/lib/credentials.ts):
// without it the deployed Worker can neither issue nor accept one, so it is required, not
// optional. (The development value is public and refused by the Worker in production.)
try {
  const listed = JSON.parse(
    execFileSync(path.join(root, "node_modules", ".bin", "wrangler"), ["secret", "list", "--format", "json"], { encoding: "utf8" }),
  );
  if (!listed.some((s) => s.name === "TOKEN_SECRET")) {
    console.error(
      "Not deploying: the secret TOKEN_SECRET is not set. Set a long random value:\n" +
        "  openssl rand -base64 48 | npx wrangler secret put TOKEN_SECRET\n" +
        "(when rotating later, put the old value in TOKEN_SECRET_PREVIOUS for the grace period; docs/hot-path.md)",
    );
    process.exit(1);
  }
} catch {
  console.warn("Warning: could not check that the secret TOKEN_SECRET is set; the Worker refuses every credential without it");
}
