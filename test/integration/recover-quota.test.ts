import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { queueFixture } from "../helpers/fixtures";

// `recover {recoveryOption: rejoin}` creates a ticket, so it takes a unit of the monthly quota
// like any join (issue 26: a starter organization reached 55 tickets of 50 through rejoins).

describe("recover rejoin and the monthly ticket quota", () => {
  it("refuses a rejoin once the quota is used up, gives the unit back, and still allows restore", async () => {
    testClock.set("2026-03-20T10:00:00.000Z");
    const f = await queueFixture("starter");
    const token = f.owner.token;
    const skipped: string[] = [];
    for (let i = 0; i < 2; i++) {
      expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token }), 201);
      const called = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token, body: {} }));
      expectOk(await call("POST", `/v1/tickets/${called.id}/skip-absent`, { token, body: { reason: "absent" } }));
      skipped.push(called.id);
    }
    // One unit left: the first rejoin takes it.
    await Promise.all(Array.from({ length: 47 }, () => call("POST", `/v1/queues/${f.queueId}/operator-join`, { token })));
    const rejoined = expectOk(await call("POST", `/v1/tickets/${skipped[0]}/recover`, { token, body: { recoveryOption: "rejoin" } }));
    expect(rejoined.recoveredFromId).toBe(skipped[0]);
    const refused = await call("POST", `/v1/tickets/${skipped[1]}/recover`, { token, body: { recoveryOption: "rejoin" } });
    expectError(refused, 403, "QUOTA_EXCEEDED");
    expect(refused.body.error.details).toMatchObject({ limit: 50, used: 50 });
    expectError(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token }), 403, "QUOTA_EXCEEDED");
    // Restore creates nothing: it is not counted.
    expect(expectOk(await call("POST", `/v1/tickets/${skipped[1]}/recover`, { token, body: { recoveryOption: "restore" } })).status).toBe(
      "waiting",
    );
  });

  it("gives the unit back when the room refuses the rejoin", async () => {
    testClock.set("2026-03-20T10:00:00.000Z");
    const f = await queueFixture("starter");
    const token = f.owner.token;
    const waiting = expectOk(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token }), 201);
    // A waiting ticket cannot be recovered: 409, and the quota is untouched.
    expectError(
      await call("POST", `/v1/tickets/${waiting.id}/recover`, { token, body: { recoveryOption: "rejoin" } }),
      409,
      "INVALID_STATE",
    );
    const more = await Promise.all(Array.from({ length: 49 }, () => call("POST", `/v1/queues/${f.queueId}/operator-join`, { token })));
    expect(more.filter((r) => r.status === 201)).toHaveLength(49);
    expectError(await call("POST", `/v1/queues/${f.queueId}/operator-join`, { token }), 403, "QUOTA_EXCEEDED");
  });
});
