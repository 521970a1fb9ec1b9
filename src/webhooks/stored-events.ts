// How the event store's rows are read back (issue 40, docs/security.md "Personal data in events"):
// the stored payload has no personal data, and the sealed personal fields are opened only for a
// reader that receives them. Shared by GET /v1/events (event-stream.ts), the live socket
// (event-hub.ts) and the data-subject export.

import {
  payloadFor,
  readsPersonalData,
  withPersonalData,
  type PayloadReader,
  type PersonalFields,
  type WebhookPayload,
} from "../domain/webhooks";
import { openSecret, type SecretBoxEnv } from "../lib/secret-box";

/** A stored event's full payload: the stored (masked) one with its sealed personal fields opened. */
export async function openStoredEvent(env: SecretBoxEnv, payload: string, personalSealed: string | null): Promise<WebhookPayload> {
  const masked = JSON.parse(payload) as WebhookPayload;
  if (personalSealed === null) return masked;
  return withPersonalData(masked, JSON.parse(await openSecret(env, personalSealed)) as PersonalFields);
}

/** A stored event as one reader receives it: the sealed fields are opened only for a reader that receives them. */
export async function readStoredEvent(
  env: SecretBoxEnv,
  row: { payload: string; personalSealed: string | null },
  reader: PayloadReader,
): Promise<WebhookPayload> {
  const payload = readsPersonalData(reader)
    ? await openStoredEvent(env, row.payload, row.personalSealed)
    : (JSON.parse(row.payload) as WebhookPayload);
  // Rows recorded before the payload was stored masked still go through the reader's filter.
  return payloadFor(payload, reader);
}
