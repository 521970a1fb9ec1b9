import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, expectError, expectOk } from "../helpers/api";
import { insertService, settle } from "../helpers/catalog";
import { testClock } from "../helpers/clock";
import { createApiKey, queueFixture, type Fixture } from "../helpers/fixtures";

// Issue 45: the visit's total time over all its legs (docs/analytics.md, visits). A generated
// history of visits of two and three services, played on the test clock through the API, and
// the figures the route must give for it.

const MIN = 60_000;
const T0 = Date.parse("2026-06-10T09:00:00.000Z");
const at = (minutes: number) => testClock.set(T0 + minutes * MIN);

interface Branch extends Fixture {
  queues: string[];
  services: string[];
}

/** Three services at the fixture's location, one queue each (the fixture's own is the first). */
async function threeServices(): Promise<Branch> {
  const f = await queueFixture("pro");
  const link = await env.DB.prepare("SELECT location_id FROM service_locations WHERE service_id = ?")
    .bind(f.serviceId)
    .first<{ location_id: string }>();
  const services = [f.serviceId];
  const queues = [f.queueId];
  for (const name of ["Cashier", "Pharmacy"]) {
    const serviceId = await insertService(f.organizationId, link!.location_id);
    const queueId = expectOk(await call("POST", "/v1/business/queues", { token: f.owner.token, body: { serviceId, name } }), 201).id;
    services.push(serviceId);
    queues.push(queueId);
  }
  return { ...f, queues, services };
}

const join = async (b: Branch, legs: number) =>
  expectOk(
    await call("POST", `/v1/queues/${b.queueId}/operator-join`, {
      token: b.owner.token,
      body: legs > 1 ? { route: b.services.slice(0, legs) } : {},
    }),
    201,
  ).id as string;

/** Calls the next of `queueId` (it must be `ticketId`) and starts serving it. */
async function callAndServe(b: Branch, queueId: string, ticketId: string) {
  expect(expectOk(await call("POST", `/v1/queues/${queueId}/call-next`, { token: b.owner.token })).id).toBe(ticketId);
  expectOk(await call("POST", `/v1/tickets/${ticketId}/serve`, { token: b.owner.token }));
}

/** Completes the leg; answers the next leg's ticket id (null after the last). */
const complete = async (b: Branch, ticketId: string) =>
  expectOk(await call("POST", `/v1/tickets/${ticketId}/complete`, { token: b.owner.token })).routedToId as string | null;

describe("GET /v1/analytics/visits", () => {
  it("counts each visit of several services once, with its total time, waits and service times summed over every leg", async () => {
    at(0);
    const b = await threeServices();
    const { key } = await createApiKey(b.owner, b.organizationId, ["read:analytics"]);

    // Visit A, two legs: waits 5 + 5, service 5 + 5, 20 minutes in all.
    const a1 = await join(b, 2);
    at(5);
    await callAndServe(b, b.queues[0]!, a1);
    at(10);
    const a2 = (await complete(b, a1))!;
    at(15);
    await callAndServe(b, b.queues[1]!, a2);
    at(20);
    expect(await complete(b, a2)).toBeNull();

    // Visit B, three legs: waits 2 + 10 + 5, service 3 + 30 + 10, 60 minutes in all.
    at(30);
    const b1 = await join(b, 3);
    at(32);
    await callAndServe(b, b.queues[0]!, b1);
    at(35);
    const b2 = (await complete(b, b1))!;
    at(45);
    await callAndServe(b, b.queues[1]!, b2);
    at(75);
    const b3 = (await complete(b, b2))!;
    at(80);
    await callAndServe(b, b.queues[2]!, b3);
    at(90);
    expect(await complete(b, b3)).toBeNull();

    // Visit C, two legs, cancelled in the first: started, not completed.
    at(100);
    const c1 = await join(b, 2);
    at(101);
    expectOk(await call("POST", `/v1/tickets/${c1}/cancel`, { token: b.owner.token }));
    // A one-service visit is not a visit of several services.
    at(102);
    await join(b, 1);
    for (const q of b.queues) await settle(q);

    const read = async (query = "") =>
      expectOk(await call("GET", `/v1/analytics/visits?from=2026-06-10&to=2026-06-10${query}`, { apiKey: key }));
    const figures = await read();
    expect(figures).toEqual({
      from: expect.any(String),
      to: expect.any(String),
      visits: 3,
      completed: 2,
      totalMinutes: { count: 2, mean: 40, p50: 20, p90: 60 },
      meanWaitMinutes: 13.5,
      meanServiceMinutes: 26.5,
      byLegs: [
        {
          legs: 2,
          visits: 2,
          completed: 1,
          totalMinutes: { count: 1, mean: 20, p50: 20, p90: 20 },
          meanWaitMinutes: 10,
          meanServiceMinutes: 10,
        },
        {
          legs: 3,
          visits: 1,
          completed: 1,
          totalMinutes: { count: 1, mean: 60, p50: 60, p90: 60 },
          meanWaitMinutes: 17,
          meanServiceMinutes: 43,
        },
      ],
    });
    // Each leg still counts in its own queue's figures (docs/analytics.md): the cashier served two legs.
    const cashier = expectOk(
      await call("GET", `/v1/analytics/summary?from=2026-06-10&to=2026-06-10&queueId=${b.queues[1]}`, { apiKey: key }),
    );
    expect(cashier.totals).toMatchObject({ created: 2, served: 2 });

    // A visit counts where it started: the cashier's scope has none; the first service's has all three.
    expect(await read(`&queueId=${b.queues[1]}`)).toMatchObject({ visits: 0, completed: 0, byLegs: [] });
    expect(await read(`&serviceId=${b.services[0]}`)).toMatchObject({ visits: 3, completed: 2 });
    // Another day: none.
    expect(expectOk(await call("GET", "/v1/analytics/visits?from=2026-06-11&to=2026-06-11", { apiKey: key }))).toMatchObject({
      visits: 0,
      totalMinutes: { count: 0, mean: null, p50: null, p90: null },
      meanWaitMinutes: null,
    });
  });

  it("reads the first legs by organization and time, and each visit's legs through the visit index", async () => {
    const { results } = await env.DB.prepare(
      `EXPLAIN QUERY PLAN SELECT f.id FROM tickets f JOIN tickets l ON l.visit_id = f.id AND l.organization_id = f.organization_id
       WHERE f.organization_id = ?1 AND f.created_at >= ?2 AND f.created_at < ?3 AND f.visit_id = f.id AND f.leg_index = 0 GROUP BY f.id`,
    )
      .bind("org", 0, 1)
      .all<{ detail: string }>();
    const plan = results.map((r) => r.detail).join(" | ");
    expect(plan).toMatch(/SEARCH f USING INDEX tickets_org_created_idx/);
    expect(plan).toMatch(/SEARCH l USING INDEX tickets_visit_idx/);
  });

  it("needs the pro plan and analytics rights", async () => {
    const starter = await queueFixture("starter");
    const key = (await createApiKey(starter.owner, starter.organizationId, ["read:analytics"])).key;
    expectError(await call("GET", "/v1/analytics/visits?from=2026-06-10&to=2026-06-11", { apiKey: key }), 402, "PLAN_REQUIRED");
    const pro = await queueFixture("pro");
    const widget = (await createApiKey(pro.owner, pro.organizationId, ["widget"])).key;
    expectError(await call("GET", "/v1/analytics/visits?from=2026-06-10&to=2026-06-11", { apiKey: widget }), 403, "AUTHORIZATION_ERROR");
  });
});
