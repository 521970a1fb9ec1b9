import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { createApiKey, queueFixture } from "../helpers/fixtures";

// A publishable (widget) key is shared by every visitor of the page that embeds it, so its
// Idempotency-Key scope must not be the key alone (issue 26): a visitor reusing another's key
// got that visitor's ticket and its ticketToken. The scope is key + address + request.

function joinFrom(ip: string, widgetKey: string, queueId: string, idempotencyKey: string, body: Record<string, unknown>) {
  return call("POST", `/v1/widget/queue/${queueId}/join`, {
    apiKey: widgetKey,
    body,
    headers: { "CF-Connecting-IP": ip, "Idempotency-Key": idempotencyKey },
  });
}

describe("Idempotency-Key with a widget key", () => {
  it("never hands one visitor another visitor's ticket and token", async () => {
    const f = await queueFixture("pro");
    const widgetKey = (await createApiKey(f.owner, f.organizationId, ["widget"])).key;
    const key = "join-1";
    const first = expectOk(await joinFrom("198.51.100.1", widgetKey, f.queueId, key, { visitorName: "Awa" }), 201);
    expect(first.ticketToken).toBeTruthy();

    // Another address, the same key and body: a ticket of their own.
    const other = await joinFrom("198.51.100.2", widgetKey, f.queueId, key, { visitorName: "Awa" });
    expect(expectOk(other, 201).id).not.toBe(first.id);
    expect(other.body.data.ticketToken).not.toBe(first.ticketToken);
    expect(other.headers.get("Idempotent-Replayed")).toBeNull();

    // The same address with another body: not a replay of the first either.
    const sameAddress = await joinFrom("198.51.100.1", widgetKey, f.queueId, key, { visitorName: "Bob" });
    expect(expectOk(sameAddress, 201).id).not.toBe(first.id);

    // The visitor's own retry (same address, key and body) still replays their ticket.
    const retry = await joinFrom("198.51.100.1", widgetKey, f.queueId, key, { visitorName: "Awa" });
    expect(expectOk(retry, 201).id).toBe(first.id);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
  });

  it("keeps a server key's scope per key: the same key with another body is still 409", async () => {
    const f = await queueFixture("pro");
    const writeKey = (await createApiKey(f.owner, f.organizationId, ["write"])).key;
    const send = (ip: string, visitorName: string) =>
      call("POST", `/v1/queues/${f.queueId}/operator-join`, {
        apiKey: writeKey,
        body: { visitorName },
        headers: { "CF-Connecting-IP": ip, "Idempotency-Key": "op-1" },
      });
    const first = expectOk(await send("198.51.100.1", "A"), 201);
    expect(expectOk(await send("198.51.100.9", "A"), 201).id).toBe(first.id);
    expect((await send("198.51.100.1", "B")).status).toBe(409);
  });
});
