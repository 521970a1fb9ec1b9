import { describe, expect, it } from "vitest";
import { call, expectOk } from "../helpers/api";
import { bookAppointment } from "../helpers/booked-appointments";
import { testClock } from "../helpers/clock";
import { createApiKey, createOrganization, createQueueFixture, registerUser, walkIn } from "../helpers/fixtures";

// The display board says which calls are appointments (issue 38: "the board may show
// 'Appointment' beside a call"): each call carries the ticket's `kind`.

const START = Date.parse("2026-06-10T10:30:00.000Z");
const MIN = 60_000;

describe("the board's calls carry the ticket's kind", () => {
  it("an appointment checked in and called shows kind appointment on the display-board route; a walk-in shows walk_in", async () => {
    testClock.set(START - 60 * MIN);
    const owner = await registerUser();
    const org = await createOrganization(owner, { type: "healthcare" });
    const f = await createQueueFixture(owner, org.id);
    const widgetKey = (await createApiKey(owner, org.id, ["widget"])).key;
    const apt = await bookAppointment({
      auth: { token: f.owner.token },
      serviceId: f.serviceId,
      locationId: f.locationId,
      startAt: START,
    });
    testClock.set(START - 5 * MIN);
    const checkedIn = expectOk(await call("POST", `/v1/appointments/${apt.id}/check-in`, { token: owner.token }), 201);
    const walker = await walkIn(owner, f.queueId);

    // Call both, whichever order the blend chooses.
    const first = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: owner.token, body: {} }));
    const second = expectOk(await call("POST", `/v1/queues/${f.queueId}/call-next`, { token: owner.token, body: {} }));
    const codes = new Map<string, string>();
    for (const c of [first, second]) {
      const t = c.ticket ?? c;
      codes.set(t.id, t.displayCode);
    }

    const board = expectOk(await call("GET", `/v1/widget/organization/${org.id}/display-board`, { apiKey: widgetKey }));
    const queue = board.queues.find((q: any) => q.queueId === f.queueId);
    const kindOf = (code: string | undefined) => queue.called.find((c: any) => c.displayCode === code)?.kind;
    expect(queue.called).toHaveLength(2);
    expect(kindOf(codes.get(checkedIn.ticket.id))).toBe("appointment");
    expect(kindOf(codes.get((walker as any).id))).toBe("walk_in");
  });
});
