#!/usr/bin/env node
// `npm run webhooks:listen -- --forward-to http://127.0.0.1:4000/hooks` (issue #32): webhooks on
// a laptop, as Stripe's CLI does it. The organization's events are read from GET /v1/events
// (no public URL needed: this polls out), printed, and POSTed to the local receiver signed with
// the Standard Webhooks scheme (webhook-id, webhook-timestamp, webhook-signature) under a
// signing secret printed at start, so the receiver verifies them with the same code it will run
// against real deliveries (e.g. `new Webhook(secret).verify(body, headers)` of standardwebhooks).
// Against `npm run dev` a webhook can instead point at the receiver directly
// (http://127.0.0.1:PORT/…, localhost or [::1]: accepted with ENVIRONMENT=development only), with
// the real retries and delivery log; this listener is the way for a deployed API.
//
// Options (or environment):
//   --forward-to URL        where to POST each event (required)
//   --api-key KEY           an admin or manage:webhooks key (QUEUE_API_KEY)
//   --api URL               the API's origin (QUEUE_API, default http://127.0.0.1:8787)
//   --secret whsec_…        the signing secret (WEBHOOKS_LISTEN_SECRET; default: a new one, printed)
//   --types a,b             only these event types
//   --from-now              skip the events already recorded (default: replay the last 24 h)
//   --interval MS           poll interval when idle (default 1000)
//   --once                  read until caught up, then exit (scripts and tests)

import { Webhook } from "standardwebhooks";
import { randomBytes } from "node:crypto";

function options(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("--")) continue;
    const [name, inline] = arg.slice(2).split("=", 2);
    if (["once", "from-now"].includes(name)) out[name] = true;
    else out[name] = inline ?? argv[++i];
  }
  return out;
}

const opts = options(process.argv.slice(2));
const forwardTo = opts["forward-to"];
const apiKey = opts["api-key"] ?? process.env.QUEUE_API_KEY;
const api = (opts.api ?? process.env.QUEUE_API ?? "http://127.0.0.1:8787").replace(/\/$/, "");
const secret = opts.secret ?? process.env.WEBHOOKS_LISTEN_SECRET ?? `whsec_${randomBytes(24).toString("base64")}`;
const interval = Number(opts.interval ?? 1000);

if (!forwardTo || !apiKey) {
  console.error(
    "usage: npm run webhooks:listen -- --forward-to http://127.0.0.1:4000/hooks --api-key qk_live_… [--api http://127.0.0.1:8787]",
  );
  process.exit(2);
}

const signer = new Webhook(secret);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One page of events after `cursor`; exits with the API's own error (code, message) on a refusal. */
async function page(cursor) {
  const query = new URLSearchParams({ limit: "100" });
  if (cursor) query.set("startingAfter", cursor);
  if (opts.types) query.set("types", opts.types);
  const res = await fetch(`${api}/v1/events?${query}`, { headers: { "X-API-Key": apiKey } });
  const body = await res.json().catch(() => null);
  if (!res.ok || !body?.success) {
    const error = body?.error;
    console.error(`GET /v1/events answered ${res.status}${error ? ` ${error.code}: ${error.message}` : ""}`);
    process.exit(1);
  }
  return body;
}

async function forward(event) {
  const payload = JSON.stringify(event);
  const timestamp = new Date();
  const headers = {
    "content-type": "application/json",
    "webhook-id": event.id,
    "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
    "webhook-signature": signer.sign(event.id, timestamp, payload),
  };
  try {
    const res = await fetch(forwardTo, { method: "POST", headers, body: payload });
    console.log(`${event.createdAt}  ${event.type.padEnd(24)} ${event.id}  → ${res.status}`);
  } catch (err) {
    console.log(`${event.createdAt}  ${event.type.padEnd(24)} ${event.id}  → not delivered (${err.cause?.code ?? err.message})`);
  }
}

let cursor = null;
if (opts["from-now"]) {
  for (;;) {
    const body = await page(cursor);
    cursor = body.meta.nextCursor;
    if (!body.meta.hasMore) break;
  }
}
console.log(`Forwarding events of ${api} to ${forwardTo}`);
console.log(`Signing secret (verify with it): ${secret}`);
for (;;) {
  const body = await page(cursor);
  for (const event of body.data) await forward(event);
  cursor = body.meta.nextCursor;
  if (body.meta.hasMore) continue;
  if (opts.once) break;
  await sleep(interval);
}
