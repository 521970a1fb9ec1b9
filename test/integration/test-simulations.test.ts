import { describe, expect, it } from "vitest";
import { call, expectError, expectOk, type ApiResponse } from "../helpers/api";
import { testModeSides } from "../helpers/fixtures";

// A simulated day in a test-mode twin (issue 41, docs/test-mode.md "Simulated day"): arrivals,
// calls, services and no-shows through the queue's room with `at` = the virtual time, so the
// event feed and the analytics of the twin show exactly what the simulation counted.

interface SimEvent {
  id: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}

const DAY = { arrivalsPerHour: 240, serviceMinutes: 2, noShowRate: 0.2, durationMinutes: 10, desks: 2, speed: 60, seed: 41 };

/** Every event of the twin recorded so far, walked by cursor. */
async function allEvents(testKey: string): Promise<SimEvent[]> {
  const out: SimEvent[] = [];
  let cursor: string | null = null;
  for (;;) {
    const res: ApiResponse = await call("GET", `/v1/events?limit=100${cursor ? `&startingAfter=${cursor}` : ""}`, { apiKey: testKey });
    const page = expectOk(res);
    out.push(...page);
    if (!res.body.meta.hasMore) return out;
    cursor = res.body.meta.nextCursor;
  }
}

function count(events: { type: string }[], type: string): number {
  return events.filter((e) => e.type === type).length;
}

