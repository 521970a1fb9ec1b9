#!/usr/bin/env node
// Plays a customer's USSD session against the local service (docs/conversations.md, "USSD"):
//   npm run ussd:play -- '*384*123#' --secret ussd_… [--phone +2250700000001] [--url http://localhost:8787]
// Each line typed is one input; the script posts the session's inputs joined by `*`, as an
// aggregator does, and prints each screen until one starts with END.
import { createInterface } from "node:readline/promises";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const serviceCode = args.find((a) => a.startsWith("*"));
const secret = option("secret", process.env.USSD_SECRET);
const phoneNumber = option("phone", "+2250700000001");
const base = option("url", "http://localhost:8787").replace(/\/+$/, "");
if (!serviceCode || !secret) {
  console.error("usage: npm run ussd:play -- '*384*123#' --secret <secret from PUT /v1/organizations/{id}/ussd> [--phone +225…] [--url …]");
  process.exit(2);
}

const sessionId = `local_${Date.now()}`;
const inputs = [];
const rl = createInterface({ input: process.stdin, output: process.stdout });
for (;;) {
  const res = await fetch(`${base}/v1/inbound/ussd?secret=${encodeURIComponent(secret)}`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ sessionId, serviceCode, phoneNumber, text: inputs.join("*") }).toString(),
  });
  const screen = await res.text();
  if (!res.ok) {
    console.error(`HTTP ${res.status}: ${screen}`);
    break;
  }
  console.log(`\n${screen.slice(4)}\n(${screen.length} characters)`);
  if (!screen.startsWith("CON ")) break;
  inputs.push((await rl.question("> ")).trim());
}
rl.close();
