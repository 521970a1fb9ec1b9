import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { testClock } from "../helpers/clock";
import { createApiKey, createOrganization, createQueueFixture, registerUser } from "../helpers/fixtures";

// The display board's closed screen (docs/display-board.md) learns the branch's closures from
// the display-board route: the calendar's closures of the whole organization in the next 24 h.

describe("display-board closures", () => {
  it("lists the organization's closures of the next 24 hours, not a service's, a member's or a later one", async () => {
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "banking" });
    const f = await createQueueFixture(owner, org.id);
    const widget = await createApiKey(owner, org.id, ["widget"]);
    testClock.set("2026-05-04T10:00:00.000Z");
    const event = async (body: Record<string, unknown>) =>
      expectOk(
        await call("POST", `/v1/calendar/organization/${org.id}`, { token: owner.token, body: { eventType: "closure", ...body } }),
        201,
      );
    await event({ title: "Lunch", startDate: "2026-05-04T12:00:00Z", endDate: "2026-05-04T13:30:00Z" });
    await event({ title: "Teller only", serviceId: f.serviceId, startDate: "2026-05-04T09:00:00Z", endDate: "2026-05-04T18:00:00Z" });
    await event({ title: "Awa away", attendees: [owner.id], startDate: "2026-05-04T09:00:00Z", endDate: "2026-05-04T18:00:00Z" });
    await event({ title: "Holiday", startDate: "2026-05-08T00:00:00Z", endDate: "2026-05-09T00:00:00Z" });

    const board = expectOk(await call("GET", `/v1/widget/organization/${org.id}/display-board`, { apiKey: widget.key }));
    expect(board.closures).toEqual([{ start: "2026-05-04T12:00:00.000Z", end: "2026-05-04T13:30:00.000Z" }]);
  });
});
