import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { DomainEventMessage } from "../../src/domain/events";
import { call, expectError, expectOk } from "../helpers/api";
import { addQueue, createApiKey, queueFixture, walkIn } from "../helpers/fixtures";
import { capture, eventsOf, feedEvents, type Captured } from "../helpers/notifications";

// GET /v1/events (issue #32): the events a room really produced, fed to the EVENTS consumer as
// the platform would (in batches, one of them twice), are listed once each, in the order they
// were recorded; a client that stops and resumes from the last id it saw reads every event
// exactly once, in order, while joins and calls go on.

let captured: Captured | null = null;
afterEach(() => captured?.restore());

async function readAll(apiKey: string, from: string | null, limit: number, query = ""): Promise<{ ids: string[]; last: string | null }> {
  const ids: string[] = [];
  let cursor = from;
  for (let i = 0; i < 50; i++) {
    const res = await call("GET", `/v1/events?limit=${limit}${cursor ? `&startingAfter=${cursor}` : ""}${query}`, { apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(...res.body.data.map((e: { id: string }) => e.id));
    cursor = res.body.meta.nextCursor;
    if (!res.body.meta.hasMore) break;
  }
  return { ids, last: cursor };
}

describe("GET /v1/events", () => {
  it("resuming from the last id seen reads every event exactly once, in order, under concurrent joins and calls", async () => {
    const f = await queueFixture("pro");
    const second = await addQueue(f);
    const { key } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks"]);
    captured = capture();

    // Round 1: concurrent joins on two queues, recorded in two batches (the second one twice).
    await Promise.all([...Array(6)].map((_, i) => walkIn(f.owner, i % 2 ? second : f.queueId)));
    const round1 = [...(await eventsOf(captured, f.queueId)), ...(await eventsOf(captured, second))];
    expect(round1.length).toBeGreaterThanOrEqual(6);
    await feedEvents(round1.slice(0, 4));
    await feedEvents(round1.slice(4));
    await feedEvents(round1.slice(4)); // at-least-once: the same events again

    const firstRead = await readAll(key, null, 4);
    expect(firstRead.ids).toEqual(round1.map((e) => e.id));

    // The client is away; calls and joins go on concurrently and are recorded.
    await Promise.all([
      call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }),
      call("POST", `/v1/queues/${second}/call-next`, { token: f.owner.token }),
      walkIn(f.owner, f.queueId),
      walkIn(f.owner, second),
    ]);
    const round2 = [...(await eventsOf(captured, f.queueId)), ...(await eventsOf(captured, second))];
    await feedEvents(round2);

    const resumed = await readAll(key, firstRead.last, 3);
    expect(resumed.ids).toEqual(round2.map((e) => e.id));
    const all = [...firstRead.ids, ...resumed.ids];
    expect(new Set(all).size).toBe(all.length);
    // Nothing new: an empty page keeps the cursor.
    const idle = expectOk(await call("GET", `/v1/events?startingAfter=${resumed.last}`, { apiKey: key }));
    expect(idle).toEqual([]);
  });

  it("the webhook envelope, filtered by types and queueIds; another organization sees none of it", async () => {
    const f = await queueFixture("pro");
    const second = await addQueue(f);
    const { key } = await createApiKey(f.owner, f.organizationId, ["manage:webhooks"]);
    captured = capture();
    const t = await walkIn(f.owner, f.queueId);
    await walkIn(f.owner, second);
    expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: f.owner.token }));
    const events: DomainEventMessage[] = [...(await eventsOf(captured, f.queueId)), ...(await eventsOf(captured, second))];
    await feedEvents(events);

    const called = await call("GET", `/v1/events?types=ticket.called`, { apiKey: key });
    expect(called.body.data).toHaveLength(1);
    expect(called.body.data[0]).toMatchObject({
      type: "ticket.called",
      organizationId: f.organizationId,
      data: { queueId: f.queueId, ticketId: t.id, displayCode: t.displayCode },
    });
    const ofSecond = expectOk(await call("GET", `/v1/events?queueIds=${second}`, { apiKey: key }));
    expect(ofSecond.length).toBeGreaterThan(0);
    expect(ofSecond.every((e: any) => e.data.queueId === second)).toBe(true);

    const other = await queueFixture("pro");
    const { key: otherKey } = await createApiKey(other.owner, other.organizationId, ["manage:webhooks"]);
    expect(expectOk(await call("GET", "/v1/events", { apiKey: otherKey }))).toEqual([]);
    // Its cursor is not theirs either.
    expectError(
      await call("GET", `/v1/events?startingAfter=${events[0]!.id}`, { apiKey: otherKey }),
      400,
      "VALIDATION_ERROR",
      "startingAfter",
    );
  });

  it("refuses a read-only key, an unknown type; needs a credential", async () => {
    const f = await queueFixture("pro");
    const { key: readOnly } = await createApiKey(f.owner, f.organizationId, ["read"]);
    expectError(await call("GET", "/v1/events", { apiKey: readOnly }), 403, "AUTHORIZATION_ERROR");
    const { key } = await createApiKey(f.owner, f.organizationId, ["admin"]);
    expectError(await call("GET", "/v1/events?types=ticket.teleported", { apiKey: key }), 400, "VALIDATION_ERROR", "types");
    expectError(await call("GET", "/v1/events"), 401, "AUTHENTICATION_ERROR");
    expect(
      await env.DB.prepare("SELECT COUNT(*) AS n FROM organization_events WHERE organization_id = ?").bind(f.organizationId).first("n"),
    ).toBe(0);
  });
});
