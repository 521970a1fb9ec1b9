import { describe, expect, it } from "vitest";
import { testClock } from "../helpers/clock";
import { call, expectOk } from "../helpers/api";
import { createApiKey, queueFixture } from "../helpers/fixtures";

// Issue 44: one IPv6 subscriber holds a whole /64 (2^64 addresses). Every per-address limit keys
// on the /64, so 25 addresses of one prefix get one address's share, not 25.

const randomMobile = () => `+3360${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
/** A /64 of the documentation range, new each time, and its n-th host. */
const randomPrefix = () => `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}`;
const host = (prefix: string, n: number) => `${prefix}:${((n * 7919) & 0xffff).toString(16)}:${n.toString(16)}::${(n + 1).toString(16)}`;

describe("per-address limits key IPv6 on its /64 (issue 44)", () => {
  it("25 addresses of one /64 get the per-address SMS-join cap (10) once; another /64 has its own", async () => {
    const f = await queueFixture("pro");
    const { key } = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const prefix = randomPrefix();
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const res = await call("POST", `/v1/widget/queue/${f.queueId}/join`, {
        apiKey: key,
        body: { phone: randomMobile() },
        headers: { "CF-Connecting-IP": host(prefix, i) },
      });
      statuses.push(res.status);
      if (res.status === 429) expect(res.body.error.details).toMatchObject({ cap: "perAddressPerDay", limit: 10 });
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    const elsewhere = await call("POST", `/v1/widget/queue/${f.queueId}/join`, {
      apiKey: key,
      body: { phone: randomMobile() },
      headers: { "CF-Connecting-IP": host(randomPrefix(), 1) },
    });
    expectOk(elsewhere, 201);
  });

  it("the strict anonymous bucket (120 a minute) counts the whole /64 as one address", { timeout: 120_000 }, async () => {
    testClock.set("2026-03-02T11:00:00.000Z");
    const prefix = randomPrefix();
    const results = await Promise.all(
      Array.from({ length: 125 }, (_x, i) => call("GET", "/v1/docs", { headers: { "CF-Connecting-IP": host(prefix, i) } })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(120);
    expect(results.filter((r) => r.status === 429)).toHaveLength(5);
    expect((await call("GET", "/v1/docs", { headers: { "CF-Connecting-IP": host(randomPrefix(), 1) } })).status).toBe(200);
  });
});
