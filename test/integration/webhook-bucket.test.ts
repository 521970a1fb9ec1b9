import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sandboxSecret } from "../../src/providers/sandbox";
import { type ApiResponse, call } from "../helpers/api";
import { hmacHex } from "../helpers/billing";
import { testClock } from "../helpers/clock";

// Provider webhooks (#26): a signed event counts in its provider's own bucket, never in the
// anonymous 120/minute bucket of the address it comes from (a provider sends many events a
// minute from few addresses); a forged one counts in that strict per-address bucket.

const T0 = Date.parse("2026-03-02T10:00:00.000Z");

// Through the Worker's handler (`call`), not SELF.fetch: 243 SELF.fetch calls in one test grew
// slower call by call (test/helpers/api.ts) and went past the 30 s timeout on a loaded machine.
async function post(raw: string, signature: string, ip: string): Promise<ApiResponse> {
  return call("POST", "/v1/billing/webhooks/sandbox", {
    headers: { "Content-Type": "application/json", "Sandbox-Signature": signature, "CF-Connecting-IP": ip },
    rawBody: raw,
  });
}

function event(i: number): string {
  return JSON.stringify({ id: `sbx_evt_bucket_${i}`, type: "test.ping", created: T0 / 1000, data: {} });
}

const sign = async (secret: string, raw: string) => `t=${T0 / 1000},v1=${await hmacHex(secret, `${T0 / 1000}.${raw}`)}`;

describe("provider webhook bucket", () => {
  it("the 121st signed event of a minute from one address is accepted; forged ones use the strict per-address bucket", async () => {
    testClock.set(T0);
    const secret = await sandboxSecret(env);
    const ip = "198.51.100.250";
    for (let i = 0; i < 121; i++) {
      const raw = event(i);
      const res = await post(raw, await sign(secret, raw), ip);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const forger = "198.51.100.251";
    for (let i = 0; i < 120; i++) expect((await post(event(1000 + i), await sign("not-the-secret", event(0)), forger)).status).toBe(400);
    expect((await post(event(2000), await sign("not-the-secret", event(0)), forger)).status).toBe(429);
    // A signed event from that same address is still accepted.
    const raw = event(3000);
    expect((await post(raw, await sign(secret, raw), forger)).status).toBe(200);
  });
});