async function settledEvents(testKey: string, expected: number): Promise<SimEvent[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const events = await allEvents(testKey);
    if (count(events, "ticket.created") >= expected || Date.now() > deadline) return events;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("simulated day (test mode)", () => {
  it("a 10-minute day at 60x finishes in under 30 s, and its figures equal its events and the twin's analytics", async () => {
    const [s, twin] = await Promise.all([testModeSides(), testModeSides()]);
    const began = Date.now();
    const started = expectOk(
      await call("POST", "/v1/test/simulations", { apiKey: s.testKey, body: { queueId: s.twinQueueId, ...DAY } }),
      201,
    );
    expect(started.status).toBe("running");
    expect(started.id).toMatch(/^sim_/);
    expect(started.seed).toBe(41);
    // The same seed on another organization's twin, at the same time: the same day.
    const same = expectOk(
      await call("POST", "/v1/test/simulations", { apiKey: twin.testKey, body: { queueId: twin.twinQueueId, ...DAY } }),
      201,
    );
    let sim = started;
    let other = same;
    while ((sim.status === "running" || other.status === "running") && Date.now() - began < 30_000) {
      await new Promise((r) => setTimeout(r, 500));
      sim = expectOk(await call("GET", `/v1/test/simulations/${started.id}`, { apiKey: s.testKey }));
      other = expectOk(await call("GET", `/v1/test/simulations/${same.id}`, { apiKey: twin.testKey }));
    }
    expect(sim.status, JSON.stringify(sim)).toBe("finished");
    expect(Date.now() - began).toBeLessThan(30_000);
    expect(sim.virtualNow).toBe(sim.virtualEnd);
    expect(Date.parse(sim.virtualEnd) - Date.parse(sim.virtualStart)).toBe(10 * 60_000);
    // 240 an hour for 10 minutes: about 40 arrivals, some served, some absent.
    expect(sim.joined).toBeGreaterThan(15);
    expect(sim.served).toBeGreaterThan(3);
    expect(sim.noShows).toBeGreaterThan(0);
    expect(sim.called).toBeGreaterThanOrEqual(sim.served + sim.noShows);
    const figures = (x: typeof sim) => ({ status: x.status, joined: x.joined, called: x.called, served: x.served, noShows: x.noShows });
    expect(figures(other)).toEqual(figures(sim));

    const events = await settledEvents(s.testKey, sim.joined);
    expect(count(events, "ticket.created")).toBe(sim.joined);
    expect(count(events, "ticket.called")).toBe(sim.called);
    expect(count(events, "ticket.served")).toBe(sim.served);
    // A no-show is marked absent at the desk, as the floor's "absent" outcome does.
    expect(events.filter((e) => e.type === "ticket.skipped" && e.data.reason === "no_show")).toHaveLength(sim.noShows);
    // Stamped with the virtual time, inside the day.
    for (const e of events.filter((e) => e.type.startsWith("ticket."))) {
      expect(Date.parse(e.createdAt)).toBeGreaterThanOrEqual(Date.parse(sim.virtualStart));
      expect(Date.parse(e.createdAt)).toBeLessThan(Date.parse(sim.virtualEnd));
    }

    const summary = expectOk(
      await call("GET", `/v1/analytics/summary?queueId=${s.twinQueueId}&from=${sim.virtualStart}&to=${sim.virtualEnd}&groupBy=hour`, {
        apiKey: s.testKey,
      }),
    );
    expect(summary.totals.created).toBe(sim.joined);
    expect(summary.totals.served).toBe(sim.served);
    expect(summary.totals.noShow).toBe(sim.noShows);
    // No call is left for the room to expire later (which would change the day's figures).
    const left = expectOk(await call("GET", `/v1/queues/${s.twinQueueId}/tickets?status=called`, { apiKey: s.testKey }));
    expect(left).toHaveLength(0);
  }, 60_000);

  it("DELETE stops a day: no event after its answer", async () => {
    const s = await testModeSides();
    const started = expectOk(
      await call("POST", "/v1/test/simulations", {
        apiKey: s.testKey,
        body: { queueId: s.twinQueueId, ...DAY, durationMinutes: 600, arrivalsPerHour: 600 },
      }),
      201,
    );
    await new Promise((r) => setTimeout(r, 2500));
    const stopped = expectOk(await call("DELETE", `/v1/test/simulations/${started.id}`, { apiKey: s.testKey }));
    expect(stopped.status).toBe("stopped");
    expect(stopped.joined).toBeGreaterThan(0);
    const before = await settledEvents(s.testKey, stopped.joined);
    expect(count(before, "ticket.created")).toBe(stopped.joined);
    await new Promise((r) => setTimeout(r, 2500));
    const after = await allEvents(s.testKey);
    expect(after.length).toBe(before.length);
    const read = expectOk(await call("GET", `/v1/test/simulations/${started.id}`, { apiKey: s.testKey }));
    expect(read.status).toBe("stopped");
    expect(read.joined).toBe(stopped.joined);
  }, 60_000);

  it("a live key is refused, another twin's or an unknown id is 404, and bad input is a 400 naming the field", async () => {
    const s = await testModeSides();
    const body = { queueId: s.twinQueueId, ...DAY };
    expectError(
      await call("POST", "/v1/test/simulations", { apiKey: s.liveKey, body: { ...body, queueId: s.liveQueueId } }),
      403,
      "AUTHORIZATION_ERROR",
    );
    expectError(
      await call("POST", "/v1/test/simulations", { apiKey: s.testKey, body: { ...body, speed: 61 } }),
      400,
      "VALIDATION_ERROR",
      "speed",
    );
    expectError(
      await call("POST", "/v1/test/simulations", { apiKey: s.testKey, body: { ...body, noShowRate: 2 } }),
      400,
      "VALIDATION_ERROR",
      "noShowRate",
    );
    const { arrivalsPerHour: _, ...noArrivals } = body;
    expectError(
      await call("POST", "/v1/test/simulations", { apiKey: s.testKey, body: noArrivals }),
      400,
      "VALIDATION_ERROR",
      "arrivalsPerHour",
    );
    // The live queue is not the twin's.
    expectError(
      await call("POST", "/v1/test/simulations", { apiKey: s.testKey, body: { ...body, queueId: s.liveQueueId } }),
      404,
      "NOT_FOUND",
    );

    const started = expectOk(await call("POST", "/v1/test/simulations", { apiKey: s.testKey, body: { ...body, durationMinutes: 1 } }), 201);
    expectError(await call("GET", `/v1/test/simulations/${started.id}`, { apiKey: s.liveKey }), 403, "AUTHORIZATION_ERROR");
    expectError(await call("DELETE", `/v1/test/simulations/${started.id}`, { apiKey: s.liveKey }), 403, "AUTHORIZATION_ERROR");
    const other = await testModeSides();
    expectError(await call("GET", `/v1/test/simulations/${started.id}`, { apiKey: other.testKey }), 404, "NOT_FOUND");
    expectError(await call("GET", "/v1/test/simulations/sim_nope", { apiKey: s.testKey }), 404, "NOT_FOUND");
    expectOk(await call("DELETE", `/v1/test/simulations/${started.id}`, { apiKey: s.testKey }));
  }, 60_000);
});
