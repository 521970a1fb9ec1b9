import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SLIDE_GRANULARITY_MS } from "../../src/http/credentials/sessions";
import { testClock } from "../helpers/clock";
import { call, callSettled, expectError, expectOk, unique } from "../helpers/api";
import { addMember, queueFixture, registerUser } from "../helpers/fixtures";

// The request's way in (docs/hot-path.md): the credential and the queue the path names are
// read in one D1 round trip; the session slides without a write per request; the idempotency
// row exists only for requests that send the header; public reads keep a queue row briefly.

async function sessionRow(token: string) {
  const hash = [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  return env.DB.prepare("SELECT last_seen_at AS lastSeenAt, expires_at AS expiresAt FROM sessions WHERE token_hash = ?")
    .bind(hash)
    .first<{ lastSeenAt: number; expiresAt: number }>();
}

async function idempotencyRows(): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM idempotency_keys").first<{ n: number }>())!.n;
}

/** Waits for the writes the Worker sends after its response (the session's slide). */
async function settled<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 50 && !done(value); i++) {
    await new Promise((r) => setTimeout(r, 20));
    value = await read();
  }
  return value;
}

describe("the credential and the queue in one read", () => {
  it("a session logged out is refused at once on a queue route it had just used", async () => {
    const f = await queueFixture();
    const customer = await registerUser();
    const ticket = expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: {} }), 201);
    expectOk(await call("GET", `/v1/tickets/${ticket.id}`, { token: customer.token }));
    expectOk(await call("POST", "/v1/auth/logout", { token: customer.token }));
    expectError(await call("GET", `/v1/tickets/${ticket.id}`, { token: customer.token }), 401, "AUTHENTICATION_ERROR");
    expectError(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: {} }), 401, "AUTHENTICATION_ERROR");
  });

  it("a member removed loses the queue at once; a member added gets it at once", async () => {
    const f = await queueFixture();
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: {} }), 201);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token, body: {} }));
    expectOk(await call("DELETE", `/v1/organizations/${f.organizationId}/members/${operator.id}`, { token: f.owner.token }));
    expectError(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token, body: {} }), 404, "NOT_FOUND");
    await addMember(f.owner, f.organizationId, "operator", operator);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: {} }), 201);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: operator.token, body: {} }));
  });

  it("a queue or ticket id that names no queue is a 404, for a session and for an API key", async () => {
    const f = await queueFixture();
    const missingQueue = "que_00000000000000000000";
    expectError(await call("POST", `/v1/queues/${missingQueue}/join`, { token: f.owner.token, body: {} }), 404, "NOT_FOUND");
    expectError(await call("GET", "/v1/tickets/tkt_00000000000000000000_1", { token: f.owner.token }), 404, "NOT_FOUND");
    const key = expectOk(
      await call("POST", `/v1/organizations/${f.organizationId}/api-keys`, { token: f.owner.token, body: { name: unique("k") } }),
      201,
    ).key;
    expectError(await call("GET", `/v1/queues/${missingQueue}`, { apiKey: key }), 404, "NOT_FOUND");
    expectOk(await call("GET", `/v1/queues/${f.queueId}`, { apiKey: key }));
    // Another organization's queue, read along with the key, is still not this key's.
    const other = await queueFixture();
    expectError(await call("GET", `/v1/queues/${other.queueId}`, { apiKey: key }), 404, "NOT_FOUND");
  });
});

describe("the session's sliding expiry", () => {
  it("is written at most once per granularity, and a session used before it idles out stays valid", async () => {
    testClock.set("2026-05-04T08:00:00.000Z");
    const user = await registerUser();
    const created = (await sessionRow(user.token))!;
    testClock.advance(SLIDE_GRANULARITY_MS - 1);
    // Settled: a slide this request would write after its answer has been written by now.
    expectOk(await callSettled("GET", "/v1/auth/me", { token: user.token }));
    expect(await sessionRow(user.token)).toEqual(created);

    testClock.advance(1);
    expectOk(await call("GET", "/v1/auth/me", { token: user.token }));
    const at = Date.parse("2026-05-04T08:00:00.000Z") + SLIDE_GRANULARITY_MS;
    const slid = await settled(
      () => sessionRow(user.token),
      (row) => row?.lastSeenAt === at,
    );
    expect(slid).toEqual({ lastSeenAt: at, expiresAt: at + 12 * 60 * 60_000 });
    // Just before the slid expiry the session still answers; just after, it has expired.
    testClock.set(at + 12 * 60 * 60_000 - 1);
    expectOk(await call("GET", "/v1/auth/me", { token: user.token }));
  });
});

describe("Idempotency-Key", () => {
  it("a POST without the header writes no idempotency row; with it, one", async () => {
    const f = await queueFixture();
    const customer = await registerUser();
    const before = await idempotencyRows();
    expectOk(await call("POST", `/v1/queues/${f.queueId}/join`, { token: customer.token, body: {} }), 201);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token: f.owner.token, body: {} }), 201);
    expect(await idempotencyRows()).toBe(before);
    const other = await registerUser();
    expectOk(
      await call("POST", `/v1/queues/${f.queueId}/join`, { token: other.token, body: {}, headers: { "Idempotency-Key": unique("k-") } }),
      201,
    );
    expect(await idempotencyRows()).toBe(before + 1);
  });
});

describe("public reads of a queue", () => {
  it("a queue deleted answers 404 at once, even right after its status was read", async () => {
    const f = await queueFixture();
    expectOk(await call("GET", `/v1/widget/queue/${f.queueId}/status`));
    expectOk(await call("DELETE", `/v1/services/${f.serviceId}`, { token: f.owner.token }));
    expectError(await call("GET", `/v1/widget/queue/${f.queueId}/status`), 404, "NOT_FOUND");
  });

  it("a visitor's ticket read answers 404 at once once its queue is deleted", async () => {
    const f = await queueFixture();
    const joined = expectOk(await call("POST", `/v1/widget/queue/${f.queueId}/join`, { token: f.owner.token, body: {} }), 201);
    const holder = { headers: { "X-Ticket-Token": joined.ticketToken } };
    expect(expectOk(await call("GET", `/v1/widget/tickets/${joined.id}`, holder)).position).toBe(1);
    expectOk(await call("DELETE", `/v1/services/${f.serviceId}`, { token: f.owner.token }));
    expectError(await call("GET", `/v1/widget/tickets/${joined.id}`, holder), 404, "NOT_FOUND");
  });
});
