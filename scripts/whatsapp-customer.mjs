#!/usr/bin/env node
// `npm run whatsapp:customer -- --phone-number-id 106540352242922 --from +33612345678 STATUT`
// (issue 45): plays a WhatsApp customer against `npm run dev`, posting the webhook Meta would post
// for one message to the business number, signed as Meta signs it (X-Hub-Signature-256: sha256=
// hex HMAC-SHA256 of the raw body with the app secret) when --app-secret (or WHATSAPP_APP_SECRET)
// is given; unsigned otherwise, which the local Worker takes when it has no WHATSAPP_APP_SECRET.
// The reply goes out through the outbox stand-in: `npm run dev` prints it as
// {"notification":"outbox","channel":"whatsapp",…}. docs/conversations.md, "WhatsApp".
//
// Options (or environment):
//   --phone-number-id ID    the business number's id, as saved with PUT /v1/organizations/{id}/whatsapp (required)
//   --from +E164            the customer's number (default +33612345678)
//   --button PAYLOAD        send a quick-reply tap (e.g. ANNULER) instead of a text
//   --api URL               the API's origin (QUEUE_API, default http://127.0.0.1:8787)
//   --app-secret SECRET     sign the request (WHATSAPP_APP_SECRET)
//   the remaining words     the text (default STATUT)

import { createHmac, randomUUID } from "node:crypto";

function options(argv) {
  const out = { words: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("--")) {
      out.words.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split("=", 2);
    out[name] = inline ?? argv[++i];
  }
  return out;
}

const o = options(process.argv.slice(2));
const phoneNumberId = o["phone-number-id"];
if (!phoneNumberId) {
  console.error("--phone-number-id is required (the id saved with PUT /v1/organizations/{organizationId}/whatsapp)");
  process.exit(2);
}
const from = (o.from ?? "+33612345678").replace(/^\+/, "");
const api = (o.api ?? process.env.QUEUE_API ?? "http://127.0.0.1:8787").replace(/\/+$/, "");
const secret = o["app-secret"] ?? process.env.WHATSAPP_APP_SECRET;
const message = o.button
  ? { type: "button", button: { payload: o.button, text: o.button } }
  : { type: "text", text: { body: o.words.join(" ") || "STATUT" } };

const raw = JSON.stringify({
  object: "whatsapp_business_account",
  entry: [
    {
      id: "0",
      changes: [
        {
          field: "messages",
          value: {
            messaging_product: "whatsapp",
            metadata: { display_phone_number: "", phone_number_id: phoneNumberId },
            contacts: [{ profile: { name: "Local customer" }, wa_id: from }],
            messages: [{ from, id: `wamid.local.${randomUUID()}`, timestamp: String(Math.floor(Date.now() / 1000)), ...message }],
          },
        },
      ],
    },
  ],
});

const headers = { "Content-Type": "application/json" };
if (secret) headers["X-Hub-Signature-256"] = `sha256=${createHmac("sha256", secret).update(raw).digest("hex")}`;
const res = await fetch(`${api}/v1/inbound/whatsapp`, { method: "POST", headers, body: raw });
console.log(res.status, await res.text());
console.log("The reply, if any, is printed by `npm run dev` as an outbox notification on the whatsapp channel.");
process.exit(res.ok ? 0 : 1);
