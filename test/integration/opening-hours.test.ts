import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { addMember, createApiKey, createOrganization, createQueueFixture, registerUser } from "../helpers/fixtures";

// A location's weekly opening hours (docs/appointments.md): in the location's zone, DST-safe;
// joins outside them are refused exactly like a calendar closure.

const HOURS = {
  mon: [
    { open: "08:30", close: "12:00" },
    { open: "13:30", close: "17:00" },
  ],
  sat: [{ open: "09:00", close: "12:00" }],
};

async function parisBranch() {
  const owner = await registerUser();
  const org = await createOrganization(owner, { type: "banking" });
  const f = await createQueueFixture(owner, org.id);
  expectOk(await call("PATCH", `/v1/locations/${f.locationId}`, { token: owner.token, body: { timezone: "Europe/Paris" } }));
  return f;
}

// An API key, not a session: the DST test spans more than a session's idle timeout.
const join = (f: { queueId: string }, apiKey: string) => call("POST", `/v1/queues/${f.queueId}/operator-join`, { apiKey, body: {} });

describe("opening hours", () => {
  it("are set, answered and cleared on the location", async () => {
    testClock.set("2026-05-04T06:00:00.000Z");
    const f = await parisBranch();
    const set = expectOk(await call("PATCH", `/v1/locations/${f.locationId}`, { token: f.owner.token, body: { openingHours: HOURS } }));
    expect(set.openingHours).toEqual(HOURS);
    const listed = expectOk(
      await call("GET", "/v1/business/locations", { token: f.owner.token, headers: { "X-Organization-Id": f.organizationId } }),
    );
    expect(listed[0].openingHours).toEqual(HOURS);
    const cleared = expectOk(await call("PATCH", `/v1/locations/${f.locationId}`, { token: f.owner.token, body: { openingHours: null } }));
    expect(cleared.openingHours).toBeNull();
  });

  it("refuses bad hours with the field at fault", async () => {
    const f = await parisBranch();
    const patch = (openingHours: unknown) =>
      call("PATCH", `/v1/locations/${f.locationId}`, { token: f.owner.token, body: { openingHours } });
    expectError(await patch({ mon: [{ open: "12:00", close: "08:00" }] }), 400, "VALIDATION_ERROR");
    expectError(await patch({ mon: [{ open: "8:30", close: "12:00" }] }), 400, "VALIDATION_ERROR");
    expectError(
      await patch({
        mon: [
          { open: "08:00", close: "12:00" },
          { open: "11:00", close: "13:00" },
        ],
      }),
      400,
      "VALIDATION_ERROR",
    );
    expectError(await patch({ monday: [] }), 400, "VALIDATION_ERROR");
    expectError(await patch({ mon: [{ open: "24:00", close: "24:00" }] }), 400, "VALIDATION_ERROR");
    const bad = await patch({ tue: [{ open: "10:00", close: "09:00" }] });
    expect(JSON.stringify(bad.body.error.details)).toContain("tue");
  });

  it("is the owner's or a manager's to change, not an operator's nor another organization's", async () => {
    const f = await parisBranch();
    const operator = await addMember(f.owner, f.organizationId, "operator");
    expectError(
      await call("PATCH", `/v1/locations/${f.locationId}`, { token: operator.token, body: { openingHours: HOURS } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    const stranger = await registerUser();
    await createOrganization(stranger);
    const res = await call("PATCH", `/v1/locations/${f.locationId}`, { token: stranger.token, body: { openingHours: HOURS } });
    expect([403, 404]).toContain(res.status);
  });

  it("refuses joins outside the hours like a closure, at the same local time across the DST change", async () => {
    testClock.set("2026-03-20T06:00:00.000Z");
    const f = await parisBranch();
    expectOk(await call("PATCH", `/v1/locations/${f.locationId}`, { token: f.owner.token, body: { openingHours: HOURS } }));
    const { key } = await createApiKey(f.owner, f.organizationId, ["admin"]);

    // Monday 23 March (UTC+1): 08:30 local is 07:30Z.
    testClock.set("2026-03-23T07:15:00.000Z");
    const early = await join(f, key);
    expectError(early, 409, "QUEUE_CLOSED");
    expect(early.body.error.details).toMatchObject({ reason: "closure", eventId: "opening_hours", until: "2026-03-23T07:30:00.000Z" });
    testClock.set("2026-03-23T07:30:00.000Z");
    expect(expectOk(await join(f, key), 201).status).toBe("waiting");
    // The lunch break between the two ranges.
    testClock.set("2026-03-23T11:10:00.000Z");
    expect((await join(f, key)).body.error.details).toMatchObject({ reason: "closure", until: "2026-03-23T12:30:00.000Z" });
    // A Tuesday has no hours: closed until Saturday 09:00.
    testClock.set("2026-03-24T10:00:00.000Z");
    expect((await join(f, key)).body.error.details).toMatchObject({ reason: "closure", until: "2026-03-28T08:00:00.000Z" });

    // Monday 30 March (UTC+2 since Sunday): 08:30 local is 06:30Z.
    testClock.set("2026-03-30T06:45:00.000Z");
    expect(expectOk(await join(f, key), 201).status).toBe("waiting");
    testClock.set("2026-03-30T15:05:00.000Z");
    expectError(await join(f, key), 409, "QUEUE_CLOSED");

    // Staff may still call what was taken before closing: the hours close joins, not the staff.
    expect(expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { apiKey: key, body: {} })).status).toBe("called");

    // Cleared: open all day again, at once.
    expectOk(await call("PATCH", `/v1/locations/${f.locationId}`, { apiKey: key, body: { openingHours: null } }));
    expect(expectOk(await join(f, key), 201).status).toBe("waiting");
  });

  it("shows the closed screen on the display board outside the hours", async () => {
    testClock.set("2026-05-04T05:00:00.000Z"); // Monday, 07:00 in Paris
    const f = await parisBranch();
    expectOk(
      await call("PATCH", `/v1/locations/${f.locationId}`, {
        token: f.owner.token,
        body: { openingHours: { mon: [{ open: "08:30", close: "12:00" }] } },
      }),
    );
    const widget = await createApiKey(f.owner, f.organizationId, ["widget"]);
    const board = expectOk(await call("GET", `/v1/widget/organization/${f.organizationId}/display-board`, { apiKey: widget.key }));
    expect(board.closures).toEqual([
      { start: "2026-05-04T05:00:00.000Z", end: "2026-05-04T06:30:00.000Z" },
      { start: "2026-05-04T10:00:00.000Z", end: "2026-05-05T05:00:00.000Z" },
    ]);
  });
});
